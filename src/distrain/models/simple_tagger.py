"""A tag per token from a linear layer over the encoded sequence (AllenNLP's ``simple_tagger``).

The loss is the mean over all tokens of the step, whatever the workers' shares (it returns the token
count as ``loss_weight``); AllenNLP averaged per sentence first.
"""

from __future__ import annotations

from typing import Any, Literal

import torch

from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model
from distrain.models.tagging import TaggerOutputs, tagger_metrics
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors, get_text_field_mask


@Model.register("simple_tagger")
class SimpleTagger(TaggerOutputs, Model):
    """``text_field_embedder`` → ``encoder`` → a linear layer to the ``label_namespace`` tags."""

    #: AllenNLP's simple tagger gives no mask: the readable form leaves it out too
    internal_outputs = ("metadata", "tag_ids", "mask")
    default_predictor = "sentence_tagger"

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder, encoder: Lazy[Seq2SeqEncoder],
                 calculate_span_f1: bool | None = None,
                 label_encoding: Literal["BIO", "IOB1", "BIOUL", "BMES"] | None = None,
                 label_namespace: str = "labels", verbose_metrics: bool = False) -> None:
        super().__init__(vocab, tagger_metrics(calculate_span_f1, label_encoding))
        self.build_encoding(text_field_embedder, encoder, label_namespace, verbose_metrics)
        self.tag_projection_layer = torch.nn.Linear(self.encoder.get_output_dim(), vocab.size(label_namespace))

    def forward(self, tokens: TextFieldTensors, tags: torch.Tensor | None = None, metadata: list | None = None,
                **_: Any) -> dict[str, Any]:
        mask = get_text_field_mask(tokens)
        logits = self.tag_projection_layer(self.encoder(self.text_field_embedder(tokens), mask))
        output: dict[str, Any] = {"logits": logits, "class_probabilities": torch.softmax(logits, dim=-1), "mask": mask,
                                  "tag_ids": logits.argmax(-1), "metadata": metadata}
        if tags is not None:
            count = mask.sum()
            losses = torch.nn.functional.cross_entropy(logits.transpose(1, 2), tags.clamp(min=0), reduction="none")
            output["loss"] = (losses * mask).sum() / count.clamp(min=1)
            output["loss_weight"] = count
            for metric in self.metrics.values():
                metric(logits, tags, mask)
        return output
