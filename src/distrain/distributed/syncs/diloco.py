"""DiLoCo: local SGD whose average becomes a pseudo-gradient for an outer optimizer.

Every ``sync_every`` steps the workers' parameters are averaged (sample-weighted, as in
:mod:`local_sgd`); the difference between the last synchronised parameters and that average is the
pseudo-gradient, and the outer optimizer (default: SGD, lr 0.7, Nesterov momentum 0.9, as in the
DiLoCo paper) steps from the last synchronised parameters with it. Outer SGD with lr 1 and no
momentum is exactly local SGD. The inner optimizer is the trainer's, each worker's state its own.
"""

from __future__ import annotations

from typing import Annotated, Any

import torch
from annotated_types import Ge

from distrain.distributed.sync import SyncMode
from distrain.distributed.syncs.local_sgd import LocalSGD
from distrain.distributed.world import SINGLE, World
from distrain.config.lazy import Lazy
from distrain.optim.optimizers import Optimizer


@SyncMode.register("diloco")
class DiLoCo(LocalSGD):
    """Local SGD whose averaged change is a pseudo-gradient for an outer optimizer (default SGD, Nesterov)."""

    def __init__(
        self,
        world: World = SINGLE,
        sync_every: Annotated[int, Ge(1)] = 50,
        outer_optimizer: Lazy[Optimizer] | None = None,
    ) -> None:
        super().__init__(world, sync_every)
        self.outer_optimizer_config = outer_optimizer
        self.outer_optimizer: torch.optim.Optimizer | None = None
        self.anchor: list[torch.Tensor] = []

    def attach(self, model: torch.nn.Module) -> None:
        super().attach(model)
        named = list(model.named_parameters())
        if self.outer_optimizer_config is not None:
            self.outer_optimizer = self.outer_optimizer_config.construct(model_parameters=named)
        else:
            sgd = Optimizer.by_name("sgd")
            self.outer_optimizer = sgd(named, lr=0.7, momentum=0.9, nesterov=True)
        self.anchor = [p.detach().clone() for p in model.parameters()]

    def synchronise(self) -> None:
        super().synchronise()
        if not self.world.is_distributed:
            self.after_average()  # one worker: its own parameters are the average

    def after_average(self) -> None:
        """Step from the last synchronised parameters along (anchor − average)."""
        assert self.model is not None and self.outer_optimizer is not None
        parameters = list(self.model.parameters())
        with torch.no_grad():
            for parameter, anchor in zip(parameters, self.anchor):
                parameter.grad = anchor - parameter.detach()
                parameter.copy_(anchor)
        self.outer_optimizer.step()
        self.outer_optimizer.zero_grad(set_to_none=True)
        self.anchor = [p.detach().clone() for p in parameters]

    def state_dict(self) -> dict[str, Any]:
        assert self.outer_optimizer is not None
        return super().state_dict() | {
            "outer_optimizer": self.outer_optimizer.state_dict(),
            "anchor": [tensor.clone() for tensor in self.anchor],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        assert self.outer_optimizer is not None
        self.outer_optimizer.load_state_dict(state["outer_optimizer"])
        self.anchor = [tensor.clone() for tensor in state["anchor"]]
