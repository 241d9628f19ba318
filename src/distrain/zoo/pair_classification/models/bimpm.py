"""Wang et al.'s Bilateral Multi-Perspective Matching (AllenNLP's ``bimpm``): match both texts word by word on
three levels (the embeddings, then each direction of two stacked encoders), aggregate each text's matching vectors
into one and classify the pair from both.

A matcher of an encoder sees half of its output (the forward half, or the backward one), so its ``hidden_dim`` is
half the encoder's width; the aggregator reads all five matchers' vectors side by side. These widths, stated in the
config as AllenNLP's are, are checked before data is read. ``dropout`` is AllenNLP's: one plain dropout after the
embedding, each encoder, the joined matching vectors and the aggregator.
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model
from distrain.zoo.pair_classification.models.outputs import PairClassifierOutputs
from distrain.zoo.pair_classification.modules.bimpm_matching import BiMpmMatching
from distrain.modules.feedforward import FeedForward
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.modules.sizes import chain_problems, input_problems, output_dim
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors, get_text_field_mask

#: the matchers in the order their vectors are joined, with the encoder level each one reads (0: the embedding)
MATCHERS = (("matcher_word", 0), ("matcher_forward1", 1), ("matcher_backward1", 1), ("matcher_forward2", 2),
            ("matcher_backward2", 2))


@Model.register("bimpm")
class BiMpm(PairClassifierOutputs, Model):
    """embed → encode twice → match (the embedding, both halves of each encoding) → aggregate → classify."""

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder, matcher_word: BiMpmMatching,
                 encoder1: Lazy[Seq2SeqEncoder], matcher_forward1: BiMpmMatching, matcher_backward1: BiMpmMatching,
                 encoder2: Lazy[Seq2SeqEncoder], matcher_forward2: BiMpmMatching, matcher_backward2: BiMpmMatching,
                 aggregator: Lazy[Seq2VecEncoder], classifier_feedforward: Lazy[FeedForward],
                 dropout: Probability = 0.1) -> None:
        super().__init__(vocab, self.default_metrics())
        self.use_label_names(self.label_namespace)
        self.text_field_embedder = text_field_embedder
        self.matcher_word = matcher_word
        self.encoder1 = encoder1.construct(input_dim=text_field_embedder.get_output_dim())
        self.matcher_forward1, self.matcher_backward1 = matcher_forward1, matcher_backward1
        self.encoder2 = encoder2.construct(input_dim=self.encoder1.get_output_dim())
        self.matcher_forward2, self.matcher_backward2 = matcher_forward2, matcher_backward2
        matching = sum(getattr(self, name).get_output_dim() for name, _ in MATCHERS)
        self.aggregator = aggregator.construct(input_dim=matching)
        self.classifier_feedforward = classifier_feedforward.construct(input_dim=2 * self.aggregator.get_output_dim())
        self.dropout = torch.nn.Dropout(dropout)

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """Encoders chain from the embedding; each matcher's ``hidden_dim`` is its level's width (half an
        encoder's); the aggregator reads the matchers' widths summed, the classifier both aggregated texts."""
        widths = [output_dim(arguments["text_field_embedder"])]
        problems, sources = [], ["the text_field_embedder"]
        for level in (1, 2):
            more, width = chain_problems([(f"encoder{level}", arguments[f"encoder{level}"])], widths[-1],
                                         sources[-1])
            problems += more
            widths.append(width)
            sources.append(f"half of encoder{level}'s output")
        for name, level in MATCHERS:
            width = widths[level] if level == 0 or widths[level] is None else widths[level] // 2
            problems += input_problems(arguments[name], width, name, sources[level])
        matched = [output_dim(arguments[name]) for name, _ in MATCHERS]
        more, aggregated = chain_problems([("aggregator", arguments["aggregator"])],
                                          None if None in matched else sum(matched),
                                          "the matching vectors (the five matchers' widths summed)")
        problems += more
        problems += chain_problems([("classifier_feedforward", arguments["classifier_feedforward"])],
                                   2 * aggregated if aggregated else None,
                                   "both aggregated texts (twice the aggregator's width)")[0]
        return problems

    def forward(self, premise: TextFieldTensors, hypothesis: TextFieldTensors, label: torch.Tensor | None = None,
                metadata: list | None = None, **_: Any) -> dict[str, Any]:
        premise_mask, hypothesis_mask = get_text_field_mask(premise), get_text_field_mask(hypothesis)
        premise_levels = self._levels(premise, premise_mask)
        hypothesis_levels = self._levels(hypothesis, hypothesis_mask)
        matching_premise: list[torch.Tensor] = []
        matching_hypothesis: list[torch.Tensor] = []
        for name, level in MATCHERS:
            words_premise, words_hypothesis = premise_levels[level], hypothesis_levels[level]
            if level:  # the forward or the backward half of the encoding
                half = words_premise.shape[-1] // 2
                part = slice(None, half) if "forward" in name else slice(half, None)
                words_premise, words_hypothesis = words_premise[..., part], words_hypothesis[..., part]
            for_premise, for_hypothesis = getattr(self, name)(words_premise, premise_mask, words_hypothesis,
                                                              hypothesis_mask)
            matching_premise += for_premise
            matching_hypothesis += for_hypothesis
        # AllenNLP's order of dropouts (one random stream): both joined vectors, then each text's aggregate
        joined_premise = self.dropout(torch.cat(matching_premise, dim=2))
        joined_hypothesis = self.dropout(torch.cat(matching_hypothesis, dim=2))
        aggregated_premise = self.dropout(self.aggregator(joined_premise, premise_mask))
        aggregated_hypothesis = self.dropout(self.aggregator(joined_hypothesis, hypothesis_mask))
        logits = self.classifier_feedforward(torch.cat([aggregated_premise, aggregated_hypothesis], dim=-1))
        output = self.classify(logits, label.long().view(-1) if label is not None else None)
        output["label_probs"] = torch.softmax(logits, dim=-1)
        return output

    def _levels(self, text: TextFieldTensors, mask: torch.Tensor) -> list[torch.Tensor]:
        """The text's words embedded, encoded once and encoded twice (each after dropout)."""
        embedded = self.dropout(self.text_field_embedder(text))
        encoded1 = self.dropout(self.encoder1(embedded, mask))
        return [embedded, encoded1, self.dropout(self.encoder2(encoded1, mask))]
