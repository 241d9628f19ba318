"""The bytes of training state one rank holds, measured one way for the dry run's prediction and for a
real worker's log, so ``distrain check --world-size N`` can be compared with what the ranks then hold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StateBytes:
    """Parameters, gradients (one per trainable parameter, in its dtype) and optimizer state of one rank;
    activations and the data are not counted."""

    parameters: int
    gradients: int
    optimizer: int

    @property
    def total(self) -> int:
        return self.parameters + self.gradients + self.optimizer

    def describe(self) -> str:
        return (f"parameters {self.parameters:,} B, gradients {self.gradients:,} B, "
                f"optimizer state {self.optimizer:,} B")


def local_bytes(tensor: Any) -> int:
    """Bytes of the part of a (possibly distributed) tensor this rank holds."""
    tensor = tensor.to_local() if hasattr(tensor, "to_local") else tensor
    return tensor.numel() * tensor.element_size()


def held_parameters(model: Any) -> list[Any]:
    """The parameters this rank holds: all of them, less those a pipeline stage released to another."""
    return [p for p in model.parameters() if not getattr(p, "released_by_pipeline", False)]


def held_state_bytes(model: Any, optimizer: Any) -> StateBytes:
    """What this rank holds now: its (local shards of) parameters, a gradient's worth per trainable
    parameter whether or not one is allocated at this moment, and every tensor in the optimizer's state."""
    import torch

    parameters = held_parameters(model)
    held = sum(local_bytes(value) for state in optimizer.state.values() for value in state.values()
               if isinstance(value, torch.Tensor))
    return StateBytes(sum(local_bytes(p) for p in parameters),
                      sum(local_bytes(p) for p in parameters if p.requires_grad), held)
