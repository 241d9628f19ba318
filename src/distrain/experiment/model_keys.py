"""``model.initializer`` and ``model.regularizer``: AllenNLP's keys inside the model block, applied at
assembly for every model instead of by each model's constructor.

A model whose constructor takes one of these keys itself keeps it (a user's AllenNLP model may); for any
other model the key is taken out of the block before the model is validated, checked at its own key path,
and applied to the built model (:mod:`distrain.optim.initializers`, :mod:`distrain.optim.regularizers`).
"""

from __future__ import annotations

from typing import Any

from distrain.config.errors import Problem
from distrain.config.schema import Node, resolve_object
from distrain.experiment.foreign_keys import keys_its_class_lacks
from distrain.models.model import Model
from distrain.optim.initializers import InitializerApplicator
from distrain.optim.regularizers import RegularizerApplicator

APPLIED_AT_ASSEMBLY = {"initializer": InitializerApplicator, "regularizer": RegularizerApplicator}


def split_model_keys(config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``config`` without the model keys applied at assembly, and those keys' values."""
    block = config.get("model")
    taken = keys_its_class_lacks(block, Model, APPLIED_AT_ASSEMBLY)
    if not taken:
        return config, {}
    rest = {key: value for key, value in block.items() if key not in taken}
    return {**config, "model": rest}, taken


def resolve_model_keys(taken: dict[str, Any], problems: list[Problem]) -> dict[str, Node]:
    """Each taken key validated at ``model.KEY``; AllenNLP's older bare-list form is the ``regexes``."""
    resolved = {}
    for key, value in taken.items():
        if isinstance(value, list):
            value = {"regexes": value}
        resolved[key] = resolve_object(APPLIED_AT_ASSEMBLY[key], value, f"model.{key}", problems)
    return resolved
