"""What the reader produces against what the model's ``forward`` takes, checked before any data is read.

The batch reaches ``forward`` as keyword arguments named like the fields, so a field named ``text`` with
a ``forward(tokens, ...)`` fails only at the first step, after the data was read. Readers that declare
their fields (:meth:`~distrain.data.reader.DatasetReader.declared_fields`) are checked here: a required
``forward`` argument that no field gives, and a field that no argument takes (when ``forward`` has no
``**kwargs`` to swallow it). ``data_loader.batch_sampler.sorting_keys`` must name fields too.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, Iterator

from distrain.config.errors import Problem
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
        problems += _forward_problems(model, key, node, fields)
        if key == "dataset_reader":
            problems += _sorting_key_problems(plan, key, fields)
    return problems


def _forward_problems(model: Build, key: str, reader: Build, fields: dict[str, bool]) -> list[Problem]:
    parameters = list(inspect.signature(model.cls.forward).parameters.values())[1:]  # without self
    named = {p.name: p for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    swallows = any(p.kind is p.VAR_KEYWORD for p in parameters)
    model_name = model.type_name or model.cls.__name__
    reader_name = reader.type_name or reader.cls.__name__
    listed = ", ".join(fields) or "none"
    problems = []
    for name, parameter in named.items():
        if parameter.default is inspect.Parameter.empty and name not in fields:
            problems.append(Problem("model", f'{model_name}.forward needs "{name}", which no field of {key} '
                                             f"({reader_name}) gives; its fields: {listed}"))
    if not swallows:
        for name in fields:
            if name not in named:
                problems.append(Problem(key, f'field "{name}" of {reader_name} is taken by no argument of '
                                             f"model {model_name}.forward ({', '.join(named)})"))
    return problems


def _sorting_key_problems(plan: Build, key: str, fields: dict[str, bool]) -> list[Problem]:
    loader = plan.arguments.get("data_loader")
    sampler = loader.arguments.get("batch_sampler") if isinstance(loader, Build) else None
    if not isinstance(sampler, Build) or "sorting_keys" not in sampler.arguments:
        return []
    keys = sampler.argument("sorting_keys") or []
    return [Problem(f"data_loader.batch_sampler.sorting_keys[{index}]",
                    f'"{name}" is not a field of {key}; its fields: {", ".join(fields)}')
            for index, name in enumerate(keys) if name not in fields]
