"""The optimizers AllenNLP configs name beyond adam/adamw/sgd, with AllenNLP's defaults (``dense_sparse_adam``
with AllenNLP's own step).

``huggingface_adamw`` was transformers' ``AdamW``; with ``correct_bias`` (its default) torch's AdamW kernel
runs it, which decays the weights before the update (transformers' after) and adds ``eps`` to the corrected root:
6.1e-5 apart after four steps at lr 0.05, weight decay 0.01, eps 1e-6 (tests/allennlp/test_allennlp_optim.py).
``correct_bias: false`` (no bias correction, the original BERT recipe that allennlp-models' ``bert_base_srl``
uses) has no torch kernel: transformers' own step runs it, equal to AllenNLP's.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from distrain.config.constraints import NonNegativeFloat, PositiveFloat, Probability, Regex
from distrain.optim.optimizers import (
    Betas, Implementation, Optimizer, ParameterGroups, kernel_options, make_parameter_groups,
)


@Optimizer.register("huggingface_adamw")
class HuggingfaceAdamW(Optimizer, torch.optim.AdamW):
    """AllenNLP's ``huggingface_adamw``: torch's AdamW with AllenNLP's defaults; with ``correct_bias: false``,
    transformers' step without bias correction (``lr`` the step size, ``eps`` added to the root of the raw second
    moment, weight decay after the update)."""

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
        options = kernel_options(implementation, groups) if correct_bias else {"foreach": False}
        torch.optim.AdamW.__init__(self, groups, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, **options)
        self.correct_bias = correct_bias

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:
        if self.correct_bias:
            return super().step(closure)
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for parameter in group["params"]:
                if parameter.grad is None:
                    continue
                state = counted_adam_state(self.state, parameter)
                grad, exp_avg, exp_avg_sq = parameter.grad, state["exp_avg"], state["exp_avg_sq"]
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                parameter.addcdiv_(exp_avg, exp_avg_sq.sqrt().add_(group["eps"]), value=-group["lr"])
                if group["weight_decay"] > 0:
                    parameter.add_(parameter, alpha=-group["lr"] * group["weight_decay"])
        return loss


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


@Optimizer.register("dense_sparse_adam")
class DenseSparseAdam(Optimizer):
    """AllenNLP's ``dense_sparse_adam``: Adam that takes sparse gradients (an ``embedding`` with ``sparse:
    true``) as well as dense ones, updating a sparse gradient's rows only, so a large vocabulary's
    untouched rows and their running means are left alone. Its step is AllenNLP's (``eps`` added to the
    uncorrected root, ``lr * sqrt(1 - beta2^t) / (1 - beta1^t)`` the step size), not torch's Adam's."""

    def __init__(
        self,
        model_parameters: list[tuple[str, torch.nn.Parameter]],
        parameter_groups: ParameterGroups | None = None,
        lr: NonNegativeFloat = 1e-3,
        betas: Betas = (0.9, 0.999),
        eps: NonNegativeFloat = 1e-8,
    ) -> None:
        groups = make_parameter_groups(model_parameters, parameter_groups)
        torch.optim.Optimizer.__init__(self, groups, dict(lr=lr, betas=tuple(betas), eps=eps))

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for parameter in group["params"]:
                if parameter.grad is None:
                    continue
                state = counted_adam_state(self.state, parameter)
                step_size = group["lr"] * math.sqrt(1 - beta2 ** state["step"]) / (1 - beta1 ** state["step"])
                if parameter.grad.is_sparse:
                    _sparse_step(parameter, parameter.grad.coalesce(), state, beta1, beta2, group["eps"], step_size)
                    continue
                grad, exp_avg, exp_avg_sq = parameter.grad, state["exp_avg"], state["exp_avg_sq"]
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                parameter.addcdiv_(exp_avg, exp_avg_sq.sqrt().add_(group["eps"]), value=-step_size)
        return loss


def counted_adam_state(states: dict, parameter: torch.Tensor) -> dict:
    """The parameter's Adam state (its step count and zero moments at its first step), counting this step."""
    state = states[parameter]
    if not state:
        state.update(step=0, exp_avg=torch.zeros_like(parameter), exp_avg_sq=torch.zeros_like(parameter))
    state["step"] += 1
    return state


def _sparse_step(parameter: torch.Tensor, grad: torch.Tensor, state: dict, beta1: float, beta2: float, eps: float,
                 step_size: float) -> None:
    """Adam on the entries a (coalesced) sparse gradient holds; the others, and their moments, stay."""
    indices, values = grad._indices(), grad._values()

    def sparse(entries: torch.Tensor) -> torch.Tensor:
        return torch.sparse_coo_tensor(indices, entries, grad.shape, check_invariants=False)

    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    old_mean, old_square = exp_avg.sparse_mask(grad)._values(), exp_avg_sq.sparse_mask(grad)._values()
    mean_update = (values - old_mean) * (1 - beta1)
    square_update = (values.pow(2) - old_square) * (1 - beta2)
    exp_avg.add_(sparse(mean_update))
    exp_avg_sq.add_(sparse(square_update))
    mean, square = mean_update + old_mean, square_update + old_square
    parameter.add_(sparse(-step_size * mean / (square.sqrt() + eps)))
