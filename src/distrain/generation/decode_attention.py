"""The decoding rows' attention as one compiled kernel: each row has one query per head and reads its own slot.

torch's ``scaled_dot_product_attention`` on CPU runs that as a flash-attention kernel built for long queries:
for a query of one token it spends most of its time outside the products, and in bfloat16 it ran 4x slower
than float32 here (6.3 against 3.1 ms a layer for 32 rows of up to 200 positions, 8 heads of 64). Two
compiled kernels replace it (:func:`decode_kernel` picks):

- on CPU, :mod:`.ragged_attention`'s C++ loop, which reads each row over its own length, nothing past it;
- elsewhere (a GPU), or where that cannot be built, :func:`attend` compiled by ``torch.compile`` (Inductor):
  plain tensor algebra (gather the rows' slots, score, mask past each row's length, softmax in float32, weigh
  the values) that Inductor turns into one loop nest reading each key and value it covers once, as far as
  the batch's longest row (positions past a row's own length are masked), and materialising nothing of size
  rows x positions x dim: 1.4 ms (bfloat16) and 2.4 ms (float32) at that shape on CPU.

Shapes vary every step (rows join and leave; rows grow), so :func:`attend` is compiled with symbolic sizes
and the key length it reads is rounded up to a multiple of :data:`WIDTH_STEP`: one compiled kernel serves
every batch. Sizes of 1 are the exception (torch specialises them), so :func:`warm_up` compiles both kinds,
a single row and many, before the first request, with sizes that differ from each other and from the model's
(torch also ties sizes that happen to be equal when it compiles).

On a GPU, the eager path keeps torch's SDPA but not its cuDNN kernel (:func:`decode_sdpa_kernels`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
from typing import Callable

import torch

from distrain.generation import ragged_attention

logger = logging.getLogger(__name__)

#: the key length a step reads is rounded up to a multiple of this (and at least this): no size-1 width
#: to specialise on, and a row growing by one token does not change the shape torch compiled for
WIDTH_STEP = 16


def decode_sdpa_kernels(device: torch.device) -> contextlib.AbstractContextManager:
    """Where a decode step runs torch's SDPA on a GPU: every kernel but cuDNN's. cuDNN's attention, torch's
    first choice for bfloat16 on recent NVIDIA GPUs, builds an execution plan for each new shape, and a decode
    step's shapes change every step (rows join and leave, lengths grow). On one H200 (torch 2.11) the 40.9 M
    Llama decoded 32 requests in bfloat16 at 262 tokens/s (padded batch) and 196 (slot batch) with it, 1,797
    and 1,994 without (``torch.backends.cuda.enable_cudnn_sdp(False)``, the same workload). A no-op elsewhere."""
    if device.type != "cuda":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])


def attend(queries: torch.Tensor, key: torch.Tensor, value: torch.Tensor, slots: torch.Tensor,
           lengths: torch.Tensor, width: int) -> torch.Tensor:
    """``queries`` (rows x heads x dim, float32, already scaled): one per decoding row; ``key`` and ``value`` a
    layer's slots (slots x kv heads x capacity x dim); row ``r`` reads slot ``slots[r]``'s first ``lengths[r]``
    positions (``width`` bounds them all). Returns rows x heads x dim in float32."""
    rows, heads, dim = queries.shape
    kv_heads = key.shape[1]
    grouped = queries.reshape(rows, kv_heads, heads // kv_heads, dim)
    keys = key[slots, :, :width].float()  # rows x kv heads x width x dim
    values = value[slots, :, :width].float()
    scores = (grouped[:, :, :, None, :] * keys[:, :, None, :, :]).sum(-1)  # rows x kv heads x group x width
    valid = torch.arange(width, device=queries.device)[None, :] < lengths[:, None]
    scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    attended = (weights[..., None] * values[:, :, None, :, :]).sum(3)  # rows x kv x group x dim
    return attended.reshape(rows, heads, dim)


@functools.cache
def compiled_attend():
    """:func:`attend` compiled with symbolic sizes (built on first use: importing Inductor costs seconds)."""
    return torch.compile(attend, dynamic=True)


def width_bucket(longest: int, capacity: int) -> int:
    """The key length a step reads: ``longest`` rounded up to a multiple of :data:`WIDTH_STEP`, at most
    the slots' ``capacity``."""
    return min(capacity, max(WIDTH_STEP, math.ceil(longest / WIDTH_STEP) * WIDTH_STEP))


def _unlike(taken: set[int], start: int) -> int:
    """The first size from ``start`` up that is not ``taken`` (which then holds it)."""
    size = start
    while size in taken:
        size += 1
    taken.add(size)
    return size


