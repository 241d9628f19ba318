"""LoRA (Hu et al., 2021) through ``peft``: each targeted linear layer gets a trainable low-rank update
``B A x * alpha / r`` beside its frozen weight (``B`` starts at zero, so training starts from the base)."""

from __future__ import annotations

from typing import Any

import torch

from distrain.config.constraints import PositiveFloat, PositiveInt, Probability
from distrain.config.errors import Problem
from distrain.modules.adapter import Adapter, AdapterError, default_targets, target_problems


@Adapter.register("lora")
class LoraAdapter(Adapter):
    """``target_modules``: names of linear layers (a full name or its last parts, as ``peft`` matches them);
    default: every linear layer inside the model's repeated blocks (attention and feed-forward projections)."""

    def __init__(self, r: PositiveInt = 8, alpha: PositiveFloat = 16.0, dropout: Probability = 0.0,
                 target_modules: list[str] | None = None) -> None:
        self.r = r
        self.alpha = alpha
        self.dropout = dropout
        self.target_modules = target_modules

    def peft_config(self, transformer: torch.nn.Module) -> Any:
        from peft import LoraConfig

        return LoraConfig(r=self.r, lora_alpha=self.alpha, lora_dropout=self.dropout,
                          target_modules=self.target_modules or default_targets(transformer))

    def apply(self, transformer: torch.nn.Module, path: str) -> None:
        targets = self.target_modules or default_targets(transformer)
        if not targets:
            raise AdapterError([Problem(f"{path}.target_modules", "the model has no repeated blocks with linear "
                                        "layers to adapt; name the layers to adapt")])
        problems = target_problems(transformer, targets, f"{path}.target_modules")
        if problems:
            raise AdapterError(problems)
        from peft import inject_adapter_in_model

        inject_adapter_in_model(self.peft_config(transformer), transformer)

    def describe(self) -> dict[str, Any]:
        return {"type": "lora", "r": self.r, "alpha": self.alpha, "dropout": self.dropout,
                "target_modules": self.target_modules}
