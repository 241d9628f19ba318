"""AllenNLP's ``model.initializer``: parameters picked by regex, re-initialised once the model is built.

``{"regexes": [[regex, initializer], ...], "prevent_regexes": [...]}``: each parameter takes the first
initializer whose regex matches its name (``re.search``), unless a prevent regex matches it. Applied at
assembly, before ``parallelize`` wraps the model, on every worker from the same seed, so all start equal;
parameters on the meta device (ranks that receive rank 0's weights) are skipped. A regex that matches
no parameter is an error naming it (AllenNLP only logged it, so a typo silently did nothing).

A regex may also match a parameter's AllenNLP name where a module renames it (``allennlp_names``: a feedforward's
``_linear_layers.0`` is distrain's ``layers.0``), so AllenNLP's configs pick the same parameters as in AllenNLP.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Literal

import torch

from distrain.config.constraints import NonNegativeFloat, PositiveFloat, Regex
from distrain.config.errors import ConfigError
from distrain.registry import Registrable

logger = logging.getLogger(__name__)

Nonlinearity = Literal["linear", "conv1d", "conv2d", "conv3d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"]


class Initializer(Registrable):
    """Fills one parameter in place; ``name`` is its name in the model. A block without ``type`` is ``normal``,
    as AllenNLP's."""

    default_implementation = "normal"

    def __call__(self, tensor: torch.Tensor, name: str = "") -> None:
        raise NotImplementedError


@Initializer.register("normal")
class NormalInitializer(Initializer):
    """Values drawn from a normal distribution (``mean``, ``std``)."""

    def __init__(self, mean: float = 0.0, std: NonNegativeFloat = 0.1) -> None:
        self.mean, self.std = mean, std

    def __call__(self, tensor: torch.Tensor, name: str = "") -> None:
        torch.nn.init.normal_(tensor, self.mean, self.std)


@Initializer.register("eye")
class EyeInitializer(Initializer):
    """The identity matrix (2-d parameters), as ``torch.nn.init.eye_``."""

    def __call__(self, tensor: torch.Tensor, name: str = "") -> None:
        torch.nn.init.eye_(tensor)


@Initializer.register("uniform")
class UniformInitializer(Initializer):
    """Values drawn uniformly from [``a``, ``b``]."""

    def __init__(self, a: float = 0.0, b: float = 1.0) -> None:
        self.a, self.b = a, b

    def __call__(self, tensor: torch.Tensor, name: str = "") -> None:
        torch.nn.init.uniform_(tensor, self.a, self.b)


@Initializer.register("constant")
class ConstantInitializer(Initializer):
    """Every value set to ``val``."""

    def __init__(self, val: float) -> None:
        self.val = val

    def __call__(self, tensor: torch.Tensor, name: str = "") -> None:
        torch.nn.init.constant_(tensor, self.val)


@Initializer.register("zero")
class ZeroInitializer(Initializer):
    """Every value set to zero."""

    def __call__(self, tensor: torch.Tensor, name: str = "") -> None:
        torch.nn.init.zeros_(tensor)


class _Gain(Initializer):
    function = staticmethod(torch.nn.init.xavier_normal_)

    def __init__(self, gain: PositiveFloat = 1.0) -> None:
        self.gain = gain

    def __call__(self, tensor: torch.Tensor, name: str = "") -> None:
        type(self).function(tensor, gain=self.gain)


@Initializer.register("xavier_normal")
class XavierNormalInitializer(_Gain):
    """Xavier (Glorot) normal initialisation, scaled by ``gain``."""

    function = staticmethod(torch.nn.init.xavier_normal_)


@Initializer.register("xavier_uniform")
class XavierUniformInitializer(_Gain):
    """Xavier (Glorot) uniform initialisation, scaled by ``gain``."""

    function = staticmethod(torch.nn.init.xavier_uniform_)


@Initializer.register("orthogonal")
class OrthogonalInitializer(_Gain):
    """A (semi-)orthogonal matrix, scaled by ``gain``."""

    function = staticmethod(torch.nn.init.orthogonal_)


class _Kaiming(Initializer):
    function = staticmethod(torch.nn.init.kaiming_normal_)

    def __init__(self, a: float = 0.0, mode: Literal["fan_in", "fan_out"] = "fan_in",
                 nonlinearity: Nonlinearity = "leaky_relu") -> None:
        self.a, self.mode, self.nonlinearity = a, mode, nonlinearity

    def __call__(self, tensor: torch.Tensor, name: str = "") -> None:
        type(self).function(tensor, a=self.a, mode=self.mode, nonlinearity=self.nonlinearity)


@Initializer.register("kaiming_normal")
class KaimingNormalInitializer(_Kaiming):
    """Kaiming (He) normal initialisation."""

    function = staticmethod(torch.nn.init.kaiming_normal_)


