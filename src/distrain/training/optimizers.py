"""Optimizers by name, with parameter groups chosen by regular expressions over parameter names.

``parameter_groups`` is a list of ``[[regex, ...], {overrides}]``: a parameter joins the first group
with a regex that matches (``re.search``) its name; the rest form the default group.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

import torch

from distrain.registry import Registrable

ParameterGroups = list[tuple[list[str], dict[str, Any]]]


class Optimizer(torch.optim.Optimizer, Registrable):
    default_implementation = "adam"
    runtime_args = ("model_parameters",)


def make_parameter_groups(
    named_parameters: Iterable[tuple[str, torch.nn.Parameter]], groups: ParameterGroups | None
) -> list[dict[str, Any]]:
    trainable = [(name, param) for name, param in named_parameters if param.requires_grad]
    if not groups:
        return [{"params": [param for _, param in trainable]}]
    buckets: list[dict[str, Any]] = [{"params": [], **overrides} for _, overrides in groups]
    default: dict[str, Any] = {"params": []}
    patterns = [[re.compile(regex) for regex in regexes] for regexes, _ in groups]
    for name, param in trainable:
        index = next((i for i, group in enumerate(patterns) if any(p.search(name) for p in group)), None)
        (default if index is None else buckets[index])["params"].append(param)
    unused = [groups[i][0] for i, bucket in enumerate(buckets) if not bucket["params"]]
    if unused:
        raise ValueError(f"parameter_groups: no parameter matches {unused}")
    return [bucket for bucket in buckets + [default] if bucket["params"]]


@Optimizer.register("adam")
class AdamOptimizer(Optimizer, torch.optim.Adam):
    def __init__(
        self,
        model_parameters: list[tuple[str, torch.nn.Parameter]],
        lr: float = 0.001,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        parameter_groups: ParameterGroups | None = None,
    ) -> None:
        torch.optim.Adam.__init__(
            self, make_parameter_groups(model_parameters, parameter_groups),
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
        )


@Optimizer.register("adamw")
class AdamWOptimizer(Optimizer, torch.optim.AdamW):
    def __init__(
        self,
        model_parameters: list[tuple[str, torch.nn.Parameter]],
        lr: float = 0.001,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.01,
        amsgrad: bool = False,
        parameter_groups: ParameterGroups | None = None,
    ) -> None:
        torch.optim.AdamW.__init__(
            self, make_parameter_groups(model_parameters, parameter_groups),
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
        )


@Optimizer.register("sgd")
class SgdOptimizer(Optimizer, torch.optim.SGD):
    def __init__(
        self,
        model_parameters: list[tuple[str, torch.nn.Parameter]],
        lr: float = 0.01,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        parameter_groups: ParameterGroups | None = None,
    ) -> None:
        torch.optim.SGD.__init__(
            self, make_parameter_groups(model_parameters, parameter_groups),
            lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
        )
