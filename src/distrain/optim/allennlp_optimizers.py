"""The optimizers AllenNLP configs name beyond adam/adamw/sgd, with AllenNLP's defaults (``dense_sparse_adam``
with AllenNLP's own step).

``huggingface_adamw`` was transformers' ``AdamW``; with ``correct_bias`` (its default) torch's AdamW kernel
runs it, which decays the weights before the update (transformers' after) and adds ``eps`` to the corrected root:
6.1e-5 apart after four steps at lr 0.05, weight decay 0.01, eps 1e-6 (tests/allennlp/test_allennlp_optim.py).
``correct_bias: false`` (no bias correction, the original BERT recipe that allennlp-models' ``bert_base_srl``
uses) has no torch kernel: transformers' own step runs it, equal to AllenNLP's. ``huggingface_adafactor`` is
transformers' ``Adafactor`` itself (factored second moments, and by default its own step size from the step count
and each parameter's scale: no ``lr``).
"""

from __future__ import annotations

import contextlib
import math
from typing import Any, Iterator

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


@Optimizer.register("huggingface_adafactor")
class HuggingfaceAdafactor(Optimizer):
    """AllenNLP's ``huggingface_adafactor``: transformers' ``Adafactor`` with its (and AllenNLP's) defaults;
    ``lr`` only with ``relative_step: false``, ``warmup_init`` only with it true (transformers refuses the rest)."""

    def __init__(
        self,
        model_parameters: list[tuple[str, torch.nn.Parameter]],
        parameter_groups: ParameterGroups | None = None,
        lr: PositiveFloat | None = None,
        eps: tuple[NonNegativeFloat, NonNegativeFloat] = (1e-30, 1e-3),
        clip_threshold: PositiveFloat = 1.0,
        decay_rate: float = -0.8,
        beta1: Probability | None = None,
        weight_decay: NonNegativeFloat = 0.0,
        scale_parameter: bool = True,
        relative_step: bool = True,
        warmup_init: bool = False,
    ) -> None:
        if lr is not None and relative_step:
            raise ValueError("lr is set by Adafactor itself with relative_step (its default); set relative_step: false")
        if warmup_init and not relative_step:
            raise ValueError("warmup_init needs relative_step: true")
        groups = make_parameter_groups(model_parameters, parameter_groups)
        torch.optim.Optimizer.__init__(self, groups, dict(
            lr=lr, eps=tuple(eps), clip_threshold=clip_threshold, decay_rate=decay_rate, beta1=beta1,
            weight_decay=weight_decay, scale_parameter=scale_parameter, relative_step=relative_step,
            warmup_init=warmup_init))

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:
        """transformers' step, on whole parameters: under fsdp a parameter is a shard (a DTensor) and Adafactor
        factors a matrix's second moments by its rows and columns and scales by its root mean square, so each
        rank steps the whole gathered parameter (its state is small: a row and a column per matrix) and keeps its
        shard of the result, the one-process update."""
        from transformers.optimization import Adafactor

        with _whole_parameters(self):
            return Adafactor.step(self, closure)

    def __getattr__(self, name: str) -> Any:
        """Adafactor's static helpers, which its step reaches through ``self`` (transformers is imported only
        when a step runs, not whenever the optimizers are registered)."""
        if name in ("_get_lr", "_get_options", "_rms", "_approx_sq_grad"):
            from transformers.optimization import Adafactor

            return getattr(Adafactor, name)
        raise AttributeError(name)


@contextlib.contextmanager
def _whole_parameters(optimizer: torch.optim.Optimizer) -> Iterator[None]:
    """Inside, the optimizer's sharded parameters (DTensors) are whole plain tensors with whole gradients, their
    state under the whole tensor; after, each shard takes its part of the stepped whole and its state back."""
    swapped = []
    for group in optimizer.param_groups:
        for index, parameter in enumerate(group["params"]):
            if not hasattr(parameter, "full_tensor") or parameter.grad is None:
                continue
            whole = parameter.full_tensor()
            whole.grad = parameter.grad.full_tensor()
            if parameter in optimizer.state:
                optimizer.state[whole] = optimizer.state.pop(parameter)
            group["params"][index] = whole
            swapped.append((group, index, parameter, whole))
    try:
        yield
    finally:
        from torch.distributed.tensor import distribute_tensor

        for group, index, parameter, whole in swapped:
            part = distribute_tensor(whole, parameter.device_mesh, parameter.placements, src_data_rank=None)
            parameter.to_local().copy_(part.to_local())
            if whole in optimizer.state:
                optimizer.state[parameter] = optimizer.state.pop(whole)
            group["params"][index] = parameter


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
