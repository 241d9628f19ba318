"""Constructor signatures as the config schema.

A registered class's ``__init__`` type hints say which keys its config block takes. :func:`resolve`
walks a whole config against them, collects every problem with its key path, and returns a plan
(a tree of :class:`Node`) that :meth:`Node.build` turns into objects later. Validation never
constructs anything, so it runs before any data is read.

A class may name ``assembly_options``, a dataclass whose fields are more keys of its block, validated with the
rest but read by the code that assembles its run-time arguments (:meth:`Build.options`), never passed to its
constructor: the trainer's ``optimizer`` is built by ``assemble``, and the trainer receives the optimizer.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import inspect
import json
import sys
import types
import typing
from typing import Any, Union

import pydantic

from distrain.config.errors import ConfigError, Problem, join_path
from distrain.config.lazy import Lazy
from distrain.config.signatures import Parameter, names_parameter, option_names, parameters_of
from distrain.registry import Registrable, RegistryError, suggest


# ---------------------------------------------------------------------------------------- plans
class Node:
    """One resolved piece of config."""

    def build(self, **runtime_args: Any) -> Any:
        raise NotImplementedError


@dataclasses.dataclass
class Value(Node):
    value: Any

    def build(self, **runtime_args: Any) -> Any:
        return self.value


@dataclasses.dataclass
class ListOf(Node):
    items: list[Node]

    def build(self, **runtime_args: Any) -> Any:
        return [item.build() for item in self.items]


@dataclasses.dataclass
class DictOf(Node):
    items: dict[str, Node]

    def build(self, **runtime_args: Any) -> Any:
        return {key: item.build() for key, item in self.items.items()}


@dataclasses.dataclass
class Build(Node):
    """Construct ``cls(**arguments, **runtime_args)``; with ``lazy`` the result is a :class:`Lazy`.

    ``path`` is the block's key path: a ``ValueError`` or ``TypeError`` the constructor raises (a
    check that needs run-time arguments) is reported as ``path: message``, a :class:`ConfigError`.
    """

    cls: type
    arguments: dict[str, Node]
    lazy: bool = False
    type_name: str | None = None
    path: str = ""

    def build(self, **runtime_args: Any) -> Any:
        if self.lazy:
            return self.recipe()
        return self.construct(**runtime_args)

    def recipe(self) -> Lazy:
        """This block as a :class:`Lazy` (its class and plain arguments), nothing built yet."""
        plain = {name: node.value for name, node in self.arguments.items() if isinstance(node, Value)}
        parts = {name: _unbuilt(node) for name, node in self.arguments.items() if not isinstance(node, Value)}
        return Lazy(self.construct, description=self.type_name or self.cls.__name__, cls=self.cls, arguments=plain,
                    parts=parts)

    def construct(self, **runtime_args: Any) -> Any:
        kwargs = {name: _build_passing(node, runtime_args) for name, node in self.constructor_arguments().items()}
        return self.construct_with(kwargs, runtime_args)

    def constructor_arguments(self) -> dict[str, Node]:
        """The arguments the constructor takes: all but the class's assembly options."""
        return {name: node for name, node in self.arguments.items() if name not in option_names(self.cls)}

    def options(self) -> Any:
        """The class's ``assembly_options`` as this block configures them (the rest at their defaults)."""
        given = {name: node.build() for name, node in self.arguments.items() if name in option_names(self.cls)}
        return self.cls.assembly_options(**given)

    def construct_with(self, kwargs: dict[str, Any], runtime_args: dict[str, Any]) -> Any:
        # a run-time argument (an owner's input_dim) goes only where the constructor names it, never into a
        # user component's **kwargs (AllenNLP passes its extras by name alone)
        runtime_args = {name: value for name, value in runtime_args.items() if names_parameter(self.cls, name)}
        try:
            return self.cls(**{**kwargs, **runtime_args})  # an owner's size wins; validation checked they agree
        except (ValueError, TypeError) as error:
            raise ConfigError([Problem(self.path, str(error))]) from error

    def argument(self, name: str) -> Any:
        """The configured value of a plain argument, or its default when the config omits it."""
        if name in self.arguments:
            return self.arguments[name].build()
        return {param.name: param.default for param in parameters_of(self.cls)[0]}[name]  # None: required


