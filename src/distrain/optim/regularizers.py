"""AllenNLP's ``model.regularizer``: an L1 or L2 penalty on the parameters a regex picks.

``{"regexes": [[regex, {"type": "l2", "alpha": 0.01}], ...]}``. AllenNLP added the penalty to every
batch's loss; here its gradient is added once per optimizer step, after the workers' gradients are
averaged and before clipping, so the update equals AllenNLP's single-process one on any number of
workers (the penalty does not depend on the data). The reported training loss excludes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

import torch

from distrain.config.constraints import NonNegativeFloat, Regex
from distrain.registry import Registrable


class Regularizer(Registrable):
    """The gradient of a penalty on one parameter, added to its ``grad``."""

    def __init__(self, alpha: NonNegativeFloat = 0.01) -> None:
        self.alpha = alpha

    def penalty(self, parameter: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def add_gradient(self, parameter: torch.nn.Parameter) -> None:
        raise NotImplementedError


@Regularizer.register("l2")
class L2Regularizer(Regularizer):
    """``alpha * sum(p ** 2)``: gradient ``2 * alpha * p``."""

    def penalty(self, parameter: torch.Tensor) -> torch.Tensor:
        return self.alpha * parameter.pow(2).sum()

    def add_gradient(self, parameter: torch.nn.Parameter) -> None:
        parameter.grad.add_(parameter.detach(), alpha=2 * self.alpha)


@Regularizer.register("l1")
class L1Regularizer(Regularizer):
    """``alpha * sum(|p|)``: gradient ``alpha * sign(p)``."""

    def penalty(self, parameter: torch.Tensor) -> torch.Tensor:
        return self.alpha * parameter.abs().sum()

    def add_gradient(self, parameter: torch.nn.Parameter) -> None:
        parameter.grad.add_(parameter.detach().sign(), alpha=self.alpha)


@dataclass
class RegularizerApplicator:
    """The ``model.regularizer`` block: each parameter takes the first regularizer whose regex matches."""

    regexes: list[tuple[Regex, Regularizer]] | None = None

    def _pick(self, name: str) -> Regularizer | None:
        return next((regularizer for regex, regularizer in self.regexes or [] if re.search(regex, name)), None)

    def penalty(self, named_parameters: Iterable[tuple[str, torch.nn.Parameter]]) -> torch.Tensor:
        """The total penalty (AllenNLP's ``get_regularization_penalty``)."""
        total = torch.zeros(())
        for name, parameter in named_parameters:
            regularizer = self._pick(name)
            if regularizer is not None and parameter.requires_grad:
                total = total + regularizer.penalty(parameter)
        return total

    def __call__(self, module: torch.nn.Module) -> torch.Tensor:
        """AllenNLP's spelling: the penalty of ``module``'s parameters."""
        return self.penalty(module.named_parameters())

    @torch.no_grad()
    def add_gradients(self, named_parameters: Iterable[tuple[str, torch.nn.Parameter]]) -> None:
        """Add the penalty's gradient to every trainable parameter it covers."""
        for name, parameter in named_parameters:
            regularizer = self._pick(name)
            if regularizer is not None and parameter.requires_grad:
                if parameter.grad is None:  # unused by this step's loss: the penalty alone moves it
                    parameter.grad = torch.zeros_like(parameter)
                regularizer.add_gradient(parameter)