@Initializer.register("kaiming_uniform")
class KaimingUniformInitializer(_Kaiming):
    """Kaiming (He) uniform initialisation."""

    function = staticmethod(torch.nn.init.kaiming_uniform_)


@Initializer.register("lstm_hidden_bias")
class LstmHiddenBiasInitializer(Initializer):
    """An LSTM bias (gates i|f|g|o) with the forget gate at 1 and the rest at 0 (Jozefowicz et al.)."""

    def __call__(self, tensor: torch.Tensor, name: str = "") -> None:
        with torch.no_grad():
            tensor.zero_()
            hidden = tensor.shape[0] // 4
            tensor[hidden:2 * hidden] = 1.0


@Initializer.register("pretrained")
class PretrainedInitializer(Initializer):
    """Copies the parameter of the same name (or its ``parameter_name_overrides`` name) from a
    ``.safetensors`` file or a torch state dict (read with ``weights_only``: no pickled code)."""

    def __init__(self, weights_file_path: str, parameter_name_overrides: dict[str, str] | None = None) -> None:
        self.path = str(weights_file_path)
        self.overrides = parameter_name_overrides or {}
        self._weights: dict[str, torch.Tensor] | None = None

    @property
    def parameter_name_overrides(self) -> dict[str, str]:
        return self.overrides

    @property
    def weights(self) -> dict[str, torch.Tensor]:
        """The file's tensors by name (AllenNLP's attribute), read once."""
        if self._weights is None:
            self._load()
        return self._weights

    def _load(self) -> None:
        if self._weights is None:
            if self.path.endswith(".safetensors"):
                from safetensors.torch import load_file

                self._weights = load_file(self.path)
            else:
                self._weights = torch.load(self.path, map_location="cpu", weights_only=True)

    def __call__(self, tensor: torch.Tensor, name: str = "") -> None:
        self._load()
        source_name = self.overrides.get(name, name)
        if source_name not in self._weights:
            raise ConfigError(f"{self.path} has no parameter {source_name!r}")
        source = self._weights[source_name]
        if source.shape != tensor.shape:
            raise ConfigError(f"{self.path}: {source_name!r} has shape {tuple(source.shape)}, "
                             f"the model's {name!r} {tuple(tensor.shape)}")
        with torch.no_grad():
            tensor.copy_(source)


@dataclass
class InitializerApplicator:
    """The ``model.initializer`` block (AllenNLP's form); :meth:`apply` runs it over a model."""

    regexes: list[tuple[Regex, Initializer]] | None = None
    prevent_regexes: list[Regex] | None = None

    def apply(self, model: torch.nn.Module, path: str = "model.initializer") -> list[str]:
        """Initialise the matching parameters of ``model``; return their names."""
        pairs = [(regex, initializer) for regex, initializer in self.regexes or []]
        prevent = [re.compile(regex) for regex in self.prevent_regexes or []]
        used, done = set(), []
        aliases = allennlp_aliases(model)
        for name, parameter in model.named_parameters():
            names = (name, aliases[name]) if name in aliases else (name,)
            if any(pattern.search(each) for pattern in prevent for each in names):
                continue
            for index, (regex, initializer) in enumerate(pairs):
                if any(re.search(regex, each) for each in names):
                    used.add(index)
                    if not parameter.is_meta:
                        with torch.no_grad():
                            initializer(parameter, name=name)
                    done.append(name)
                    break
        for index, (regex, _) in enumerate(pairs):
            if index not in used:  # AllenNLP's zoo configs carry such regexes (copied between variants): warned, as there
                logger.warning("%s.regexes[%d]: %r matches no parameter of the model; it initialises nothing",
                               path, index, regex)
        logger.info("initialised %d parameter(s) by model.initializer", len(done))
        return done

    def __call__(self, module: torch.nn.Module) -> None:
        """AllenNLP's spelling (``initializer(self)`` in a model's constructor)."""
        self.apply(module)


def allennlp_aliases(model: torch.nn.Module) -> dict[str, str]:
    """Parameter name -> the name with each module's literal ``allennlp_names`` renames undone (only the
    parameters some module renames)."""
    aliases: dict[str, str] = {}
    for prefix, module in model.named_modules():
        for pattern, replacement in getattr(module, "allennlp_names", {}).items():
            literal = pattern.replace("\\", "")
            if "\\" in replacement or not re.fullmatch(pattern, literal):
                continue  # a pattern with groups or classes has no single AllenNLP name to give back
            inside = f"{prefix}.{replacement}." if prefix else f"{replacement}."
            for name, _ in model.named_parameters():
                if name.startswith(inside):  # outer modules come first and renamed only what precedes
                    current, tail = aliases.get(name, name), name[len(inside) - len(replacement) - 1:]
                    aliases[name] = current[: len(current) - len(tail)] + literal + "." + name[len(inside):]
    return aliases
