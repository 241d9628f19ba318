"""The trainer's precision: autocast (``use_amp``) or bfloat16 parameters over float32 masters (``param_dtype``).

- ``use_amp`` (AllenNLP's key) runs the forward pass under ``torch.autocast``: the parameters stay float32,
  each matrix product casts its inputs to ``amp_dtype`` (a parameter once per forward, autocast's cache),
  the ops autocast keeps in float32 run in float32. bfloat16 has float32's exponent range, so it needs no
  loss scaling and runs on CPU and CUDA; float16 does (small gradients underflow): it runs on CUDA only,
  with ``torch.amp.GradScaler``. The trainer calls :meth:`MixedPrecision.unscale` before clipping, so
  ``grad_norm`` always sees true gradients.
- ``param_dtype: "bfloat16"`` runs forward and backward on bfloat16 copies of the floating-point
  parameters, made once per forward (:class:`CastParameters`): activations are bfloat16 end to end. The
  float32 parameters are the master weights: their gradients arrive in float32 (the cast's backward),
  are reduced in float32, clipped, and the optimizer updates them and keeps its states in float32.
  Checkpoints and archives hold the float32 masters, so resume and export are as in float32.

On a CPU where torch has no oneDNN bfloat16 kernels (they need AVX-512; AVX512-BF16 and AMX make them
fast) bfloat16 products fall back to slow generic code, several times slower than float32;
:func:`warn_if_emulated` says so when a run asks for bfloat16 there.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Literal, Mapping

import torch

AmpDtype = Literal["bfloat16", "float16"]
ParamDtype = Literal["float32", "bfloat16"]

logger = logging.getLogger(__name__)


class MixedPrecision:
    def __init__(self, enabled: bool, dtype: AmpDtype, device: torch.device) -> None:
        from distrain.config.errors import ConfigError, Problem

        if enabled and dtype == "float16" and device.type != "cuda":
            raise ConfigError([Problem("trainer.amp_dtype", f'"float16" needs a CUDA device (this worker has '
                                       f'{device.type}); use "bfloat16"')])
        self.enabled = enabled
        self.device_type = device.type
        self.dtype = getattr(torch, dtype)
        self.scaler = torch.amp.GradScaler("cuda") if enabled and dtype == "float16" else None

    def autocast(self) -> contextlib.AbstractContextManager:
        if not self.enabled:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device_type, dtype=self.dtype)

    def backward(self, loss: torch.Tensor) -> None:
        (self.scaler.scale(loss) if self.scaler is not None else loss).backward()

    def unscale(self, optimizer: torch.optim.Optimizer) -> None:
        """Divide the gradients by the loss scale (once per step, before clipping)."""
        if self.scaler is not None:
            self.scaler.unscale_(optimizer)

    def step(self, optimizer: torch.optim.Optimizer) -> None:
        """``optimizer.step()``; with a scaler, skipped when gradients overflowed, and the scale updated."""
        if self.scaler is None:
            optimizer.step()
            return
        self.scaler.step(optimizer)
        self.scaler.update()

    def state_dict(self) -> dict[str, Any]:
        return self.scaler.state_dict() if self.scaler is not None else {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if self.scaler is not None and state:
            self.scaler.load_state_dict(state)


class CastParameters(torch.nn.Module):
    """Calls ``module`` with its floating-point parameters replaced by copies in ``dtype``, made once per
    forward; autograd carries the gradients back through the casts to the parameters, in their dtype.
    Weights tied in ``module`` stay tied (one copy). Buffers are left as they are."""

    def __init__(self, module: torch.nn.Module, dtype: torch.dtype) -> None:
        super().__init__()
        self.module = module
        self.dtype = dtype

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        from torch.func import functional_call

        cast = {name: parameter.to(self.dtype) for name, parameter in self.module.named_parameters()
                if parameter.is_floating_point()}
        return functional_call(self.module, cast, args, kwargs, tie_weights=True, strict=False)


def cast_parameters(module: torch.nn.Module, param_dtype: ParamDtype) -> torch.nn.Module:
    """``module`` itself for float32; else :class:`CastParameters` around it."""
    return module if param_dtype == "float32" else CastParameters(module, getattr(torch, param_dtype))


def has_native_bfloat16(device: torch.device) -> bool:
    """Whether torch has fast bfloat16 matrix products on ``device``: CUDA, or a CPU where its oneDNN bfloat16
    kernels run (AVX-512; AVX512-BF16 or AMX in hardware)."""
    if device.type != "cpu":
        return True
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def warn_if_emulated(use_amp: bool, amp_dtype: str, param_dtype: str, device: torch.device) -> None:
    if ((use_amp and amp_dtype == "bfloat16") or param_dtype == "bfloat16") and not has_native_bfloat16(device):
        logger.warning("this CPU has no bfloat16 matrix instructions torch can use (its oneDNN bfloat16 kernels "
                       "need AVX-512; torch sees %s): bfloat16 matrix products run in slow generic code, several "
                       "times slower than float32 here; train in float32 on it", torch.backends.cpu.get_cpu_capability())


def precision_problems(arguments: Mapping[str, Any], casts_parameters: bool = False, pipelined: bool = False,
                       path: str = "trainer.param_dtype") -> list[Any]:
    """A precision setting the run cannot honour, at ``path``: with ``use_amp``, under a strategy that
    casts the parameters itself (``casts_parameters``: fsdp), or on a pipelined model."""
    from distrain.config.errors import Problem

    if arguments.get("param_dtype", "float32") == "float32":
        return []
    if arguments.get("use_amp"):
        return [Problem(path, "bfloat16 parameters already compute in bfloat16; leave "
                                               "trainer.use_amp off (autocast is the other precision mode)")]
    if casts_parameters:
        return [Problem(path, "under fsdp the gathered shards are cast by the strategy: give "
                                               'distributed.strategy.mixed_precision: {"param_dtype": "bfloat16"} '
                                               "instead (the shards and the optimizer stay float32)")]
    if pipelined:
        return [Problem(path, "a pipelined model runs its stages itself; bfloat16 parameters "
                                               "are not offered there yet (train it in float32 or use_amp)")]
    return []
