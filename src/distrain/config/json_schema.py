"""A JSON Schema (draft 2020-12) of the whole training config, built from the registry.

It follows the same rules as :mod:`distrain.config.schema` (the validator): a registered class's
constructor signature is its block's schema; a registrable base gets a ``"type"`` discriminator
(an ``if``/``then`` per registered name, the default implementation when ``type`` is omitted, and
any dotted ``"pkg.module.Class"`` accepted as the validator accepts it); ``Lazy[T]`` is ``T``'s
block; leaves (numbers, strings, literals, ``Annotated`` constraints) are pydantic's own JSON
Schema of the annotation, so a constraint added to a signature shows up here with no extra code.
Editors use it for completion and squiggles; ``distrain check`` remains the authority (it also
checks what spans several keys, such as parallel degrees against the process count).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import typing
from typing import Any

from distrain.config.schema import _MAPPINGS, _SEQUENCES, _UNION_TYPES, _contains_configurable, parameters_of
from distrain.config.lazy import Lazy
from distrain.registry import Registrable

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def first_line(cls: type) -> str:
    """The first line of the class's own docstring (not one inherited from a base class)."""
    doc = cls.__dict__.get("__doc__") or ""
    return inspect.cleandoc(doc).split("\n")[0] if doc else ""


def _json_default(value: Any) -> tuple[bool, Any]:
    """(whether ``value`` can be written as a JSON default, the JSON form)."""
    try:
        return True, json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return False, None


class SchemaBuilder:
    """Collects one ``$defs`` entry per registrable base, registered class and config dataclass."""

    def __init__(self, extra_keys: dict[type, dict[str, type]] | None = None) -> None:
        self.defs: dict[str, Any] = {}
        #: keys every implementation of a base accepts besides its own (e.g. ``model.initializer``)
        self.extra_keys = extra_keys or {}

    # ------------------------------------------------------------------------------ annotations
    def annotation(self, annotation: Any) -> dict[str, Any]:
        origin = typing.get_origin(annotation)
        if annotation is Any or annotation is inspect.Parameter.empty:
            return {}
        if origin is typing.Annotated and _contains_configurable(annotation):
            return self.annotation(typing.get_args(annotation)[0])
        if not _contains_configurable(annotation):
            return self.leaf(annotation)
        if origin in _UNION_TYPES:
            return {"anyOf": [{"type": "null"} if option is type(None) else self.annotation(option)
                              for option in typing.get_args(annotation)]}
        if origin is Lazy:
            return self.annotation(typing.get_args(annotation)[0])
        if inspect.isclass(annotation) and issubclass(annotation, Registrable):
            # a block, or AllenNLP's short form: the bare type name
            return {"anyOf": [{"$ref": f"#/$defs/{self.base(annotation)}"},
                              {"type": "string", "enum": annotation.list_available()}]}
        if inspect.isclass(annotation) and dataclasses.is_dataclass(annotation):
            return {"$ref": f"#/$defs/{self.plain(annotation)}"}
        if origin is tuple:
            items = [self.annotation(item) for item in typing.get_args(annotation)]
            return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
        if origin in _SEQUENCES:
            (item,) = typing.get_args(annotation) or (Any,)
            return {"type": "array", "items": self.annotation(item)}
        if origin in _MAPPINGS:
            _, item = typing.get_args(annotation) or (str, Any)
            return {"type": "object", "additionalProperties": self.annotation(item)}
        return {}

    def leaf(self, annotation: Any) -> dict[str, Any]:
        """pydantic's schema of a plain annotation; ``{}`` (anything) for a type pydantic cannot describe."""
        import pydantic

        try:
            schema = pydantic.TypeAdapter(annotation).json_schema(ref_template="#/$defs/{model}")
        except (pydantic.PydanticSchemaGenerationError, pydantic.errors.PydanticInvalidForJsonSchema, TypeError):
            return {}
        self.defs.update(schema.pop("$defs", {}))
        return schema

    # ---------------------------------------------------------------------------------- objects
    def properties(self, cls: type) -> dict[str, Any]:
        """An object schema of ``cls``'s configurable constructor arguments."""
        params, takes_kwargs = parameters_of(cls)
        properties: dict[str, Any] = {}
        for param in params:
            schema = dict(self.annotation(param.annotation))
            if not param.required:
                ok, default = _json_default(param.default)
                if ok:
                    schema["default"] = default
            properties[param.name] = schema
        required = [param.name for param in params if param.required]
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        if not takes_kwargs:
            schema["additionalProperties"] = False
        return schema

    def plain(self, cls: type) -> str:
        """A config dataclass (no ``type`` key): its arguments."""
        name = cls.__name__
        if name not in self.defs:
            self.defs[name] = {}  # placeholder: recursion ends at the reference
            self.defs[name] = {"title": name, "description": first_line(cls), **self.properties(cls)}
        return name

    def base(self, base: type) -> str:
        """A registrable base: ``type`` picks the registered class whose arguments apply."""
        name = base.__name__
        if name in self.defs:
            return name
        self.defs[name] = {}
        names = base.list_available()
        branches = []
        for registered in names:
            variant = self.variant(base, registered)
            branches.append({"if": {"properties": {"type": {"const": registered}}, "required": ["type"]},
                             "then": {"$ref": f"#/$defs/{variant}"}})
        default = base.default_implementation
        if default in names:
            branches.append({"if": {"not": {"required": ["type"]}},
                             "then": {"$ref": f"#/$defs/{self.variant(base, default)}"}})
        type_schema: dict[str, Any] = {
            "anyOf": [{"enum": names}, {"type": "string", "pattern": r"^[A-Za-z_][\w]*(\.[A-Za-z_]\w*)+$",
                                         "description": "a fully qualified pkg.module.Class"}],
            "description": f"which {name} to build" + (f" (default: {default})" if default else ""),
        }
        self.defs[name] = {
            "title": name,
            "description": first_line(base),
            "type": "object",
            "properties": {"type": type_schema},
            **({} if default in names else {"required": ["type"]}),
            "allOf": branches,
        }
        return name

    def variant(self, base: type, registered: str) -> str:
        """One registered class of ``base``: ``type`` plus its constructor arguments."""
        cls = base.by_name(registered)
        name = f"{base.__name__}.{registered}"
        if name not in self.defs:
            self.defs[name] = {}
            schema = self.properties(cls)
            own = schema["properties"]  # a key of its own also takes the other form (AllenNLP's grad_norm: true)
            extra = {key: {"anyOf": [own[key], self.annotation(kind)]} if key in own else self.annotation(kind)
                     for key, kind in self.extra_keys.get(base, {}).items()}
            schema["properties"] = {"type": {"const": registered}, **schema["properties"], **extra}
            description = first_line(cls)
            self.defs[name] = {"title": f"{registered} ({base.__name__})",
                               **({"description": description} if description else {}), **schema}
        return name


def config_schema(top_level: type, extra_keys: dict[type, dict[str, type]] | None = None) -> dict[str, Any]:
    """The JSON Schema of a config whose top-level keys are ``top_level``'s signature, with every
    component registered right now (``extra_keys``: keys a base's every implementation also takes)."""
    builder = SchemaBuilder(extra_keys)
    root = builder.properties(top_level)
    # resolve_experiment supplies an empty trainer block when the config has none
    root["required"] = [key for key in root.get("required", []) if key != "trainer"]
    return {
        "$schema": DRAFT,
        "$id": "https://distrain.invalid/experiment.schema.json",
        "title": "distrain experiment",
        "description": first_line(top_level),
        **root,
        "$defs": dict(sorted(builder.defs.items())),
    }
