"""AllenNLP's ``TimeDistributed``: run a module written for (batch, ...) inputs on (batch, time, ...) ones by
folding time into the batch and unfolding the outputs (a character encoder over every word of a sentence)."""

from __future__ import annotations

from typing import Any

import torch


def _fold(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.dim() <= 2:
        raise RuntimeError(f"no time dimension to distribute over in a tensor of shape {tuple(tensor.shape)}")
    return tensor.reshape(-1, *tensor.shape[2:])


class TimeDistributed(torch.nn.Module):
    """Tensor arguments (keyword ones too, unless named in ``pass_through``) are folded; a tuple of outputs
    is unfolded element by element. AllenNLP's ``_module`` parameters are this module's ``module``."""

    def __init__(self, module: torch.nn.Module) -> None:
        super().__init__()
        self.module = module

    @classmethod
    def allennlp_name(cls, name: str) -> str:
        return "module." + name.removeprefix("_module.")

    def forward(self, *inputs: torch.Tensor, pass_through: list[str] | None = None, **kwargs: Any) -> Any:
        pass_through = pass_through or []
        shaped = [value for value in inputs] + [value for key, value in kwargs.items()
                                                if isinstance(value, torch.Tensor) and key not in pass_through]
        if not shaped:
            raise RuntimeError("no input tensor to time-distribute")
        leading = (inputs[-1] if inputs else shaped[0]).shape[:2]
        folded_kwargs = {key: _fold(value) if isinstance(value, torch.Tensor) and key not in pass_through else value
                         for key, value in kwargs.items()}
        outputs = self.module(*[_fold(value) for value in inputs], **folded_kwargs)
        if isinstance(outputs, tuple):
            return tuple(output.reshape(*leading, *output.shape[1:]) for output in outputs)
        return outputs.reshape(*leading, *outputs.shape[1:])
