"""JSON lines with a dense feature vector and a label: ``{"features": [0.0, 3.0, ...], "label": 7}``."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, Sequence

from distrain.data.fields import LabelField, TensorField
from distrain.data.reader import DatasetReader, RecordError


@DatasetReader.register("feature_classification_json")
class FeatureClassificationJsonReader(DatasetReader):
    """JSON lines with a feature vector and a label; reads only its share, skipping other lines unparsed."""
    distributed_aware = True

    def __init__(self, features_key: str = "features", label_key: str = "label", **kwargs) -> None:
        super().__init__(**kwargs)
        self.features_key = features_key
        self.label_key = label_key
        self._width: int | None = None

    def _read(self, path: Path) -> Iterator[dict]:
        self._width = None
        for number, record in self.json_lines(path, required=(self.features_key,)):
            features = record[self.features_key]
            problem = self._check(features)
            if problem:
                self.invalid(path, number, problem)
                continue
            yield self.text_to_instance(features, record.get(self.label_key))

    def record_to_instance(self, record: dict) -> dict:
        features = self.require(record, self.features_key, list, "a list of numbers")
        problem = self._check(features)
        if problem:
            raise RecordError(problem, self.features_key)
        return self.text_to_instance(features, record.get(self.label_key))

    @classmethod
    def declared_fields(cls, arguments):
        return {"features": True, "label": False}

    def input_fields(self) -> dict[str, str]:
        return {self.features_key: "json"}

    def _check(self, features) -> str | None:
        if not isinstance(features, list) or not all(isinstance(x, (int, float)) for x in features):
            return f'"{self.features_key}" must be a list of numbers'
        if self._width is None:
            self._width = len(features)
        elif len(features) != self._width:
            return f'"{self.features_key}" has {len(features)} values, earlier records had {self._width}'
        return None

    def text_to_instance(self, features: Sequence[float], label: str | int | None = None) -> dict:
        instance = {"features": TensorField(features)}
        if label is not None:
            instance["label"] = LabelField(str(label))
        return instance
