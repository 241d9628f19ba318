"""Mixed precision for the trainer: autocast for the forward pass, a gradient scaler for float16.

bfloat16 has float32's exponent range, so it needs no loss scaling and runs on CPU and CUDA.
float16 does (small gradients underflow): it runs on CUDA only, with ``torch.amp.GradScaler``.
The trainer calls :meth:`unscale` before clipping, so ``grad_norm`` always sees true gradients.
"""

from __future__ import annotations

import contextlib
from typing import Any, Literal

import torch

AmpDtype = Literal["bfloat16", "float16"]


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
