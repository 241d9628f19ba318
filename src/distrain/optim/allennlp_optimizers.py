"""The optimizers AllenNLP configs name beyond adam/adamw/sgd, with AllenNLP's defaults.

``huggingface_adamw`` was transformers' ``AdamW``; with ``correct_bias`` (its default) it is torch's
AdamW step for step, so torch's kernel runs it. ``correct_bias: false`` (no bias correction, an old
BERT recipe) has no torch kernel and is refused at validation rather than silently changed.
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import NonNegativeFloat, PositiveFloat, Probability, Regex
from distrain.config.errors import Problem
from distrain.optim.optimizers import (
    Betas, Implementation, Optimizer, ParameterGroups, kernel_options, make_parameter_groups,
)


@Optimizer.register("huggingface_adamw")
class HuggingfaceAdamW(Optimizer, torch.optim.AdamW):
    """AllenNLP's ``huggingface_adamw``: torch's AdamW with AllenNLP's defaults (``correct_bias: false`` is refused)."""

    def __init__(
        self,
        model_parameters: list[tuple[str, torch.nn.Parameter]],
        lr: NonNegativeFloat = 1e-5,
        betas: Betas = (0.9, 0.999),
        eps: PositiveFloat = 1e-8,
        weight_decay: NonNegativeFloat = 0.0,
        correct_bias: bool = True,
        parameter_groups: ParameterGroups | None = None,
        no_decay: list[Regex] | None = None,
        implementation: Implementation = "auto",
    ) -> None:
        groups = make_parameter_groups(model_parameters, parameter_groups, no_decay)
        torch.optim.AdamW.__init__(self, groups, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                   **kernel_options(implementation, groups))

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        if not arguments["correct_bias"]:
            return [Problem("correct_bias", "false (Adam without bias correction) is not supported; "
                                            "remove it for torch's AdamW, which corrects the bias")]
        return []


@Optimizer.register("adadelta")
class AdadeltaOptimizer(Optimizer, torch.optim.Adadelta):
    """``torch.optim.Adadelta`` with AllenNLP's defaults."""

    def __init__(
        self,
        model_parameters: list[tuple[str, torch.nn.Parameter]],
        lr: NonNegativeFloat = 1.0,
        rho: Probability = 0.9,
        eps: PositiveFloat = 1e-6,
        weight_decay: NonNegativeFloat = 0.0,
        parameter_groups: ParameterGroups | None = None,
    ) -> None:
        groups = make_parameter_groups(model_parameters, parameter_groups)
        torch.optim.Adadelta.__init__(self, groups, lr=lr, rho=rho, eps=eps, weight_decay=weight_decay)


@Optimizer.register("adagrad")
class AdagradOptimizer(Optimizer, torch.optim.Adagrad):
    """``torch.optim.Adagrad`` with AllenNLP's defaults."""

    def __init__(
        self,
        model_parameters: list[tuple[str, torch.nn.Parameter]],
        lr: NonNegativeFloat = 0.01,
        lr_decay: NonNegativeFloat = 0.0,
        weight_decay: NonNegativeFloat = 0.0,
        initial_accumulator_value: NonNegativeFloat = 0.0,
        eps: PositiveFloat = 1e-10,
        parameter_groups: ParameterGroups | None = None,
    ) -> None:
        groups = make_parameter_groups(model_parameters, parameter_groups)
        torch.optim.Adagrad.__init__(self, groups, lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                     initial_accumulator_value=initial_accumulator_value, eps=eps)
