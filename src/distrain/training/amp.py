"""The trainer's precision: autocast (``use_amp``) or bfloat16 parameters over float32 masters (``param_dtype``).

- ``use_amp`` (AllenNLP's key) runs the forward pass under ``torch.autocast``: the parameters stay float32,
  each matrix product casts its inputs to ``amp_dtype`` (a parameter once per forward, autocast's cache),
  the ops autocast keeps in float32 run in float32. bfloat16 has float32's exponent range, so it needs no
  loss scaling and runs on CPU and CUDA; float16 does (small gradients underflow): it runs on CUDA only,
  with ``torch.amp.GradScaler``. The trainer calls :meth:`MixedPrecision.unscale` before clipping, so
  ``grad_norm`` always sees true gradients.
- ``param_dtype: "bfloat16"`` runs forward and backward on bfloat16 copies of the floating-point
  parameters, each module casting its own when it is called (:func:`cast_parameters`): activations are
  bfloat16 end to end, in training and validation. The float32 parameters are the master weights: their
  gradients arrive in float32 (the cast's backward), are reduced in float32, clipped, and the optimizer
  updates them and keeps its states in float32. Checkpoints and archives hold the float32 masters, so
  resume and export are as in float32.

On a CPU where torch has no oneDNN bfloat16 kernels (they need AVX-512; AVX512-BF16 and AMX make them
fast) bfloat16 products fall back to slow generic code, several times slower than float32;
:func:`warn_if_emulated` says so when a run asks for bfloat16 there.
"""

from __future__ import annotations

import contextlib
import functools
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


def cast_parameters(model: torch.nn.Module, param_dtype: ParamDtype) -> list[str]:
    """Make every module of ``model`` that holds floating-point parameters of its own run on copies of them
    in ``param_dtype``, cast each time the module is called (once per forward; again where activation
    checkpointing recomputes it, so the recomputation matches). The parameters themselves stay as they are
    (the master weights); autograd carries the gradients back through the casts, in the parameters' dtype.
    Like activation checkpointing it replaces ``forward`` on the instance, so names, state dicts and
    sharding units do not change. A parameter read outside its module's forward is not cast. Returns the
    names of the modules changed (none for float32)."""
    if param_dtype == "float32":
        return []
    dtype = getattr(torch, param_dtype)
    changed = []
    for name, module in model.named_modules():
        owned = [key for key, parameter in module.named_parameters(recurse=False) if parameter.is_floating_point()]
        if owned:
            module.forward = functools.partial(_with_cast_parameters, module, module.forward, owned, dtype)
            changed.append(name)
    return changed


def _with_cast_parameters(module: torch.nn.Module, forward: Any, names: list[str], dtype: torch.dtype,
                          *args: Any, **kwargs: Any) -> Any:
    masters = {key: module._parameters[key] for key in names}
    try:
        for key, master in masters.items():  # a plain tensor in the slot: module.weight reads the copy
            module._parameters[key] = master.to(dtype)
        return forward(*args, **kwargs)
    finally:
        module._parameters.update(masters)


def has_native_bfloat16(device: torch.device) -> bool:
    """Whether torch has fast bfloat16 matrix products on ``device``: CUDA, or a CPU where its oneDNN bfloat16
    kernels run (AVX-512; AVX512-BF16 or AMX in hardware)."""
    if device.type != "cpu":
        return True
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def warn_if_emulated(use_amp: bool, amp_dtype: str, param_dtype: str, device: torch.device) -> None:
    """A warning when the run asks for bfloat16 on a CPU where it is slower than float32."""
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
        return [Problem(path, "bfloat16 parameters already compute in bfloat16; leave trainer.use_amp off "
                              "(autocast is the other precision mode)")]
    if casts_parameters:
        return [Problem(path, "under fsdp the gathered shards are cast by the strategy: give "
                              'distributed.strategy.mixed_precision: {"param_dtype": "bfloat16"} instead (the '
                              "shards and the optimizer stay float32)")]
    if pipelined:
        return [Problem(path, "a pipelined model runs its stages itself; bfloat16 parameters are not offered "
                              "there yet (train it in float32 or with use_amp)")]
    return []
