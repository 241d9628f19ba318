"""What both taggers share: their metrics under AllenNLP's names (so ``"+f1-measure-overall"`` selects
the best epoch as it did there) and their predictions as one tag per word."""

from __future__ import annotations

from typing import Any

import torch

from distrain.metrics.categorical_accuracy import CategoricalAccuracy
from distrain.metrics.metric import Metric
from distrain.metrics.span_f1 import SpanF1

SPAN_ENCODINGS = ("BIO", "IOB1", "BIOUL", "BMES")


def tagger_metrics(calculate_span_f1: bool | None, label_encoding: str | None) -> dict[str, Metric]:
    """``accuracy``, ``accuracy3`` and, when asked (by default whenever a label encoding is given), span F1."""
    metrics: dict[str, Metric] = {"accuracy": CategoricalAccuracy(), "accuracy3": CategoricalAccuracy(top_k=3)}
    if calculate_span_f1 is None:
        calculate_span_f1 = label_encoding is not None
    if calculate_span_f1:
        if label_encoding is None:
            raise ValueError("calculate_span_f1 needs a label_encoding")
        metrics["spans"] = SpanF1(tag_scheme=label_encoding)
    return metrics


def span_metric_names(values: dict[str, float], verbose: bool) -> dict[str, float]:
    """span_f1's results by AllenNLP's names: ``f1-measure-overall``, and per type (``f1-measure-PER``)
    only when ``verbose``."""
    renamed = {}
    for key, value in values.items():
        kind, _, measure = key.rpartition("_")
        name = "f1-measure" if measure == "f1" else measure
        if not kind:
            renamed[f"{name}-overall"] = value
        elif verbose:
            renamed[f"{name}-{kind}"] = value
    return renamed


class TaggerOutputs:
    """Mixin for taggers with ``self.metrics``, ``self.vocab``, ``self.label_namespace`` and ``self.verbose_metrics``."""

    def build_encoding(self, text_field_embedder: Any, encoder: Any, label_namespace: str,
                       verbose_metrics: bool) -> None:
        """What every tagger sets up alike: its label names, and the text-field embedder with the encoder over it
        (built for the embedder's width)."""
        self.label_namespace = label_namespace
        self.verbose_metrics = verbose_metrics
        self.use_label_names(label_namespace)
        self.text_field_embedder = text_field_embedder
        self.encoder = encoder.construct(input_dim=text_field_embedder.get_output_dim())

    def get_metrics(self, reset: bool = False) -> dict[str, float]:
        values: dict[str, float] = {}
        for name, metric in self.metrics.items():
            value = metric.get_metric(reset)
            if isinstance(value, dict):
                values.update(span_metric_names(value, self.verbose_metrics) if isinstance(metric, SpanF1)
                              else {f"{name}_{key}": v for key, v in value.items()})
            else:
                values[name] = value
        return values

    #: forward outputs the readable form leaves out (distrain's own, which AllenNLP's taggers do not give)
    internal_outputs = ("metadata", "tag_ids")

    def make_output_human_readable(self, output: dict[str, Any]) -> dict[str, Any]:
        """AllenNLP's form: the forward pass's outputs with each sentence's ``tags`` (a tag per word, padding left
        out) and, where the reader gave them, its ``words``."""
        labels = self.vocab.tokens(self.label_namespace)
        readable = {key: value for key, value in output.items() if key not in self.internal_outputs}
        readable["tags"] = [[labels[int(i)] for i in torch.as_tensor(row)[torch.as_tensor(keep).bool()]]
                            for row, keep in zip(output["tag_ids"], output["mask"])]
        metadata = output.get("metadata")
        if metadata is not None and all(item is not None and "words" in item for item in metadata):
            readable["words"] = [item["words"] for item in metadata]
        return readable
