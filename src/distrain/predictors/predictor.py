"""AllenNLP's ``Predictor``: JSON in, the model's outputs for it as JSON out, one input or a batch at a time.

A subclass says how a JSON input becomes an instance (``_json_to_instance``, usually through
``self._dataset_reader.text_to_instance``); the base class indexes it with the model's vocabulary, runs the
model as ``distrain predict`` does (:meth:`Model.predict`: the forward pass, made readable by
``make_output_human_readable``) and sanitizes the result. Registered subclasses are found by name, as
``Predictor.from_path(archive, "sentence_classifier")`` does. Without a subclass, a distrain reader's own
``record_to_instance`` reads the JSON, as ``distrain serve`` reads a request.
"""

from __future__ import annotations

import json
from typing import Any

from distrain.experiment.archive.loaded import Archive, load_archive
from distrain.predictors.sanitize import JsonDict, sanitize
from distrain.data.fields import Instance
from distrain.data.reader import DatasetReader, RecordError
from distrain.models.model import Model
from distrain.registry import Registrable


class Predictor(Registrable):
    #: whether one JSON input is one instance (``_json_to_instance``); a predictor whose input becomes several
    #: (one per predicate, say) answers whole inputs with ``predict_batch_json``, and checks one with ``validate_json``
    one_instance_per_input = True
    #: an input ``distrain serve`` answers once before it says it is ready (None: no warm-up)
    warm_up_input: JsonDict | None = None

    def __init__(self, model: Model, dataset_reader: DatasetReader, frozen: bool = True) -> None:
        if frozen:
            model.eval()
        self._model = model
        self._dataset_reader = dataset_reader

    # ---------------------------------------------------------------- AllenNLP's interface
    def load_line(self, line: str) -> JsonDict:
        """One line of an input file as a JSON input."""
        return json.loads(line)

    def dump_line(self, outputs: JsonDict) -> str:
        """One output as a line of an output file."""
        return json.dumps(outputs) + "\n"

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_instance(self._json_to_instance(inputs))

    def predict_batch_json(self, inputs: list[JsonDict]) -> list[JsonDict]:
        return self.predict_batch_instance(self._batch_json_to_instances(inputs))

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self.predict_batch_instance([instance])[0]

    def predict_batch_instance(self, instances: list[Instance]) -> list[JsonDict]:
        """The model's readable outputs, one per instance; instances with different fields (some labelled)
        run as separate batches. A labelled instance counts towards no metric, and a label the model never
        saw is a :class:`RecordError` naming it."""
        groups: dict[tuple[str, ...], list[int]] = {}
        for position, instance in enumerate(instances):
            groups.setdefault(tuple(sorted(instance)), []).append(position)
        outputs: list[JsonDict] = [{} for _ in instances]
        for positions in groups.values():
            for position, output in zip(positions, self._run([instances[p] for p in positions])):
                outputs[position] = output
        return outputs

    def _run(self, instances: list[Instance]) -> list[JsonDict]:
        """AllenNLP's ``predict_batch_instance``: the model's ``forward_on_instances``, sanitized."""
        try:
            with self._model.metrics_frozen():
                return sanitize(self._model.forward_on_instances(instances))
        except KeyError as error:
            raise RecordError(f"{error.args[0]} (the model's vocabulary cannot index it)") from None

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        """Override to read your JSON; a distrain reader reads it as one record of its data file."""
        try:
            return self._dataset_reader.record_to_instance(json_dict)
        except NotImplementedError:
            raise NotImplementedError(
                f"{type(self._dataset_reader).__name__} cannot read a JSON record: write a Predictor subclass whose "
                "_json_to_instance builds the instance (e.g. with self._dataset_reader.text_to_instance)") from None

    @staticmethod
    def required(json_dict: JsonDict, key: str) -> Any:
        """``json_dict[key]``, or a :class:`RecordError` naming the key the input lacks (a one-line answer
        where a ``KeyError`` would be a traceback)."""
        if not isinstance(json_dict, dict):
            raise RecordError(f"an input is a JSON object with {key!r}, got {type(json_dict).__name__}")
        if key not in json_dict:
            raise RecordError(f"missing key {key!r} (the input has {sorted(json_dict)})", key)
        return json_dict[key]

    def validate_json(self, json_dict: JsonDict) -> None:
        """A :class:`RecordError` naming the key where the input cannot be answered (before it joins a batch)."""
        self._json_to_instance(json_dict)

    def _batch_json_to_instances(self, json_dicts: list[JsonDict]) -> list[Instance]:
        return [self._json_to_instance(json_dict) for json_dict in json_dicts]

    # ---------------------------------------------------------------- from an archive
    @classmethod
    def from_path(cls, archive_path: str, predictor_name: str | None = None, cuda_device: int = -1,
                  dataset_reader_to_load: str = "validation", frozen: bool = True, import_plugins: bool = True,
                  overrides: str | dict[str, Any] = "", **kwargs: Any) -> Predictor:
        """The predictor ``predictor_name`` (else as :meth:`from_archive` chooses) over the archive at
        ``archive_path``; ``kwargs`` go to its constructor. ``import_plugins`` imports the packages that
        declare the ``distrain.plugins`` entry point (AllenNLP's plugins); import your own package first."""
        if import_plugins:
            from distrain import plugins

            plugins.import_plugins()
        archive = load_archive(archive_path, cuda_device=cuda_device, overrides=overrides)
        return cls.from_archive(archive, predictor_name, dataset_reader_to_load, frozen, kwargs)

    @classmethod
    def from_archive(cls, archive: Archive, predictor_name: str | None = None,
                     dataset_reader_to_load: str = "validation", frozen: bool = True,
                     extra_args: dict[str, Any] | None = None) -> Predictor:
        """A predictor over a loaded :class:`Archive`: the one registered as ``predictor_name``, else the model
        class's ``default_predictor`` if it names one, else this class; it reads inputs with the archive's
        validation reader (``dataset_reader_to_load="train"``: its training reader)."""
        name = predictor_name or getattr(type(archive.model), "default_predictor", None)
        predictor_class = Predictor.by_name(name) if name else cls
        if dataset_reader_to_load not in ("validation", "train"):
            raise ValueError(f'dataset_reader_to_load is "validation" or "train", got {dataset_reader_to_load!r}')
        reader = archive.validation_dataset_reader if dataset_reader_to_load == "validation" else archive.dataset_reader
        if frozen:
            archive.model.eval()
        return predictor_class(archive.model, reader, **(extra_args or {}))
