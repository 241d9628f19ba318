"""AllenNLP's ``Elmo``: a pretrained biLM run once per batch, and one learned mix of its layers per
representation asked for (Peters et al., 2018, "Deep contextualized word representations").

The biLM is described by an ``options.json`` and its weights by an HDF5 file, both in AllenNLP's (bilm-tf's)
format; reading HDF5 needs ``h5py`` (``pip install 'distrain[elmo]'``). The layers are the character
encoder's vectors (doubled, to the LSTM's width) and each LSTM layer's outputs; the boundaries ``<S>``
and ``</S>`` the encoder added are removed from each mix unless ``keep_sentence_boundaries``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from distrain.modules.elmo_character_encoder import ElmoCharacterEncoder
from distrain.modules.elmo_lstm import ElmoLstm
from distrain.modules.scalar_mix import ScalarMix
from distrain.registry import Registrable


def read_options(path: str | Path) -> dict[str, Any]:
    """An ELMo ``options.json``: a JSON object with ``char_cnn`` and ``lstm`` blocks."""
    options = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(options, dict) or not isinstance(options.get("char_cnn"), dict) or not isinstance(options.get("lstm"), dict):
        raise ValueError(f"{path} is not an ELMo options file (it needs 'char_cnn' and 'lstm' blocks)")
    return options


def open_weights(path: str | Path) -> Any:
    """The HDF5 weight file, open for reading."""
    try:
        import h5py
    except ImportError:
        raise ImportError("reading ELMo weights needs h5py: pip install 'distrain[elmo]'") from None
    return h5py.File(path, "r")


class ElmoBiLm(torch.nn.Module):
    """The pretrained part: character encoder and biLSTM, frozen unless ``requires_grad``. Its weights are
    read from ``weight_file`` unless it is built on the meta device (a dry run), where nothing is read."""

    def __init__(self, options_file: str | Path, weight_file: str | Path, requires_grad: bool = False) -> None:
        super().__init__()
        options = read_options(options_file)
        lstm = options["lstm"]
        if not lstm.get("use_skip_connections"):
            raise ValueError(f"{options_file}: only biLMs with skip connections (lstm.use_skip_connections) are supported")
        self.character_encoder = ElmoCharacterEncoder(options["char_cnn"], lstm["projection_dim"], requires_grad)
        self.lstm = ElmoLstm(lstm["projection_dim"], lstm["dim"], lstm["n_layers"], lstm.get("cell_clip"),
                             lstm.get("proj_clip"), requires_grad)
        self.num_layers = lstm["n_layers"] + 1
        self.output_dim = 2 * lstm["projection_dim"]
        if not self.character_encoder.char_embedding.is_meta:
            with open_weights(weight_file) as weights:
                try:
                    self.character_encoder.load_weights(weights)
                    self.lstm.load_weights(weights)
                except KeyError as error:  # h5py's word for a missing group or dataset
                    raise ValueError(f"{weight_file} is not ELMo weights for {options_file}: {error}") from None

    def forward(self, character_ids: torch.Tensor) -> tuple[list[torch.Tensor], torch.Tensor]:
        """(batch, tokens, 50) ids → each layer's (batch, tokens + 2, output_dim) activations, and their mask
        (both with the sentence boundaries)."""
        vectors, mask = self.character_encoder(character_ids)
        layers = self.lstm(vectors, mask)
        first = torch.cat([vectors, vectors], -1) * mask.unsqueeze(-1)
        return [first, *layers.unbind(0)], mask


class Elmo(torch.nn.Module, Registrable):
    """``num_output_representations`` mixes of the biLM's layers, each followed by ``dropout``.
    ``scalar_mix_parameters`` fixes the mixes' (unnormalised) weights instead of learning them.
    Registrable (as ``elmo``, the default) so a model can take one as a config block (AllenNLP's BCN)."""

    default_implementation = "elmo"

    def __init__(self, options_file: str | Path, weight_file: str | Path, num_output_representations: int,
                 requires_grad: bool = False, do_layer_norm: bool = False, dropout: float = 0.5,
                 keep_sentence_boundaries: bool = False, scalar_mix_parameters: list[float] | None = None) -> None:
        super().__init__()
        self.bilm = ElmoBiLm(options_file, weight_file, requires_grad)
        self.keep_sentence_boundaries = keep_sentence_boundaries
        self.dropout = torch.nn.Dropout(dropout)
        self.scalar_mixes = torch.nn.ModuleList(
            ScalarMix(self.bilm.num_layers, do_layer_norm, scalar_mix_parameters, trainable=scalar_mix_parameters is None)
            for _ in range(num_output_representations))
        self.output_dim = self.bilm.output_dim

    def get_output_dim(self) -> int:
        return self.output_dim

    def forward(self, character_ids: torch.Tensor) -> dict[str, Any]:
        """``{"elmo_representations": [(batch, tokens, dim)...], "mask": (batch, tokens)}``; inputs with
        more leading dimensions (batch, ..., tokens, 50) come back shaped alike."""
        leading = character_ids.shape[:-2]
        layers, mask = self.bilm(character_ids.reshape(-1, *character_ids.shape[-2:]))
        representations = []
        for scalar_mix in self.scalar_mixes:
            mixed, kept = scalar_mix(layers, mask), mask
            if not self.keep_sentence_boundaries:
                mixed, kept = remove_sentence_boundaries(mixed, mask)
            representations.append(self.dropout(mixed).reshape(*leading, *mixed.shape[-2:]))
        if not self.scalar_mixes:
            kept = mask if self.keep_sentence_boundaries else remove_sentence_boundaries(layers[0], mask)[1]
        return {"elmo_representations": representations, "mask": kept.reshape(*leading, kept.shape[-1])}


Elmo.register("elmo")(Elmo)


def remove_sentence_boundaries(tensor: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(batch, steps, dim) with ``<S>`` first and ``</S>`` after the last real step → (batch, steps - 2,
    dim) without them, zero past each row's length, and the mask of what is left."""
    lengths = mask.sum(-1, keepdim=True) - 2
    kept = torch.arange(tensor.shape[1] - 2, device=tensor.device).unsqueeze(0) < lengths
    inner = tensor[:, 1:-1]
    return torch.where(kept.unsqueeze(-1), inner, torch.zeros_like(inner)), kept
