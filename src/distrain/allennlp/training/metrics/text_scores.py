"""AllenNLP's ``BLEU`` and ``ROUGE`` (distrain's, :mod:`distrain.zoo.seq2seq.metrics`) with the counters AllenNLP's
code reads: ``_precision_matches`` / ``_precision_totals`` by n-gram order, the two lengths, the brevity penalty,
and ROUGE's ``_total_*`` sums by order and ``_total_sequence_count``, all this worker's summed statistics."""

from __future__ import annotations

import math

from distrain.allennlp.training.metrics.statistic import Statistic
from distrain.zoo.seq2seq.metrics.bleu import Bleu
from distrain.zoo.seq2seq.metrics.rouge import Rouge

__all__ = ["BLEU", "ROUGE"]


class _Sums:
    def _by_order(self, name: str, orders: int) -> dict[int, float]:
        value = self._stats.get(name)  # type: ignore[attr-defined]
        values = [] if value is None else value.reshape(-1).tolist()
        return {order: (values[order - 1] if order <= len(values) else 0.0) for order in range(1, orders + 1)}


class BLEU(_Sums, Bleu):
    @property
    def _exclude_indices(self) -> set[int]:
        return self.exclude_indices

    @property
    def _ngram_weights(self) -> tuple[float, ...]:
        return self.ngram_weights

    @property
    def _precision_matches(self) -> dict[int, float]:
        return self._by_order("matches", len(self.ngram_weights))

    @property
    def _precision_totals(self) -> dict[int, float]:
        return self._by_order("totals", len(self.ngram_weights))

    _prediction_lengths = Statistic("prediction_lengths")

    _reference_lengths = Statistic("reference_lengths")

    def _get_brevity_penalty(self) -> float:
        predicted, reference = self._prediction_lengths, self._reference_lengths
        if predicted > reference:
            return 1.0
        if reference == 0 or predicted == 0:
            return 0.0
        return math.exp(1.0 - reference / predicted)


class ROUGE(_Sums, Rouge):
    _total_sequence_count = Statistic("sequences")

    @property
    def _total_rouge_n_recalls(self) -> dict[int, float]:
        return self._by_order("recalls", self.ngram_size)

    @property
    def _total_rouge_n_precisions(self) -> dict[int, float]:
        return self._by_order("precisions", self.ngram_size)

    @property
    def _total_rouge_n_f1s(self) -> dict[int, float]:
        return self._by_order("f1s", self.ngram_size)

    _total_rouge_l_f1 = Statistic("rouge_l")
