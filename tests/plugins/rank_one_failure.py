"""A test model that raises on global rank 1 at its third forward pass (to prove a failing worker
ends the whole job with its own traceback instead of leaving the others waiting)."""

from __future__ import annotations

import torch.distributed as dist

from distrain.models.basic_classifier import BasicClassifier
from distrain.models.model import Model

FAILURE_MESSAGE = "deliberate failure in forward pass 3"


@Model.register("fails_on_rank_one")
class FailsOnRankOne(BasicClassifier):
    forward_calls = 0

    def forward(self, **inputs):
        self.forward_calls += 1
        rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else 0
        if rank == 1 and self.forward_calls == 3:
            raise RuntimeError(FAILURE_MESSAGE)
        return super().forward(**inputs)
