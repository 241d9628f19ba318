"""A moving average of the model's parameters (AllenNLP's ``trainer.moving_average``): updated after every
optimizer step; validation, the best weights and the final model use the average instead of the trained values.

The shadows are updated from the parameters after the step, which every worker holds alike (the step's gradient
is the global batch's), so any worker count keeps the same average. A checkpoint keeps both the trained
parameters and the shadows (the part named ``moving_average``), so a resumed run continues both exactly.
AllenNLP's checkpoints held the averaged weights as the model's, which lost the trained ones on resume.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterable, Iterator

import torch

from distrain.registry import Registrable


class MovingAverage(Registrable):
    """Shadow copies of the trainable parameters, by name."""

    default_implementation = "exponential"
    runtime_args = ("parameters",)

    def __init__(self, parameters: Iterable[tuple[str, torch.nn.Parameter]]) -> None:
        self.parameters = [(name, parameter) for name, parameter in parameters if parameter.requires_grad]
        self.shadows = {name: parameter.detach().clone() for name, parameter in self.parameters}

    def apply(self, num_updates: int) -> None:
        """Fold the parameters after optimizer step ``num_updates`` (counted from 1) into the shadows."""
        raise NotImplementedError

    @contextlib.contextmanager
    def averaged(self) -> Iterator[None]:
        """The parameters hold the averages inside, their trained values again after."""
        backups = {name: parameter.detach().clone() for name, parameter in self.parameters}
        self.assign_average_value()
        try:
            yield
        finally:
            with torch.no_grad():
                for name, parameter in self.parameters:
                    parameter.copy_(backups[name])

    def assign_average_value(self) -> None:
        """The averages into the parameters, for good (the end of training)."""
        with torch.no_grad():
            for name, parameter in self.parameters:
                parameter.copy_(self.shadows[name])

    def state_dict(self) -> dict[str, Any]:
        return {"shadows": {name: shadow.clone() for name, shadow in self.shadows.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        saved = state["shadows"]
        if set(saved) != set(self.shadows):
            raise ValueError(f"the checkpoint's moving average tracks other parameters ({sorted(set(saved) ^ set(self.shadows))[:3]} ...)")
        with torch.no_grad():
            for name, shadow in self.shadows.items():
                shadow.copy_(saved[name])


def averaged_weights(moving_average: MovingAverage | None) -> contextlib.AbstractContextManager:
    """The moving average's weights in the model while inside (nothing changes without one)."""
    return moving_average.averaged() if moving_average is not None else contextlib.nullcontext()