def _build_passing(node: Node, extras: dict[str, Any]) -> Any:
    """Build ``node``, handing nested components the run-time arguments they declare among ``extras``
    (AllenNLP's "extras": a model's ``vocab`` reaches the embedders in its config)."""
    if isinstance(node, Build) and not node.lazy:
        wanted = {name: value for name, value in extras.items() if name in getattr(node.cls, "runtime_args", ())}
        kwargs = {name: _build_passing(item, extras) for name, item in node.constructor_arguments().items()}
        return node.construct_with(kwargs, wanted)
    if isinstance(node, ListOf):
        return [_build_passing(item, extras) for item in node.items]
    if isinstance(node, DictOf):
        return {key: _build_passing(item, extras) for key, item in node.items.items()}
    return node.build()


def is_configurable(annotation: Any) -> bool:
    return inspect.isclass(annotation) and (
        issubclass(annotation, Registrable) or dataclasses.is_dataclass(annotation)
    )


def _contains_configurable(annotation: Any) -> bool:
    if is_configurable(annotation) or typing.get_origin(annotation) is Lazy:
        return True
    return any(_contains_configurable(arg) for arg in typing.get_args(annotation))


_UNION_TYPES = (Union, types.UnionType)
_SEQUENCES = (list, collections.abc.Sequence, collections.abc.Iterable)
_MAPPINGS = (dict, collections.abc.Mapping)


# --------------------------------------------------------------------------------------- resolve
def resolve(annotation: Any, value: Any, path: str, problems: list[Problem]) -> Node:
    """Check ``value`` against ``annotation``; append problems; return the plan for it."""
    origin = typing.get_origin(annotation)
    if annotation is Any or annotation is inspect.Parameter.empty:
        return Value(value)
    if origin is typing.Annotated and not _contains_configurable(annotation):
        return _resolve_leaf(annotation, value, path, problems)
    if origin is typing.Annotated:
        node = resolve(typing.get_args(annotation)[0], value, path, problems)
        _check_length(annotation.__metadata__, value, path, problems)
        return node
    if origin in _UNION_TYPES:
        return _resolve_union(annotation, value, path, problems)
    if origin is Lazy:
        return resolve_object(typing.get_args(annotation)[0], value, path, problems, lazy=True)
    if is_configurable(annotation):
        return resolve_object(annotation, value, path, problems, lazy=False)
    if origin is tuple and _contains_configurable(annotation):  # e.g. AllenNLP's [regex, initializer] pairs
        kinds = typing.get_args(annotation)
        if not isinstance(value, list) or len(value) != len(kinds):
            problems.append(Problem(path, f"expected a list of {len(kinds)} items, got {_show(value)}"))
            return Value(value)
        return ListOf([resolve(kind, item, join_path(path, i), problems) for i, (kind, item) in enumerate(zip(kinds, value))])
    if origin in _SEQUENCES and _contains_configurable(annotation):
        if not isinstance(value, list):
            problems.append(Problem(path, f"expected a list, got {_show(value)}"))
            return Value(value)
        (item_type,) = typing.get_args(annotation) or (Any,)
        return ListOf([resolve(item_type, item, join_path(path, i), problems) for i, item in enumerate(value)])
    if origin in _MAPPINGS and _contains_configurable(annotation):
        if not isinstance(value, dict):
            problems.append(Problem(path, f"expected an object, got {_show(value)}"))
            return Value(value)
        _, item_type = typing.get_args(annotation) or (str, Any)
        return DictOf({key: resolve(item_type, item, join_path(path, key), problems) for key, item in value.items()})
    return _resolve_leaf(annotation, value, path, problems)


