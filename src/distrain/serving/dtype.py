"""The floating-point type a served model computes in: ``distrain serve --dtype``, applied once at load by
the server and by each tensor-parallel follower alike."""

from __future__ import annotations

from typing import Any

#: what ``distrain serve --dtype`` accepts: the names of torch's floating-point types a model computes in
DTYPES = ("float32", "bfloat16")


def cast_model(model: Any, dtype: str | None) -> Any:
    """``model`` with its floating-point weights and buffers cast once to ``dtype`` (a name in
    :data:`DTYPES`; None leaves the archive's). Integer buffers (positions, vocabulary ids) stay as they are."""
    if dtype is None:
        return model
    import torch

    if dtype not in DTYPES:
        from distrain.errors import UsageError

        raise UsageError(f"--dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    return model.to(getattr(torch, dtype))
