"""Constructor signatures: which keys a registered class's config block takes, and where ``**kwargs`` lead.

The schema (:mod:`distrain.config.schema`) validates a block against :func:`parameters_of`; a run-time
argument reaches a constructor only where :func:`names_parameter` says it names it.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from typing import Any

from distrain.registry import Registrable


@dataclasses.dataclass(frozen=True)
class Parameter:
    name: str
    annotation: Any
    default: Any
    required: bool


@functools.lru_cache(maxsize=None)
def parameters_of(cls: type) -> tuple[tuple[Parameter, ...], bool]:
    """The configurable parameters of ``cls`` and whether it also takes arbitrary ``**kwargs``.

    A constructor that takes ``**kwargs`` is assumed to pass them up, so the parent's parameters are added and
    validated. A user's component (one defined outside distrain) that takes ``**kwargs`` then receives every
    other key of its block in them, as AllenNLP passes them; distrain's own components pass theirs up only, so
    a key no class of the chain names stays an unknown key. The fields of the class's ``assembly_options``
    come last.
    """
    params, takes_kwargs = _own_parameters(cls)
    if takes_kwargs:
        parent = _kwargs_parent(cls)
        if parent is not None:
            names = {param.name for param in params}
            inherited, takes_kwargs = parameters_of(parent)
            params = params + tuple(p for p in inherited if p.name not in names)
        else:
            takes_kwargs = False  # nothing above us takes keyword arguments
        takes_kwargs = takes_kwargs or not _is_distrains(_constructor_owner(cls))
    if getattr(cls, "assembly_options", None) is not None:
        names = {param.name for param in params}
        params = params + tuple(p for p in _own_parameters(cls.assembly_options)[0] if p.name not in names)
    return params, takes_kwargs


def _kwargs_parent(cls: type) -> type | None:
    """The class whose constructor a ``**kwargs`` constructor of ``cls`` passes them to (None: none takes them)."""
    parent = next((k for k in cls.__mro__[1:] if "__init__" in vars(k)), object)
    return None if parent is object or parent is Registrable else parent


def _constructor_owner(cls: type) -> type:
    """The class that defines the ``__init__`` ``cls`` is built with (a subclass without one uses its parent's)."""
    return next((k for k in cls.__mro__ if "__init__" in vars(k)), cls)


def _is_distrains(cls: type) -> bool:
    return cls.__module__.split(".")[0] == "distrain"


@functools.lru_cache(maxsize=None)
def names_parameter(cls: type, name: str) -> bool:
    """Whether ``cls``'s constructor names ``name``, itself or through the ``**kwargs`` it passes up."""
    try:
        parameters = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return True  # no signature to read: pass it, as before
    if name in parameters and parameters[name].kind not in (inspect.Parameter.VAR_KEYWORD,
                                                           inspect.Parameter.VAR_POSITIONAL):
        return True
    if not any(param.kind is inspect.Parameter.VAR_KEYWORD for param in parameters.values()):
        return False
    parent = _kwargs_parent(cls)
    return parent is not None and names_parameter(parent, name)


def option_names(cls: type) -> set[str]:
    options = getattr(cls, "assembly_options", None)  # see the module's docstring
    return {field.name for field in dataclasses.fields(options)} if options is not None else set()


def _own_parameters(cls: type) -> tuple[tuple[Parameter, ...], bool]:
    init = cls.__init__
    try:
        hints = typing.get_type_hints(init, include_extras=True)
    except Exception:  # noqa: BLE001 - unresolvable forward refs fall back to raw annotations
        hints = getattr(init, "__annotations__", {})
    signature = inspect.signature(cls)
    skipped = set(getattr(cls, "runtime_args", ()))
    params: list[Parameter] = []
    takes_kwargs = False
    for param in signature.parameters.values():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            takes_kwargs = True
            continue
        if param.kind is inspect.Parameter.VAR_POSITIONAL or param.name in skipped:
            continue
        annotation = hints.get(param.name, Any)
        required = param.default is inspect.Parameter.empty
        params.append(Parameter(param.name, annotation, None if required else param.default, required))
    return tuple(params), takes_kwargs
