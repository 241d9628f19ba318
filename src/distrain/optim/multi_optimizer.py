"""``multi``: parameter groups routed to named optimizers of their own (AllenNLP's ``MultiOptimizer``).

Each ``parameter_groups`` entry names its optimizer with ``optimizer_name`` (``default`` when it names none); a
parameter joins the first entry with a regex that matches its name, else the ``default`` optimizer. Each named
optimizer is built on its parameters alone, with its entries as its own groups (their other overrides, ``lr`` say,
kept). The ``default`` optimizer must be configured, but need not receive a parameter; any other must.

The whole is one torch optimizer whose ``param_groups`` are the named optimizers' own group dicts, in the order the
optimizers are named, and whose ``state`` they all share (their parameters are disjoint): a scheduler, a gradient
scaler or a checkpoint sees the groups and state of every part, in torch's usual form.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

import torch

from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.optim.optimizers import Optimizer, ParameterGroups

DEFAULT = "default"


def _optimizer_name(overrides: Mapping[str, Any]) -> str:
    return overrides.get("optimizer_name", DEFAULT)


def route(named_parameters: list[tuple[str, torch.nn.Parameter]], groups: ParameterGroups,
          names: list[str]) -> dict[str, tuple[list[tuple[str, torch.nn.Parameter]], ParameterGroups]]:
    """Each optimizer's (parameters, its own parameter-group entries, ``optimizer_name`` left out)."""
    routed: dict[str, tuple[list, list]] = {name: ([], []) for name in names}
    for regexes, overrides in groups:
        kept = {key: value for key, value in overrides.items() if key != "optimizer_name"}
        routed[_optimizer_name(overrides)][1].append((regexes, kept))
    patterns = [([re.compile(regex) for regex in regexes], _optimizer_name(overrides)) for regexes, overrides in groups]
    for name, parameter in named_parameters:
        owner = next((owner for compiled, owner in patterns if any(p.search(name) for p in compiled)), DEFAULT)
        routed[owner][0].append((name, parameter))
    return routed


@Optimizer.register("multi")
class MultiOptimizer(Optimizer):
    """Named optimizers (``optimizers``), each over the parameters its ``parameter_groups`` entries match."""

    def __init__(self, model_parameters: list[tuple[str, torch.nn.Parameter]],
                 optimizers: dict[str, Lazy[Optimizer]], parameter_groups: ParameterGroups) -> None:
        trainable = [(name, parameter) for name, parameter in model_parameters if parameter.requires_grad]
        routed = route(trainable, parameter_groups, list(optimizers))
        empty = [name for name, (parameters, _) in routed.items() if not parameters and name != DEFAULT]
        if empty:
            raise ValueError(f"optimizers: {', '.join(empty)} received no parameter (no parameter_groups regex of "
                             "theirs matches a parameter name)")
        self.optimizers = {name: optimizer.construct(model_parameters=routed[name][0],
                                                     **({"parameter_groups": routed[name][1]} if routed[name][1] else {}))
                           for name, optimizer in optimizers.items() if routed[name][0]}
        torch.optim.Optimizer.__init__(self, [group for part in self.optimizers.values() for group in part.param_groups],
                                       {})
        self._share_state()

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        names = set(arguments["optimizers"])
        problems = [] if DEFAULT in names else [
            Problem("optimizers", f'names no "{DEFAULT}" optimizer (for the parameters no group matches)')]
        for index, (_, overrides) in enumerate(arguments["parameter_groups"]):
            if _optimizer_name(overrides) not in names:
                problems.append(Problem(f"parameter_groups[{index}]", f'optimizer_name "{_optimizer_name(overrides)}" '
                                        f"is not among optimizers ({', '.join(sorted(names))})"))
        return problems

    def _share_state(self) -> None:
        """Hand each part its slice of this optimizer's groups (the same dicts) and this optimizer's state."""
        start = 0
        for part in self.optimizers.values():
            count = len(part.param_groups)
            part.param_groups, part.state = self.param_groups[start:start + count], self.state
            start += count

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        super().load_state_dict(state_dict)  # torch makes new group dicts and a new state: the parts take them
        self._share_state()

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:
        loss = closure() if closure is not None else None
        for part in self.optimizers.values():
            part.step()
        return loss
