"""Named registries of components, so a config can pick an implementation by its ``"type"``.

Every base class that subclasses :class:`Registrable` gets its own registry: ``Model.register("x")``
and ``Metric.register("x")`` do not collide. A fully qualified ``"pkg.module.Class"`` is accepted
wherever a registered name is.
"""

from __future__ import annotations

import difflib
import importlib
from typing import Any, Callable, ClassVar, Mapping, TypeVar

from distrain.errors import BadInput, Problem

T = TypeVar("T", bound=type)


class RegistryError(BadInput):
    """A name that is taken, missing, or cannot be imported."""


def suggest(word: str, choices: list[str]) -> str | None:
    """The closest of ``choices`` to ``word``, for did-you-mean messages."""
    matches = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return matches[0] if matches else None


class Registrable:
    """Mixin that gives a base class (and only its subclasses) a name → class registry."""

    _registries: ClassVar[dict[type, dict[str, type]]] = {}
    default_implementation: ClassVar[str | None] = None
    #: Constructor arguments the framework supplies at run time (never taken from the config).
    runtime_args: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def _registry(cls) -> dict[str, type]:
        base = cls.registry_base()
        return Registrable._registries.setdefault(base, {})

    @classmethod
    def registry_base(cls) -> type:
        """The class whose registry ``cls`` belongs to: the first direct subclass of Registrable."""
        for klass in cls.__mro__:
            if Registrable in klass.__bases__:
                return klass
        raise RegistryError(f"{cls.__name__} is not a registrable base class")

    @classmethod
    def register(cls, name: str, constructor: str | None = None, exist_ok: bool = False) -> Callable[[T], T]:
        """Class decorator: ``@Model.register("my_model")``. AllenNLP's ``constructor`` (a classmethod that
        builds the class from the config) is refused: a config builds the class through its ``__init__``."""
        registry = cls._registry()
        if constructor is not None and constructor != "__init__":
            raise RegistryError(f'{cls.registry_base().__name__}.register("{name}", constructor="{constructor}"): '
                                "distrain builds a registered class with its __init__; register a subclass whose "
                                "__init__ calls the constructor instead")

        def add(subclass: T) -> T:
            if name in registry and registry[name] is not subclass and not exist_ok:
                taken = registry[name]
                raise RegistryError(
                    f'{cls.registry_base().__name__} name "{name}" is already taken by '
                    f"{taken.__module__}.{taken.__qualname__}; pass exist_ok=True to replace it"
                )
            registry[name] = subclass
            return subclass

        return add

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """Checks that span several of this component's arguments, made when the config is validated.

        Single values are checked by their annotations (``Annotated[int, Ge(1)]``, see
        :mod:`distrain.config.constraints`); override this, once per component, for rules that
        relate arguments to each other. ``arguments`` holds every configurable argument: its
        configured value, else its default; an argument that configures another component arrives as
        a :class:`~distrain.config.lazy.Lazy` recipe (its ``cls`` and ``argument(name)``), never built.
        It is called only when each argument is valid on its own. Return one :class:`Problem` per
        broken rule, its ``path`` relative to this block (an argument name, or ``""`` for the block);
        the caller prefixes the block's key path.
        """
        return []

    @classmethod
    def list_available(cls) -> list[str]:
        return sorted(cls._registry())

    @classmethod
    def is_registered(cls, name: str) -> bool:
        return name in cls._registry()

    @classmethod
    def by_name(cls, name: str) -> type:
        """The class registered as ``name``, or imported from a dotted ``pkg.module.Class`` path."""
        registry = cls._registry()
        if name in registry:
            return registry[name]
        if "." in name:
            return cls._import_class(name)
        base = cls.registry_base().__name__
        hint = suggest(name, list(registry))
        message = f'unknown {base} type "{name}"'
        if hint:
            message += f'; did you mean "{hint}"?'
        message += f" Available: {', '.join(sorted(registry)) or '(none)'}"
        raise RegistryError(message)

    @classmethod
    def resolve_class_name(cls, name: str) -> tuple[type, str | None]:
        """AllenNLP's: the class ``name`` stands for and the name of its constructor (always None: ``__init__``)."""
        return cls.by_name(name), None

    @classmethod
    def name_of(cls, subclass: type) -> str | None:
        for name, klass in cls._registry().items():
            if klass is subclass:
                return name
        return None

    @classmethod
    def _import_class(cls, path: str) -> type:
        module_name, _, class_name = path.rpartition(".")
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise RegistryError(f'cannot import "{module_name}" for type "{path}": {error}') from None
        klass = getattr(module, class_name, None)
        base = cls.registry_base()
        if not isinstance(klass, type) or not issubclass(klass, base):
            raise RegistryError(f'"{path}" is not a {base.__name__} subclass')
        return klass