def _resolve_union(annotation: Any, value: Any, path: str, problems: list[Problem]) -> Node:
    options = typing.get_args(annotation)
    if value is None and type(None) in options:
        return Value(None)
    if not _contains_configurable(annotation):
        return _resolve_leaf(annotation, value, path, problems)
    candidates = [option for option in options if option is not type(None)]
    first_problems: list[Problem] | None = None
    for option in candidates:
        attempt: list[Problem] = []
        node = resolve(option, value, path, attempt)
        if all(isinstance(problem, _CrossProblem) for problem in attempt):
            problems.extend(attempt)  # the value is this option; only a rule across its arguments is broken
            return node
        first_problems = first_problems if first_problems is not None else attempt
    problems.extend(first_problems or [])
    return Value(value)


def resolve_object(base: type, value: Any, path: str, problems: list[Problem], lazy: bool = False) -> Node:
    """Check a config block for a ``base`` object: its ``type`` when registrable, then its arguments."""
    if isinstance(value, base):
        return Value(value)
    if isinstance(value, str) and issubclass(base, Registrable):
        value = {"type": value}  # AllenNLP's short form: a bare type name, every argument at its default
    if not isinstance(value, dict):
        problems.append(Problem(path, f"expected an object configuring a {base.__name__}, got {_show(value)}"))
        return Value(value)
    value = dict(value)
    if "_pretrained" in value and _is_module(base):
        return _resolve_pretrained(value, path, problems)
    cls, type_name = base, None
    if issubclass(base, Registrable):
        type_name = value.pop("type", None) or base.default_implementation
        if type_name is None:
            choices = ", ".join(base.list_available())
            problems.append(Problem(join_path(path, "type"), f"missing; choose one of: {choices}"))
            return Value(value)
        try:
            cls = base.by_name(type_name)
        except RegistryError as error:
            problems.append(Problem(join_path(path, "type"), str(error)))
            return Value(value)
    params, takes_kwargs = parameters_of(cls)
    known = {param.name: param for param in params}
    found_before = len(problems)
    arguments: dict[str, Node] = {}
    for key, item in value.items():
        if key in known:
            arguments[key] = resolve(known[key].annotation, item, join_path(path, key), problems)
        elif takes_kwargs:
            arguments[key] = Value(item)
        else:
            hint = suggest(key, list(known))
            if hint:
                message = f'unknown key; did you mean "{hint}"?'
            else:
                message = f"unknown key; {type_name or cls.__name__} takes: {', '.join(known) or 'nothing'}"
            problems.append(Problem(join_path(path, key), message))
    for param in params:
        if param.required and param.name not in value:
            problems.append(Problem(join_path(path, param.name), "missing required key"))
    if not any(not isinstance(problem, _CrossProblem) for problem in problems[found_before:]):
        problems.extend(_argument_problems(cls, params, arguments, path))
    return Build(cls, arguments, lazy=lazy, type_name=type_name, path=path)


def _is_module(base: type) -> bool:
    torch = sys.modules.get("torch")  # a module class was defined, so torch is imported already
    return torch is not None and isinstance(base, type) and issubclass(base, torch.nn.Module)


#: what builds AllenNLP's ``{"_pretrained": {...}}`` block: :class:`distrain.archived.module.ArchivedModule`,
#: which sets itself here when imported with the builtin components (config/ imports nothing of experiment/)
_PRETRAINED: list[type] = []


def build_pretrained_with(cls: type) -> None:
    _PRETRAINED[:] = [cls]


