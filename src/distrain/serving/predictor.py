"""An archive turned into batched predictions, record by record, exactly as ``distrain predict`` makes them.

:meth:`Predictor.prepare` runs where the request arrives: it validates one input record (a line of
``distrain predict``'s input file, parsed) with the archive's reader and indexes it with the
model's vocabulary, so a bad record is refused before it can join a batch. :meth:`Predictor.predict`
runs on the model thread and answers a list of prepared records with what ``distrain predict``
would write for each (:func:`distrain.training.evaluation.predict_inputs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from distrain.data.reader import RecordError
from distrain.serving.dtype import cast_model


@dataclass(frozen=True)
class Prepared:
    """A validated record: its instance, the names of its fields, and its length (longest text field); a JSON
    predictor that answers whole inputs keeps the ``record`` itself (no instance, no fields)."""

    instance: dict
    fields: tuple[str, ...]
    length: int
    record: dict | None = None


class Predictor:
    """``json_predictor``: a registered AllenNLP-style predictor (``--predictor``) that reads each request as
    its JSON input and answers its model's ``forward_on_instances``, as ``distrain predict --predictor`` does."""

    def __init__(self, model: Any, reader: Any, vocab: Any, config: dict[str, Any] | None = None, device: str = "cpu",
                 json_predictor: Any = None) -> None:
        self.model = model.to(device).eval()
        self.reader = reader
        self.vocab = vocab
        self.config = config or {}
        self.device = device
        self.json_predictor = json_predictor
        self.followers: Any = None  # the other ranks when the model is split over processes
        try:
            self.input_fields = reader.input_fields()
        except NotImplementedError:
            if json_predictor is not None:  # the predictor reads its own JSON
                self.input_fields = {}
                return
            from distrain.errors import UsageError

            raise UsageError(
                f"the archive's dataset reader ({type(reader).__name__}) cannot read a single record; "
                "serving needs a reader that implements record_to_instance() and input_fields()"
            ) from None

    @classmethod
    def from_archive(cls, archive_path: str, overrides: dict[str, Any] | None = None, device: str = "cpu",
                     dtype: str | None = None, predictor_name: str | None = None) -> Predictor:
        """The archive's model with the reader ``distrain predict`` uses (the model's prediction reader:
        its ``validation_dataset_reader``, else ``dataset_reader``, unless it predicts from other inputs),
        its weights cast once to ``dtype`` (:func:`cast_model`)."""
        from distrain.experiment.archive.jobs import load_for_inference

        archive, experiment = load_for_inference(archive_path, overrides or {})
        reader = archive.model.prediction_reader(experiment.validation_dataset_reader)
        model = cast_model(archive.model, dtype)
        json_predictor = None
        if predictor_name is not None:
            from distrain.predictors.predictor import Predictor as JsonPredictor

            json_predictor = JsonPredictor.by_name(predictor_name)(model, experiment.validation_dataset_reader)
        return cls(model, reader, archive.vocab, archive.config, device, json_predictor)

    # ------------------------------------------------------------------- language models
    @property
    def generates(self) -> bool:
        """Whether the model continues prompts (a causal LM): the server then answers through a
        :class:`~distrain.serving.generation_engine.GenerationEngine` and the OpenAI routes."""
        return hasattr(self.model, "end_and_pad_ids") and hasattr(self.model, "transformer")

    @property
    def tokenizer(self) -> Any:
        from distrain.pretrained import load_tokenizer

        return load_tokenizer(self.model.tokenizer_name)

    def generation_setup(self) -> tuple[set[int], int, int | None]:
        """The end ids, the pad id and the model's context length."""
        ends, pad = self.model.end_and_pad_ids(self.tokenizer)
        return ends, pad, self.model.context_length()

    def make_batch(self, **options: Any) -> Any:
        """An empty running batch over the model (the engine thread's), with ``options`` (the prefill
        budget); split over processes, one that sends each of its changes to the other ranks
        (:mod:`distrain.serving.followers`)."""
        from distrain.generation.decoding import batch_class
        from distrain.serving.followers import mirrored

        ends, pad, context = self.generation_setup()
        kind = mirrored(batch_class()) if self.followers is not None else batch_class()
        return kind(self.model.transformer, ends, pad, context, **options)

    def split_over(self, followers: Any) -> None:
        """Split the model with ``followers`` (the other ranks of ``serve --tensor-parallel``)."""
        followers.join(self.model)
        self.followers = followers

    def close(self) -> None:
        """Once nothing computes any more: let the other ranks, if any, leave."""
        if self.followers is not None:
            self.followers.stop()
            self.followers = None

    def prompt_ids(self, prompt: str) -> list[int]:
        """A prompt as ``distrain predict`` tokenizes it; :class:`RecordError` if it is empty or leaves
        no room in the context for a new token."""
        instance = self.prepare({self.reader.prompt_key: prompt}).instance
        return instance["input_ids"].ids.tolist()

    def chat_prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        """``messages`` through the tokenizer's chat template, ready for the assistant's turn;
        :class:`RecordError` if the tokenizer has none or the result leaves no room for a new token."""
        tokenizer = self.tokenizer
        if not getattr(tokenizer, "chat_template", None):
            raise RecordError("the model's tokenizer has no chat template; use /v1/completions with a prompt", "messages")
        text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]  # the template writes its own special tokens
        context = self.model.context_length()
        if not ids or (context is not None and len(ids) >= context):
            raise RecordError(f"the conversation is {len(ids)} tokens, which leaves no room for a new token in the "
                              f"model's context of {context}", "messages")
        return ids

    @property
    def labels(self) -> list[str] | None:
        namespace = getattr(self.model, "label_namespace", None)
        if namespace is None or namespace not in self.vocab.namespaces():
            return None
        return self.vocab.tokens(namespace)

    def describe(self) -> dict[str, Any]:
        described = {
            "model": self.config.get("model", {}).get("type", type(self.model).__name__),
            "dataset_reader": type(self.reader).__name__,
            "input_fields": self.input_fields,
            "labels": self.labels,
            "generates": self.generates,
        }
        if self.generates:
            import dataclasses

            described["generation"] = dataclasses.asdict(self.model.generation)
            described["context_length"] = self.model.context_length()
        if self.followers is not None:
            from torch.distributed.tensor import DTensor

            described["tensor_parallel"] = {
                "processes": self.followers.size,
                "split_parameters": sum(isinstance(parameter, DTensor) for parameter in self.model.parameters()),
            }
        return described

    def warm_up_record(self) -> dict[str, Any] | None:
        """A record to run once before declaring the server ready, or None if its fields cannot be made up (a JSON
        predictor reads keys of its own: its ``warm_up_input``, if it names one)."""
        if self.json_predictor is not None:
            return self.json_predictor.warm_up_input
        if not self.input_fields or any(kind != "text" for kind in self.input_fields.values()):
            return None
        return {name: "warm up" for name in self.input_fields}

    # ------------------------------------------------------------------------------ the work
    def prepare(self, record: Any) -> Prepared:
        """Validate and index one record; :class:`RecordError` (naming the field) if it cannot be predicted."""
        from distrain.data.dataset import IndexedDataset

        if not isinstance(record, dict):
            raise RecordError(f"expected a JSON object, got {_json_type(record)}")
        for name, kind in self.input_fields.items():
            if kind == "text" and isinstance(record.get(name), str) and not record[name].strip():
                raise RecordError(f'"{name}" is empty', name)
        if self.json_predictor is not None and not self.json_predictor.one_instance_per_input:
            self.json_predictor.validate_json(record)
            return Prepared({}, (), 1, record)
        if self.json_predictor is not None:
            instance = self.json_predictor._json_to_instance(record)
        else:
            instance = self.reader.record_to_instance(record)
        try:
            indexed = IndexedDataset.from_instances([instance], self.vocab)
        except KeyError as error:  # e.g. a label the model never saw
            raise RecordError(f"{error.args[0]} (the model's vocabulary cannot index it)") from None
        except ValueError as error:
            raise RecordError(str(error)) from None
        length = int(indexed.lengths()[0])
        if length == 0 and any(c.kind == "ragged" for c in indexed.columns.values()):
            field = next(iter(self.input_fields)) if len(self.input_fields) == 1 else None
            raise RecordError("the input has no tokens" + (f' in "{field}"' if field else ""), field)
        return Prepared(instance, tuple(instance), length)

    def predict(self, records: list[Prepared]) -> list[dict[str, Any]]:
        """What ``distrain predict`` writes for each record; records with different fields (some with
        a gold label, some without) run as separate sub-batches."""
        results: list[Any] = [None] * len(records)
        groups: dict[tuple[str, ...], list[int]] = {}
        for position, record in enumerate(records):
            groups.setdefault(record.fields, []).append(position)
        with self.model.metrics_frozen():  # labelled requests must not accumulate metric state
            for positions in groups.values():
                for position, output in zip(positions, self._answers([records[p] for p in positions])):
                    results[position] = output
        return results

    def _answers(self, records: list[Prepared]) -> list[Any]:
        """One sub-batch's answers: the JSON predictor's (whole inputs, or its instances, its own keys and additions
        included), else what ``distrain predict`` writes."""
        import numpy as np

        from distrain.data.dataset import IndexedDataset
        from distrain.training.evaluation import predict_inputs

        if records[0].record is not None:
            return self.json_predictor.predict_batch_json([record.record for record in records])
        if self.json_predictor is not None:
            return self.json_predictor.predict_batch_instance([record.instance for record in records])
        dataset = IndexedDataset.from_instances([record.instance for record in records], self.vocab)
        return predict_inputs(self.model, dataset.batch(np.arange(len(records))), self.device)


def _json_type(value: Any) -> str:
    return {list: "a list", str: "a string", bool: "a boolean", type(None): "null", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__)
