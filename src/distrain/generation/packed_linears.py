"""A model's linear layers with their weights laid out once for oneDNN's CPU kernels, for the decode step.

torch's ``linear`` on CPU calls MKL's sgemm, which re-lays the weight out in its blocked format on every
call. At a decode step's shapes (tens of rows against weights of hundreds of thousands of entries) that
costs about as much as the product itself. oneDNN's linear instead takes a weight reordered once, as
Inductor's freezing does for a compiled model on CPU. On the 40 M Llama (``scripts/bench_slots.py``, ``slots``
against ``slots_unpacked``) a continuous workload ran 1.21x the tokens/s on an AVX2-only EPYC (Zen 3), and a
static one 1.42x in float32 and 1.17x in bfloat16 on an AVX-512 EPYC (Zen 4).

:class:`PackedLinears` finds the eligible layers (plain ``nn.Linear`` on CPU, weights not split over
processes, a dtype oneDNN can reorder here, at least :data:`SMALLEST` weights) and, inside :meth:`PackedLinears.applied`, runs each of them
on its packed weight; outside it, the model is untouched. The packed copies are made once per weight (and
again only if that weight changes), so they cost the eligible weights' memory once more.
"""

from __future__ import annotations

import contextlib
import functools
import weakref
from typing import Iterator

import torch

#: module -> (the weight's identity and version when packed, its packed copy): shared by every batch
_PACKED: weakref.WeakKeyDictionary[torch.nn.Linear, tuple[tuple[int, int], torch.Tensor]] = weakref.WeakKeyDictionary()


def _linear(packed: torch.Tensor, bias: torch.Tensor | None, input: torch.Tensor) -> torch.Tensor:
    return torch.ops.mkldnn._linear_pointwise(input, packed, bias, "none", [], "")


#: weights smaller than this stay with torch's linear: oneDNN's call costs more than MKL's repacking saves
#: (on the earlier AVX2-only EPYC the tests' 2-layer Llama of width 32 decoded at half the speed packed and
#: 512 x 512 layers were even; on this project's AVX-512 EPYC the 40 M Llama's 512 x 512 projections gain:
#: its slot batch alone ran 352 against 325 tokens/s in float32 and 570 against 530 in bfloat16)
SMALLEST = 512 * 512


def _packable(module: torch.nn.Module) -> bool:
    weight = getattr(module, "weight", None)
    return (isinstance(module, torch.nn.Linear) and type(weight) in (torch.Tensor, torch.nn.Parameter)
            and weight.device.type == "cpu" and weight.dtype in (torch.float32, torch.bfloat16)
            and weight.numel() >= SMALLEST)


def _packed(module: torch.nn.Linear) -> torch.Tensor | None:
    """``module``'s weight reordered for oneDNN (made once, again if the weight changed); None where this
    CPU or torch build cannot (oneDNN's bfloat16 linear needs AVX-512 or AVX-NE-CONVERT)."""
    key = (module.weight.data_ptr(), module.weight._version)
    cached = _PACKED.get(module)
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        with torch.no_grad():
            packed = torch.ops.mkldnn._reorder_linear_weight(module.weight.detach())
    except (RuntimeError, AttributeError):
        return None
    _PACKED[module] = (key, packed)
    return packed


class PackedLinears:
    """The eligible linear layers of ``model`` with their packed weights; none when oneDNN is unavailable."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.layers: list[tuple[torch.nn.Linear, torch.Tensor]] = []
        if not torch.backends.mkldnn.is_available():
            return
        for module in model.modules():
            packed = _packed(module) if _packable(module) else None
            if packed is not None:
                self.layers.append((module, packed))

    def __len__(self) -> int:
        return len(self.layers)

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        """Within the block, each packed layer computes on its packed weight (an instance ``forward``,
        removed again on the way out)."""
        for module, packed in self.layers:
            module.forward = functools.partial(_linear, packed, module.bias)
        try:
            yield
        finally:
            for module, _ in self.layers:
                del module.forward


def cpu_packs(dtype: torch.dtype) -> bool:
    """Whether oneDNN lays out ``dtype`` weights for this CPU's matrix kernels: false for bfloat16 on a CPU
    without AVX-512 or AVX-NE-CONVERT, where torch's bfloat16 products run several times slower than
    float32's (measured 9 against 40-80 GFLOP/s on an AVX2-only EPYC)."""
    if not torch.backends.mkldnn.is_available():
        return False
    try:
        torch.ops.mkldnn._reorder_linear_weight(torch.zeros((8, 8), dtype=dtype))
    except (RuntimeError, AttributeError):
        return False
    return True
