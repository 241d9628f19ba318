"""AllenNLP's ``model.tar.gz`` (``config.json``, ``weights.th``, ``vocabulary/``), loaded as a distrain model.

The config is AllenNLP's, which distrain reads as it is; the vocabulary is AllenNLP's folder format
(:mod:`distrain.data.vocabulary_files`); the weights are a torch file read with ``weights_only=True`` (tensors
only, no code runs). AllenNLP's parameter names differ from distrain's: they are translated by walking the
distrain model along each name (:func:`translate_name`), each module and model owning the few renames it needs
in an attribute ``allennlp_names`` (a pattern matching the start of AllenNLP's rest of the name → distrain's
path there). Beyond those:
a leading underscore is dropped when only the bare name exists (``_text_field_embedder``), and AllenNLP's
wrappers (``TimeDistributed``, ``PytorchSeq2SeqWrapper``: a ``_module`` segment naming nothing here) enter the
one child that holds parameters, or vanish. Buffers AllenNLP saves and distrain computes (a CRF's constraint
mask, a transformer's position ids) are left out where the model lists them in ``allennlp_unused``; what AllenNLP
does not save but finds again whenever it builds the model (a bias mitigator's direction), the model's
``allennlp_derived()`` supplies.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import torch

from distrain.errors import BadInput

WEIGHTS_FILE = "weights.th"


def is_allennlp_archive(root: Path, distrain_weights: str) -> bool:
    """An extracted archive in AllenNLP's layout: its weights a torch file, not distrain's safetensors."""
    return (root / WEIGHTS_FILE).is_file() and not (root / distrain_weights).exists()


def load_allennlp_archive(root: Path, path: Path, overrides: dict[str, Any], error: type[BadInput]) -> tuple:
    """``(model, config, vocabulary)`` from an extracted AllenNLP archive at ``root``."""
    from distrain.config.errors import ConfigError
    from distrain.config.loading import apply_overrides
    from distrain.data.vocabulary_files import read_vocabulary_directory
    from distrain.experiment.plan import resolve_experiment
    from distrain.pretrained import weights_elsewhere

    for required in ("config.json", "vocabulary"):
        if not (root / required).exists():
            raise error(f"{path}: AllenNLP archive has no {required}")
    try:
        config = _read_config(root / "config.json")
    except (OSError, UnicodeDecodeError, ValueError) as problem:
        raise error(f"{path}: config.json is not valid JSON ({problem})") from None
    config = _without_legacy_keys(config)
    if isinstance(config, dict) and isinstance(config.get("model"), dict):
        config["model"] = _without_training_sources(config["model"])
    config = apply_overrides(config, overrides)
    try:
        vocab = read_vocabulary_directory(root / "vocabulary")
    except (OSError, KeyError, ValueError) as problem:
        raise error(f"{path}: unreadable AllenNLP vocabulary ({problem.__class__.__name__}: {problem})") from None
    try:
        experiment = resolve_experiment(config).build()
    except ConfigError as problem:
        first = problem.problems[0]
        raise error(f"{path}: the archive's config names what distrain lacks or refuses: "
                    f"{first.path}: {first.message}") from None
    with weights_elsewhere():  # every weight comes from weights.th; a pretrained file or model is not read
        model = experiment.model.construct(vocab=vocab)
    try:
        saved = torch.load(io.BytesIO((root / WEIGHTS_FILE).read_bytes()), map_location="cpu", weights_only=True)
    except Exception as problem:  # noqa: BLE001 - torch's unpickler refusals and corrupt files alike
        raise error(f"{path}: {WEIGHTS_FILE} is not a tensors-only torch file ({problem.__class__.__name__})") from None
    state = translate_state(model, saved, str(path), error)
    model.load_state_dict(state, strict=False)
    model.eval()
    # a from_archive model extends the archive's vocabulary (AllenNLP saved only the data's beside it)
    return model, config, model.vocab


#: keys of AllenNLP 0.x configs that 2.x's ``load_archive`` never reads (it builds only readers and model)
LEGACY_KEYS = {"": ("iterator", "validation_iterator"), "trainer": ("log_batch_size_period",)}


def _without_legacy_keys(config: Any) -> Any:
    """An old archive's config less :data:`LEGACY_KEYS`, so that it loads as it does in AllenNLP 2.10.1."""
    if not isinstance(config, dict):
        return config
    config = {key: value for key, value in config.items() if key not in LEGACY_KEYS[""]}
    for block, keys in LEGACY_KEYS.items():
        if block and isinstance(config.get(block), dict):
            config[block] = {key: value for key, value in config[block].items() if key not in keys}
    return config


def _read_config(file: Path) -> Any:
    """The archive's config: JSON, or (as AllenNLP's ``Params.from_file`` reads it) jsonnet, which older
    archives need for their trailing commas."""
    text = file.read_text("utf-8")
    try:
        return json.loads(text)
    except ValueError as problem:
        import _jsonnet

        try:
            return json.loads(_jsonnet.evaluate_snippet(str(file), text))
        except RuntimeError:
            raise problem from None


