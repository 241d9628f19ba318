"""A data-parallel strategy of the tests' own, applied with no edit under ``src/``: every worker runs a replica
of the model inside a wrapper of this module's (not torch's DistributedDataParallel), and once backward is done
for an optimizer step the strategy averages the gradients itself, one ``all_reduce`` per parameter.

With ``record_dir`` it appends, at each averaging, this rank's gradient norm before the average and the
forwards its wrapper has run to ``record_dir/rank{R}.jsonl``: what a test reads to see that this wrapping ran
(under DDP the ranks' gradients already agree when backward ends; here they differ until the average).
"""

from __future__ import annotations

import itertools
import json
from functools import partial
from pathlib import Path
from typing import Any

import torch

from distrain.config.errors import ConfigError, Problem
from distrain.distributed.applied import Applied
from distrain.distributed.strategy import Parallelism, ParallelStrategy
from distrain.distributed.world import SINGLE, World


class Replica(torch.nn.Module):
    """The model, run as it is; counts its forwards."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model
        self.forwards = 0

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        self.forwards += 1
        return self.model(*args, **kwargs)


@ParallelStrategy.register("test_replicated")
class Replicated(ParallelStrategy):
    """Replicate the whole model, average gradients after backward."""

    imports_compiler = False

    def __init__(self, world: World = SINGLE, record_dir: str | None = None) -> None:
        super().__init__(world)
        self.record_dir = Path(record_dir) if record_dir is not None else None

    def apply(self, model: torch.nn.Module, mesh: Any, parallelism: Parallelism) -> Applied:
        if parallelism.dims.tp > 1 or parallelism.dims.pp > 1:
            raise ConfigError([Problem("distributed.strategy", "test_replicated runs whole replicas, not a split model")])
        replica = Replica(model)
        if not self.world.is_distributed:
            return Applied(replica)
        import torch.distributed as dist

        with torch.no_grad():  # every replica starts from rank 0's parameters and buffers
            for tensor in itertools.chain(model.parameters(), model.buffers()):
                dist.broadcast(tensor.data, src=0)
        return Applied(replica, reduce_gradients=partial(self.average, replica, parallelism.dims.dp_size))

    def average(self, replica: Replica, size: int, parameters: list[torch.nn.Parameter]) -> None:
        import torch.distributed as dist

        trained = [p for p in parameters if p.requires_grad]
        for p in trained:  # a parameter this rank's batch did not reach still takes part, with zeros
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        before = float(torch.linalg.vector_norm(torch.stack([p.grad.detach().norm() for p in trained])))
        for p in trained:
            dist.all_reduce(p.grad)
            p.grad /= size
        if self.record_dir is not None:
            self.record_dir.mkdir(parents=True, exist_ok=True)
            with open(self.record_dir / f"rank{self.world.rank}.jsonl", "a") as out:
                out.write(json.dumps({"norm_before": before, "forwards": replica.forwards}) + "\n")
