"""AllenNLP's Biattentive Classification Network (``bcn``; McCann et al. 2017, section 5).

Embed → feed-forward → seq2seq ``encoder`` → self-biattention → ``integrator`` over [x, x - a, x * a] → max, min,
mean and self-attentive pooling → ``output_layer`` (a feed-forward or a maxout: AllenNLP tells them apart by their
keys, and so does the config check here). ELMo, when given, is a model argument of its own (not a token embedder,
as in AllenNLP), mixed into the input, the integrator's output, or both. Widths are checked before data is read.
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.metrics.categorical_accuracy import CategoricalAccuracy
from distrain.models.classification import ClassifierOutputs
from distrain.models.model import Model
from distrain.modules.elmo import Elmo, read_options
from distrain.modules.feedforward import FeedForward
from distrain.modules.masked_softmax import masked_softmax, weighted_sum
from distrain.modules.maxout import Maxout
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import chain_problems, input_problems, output_dim
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors, get_text_field_mask

ELMO = "elmo"  # the indexer name whose tokens go to the model's ELMo, never to the text field embedder


@Model.register("bcn")
class BiattentiveClassificationNetwork(ClassifierOutputs, Model):
    """Biattention over one text, four poolings, then ``output_layer`` to the labels (namespace ``labels``)."""

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        embedding_dropout: Probability,
        pre_encode_feedforward: Lazy[FeedForward],
        encoder: Lazy[Seq2SeqEncoder],
        integrator: Lazy[Seq2SeqEncoder],
        integrator_dropout: Probability,
        output_layer: Lazy[FeedForward] | Lazy[Maxout],
        elmo: Elmo | None = None,
        use_input_elmo: bool = False,
        use_integrator_output_elmo: bool = False,
    ) -> None:
        super().__init__(vocab, {"accuracy": CategoricalAccuracy(), "accuracy3": CategoricalAccuracy(top_k=3)})
        self.label_namespace = "labels"
        self.use_label_names("labels")
        self.text_field_embedder = text_field_embedder
        self.elmo = elmo
        self.use_input_elmo, self.use_integrator_output_elmo = use_input_elmo, use_integrator_output_elmo
        elmo_width = elmo.get_output_dim() if elmo is not None else 0
        self.embedding_dropout = torch.nn.Dropout(embedding_dropout)
        width = text_field_embedder.get_output_dim() + (elmo_width if use_input_elmo else 0)
        self.pre_encode_feedforward = pre_encode_feedforward.construct(input_dim=width)
        self.encoder = encoder.construct(input_dim=self.pre_encode_feedforward.get_output_dim())
        self.integrator = integrator.construct(input_dim=self.encoder.get_output_dim() * 3)
        self.integrator_dropout = torch.nn.Dropout(integrator_dropout)
        width = self.integrator.get_output_dim() + (elmo_width if use_integrator_output_elmo else 0)
        self.self_attentive_pooling_projection = torch.nn.Linear(width, 1)
        self.output_layer = output_layer.construct(input_dim=width * 4)
        if self.output_layer.get_output_dim() != vocab.size("labels"):
            raise ValueError(f"output_layer gives {self.output_layer.get_output_dim()} values for "
                             f"{vocab.size('labels')} labels")

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """ELMo given exactly when a ``use_*_elmo`` flag is set, and the stated widths along the chain."""
        elmo, flags = arguments.get("elmo"), [arguments.get("use_input_elmo"), arguments.get("use_integrator_output_elmo")]
        if elmo is None and any(flags):
            return [Problem("elmo", "missing: use_input_elmo or use_integrator_output_elmo asks for ELMo")]
        if elmo is not None and not any(flags):
            return [Problem("elmo", "is never used: set use_input_elmo or use_integrator_output_elmo")]
        embedder = arguments["text_field_embedder"]
        problems = []
        if ELMO in embedder.parts.get("token_embedders", {}):
            problems.append(Problem("text_field_embedder.token_embedders.elmo",
                                    "ELMo is the model's own elmo argument here, with use_input_elmo, as in AllenNLP"))
        width = embedder.cls.configured_output_dim(embedder)
        if elmo is not None and elmo.argument("num_output_representations") != sum(map(bool, flags)):
            problems.append(Problem("elmo.num_output_representations", f"must be {sum(map(bool, flags))}: one "
                                    "representation per use_*_elmo flag set"))
        elmo_width = _elmo_width(elmo) if elmo is not None else 0
        if problems or width is None or elmo_width is None:
            return problems
        source = "the text_field_embedder" + (" and ELMo" if flags[0] else "")
        problems, width = chain_problems([("pre_encode_feedforward", arguments["pre_encode_feedforward"]),
                                          ("encoder", arguments["encoder"])],
                                         width + (elmo_width if flags[0] else 0), source)
        if problems or width is None:
            return problems
        problems = input_problems(arguments["integrator"], width * 3, "integrator", "3 × the encoder's output")
        width = output_dim(arguments["integrator"], width * 3)
        if problems or width is None:
            return problems
        width += elmo_width if flags[1] else 0
        source = "4 × the integrator's output" + (" and ELMo" if flags[1] else "")
        return input_problems(arguments["output_layer"], width * 4, "output_layer", source)

    def forward(self, tokens: TextFieldTensors, label: torch.Tensor | None = None, **_: Any) -> dict[str, torch.Tensor]:
        mask = get_text_field_mask(tokens)
        words = {name: tensors for name, tensors in tokens.items() if name != ELMO}
        embedded = self.text_field_embedder(words) if words else None
        if self.elmo is not None:
            if ELMO not in tokens:  # AllenNLP's check: the reader's indexers give no ELMo characters
                from distrain.config.errors import ConfigError

                raise ConfigError(f'dataset_reader.token_indexers: the model uses ELMo, but no indexer named "{ELMO}" '
                                  "gives it characters (an elmo_characters indexer)")
            mixes = self.elmo(tokens[ELMO]["elmo_tokens"])["elmo_representations"]
            if self.use_input_elmo:  # AllenNLP's order: the input's mix first, the integrator's last
                embedded = mixes[0] if embedded is None else torch.cat([embedded, mixes[0]], -1)
        encoded = self.encoder(self.pre_encode_feedforward(self.embedding_dropout(embedded)), mask)
        attention = masked_softmax(encoded.bmm(encoded.transpose(1, 2)), mask)
        attended = weighted_sum(encoded, attention)
        integrated = self.integrator(torch.cat([encoded, encoded - attended, encoded * attended], 2), mask)
        if self.use_integrator_output_elmo:
            integrated = torch.cat([integrated, mixes[-1]], -1)
        pooled = torch.cat([*_max_min_mean(integrated, mask), self._self_attentive_pool(integrated, mask)], 1)
        logits = self.output_layer(self.integrator_dropout(pooled))
        output = self.classify(logits, label)
        output["class_probabilities"] = torch.softmax(logits, -1)
        return output

    def _self_attentive_pool(self, integrated: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        weights = masked_softmax(self.self_attentive_pooling_projection(integrated).squeeze(2), mask)
        return weighted_sum(integrated, weights)


def _elmo_width(elmo: Lazy) -> int | None:
    """ELMo's output width from its options file (None while the file cannot be read: its own check says why)."""
    try:
        return 2 * read_options(elmo.argument("options_file"))["lstm"]["projection_dim"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _max_min_mean(integrated: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Max and min over real tokens only; the mean sums every position (the integrator zeroes padding)."""
    limits = torch.finfo(integrated.dtype)
    real = mask.unsqueeze(2)
    largest = integrated.masked_fill(~real, limits.min).max(1).values
    smallest = integrated.masked_fill(~real, limits.max).min(1).values
    return largest, smallest, integrated.sum(1) / mask.sum(1, keepdim=True)
