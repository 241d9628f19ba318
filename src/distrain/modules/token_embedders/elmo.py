"""AllenNLP's ``elmo_token_embedder``: one ELMo representation per token, from the ``elmo_tokens`` of the
``elmo_characters`` indexer (see :mod:`distrain.modules.elmo`)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Annotated, Any, Mapping

import torch

from distrain.config.constraints import Must, PositiveInt, Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.modules.elmo import Elmo, read_options
from distrain.modules.token_embedder import TokenEmbedder

_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def _options_file(path: str) -> bool:
    try:
        read_options(path)
    except (OSError, ValueError):
        return False
    return True


def _hdf5_file(path: str) -> bool:
    """The HDF5 signature at offset 0 or at a power of two from 512 on (where a user block ends)."""
    try:
        with open(path, "rb") as file:
            size, offset = Path(path).stat().st_size, 0
            while offset + len(_HDF5_SIGNATURE) <= size:
                file.seek(offset)
                if file.read(len(_HDF5_SIGNATURE)) == _HDF5_SIGNATURE:
                    return True
                offset = 512 if offset == 0 else offset * 2
    except OSError:
        return False
    return False


OptionsFile = Annotated[str, Must("be a local ELMo options.json that exists and reads (distrain downloads nothing)",
                                  _options_file)]
WeightFile = Annotated[str, Must("be a local ELMo HDF5 weight file that exists (distrain downloads nothing)", _hdf5_file)]


@TokenEmbedder.register("elmo_token_embedder")
class ElmoTokenEmbedder(TokenEmbedder):
    """One mix of a pretrained ELMo's layers, then ``dropout`` and an optional linear ``projection_dim``.
    The biLM is frozen unless ``requires_grad``; the mix is learned unless ``scalar_mix_parameters`` fixes
    it. Both files are local (AllenNLP's defaults are URLs, so here they must be given). ``vocab_to_cache``
    is accepted for AllenNLP's configs: it only spares the character CNN for word ids, which a text field
    embedder does not pass, so the output is the same without it.

    As in AllenNLP, the biLM carries each batch row's final LSTM state into the next batch, so a
    token's vector depends on the batches before it (and on how the data is split among workers)."""

    def __init__(self, options_file: OptionsFile, weight_file: WeightFile, do_layer_norm: bool = False,
                 dropout: Probability = 0.5, requires_grad: bool = False, projection_dim: PositiveInt | None = None,
                 vocab_to_cache: list[str] | None = None, scalar_mix_parameters: list[float] | None = None) -> None:
        super().__init__()
        self.elmo = Elmo(options_file, weight_file, 1, requires_grad=requires_grad, do_layer_norm=do_layer_norm,
                         dropout=dropout, scalar_mix_parameters=scalar_mix_parameters)
        self.projection = torch.nn.Linear(self.elmo.get_output_dim(), projection_dim) if projection_dim else None
        self.output_dim = projection_dim or self.elmo.get_output_dim()

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        problems = []
        if importlib.util.find_spec("h5py") is None:
            problems.append(Problem("weight_file", "reading it needs h5py: pip install 'distrain[elmo]'"))
        mix, options = arguments.get("scalar_mix_parameters"), arguments.get("options_file")
        if isinstance(mix, list) and isinstance(options, str) and _options_file(options):
            layers = read_options(options)["lstm"]["n_layers"] + 1
            if len(mix) != layers:
                problems.append(Problem("scalar_mix_parameters", f"needs one weight per layer: {layers} (the "
                                        f"character layer and {layers - 1} LSTM layers), got {len(mix)}"))
        return problems

    @classmethod
    def configured_output_dim(cls, recipe: Lazy, input_dim: int | None = None) -> int | None:
        if recipe.argument("projection_dim"):
            return recipe.argument("projection_dim")
        try:
            return 2 * read_options(recipe.argument("options_file"))["lstm"]["projection_dim"]
        except (OSError, ValueError, TypeError, KeyError, json.JSONDecodeError):
            return None

    def forward(self, elmo_tokens: torch.Tensor, word_inputs: torch.Tensor | None = None) -> torch.Tensor:
        vectors = self.elmo(elmo_tokens)["elmo_representations"][0]
        return self.projection(vectors) if self.projection is not None else vectors