def _resolve_pretrained(value: dict[str, Any], path: str, problems: list[Problem]) -> Node:
    """AllenNLP's ``{"_pretrained": {...}}`` in place of a module's block: that module of an archive."""
    for key in value:
        if key != "_pretrained":
            problems.append(Problem(join_path(path, key), "unused beside _pretrained, which gives the whole module"))
    if not _PRETRAINED:
        problems.append(Problem(path, "_pretrained needs distrain's builtin components imported (import_plugins)"))
        return Value(value)
    return resolve_object(_PRETRAINED[0], value["_pretrained"], join_path(path, "_pretrained"), problems)


def _argument_problems(cls: type, params: tuple[Parameter, ...], arguments: dict[str, Node], path: str) -> list[Problem]:
    """The component's own checks across its arguments (see ``Registrable.argument_problems``)."""
    hook = getattr(cls, "argument_problems", None)
    if hook is None:
        return []
    values = {param.name: param.default for param in params}
    values.update({name: _unbuilt(node) for name, node in arguments.items()})
    return [_CrossProblem(join_path(path, problem.path) if problem.path else path, problem.message)
            for problem in hook(values)]


class _CrossProblem(Problem):
    """A broken rule across arguments: the values are each valid, so enclosing blocks still check theirs."""


def _unbuilt(node: Node) -> Any:
    """A plain value as configured; a component as its :class:`Lazy` recipe (validation builds nothing)."""
    if isinstance(node, Build):
        return node.recipe()
    if isinstance(node, ListOf):
        return [_unbuilt(item) for item in node.items]
    if isinstance(node, DictOf):
        return {key: _unbuilt(item) for key, item in node.items.items()}
    return node.build()


def _check_length(metadata: tuple, value: Any, path: str, problems: list[Problem]) -> None:
    """``MinLen``/``MaxLen`` on a container of components (pydantic checks them on plain values)."""
    if not isinstance(value, (list, dict)):
        return
    for rule in metadata:
        least, most = getattr(rule, "min_length", None), getattr(rule, "max_length", None)
        if least is not None and len(value) < least:
            problems.append(Problem(path, f"must have at least {_plural(least, 'item')}, got {_show(value)}"))
        if most is not None and len(value) > most:
            problems.append(Problem(path, f"must have at most {_plural(most, 'item')}, got {_show(value)}"))


# ----------------------------------------------------------------------------------------- leaves
@functools.lru_cache(maxsize=None)
def _adapter(annotation: Any) -> pydantic.TypeAdapter:
    return pydantic.TypeAdapter(annotation)


def _resolve_leaf(annotation: Any, value: Any, path: str, problems: list[Problem]) -> Node:
    try:
        adapter = _adapter(annotation)
    except (pydantic.PydanticSchemaGenerationError, TypeError):
        return Value(value)  # a type pydantic cannot check (e.g. a torch class): pass it through
    try:
        # JSON mode + strict: the config came from JSON, so "3" is not an int but [1, 2] is a tuple.
        return Value(adapter.validate_json(json.dumps(value), strict=True))
    except pydantic.ValidationError as error:
        problems.extend(_leaf_problems(error.errors(), value, path))
    except (TypeError, ValueError):
        return Value(value)  # not JSON-serialisable: an object passed programmatically
    return Value(value)


