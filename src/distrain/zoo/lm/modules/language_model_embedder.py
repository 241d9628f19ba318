"""allennlp-models' ``language_model_token_embedder`` and ``bidirectional_lm_token_embedder``: ELMo built from a
trained ``language_model`` archive. Its contextualizer is rebuilt to return every layer; a learned scalar mix
averages the non-contextual token embeddings (repeated to the contextual width) and those layers.

The tokens must be indexed as the language model's were (``elmo_characters``); the archive's indexer gives the ids
of ``bos_eos_tokens``, put around each sentence before the model and, with ``remove_bos_eos``, cut after it. Here in
experiment/ beside ``from_archive`` because it loads an archive (which modules/ must not import)."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any, Mapping

import torch

from distrain.config.constraints import Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.modules.elmo import remove_sentence_boundaries
from distrain.modules.elmo_character_encoder import add_sentence_boundaries
from distrain.modules.elmo_characters import elmo_character_ids
from distrain.modules.scalar_mix import ScalarMix
from distrain.modules.token_embedder import TokenEmbedder
from distrain.modules.token_embedders.empty import EmptyEmbedder

#: what the embedder changes in the language model's config: every layer out, not the top one alone
ALL_LAYERS = {"model.contextualizer.return_all_layers": True}


@TokenEmbedder.register("language_model_token_embedder")
class LanguageModelTokenEmbedder(TokenEmbedder):
    """A mix of the layers of the language model in ``archive_file``, then ``dropout``; the model is frozen unless
    ``requires_grad`` (the mix is always learned). Its softmax is dropped: no loss is computed."""

    def __init__(self, archive_file: str, dropout: Probability | None = None,
                 bos_eos_tokens: tuple[str, str] | None = ("<S>", "</S>"), remove_bos_eos: bool = True,
                 requires_grad: bool = False) -> None:
        super().__init__()
        from distrain.experiment.archive.format import load_archive

        archive = load_archive(archive_file, dict(ALL_LAYERS))
        self.lm = archive.model
        if not hasattr(self.lm, "delete_softmax"):
            raise ValueError(f"{archive_file} holds a {type(self.lm).__name__}, not a language_model")
        self.lm.delete_softmax()
        self.token_name = _the_embedded_indexer(self.lm, archive_file)
        boundaries = _boundary_ids(archive.config, self.token_name, bos_eos_tokens, archive_file)
        self.register_buffer("boundaries", boundaries, persistent=False)
        self.dropout = torch.nn.Dropout(dropout) if dropout else torch.nn.Identity()
        self.remove_bos_eos = remove_bos_eos
        self.scalar_mix = ScalarMix(self.lm.num_layers(), do_layer_norm=False, trainable=True)
        character_dim = self.lm.text_field_embedder.get_output_dim()
        self.output_dim = self.lm.contextualizer.get_output_dim()
        if self.output_dim % character_dim:
            raise ValueError(f"{archive_file}: the language model's token embeddings ({character_dim} wide) do not "
                             f"divide its contextualizer's width ({self.output_dim})")
        self.repeats = self.output_dim // character_dim
        self.lm.requires_grad_(requires_grad)

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        archive = arguments.get("archive_file")
        if isinstance(archive, str) and not Path(archive).is_file():
            return [Problem("archive_file", f"{archive} does not exist")]
        return []

    @classmethod
    def configured_output_dim(cls, recipe: Lazy, input_dim: int | None = None) -> int | None:
        """Read from the archive's config.json, where its contextualizer states its width (the transformer's)."""
        try:
            with tarfile.open(recipe.argument("archive_file")) as archive:
                member = next(m for m in archive.getmembers() if Path(m.name).name == "config.json")
                config = json.loads(archive.extractfile(member).read())
            contextualizer = config["model"]["contextualizer"]
            if contextualizer.get("type") == "bidirectional_language_model_transformer":
                return 2 * int(contextualizer["input_dim"])
        except (OSError, TypeError, KeyError, ValueError, StopIteration, AttributeError, tarfile.TarError):
            pass
        return None

    def forward(self, elmo_tokens: torch.Tensor) -> torch.Tensor:
        """(batch, tokens, 50) character ids → (batch, tokens, output_dim)."""
        if self.boundaries.numel():
            elmo_tokens, _ = add_sentence_boundaries(elmo_tokens, self.boundaries[0], self.boundaries[1])
        produced = self.lm(source={self.token_name: {"token_characters": elmo_tokens}})
        layers = produced["lm_embeddings"]
        layers = layers if isinstance(layers, list) else [layers]
        repeated = torch.cat([produced["noncontextual_token_embeddings"]] * self.repeats, -1)
        mixed = self.dropout(self.scalar_mix([repeated, *layers]))
        if self.remove_bos_eos:
            mixed, _ = remove_sentence_boundaries(mixed, produced["mask"])
        return mixed


@TokenEmbedder.register("bidirectional_lm_token_embedder")
class BidirectionalLanguageModelTokenEmbedder(LanguageModelTokenEmbedder):
    """AllenNLP's name for the same embedder over a bidirectional language model."""


def _the_embedded_indexer(lm: Any, archive_file: str) -> str:
    """The one indexer whose tokens the language model embeds (its others, if any, ``empty``)."""
    embedder = lm.text_field_embedder
    names = [name for name in embedder.names if not isinstance(embedder.embedder(name), EmptyEmbedder)]
    if len(names) != 1:
        raise ValueError(f"{archive_file}: the language model embeds {len(names)} indexers' tokens; "
                         "the embedder needs exactly one")
    return names[0]


def _boundary_ids(config: dict[str, Any], token_name: str, tokens: Any, archive_file: str) -> torch.Tensor:
    """The character ids of ``tokens`` (begin, end) as the archive's ``elmo_characters`` indexer writes them."""
    if not tokens:
        return torch.zeros(0, dtype=torch.long)
    indexer = (config.get("dataset_reader") or {}).get("token_indexers", {}).get(token_name) or {}
    if indexer.get("type") != "elmo_characters":
        raise ValueError(f"{archive_file}: bos_eos_tokens need the language model's {token_name!r} indexer to be "
                         f"elmo_characters, not {indexer.get('type')!r}")
    return torch.tensor([elmo_character_ids(token, indexer.get("tokens_to_add")) for token in tokens])
