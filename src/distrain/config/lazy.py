"""``Lazy[T]``: a validated config for a ``T`` that is built later, when run-time arguments exist.

An optimizer needs the model's parameters and a scheduler needs the optimizer; neither exists when
the config is read. The config is still validated up front; only construction waits.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Generic, TypeVar

T = TypeVar("T")


class Lazy(Generic[T]):
    """A recipe for a ``T``: call :meth:`construct` with the run-time arguments.

    ``cls`` and ``arguments`` (the configured class and its plain arguments, when known) let a caller
    ask what will be built, e.g. which parallel degrees a strategy implies, without building it.
    ``parts`` holds the configured components among its arguments, as recipes (or lists and dicts of
    them), so a size can be followed through nested blocks (an embedder's width) before anything is built.
    """

    def __init__(
        self, build: Callable[..., T], description: str = "", cls: type | None = None,
        arguments: dict[str, Any] | None = None, parts: dict[str, Any] | None = None,
    ) -> None:
        self._build = build
        self.description = description
        self.cls = cls
        self.arguments = arguments or {}
        self.parts = parts or {}

    def argument(self, name: str, missing: Any = None) -> Any:
        """The configured value of plain argument ``name``, else the constructor's default, else ``missing``."""
        if name in self.arguments:
            return self.arguments[name]
        if self.cls is None:
            return missing
        parameter = inspect.signature(self.cls).parameters.get(name)
        options = getattr(self.cls, "assembly_options", None)  # more keys of the block (see config.schema)
        if parameter is None and options is not None:
            parameter = inspect.signature(options).parameters.get(name)
        if parameter is None or parameter.default is inspect.Parameter.empty:
            return missing
        return parameter.default

    def construct(self, **runtime_args: Any) -> T:
        return self._build(**runtime_args)

    def __repr__(self) -> str:
        return f"Lazy({self.description})"