def _leaf_problems(errors: list[dict], value: Any, path: str) -> list[Problem]:
    """pydantic's errors as problems at key paths, one union member's errors per union.

    pydantic reports a failed union once per member, each under a tag (``constrained-int``,
    ``dict[str,int]``) in the error's location. A location part that is not a key or index of the
    value is such a tag. Where the value had one member's shape (no type error at the union itself),
    only that member's errors are kept (``-1`` for ``int >= 0 | dict`` is "must be 0 or more", not
    also "expected an object"); where it fits none, one "expected A or B" problem is made.
    """
    located = []  # (key path, ((union site, member tag), ...), message)
    for detail in errors:
        where, members, current = path, [], value
        for position, part in enumerate(detail["loc"]):
            if detail["type"] == "missing" and position == len(detail["loc"]) - 1:
                where = join_path(where, part)  # a required key the value lacks
            elif isinstance(current, dict) and isinstance(part, str) and part in current:
                where, current = join_path(where, part), current[part]
            elif isinstance(current, (list, tuple)) and isinstance(part, int) and 0 <= part < len(current):
                where, current = join_path(where, part), current[part]
            else:
                members.append((where, part))
        located.append((where, tuple(members), _describe(detail)))
    losers: set[tuple[str, Any]] = set()
    merged: dict[str, list[str]] = {}
    for site in dict.fromkeys(site for _, members, _ in located for site, _ in members):
        tags = list(dict.fromkeys(tag for _, members, _ in located for at, tag in members if at == site))
        misfits = {tag for where, members, message in located for at, tag in members
                   if at == site and where == site and message.startswith("expected ")}
        fitting = [tag for tag in tags if tag not in misfits]
        if fitting:
            losers.update((site, tag) for tag in tags if tag != fitting[0])
        elif len(tags) > 1:
            losers.update((site, tag) for tag in tags)
            merged[site] = [message for where, members, message in located
                            if where == site and any(at == site for at, _ in members)]
    found = [Problem(where, message) for where, members, message in located if not losers.intersection(members)]
    for site, messages in merged.items():
        expected = list(dict.fromkeys(message.removeprefix("expected ").rpartition(", got ")[0] for message in messages))
        found.append(Problem(site, f"expected {' or '.join(expected)}, got {messages[0].rpartition(', got ')[2]}"))
    return list(dict.fromkeys(found))


_EXPECTED = {
    "float": "a number",
    "int": "an integer",
    "bool": "true or false",
    "string": "a string",
    "list": "a list",
    "tuple": "a list",
    "dict": "an object",
    "none": "null",
}


def _describe(detail: dict) -> str:
    kind = detail["type"]
    got = _show(detail.get("input"))
    for prefix, expected in _EXPECTED.items():
        if kind.startswith(prefix + "_") and kind.endswith(("_type", "_parsing", "_from_float")):
            return f"expected {expected}, got {got}"
    if kind == "literal_error":
        return f"expected {detail['ctx']['expected']}, got {got}"
    if kind == "missing":
        return "missing required key"
    bound = _BOUNDS.get(kind)
    if bound is not None:
        return f"{bound(detail['ctx'])}, got {got}"
    if kind == "value_error":
        return f"{detail['ctx']['error']}, got {got}"
    return f"{detail['msg'][0].lower()}{detail['msg'][1:]}, got {got}"


def _number(value: Any) -> str:
    """``1.0`` as ``1``: a bound reads as the user wrote it."""
    return format(value, "g") if isinstance(value, float) else str(value)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


#: pydantic's constraint errors, said the way a config's reader thinks of them
_BOUNDS = {
    "greater_than_equal": lambda ctx: "must be 0 or more" if ctx["ge"] == 0 else f"must be at least {_number(ctx['ge'])}",
    "greater_than": lambda ctx: f"must be greater than {_number(ctx['gt'])}",
    "less_than_equal": lambda ctx: f"must be at most {_number(ctx['le'])}",
    "less_than": lambda ctx: f"must be less than {_number(ctx['lt'])}",
    "multiple_of": lambda ctx: f"must be a multiple of {_number(ctx['multiple_of'])}",
    "too_short": lambda ctx: f"must have at least {_plural(ctx['min_length'], 'item')}",
    "too_long": lambda ctx: f"must have at most {_plural(ctx['max_length'], 'item')}",
    "string_too_short": lambda ctx: "must not be empty" if ctx["min_length"] == 1
    else f"must have at least {_plural(ctx['min_length'], 'character')}",
    "string_too_long": lambda ctx: f"must have at most {_plural(ctx['max_length'], 'character')}",
    "string_pattern_mismatch": lambda ctx: f"must match the pattern {ctx['pattern']}",
}


def _show(value: Any) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
