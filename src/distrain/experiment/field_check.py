"""What the reader produces against what the model's ``forward`` takes.

The batch reaches ``forward`` as keyword arguments named like the fields, so a field named ``text`` with
a ``forward(tokens, ...)`` would fail only at the first step, after the data was read. Two checks find
it sooner, and word it alike: a required ``forward`` argument that no field gives, and a field that no
argument takes (when ``forward`` has no ``**kwargs`` to swallow it); both at once (a field named
otherwise than its argument) are one problem.

- Readers that declare their fields (:meth:`~distrain.data.reader.DatasetReader.declared_fields`) are
  checked with the config, before any data is read (:func:`field_problems`);
  ``data_loader.batch_sampler.sorting_keys`` must name their fields too.
- Any other reader (one a user wrote, as AllenNLP's guide does) is checked through what it yielded: the
  fields of the first instance of each split, once the data is read and before any step
  (:func:`check_read_fields`, called by ``check`` and by ``train`` before its workers start).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, Iterator

from distrain.config.errors import ConfigError, Problem
from distrain.config.schema import Build, parameters_of

_READ_METHODS = ("_read", "text_to_instance", "record_to_instance")


class _Arguments(Mapping):
    """A reader block's arguments (configured, else default), each built only when asked for."""

    def __init__(self, node: Build) -> None:
        self.node = node
        self.names = [parameter.name for parameter in parameters_of(node.cls)[0]]

    def __getitem__(self, name: str) -> Any:
        if name not in self.names:
            raise KeyError(name)
        return self.node.argument(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def reader_fields(node: Any) -> dict[str, bool] | None:
    """The fields a resolved reader block declares (name → always present), or None if it does not."""
    if not isinstance(node, Build):
        return None
    cls = node.cls
    declaring = next((klass for klass in cls.__mro__ if "declared_fields" in vars(klass)), None)
    if declaring is None or declaring.__name__ == "DatasetReader":
        return None
    for klass in cls.__mro__[: cls.__mro__.index(declaring)]:  # a subclass that reads differently
        if any(name in vars(klass) for name in _READ_METHODS):
            return None
    return cls.declared_fields(_Arguments(node))


def field_problems(plan: Build) -> list[Problem]:
    """One problem per mismatch between each reader's fields and the model's ``forward``."""
    model = plan.arguments.get("model")
    if not isinstance(model, Build):
        return []
    problems: list[Problem] = []
    checked: list[dict[str, bool]] = []
    for key in ("dataset_reader", "validation_dataset_reader"):
        node = plan.arguments.get(key)
        fields = reader_fields(node)
        if fields is None or fields in checked:
            continue
        checked.append(fields)
        problems += _forward_problems(model, key, _reader_name(node), fields)
        if key == "dataset_reader":
            problems += _sorting_key_problems(plan, key, fields)
    return problems


def read_field_problems(plan: Build, data: Any, prepared: Any) -> list[Problem]:
    """:func:`field_problems` for the readers that declare no fields, through what they yielded: the
    fields of the first instance of each split of ``data`` (the
    :class:`~distrain.data.prepare.DataPlan` that was read into ``prepared``). A reader key's later
    splits are not checked once one showed a problem: a mismatch is one line, not one per split."""
    model = plan.arguments.get("model")
    if not isinstance(model, Build):
        return []
    problems: list[Problem] = []
    checked: set[tuple[str, tuple[str, ...]]] = set()
    failed: set[str] = set()
    for split in data.splits:
        key = _reader_key(plan, split.name)
        node = plan.arguments.get(key)
        if key in failed or not isinstance(node, Build) or reader_fields(node) is not None:
            continue
        fields = _first_instance_fields(split, getattr(prepared, split.name))
        if fields is None or (key, tuple(fields)) in checked:
            continue
        checked.add((key, tuple(fields)))
        found = _forward_problems(model, key, f"{_reader_name(node)}'s first instance in {split.path}",
                                  dict.fromkeys(fields, True))
        if found:
            failed.add(key)
            problems += found
    return problems


def check_read_fields(plan: Build, data: Any, prepared: Any) -> None:
    """Raise :class:`ConfigError` with every :func:`read_field_problems` (exit 2, before any step)."""
    problems = read_field_problems(plan, data, prepared)
    if problems:
        raise ConfigError(problems)


def _reader_key(plan: Build, split: str) -> str:
    """The config key of the reader that read ``split`` (validation and test data: the validation reader)."""
    if split != "train" and isinstance(plan.arguments.get("validation_dataset_reader"), Build):
        return "validation_dataset_reader"
    return "dataset_reader"


def _first_instance_fields(split: Any, data: Any) -> list[str] | None:
    """The fields of ``split``'s first instance, sorted: an indexed split's columns (every item has the
    same fields); a streamed split holds no instance, so its reader reads its first one. None: no data."""
    from distrain.data.dataset import IndexedDataset
    from distrain.data.reader import WHOLE

    if data is None or not len(data):
        return None
    if isinstance(data, IndexedDataset):
        return sorted(data.field_names())
    reader = split.reader
    previous = reader.shard
    reader.set_shard(WHOLE)
    instances = reader.read(split.path)
    try:
        first = next(instances, None)
    finally:
        instances.close()
        reader.set_shard(previous)
    return sorted(first) if first is not None else None


def _reader_name(reader: Build) -> str:
    return reader.type_name or reader.cls.__name__


def _forward_problems(model: Build, key: str, reader_name: str, fields: dict[str, bool]) -> list[Problem]:
    parameters = list(inspect.signature(model.cls.forward).parameters.values())[1:]  # without self
    named = {p.name: p for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    swallows = any(p.kind is p.VAR_KEYWORD for p in parameters)
    model_name = model.type_name or model.cls.__name__
    listed = ", ".join(fields) or "none"
    missing = [name for name, parameter in named.items()
               if parameter.default is inspect.Parameter.empty and name not in fields]
    untaken = [] if swallows else [name for name in fields if name not in named]
    if missing and untaken:  # one mismatch, e.g. a field "text" for an argument "tokens": one line
        fields_are = f'field {_quoted(untaken)} of {reader_name} is' if len(untaken) == 1 else \
            f'fields {_quoted(untaken)} of {reader_name} are'
        return [Problem(key, f"{fields_are} taken by no argument of model {model_name}.forward "
                             f"({', '.join(named)}), which needs {_quoted(missing)}; its fields: {listed}")]
    problems = [Problem("model", f'{model_name}.forward needs "{name}", which no field of {key} '
                                 f"({reader_name}) gives; its fields: {listed}") for name in missing]
    problems += [Problem(key, f'field "{name}" of {reader_name} is taken by no argument of '
                              f"model {model_name}.forward ({', '.join(named)})") for name in untaken]
    return problems


def _quoted(names: list[str]) -> str:
    return ", ".join(f'"{name}"' for name in names)


def _sorting_key_problems(plan: Build, key: str, fields: dict[str, bool]) -> list[Problem]:
    loader = plan.arguments.get("data_loader")
    sampler = loader.arguments.get("batch_sampler") if isinstance(loader, Build) else None
    if not isinstance(sampler, Build) or "sorting_keys" not in sampler.arguments:
        return []
    keys = sampler.argument("sorting_keys") or []
    return [Problem(f"data_loader.batch_sampler.sorting_keys[{index}]",
                    f'"{name}" is not a field of {key}; its fields: {", ".join(fields)}')
            for index, name in enumerate(keys) if name not in fields]
