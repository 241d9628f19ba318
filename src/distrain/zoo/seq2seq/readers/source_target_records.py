"""What the source-to-target readers share: a JSON record ``{"source": ..., "target": ...}`` as one instance (what
``distrain predict`` and ``serve`` read; AllenNLP's seq2seq predictor sent ``source``)."""

from __future__ import annotations


class SourceTargetRecords:
    """Mixin for readers whose ``text_to_instance(source, target=None)`` reads two texts."""

    def record_to_instance(self, record: dict) -> dict:
        source = self.require(record, "source", str, "a string")
        target = self.require(record, "target", str, "a string") if "target" in record else None
        return self.text_to_instance(source, target)

    def input_fields(self) -> dict[str, str]:
        return {"source": "text"}