def _without_training_sources(block: Any) -> Any:
    """The model block less what only training read (``pretrained_file``, ``initializer``): the weights hold it,
    and the files need not exist where the archive is loaded (AllenNLP's ``load_archive`` drops them too)."""
    if isinstance(block, dict):
        return {key: _without_training_sources(value) for key, value in block.items()
                if key not in ("pretrained_file", "initializer")}
    if isinstance(block, list):
        return [_without_training_sources(value) for value in block]
    return block


def translate_state(model: torch.nn.Module, saved: dict[str, torch.Tensor], where: str,
                    error: type[BadInput]) -> dict[str, torch.Tensor]:
    """AllenNLP's state dict under distrain's names, complete and of the right shapes, else one line."""
    expected = model.state_dict()
    unused = [re.compile(pattern) for module in model.modules()  # a submodel's too (a language model embedder's)
              for pattern in getattr(module, "allennlp_unused", ())]
    state: dict[str, torch.Tensor] = {}
    for name, tensor in saved.items():
        target = translate_name(model, name)
        if target not in expected:
            if any(pattern.search(name) for pattern in unused):
                continue
            model_name = type(model).__name__
            raise error(f"{where}: AllenNLP weight {name} has no place in distrain's {model_name} "
                        f"(read as {target}); this model's AllenNLP weights cannot be loaded")
        tensor = _adapted(model, target, tensor, expected[target])
        if tuple(tensor.shape) != tuple(expected[target].shape):
            raise error(f"{where}: AllenNLP weight {name} has shape {tuple(tensor.shape)}, distrain's {target} "
                        f"{tuple(expected[target].shape)}")
        state[target] = tensor.to(expected[target].dtype)
    for prefix, module in model.named_modules():  # what AllenNLP finds again on building, rather than saves
        if hasattr(module, "allennlp_derived"):
            for name, tensor in module.allennlp_derived().items():
                state.setdefault(f"{prefix}.{name}" if prefix else name, tensor)
    missing = [name for name in expected if name not in state]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise error(f"{where}: the AllenNLP archive holds no weight for distrain's {missing[0]}{more}")
    return state


def _adapted(model: torch.nn.Module, target: str, tensor: torch.Tensor, mine: torch.Tensor) -> torch.Tensor:
    """``tensor`` as the module holding ``target`` reads it (its ``allennlp_tensor``), where AllenNLP shaped the
    weight otherwise (a table sized by another namespace); unchanged where the module has no such rule."""
    owner, _, name = target.rpartition(".")
    hook = getattr(model.get_submodule(owner), "allennlp_tensor", None)
    return hook(name, tensor, mine) if hook is not None else tensor


def translate_name(model: torch.nn.Module, name: str) -> str:
    """``name`` (AllenNLP's) as distrain's state-dict name, found by walking ``model`` along its segments."""
    return ".".join(_walk(model, name.split(".")))


def _walk(module: torch.nn.Module, segments: list[str]) -> list[str]:
    if not segments:
        return []
    renamed = _renamed(module, segments)
    if renamed is not None:
        path, rest = renamed
    else:
        head, rest = segments[0], segments[1:]
        if _has(module, head):
            path = [head]
        elif head.startswith("_") and _has(module, head[1:]):
            path = [head[1:]]
        elif head == "_module" and rest and _resolves(module, rest):
            return _walk(module, rest)  # AllenNLP's wrapper (TimeDistributed) around this very module
        elif head == "_module":  # AllenNLP's wrapper around what this module holds directly
            holders = [child for child, sub in module.named_children() if any(True for _ in sub.parameters())]
            path = holders if len(holders) == 1 else []
        else:
            return segments  # not found: the caller reports it with the name it was read as
    target = module
    for part in path:
        target = getattr(target, part) if not part.isdigit() else target[int(part)]
    if isinstance(target, torch.nn.Module):
        return path + _walk(target, rest)
    return path + rest


def _renamed(module: torch.nn.Module, segments: list[str]) -> tuple[list[str], list[str]] | None:
    """The module's own rename of the name's first segments: (distrain's path, AllenNLP's rest)."""
    remaining = ".".join(segments)
    for pattern, replacement in getattr(module, "allennlp_names", {}).items():
        match = re.match(f"(?:{pattern})(?=\\.|$)", remaining)
        if match:
            expanded = match.expand(replacement)
            rest = remaining[match.end():].lstrip(".")
            return (expanded.split(".") if expanded else []), (rest.split(".") if rest else [])
    return None


def _resolves(module: torch.nn.Module, segments: list[str]) -> bool:
    """Whether ``segments`` start with a name ``module`` has (its own rename, the name, or the name less "_")."""
    head = segments[0]
    return (_renamed(module, segments) is not None or _has(module, head)
            or (head.startswith("_") and _has(module, head[1:])))


def _has(module: torch.nn.Module, name: str) -> bool:
    with contextlib.suppress(AttributeError):
        return isinstance(getattr(module, name), (torch.nn.Module, torch.Tensor))
    return False
