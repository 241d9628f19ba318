"""AllenNLP's ``JsonDict`` and ``sanitize``: a predictor's outputs as plain JSON values."""

from __future__ import annotations

from typing import Any, Dict

import numpy
import torch

from distrain.data.tokenizer import Token

JsonDict = Dict[str, Any]


def sanitize(value: Any) -> Any:
    """``value`` with tensors and arrays as (nested) lists, numpy scalars as Python numbers, tokens as their
    text, tuples and sets as lists, and objects with ``to_json()`` as what it returns.

    As AllenNLP's ``sanitize``, ``None`` becomes the string ``"None"`` (its predictors' outputs said so),
    and anything else is a ``ValueError`` naming its type."""
    if isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().tolist()
    if isinstance(value, numpy.ndarray):
        return value.tolist()
    if isinstance(value, (numpy.number, numpy.bool_)):
        return value.item()
    if isinstance(value, dict):
        return {key: sanitize(item) for key, item in value.items()}
    if isinstance(value, Token) or type(value).__module__.startswith("spacy."):
        return value.text
    if isinstance(value, (list, tuple, set)):
        return [sanitize(item) for item in value]
    if value is None:
        return "None"
    if hasattr(value, "to_json"):
        return value.to_json()
    raise ValueError(f"cannot sanitize {value!r} of type {type(value).__name__}: give it a to_json() method, "
                     "or turn it into lists, numbers and strings in make_output_human_readable")
