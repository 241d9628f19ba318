"""AllenNLP's ``composed_seq2seq``: a source embedder and seq2seq encoder, and any ``SeqDecoder`` (by default
``auto_regressive_seq_decoder`` over a decoder net: ``lstm_cell`` or ``stacked_self_attention``).

``tied_source_embedder_key`` is checked as AllenNLP checked it (a basic embedder's ``embedding`` of the
target embedding's width) and, as in AllenNLP 2.10.1, ties nothing: AllenNLP put the target embedding in its
embedder's dictionary, but the embedder calls the module registered under the key, which stayed the source's own
(its archives hold two different matrices). Doing the same keeps AllenNLP's archives loading and its training
alike. The loss is the decoder's: a mean over
sequences, so the trainer's per-instance weighting keeps it worker-count independent.
"""

from __future__ import annotations

from typing import Any, Mapping

from distrain.config.errors import Problem
from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model, per_item
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.text_field_embedder import (BasicTextFieldEmbedder, TextFieldEmbedder, TextFieldTensors,
                                                  get_text_field_mask)
from distrain.modules.token_embedders.embedding import Embedding
from distrain.zoo.seq2seq.modules.seq_decoders.seq_decoder import SeqDecoder


@Model.register("composed_seq2seq")
class ComposedSeq2Seq(Model):
    """A source embedder and seq2seq encoder, then any ``SeqDecoder`` over what they give."""

    default_predictor = "seq2seq"

    #: the self-attention decoder's sinusoid table, which AllenNLP saved and distrain computes
    allennlp_unused = (r"\._positional_embedder\.positional_encoding$",)

    def __init__(self, vocab: Vocabulary, source_text_embedder: TextFieldEmbedder, encoder: Seq2SeqEncoder,
                 decoder: SeqDecoder, tied_source_embedder_key: str | None = None) -> None:
        super().__init__(vocab)
        self.source_text_embedder = source_text_embedder
        self.encoder = encoder
        self.decoder = decoder
        if encoder.get_output_dim() != decoder.get_output_dim():
            raise ValueError(f"the encoder's output width {encoder.get_output_dim()} is not the decoder's "
                             f"{decoder.get_output_dim()}")
        if tied_source_embedder_key:
            self.tie_source_embedder(tied_source_embedder_key)
        metrics = getattr(decoder, "metrics", None)
        for name, metric in (metrics() if callable(metrics) else {}).items():
            self.metrics[f"decoder_{name}"] = metric

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        return []  # the decoder, not a seq2vec encoder, follows the encoder: the base chain does not apply

    def tie_source_embedder(self, key: str) -> None:
        """AllenNLP's checks of the tie (see the module's docstring: it ties nothing)."""
        embedder = self.source_text_embedder
        if not isinstance(embedder, BasicTextFieldEmbedder):
            raise ValueError("tied_source_embedder_key: the source_text_embedder is not a basic text field embedder")
        if key not in embedder.names or not isinstance(embedder.embedder(key), Embedding):
            raise ValueError(f"tied_source_embedder_key: {key!r} is not an embedding of the source_text_embedder")
        if embedder.embedder(key).get_output_dim() != self.decoder.target_embedder.get_output_dim():
            raise ValueError("tied_source_embedder_key: the source and target embeddings differ in width")

    def forward(self, source_tokens: TextFieldTensors, target_tokens: TextFieldTensors | None = None,
                **_: Any) -> dict[str, Any]:
        mask = get_text_field_mask(source_tokens)
        encoded = self.encoder(self.source_text_embedder(source_tokens), mask)
        return self.decoder({"source_mask": mask, "encoder_outputs": encoded}, target_tokens)

    def make_output_human_readable(self, output: dict[str, Any]) -> list[dict[str, Any]]:
        """The decoder's ``predicted_tokens`` (the best beam's, as AllenNLP's) beside every beam's ids."""
        return per_item(self.decoder.post_process(output))

    def get_metrics(self, reset: bool = False) -> dict[str, float]:
        return self.decoder.get_metrics(reset)
