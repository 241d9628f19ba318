"""AllenNLP's ``from_params``: a component built in code from a config block, as a config file builds it.

``Embedding.from_params(vocab=vocab, params=Params({"embedding_dim": 4}))`` checks the block against the class's
constructor (its ``type`` first, for a registrable base) exactly as ``distrain check`` checks a config file, every
problem reported with its key path, then builds it; ``extras`` are AllenNLP's: run-time arguments (``vocab``,
``input_dim``) handed to the constructors, nested ones included, that name them.

AllenNLP put ``from_params`` on every registrable class through its ``FromParams`` base. distrain builds components
from configs itself and never calls it, so the method is AllenNLP's API only: :func:`attach` adds it to distrain's
``Registrable`` (every component kind) and the vocabulary when the ``allennlp`` layer is imported.
"""

from __future__ import annotations

from typing import Any

from distrain.config.errors import ConfigError, Problem
from distrain.config.schema import Build, resolve_object


def build_from_params(cls: type, params: Any = None, **extras: Any) -> Any:
    """``cls`` (a registrable base: the block's ``type``) built from ``params`` (a ``Params``, a dict or, for a
    registrable base, a type name); a :class:`ConfigError` names every problem of the block."""
    block = params.as_dict() if hasattr(params, "as_dict") else params
    block = {} if block is None else _lists_for_tuples(block)
    if isinstance(block, dict) and "type" not in block and _is_implementation(cls):
        # AllenNLP builds a concrete class called on itself (BucketBatchSampler.from_params), not its base's default
        block = {**block, "type": cls.registry_base().name_of(cls) or f"{cls.__module__}.{cls.__qualname__}"}
    problems: list[Problem] = []
    node = resolve_object(cls, block, "", problems)
    if problems:
        raise ConfigError(problems)
    return node.build(**extras) if isinstance(node, Build) else node.build()


def _lists_for_tuples(value: Any) -> Any:
    """A block written in Python (``("conv", "l1")`` pairs) as a config file has it: tuples are lists."""
    if isinstance(value, (list, tuple)):
        return [_lists_for_tuples(item) for item in value]
    if isinstance(value, dict):
        return {key: _lists_for_tuples(item) for key, item in value.items()}
    return value


def _is_implementation(cls: type) -> bool:
    from distrain.registry import Registrable

    try:
        return issubclass(cls, Registrable) and cls is not cls.registry_base()
    except Exception:  # not under a registrable base
        return False


def _from_params(cls: type, params: Any = None, constructor_to_call: Any = None, constructor_to_inspect: Any = None,
                 **extras: Any) -> Any:
    if constructor_to_call is not None or constructor_to_inspect is not None:
        raise ConfigError([Problem("", "from_params: constructor_to_call and constructor_to_inspect are AllenNLP's "
                                       "internals; distrain builds with the class's own constructor")])
    return build_from_params(cls, params, **extras)


class FromParams:
    """AllenNLP's base for classes built from a config block (``from_params``); a class of a user's that inherits
    it gets the method whatever else it is."""

    from_params = classmethod(_from_params)


def _vocabulary_from_params(cls: type, params: Any = None, instances: Any = None, **extras: Any) -> Any:
    """AllenNLP's vocabulary block (``type`` ``from_instances`` by default, ``from_files`` with its
    ``directory``, ``empty``) as distrain's :class:`~distrain.data.vocabulary.VocabularyConfig`."""
    from distrain.data.vocabulary import VocabularyConfig

    block = dict(params.as_dict() if hasattr(params, "as_dict") else params or {})
    if "directory_path" in block:  # AllenNLP's name for it
        block["directory"] = block.pop("directory_path")
    config = build_from_params(VocabularyConfig, block)
    if config.type == "empty":
        return cls()
    if config.type == "from_files":
        return cls.load(config.directory)
    if config.type == "extend":
        return cls.load(config.directory).extended_with(cls.from_instances(instances or [], config))
    return cls.from_instances(instances or [], config)


def attach() -> None:
    """Give distrain's registrable classes and its vocabulary AllenNLP's ``from_params`` (once)."""
    from distrain.data.vocabulary import Vocabulary
    from distrain.registry import Registrable

    if "from_params" not in Registrable.__dict__:
        Registrable.from_params = classmethod(_from_params)
    if "from_params" not in Vocabulary.__dict__:
        Vocabulary.from_params = classmethod(_vocabulary_from_params)