def warm_up(heads: int, kv_heads: int, dim: int, dtype: torch.dtype, device: torch.device | str = "cpu") -> bool:
    """Compile :func:`compiled_attend` for one row and for many, in ``dtype``; False (with a warning) where this
    machine cannot compile (no C++ compiler, say): the caller then attends eagerly."""
    taken = {heads, kv_heads, dim, heads // kv_heads}
    slots = _unlike(taken, 5)
    capacity = _unlike(taken, 2 * WIDTH_STEP)
    width = _unlike(taken, WIDTH_STEP)
    many = _unlike(taken, 3)
    try:
        for rows in (many, 1):
            key = torch.zeros((slots, kv_heads, capacity, dim), dtype=dtype, device=device)
            compiled_attend()(torch.zeros((rows, heads, dim), device=device), key, key.clone(),
                              torch.arange(rows, device=device), torch.ones(rows, dtype=torch.long, device=device),
                              width)
    except Exception as error:  # noqa: BLE001 - any failure to compile means: attend eagerly
        logger.warning("the decode step attends eagerly: torch.compile failed here (%s: %s)", type(error).__name__,
                       str(error).splitlines()[0][:200] if str(error) else "")
        return False
    return True


#: ``serve --decode-attention`` and ``causal_language_model.decode_attention``, as a batch's ``compiled_attention``
CHOICES = {"auto": None, "compiled": True, "eager": False}

#: below this attention width (heads x head dim) the decode step's cost is Python's, not attention's: the
#: compile (seconds at start) buys nothing measurable, so ``compiled_attention=None`` attends eagerly
SMALLEST_WIDTH = 256


def attention_shape(config) -> tuple[int, int, int] | None:
    """(heads, kv heads, head dim) from a transformers config; None if it does not say."""
    heads = getattr(config, "num_attention_heads", None)
    hidden = getattr(config, "hidden_size", None)
    if not heads or not hidden:
        return None
    dim = getattr(config, "head_dim", None) or hidden // heads
    return heads, getattr(config, "num_key_value_heads", None) or heads, dim


#: ``kernel(queries, key, value, slots, lengths, longest)``: :func:`attend`'s contract, ``longest`` the
#: longest row's length (``max(lengths)``)
DecodeKernel = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int], torch.Tensor]


def ragged_kernel(queries, key, value, slots, lengths, longest: int) -> torch.Tensor:
    """The C++ loop (:mod:`.ragged_attention`): each row over its own length."""
    return ragged_attention.kernel()(queries, key, value, slots, lengths)


def inductor_kernel(queries, key, value, slots, lengths, longest: int) -> torch.Tensor:
    """:func:`attend` compiled, over ``longest`` rounded up to :data:`WIDTH_STEP`."""
    return compiled_attend()(queries, key, value, slots, lengths, width_bucket(longest, key.shape[2]))


def decode_kernel(transformer: torch.nn.Module, config, wanted: bool | None) -> DecodeKernel | None:
    """The compiled kernel a batch over ``transformer`` attends its decoding rows through, or None (torch's
    SDPA, eagerly): ``wanted`` if given (False: eager), else on CPU for an attention at least
    :data:`SMALLEST_WIDTH` wide. On CPU the C++ loop where it builds; else the Inductor loop, compiled now (on
    the first batch of each shape and dtype) so the first request does not wait for it; None, with a warning,
    where neither can be built here."""
    shape = attention_shape(config)
    parameter = next(transformer.parameters())
    # split over processes (serve --tensor-parallel), each holds its share of the heads: compile for those
    parts = next((p.device_mesh.size() for p in transformer.parameters() if hasattr(p, "device_mesh")), 1)
    if shape is not None and parts > 1:
        shape = (shape[0] // parts, max(1, shape[1] // parts), shape[2])
    if wanted is None:
        wanted = (shape is not None and parameter.device.type == "cpu" and shape[0] * shape[2] >= SMALLEST_WIDTH)
    if not wanted:
        return None
    if parameter.device.type == "cpu" and ragged_attention.kernel() is not None:
        return ragged_kernel
    if shape is None:
        raise ValueError(f"compiled attention needs the model's heads and head size; {type(config).__name__} "
                         "does not say them")
    return inductor_kernel if _warmed(*shape, parameter.dtype, parameter.device) else None


@functools.cache
@torch.inference_mode()  # as the batch steps: torch compiles for one grad mode
def _warmed(heads: int, kv_heads: int, dim: int, dtype: torch.dtype, device: torch.device) -> bool:
    return warm_up(heads, kv_heads, dim, dtype, device)
