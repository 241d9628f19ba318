"""The ``distributed`` block of an experiment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from distrain.config.errors import Problem


@dataclass
class DistributedConfig:
    """One process per ``cuda_devices`` entry on each node; ``-1`` entries are CPU processes (gloo).

    ``device_weights`` gives each worker (global rank order) its share of every global batch, so a
    faster card can take more samples; the loss weighting keeps the updates identical.
    """

    cuda_devices: list[int]
    num_nodes: int = 1
    node_rank: int = 0
    master_addr: str = "127.0.0.1"
    master_port: int | None = None
    backend: Literal["gloo", "nccl"] | None = None
    timeout: float = 1800.0
    device_weights: list[float] | None = None

    @property
    def world_size(self) -> int:
        return len(self.cuda_devices) * self.num_nodes

    @property
    def uses_cuda(self) -> bool:
        return any(device >= 0 for device in self.cuda_devices)

    def default_backend(self) -> str:
        return self.backend or ("nccl" if self.uses_cuda else "gloo")

    def problems(self, path: str = "distributed") -> list[Problem]:
        found = []
        if not self.cuda_devices:
            found.append(Problem(f"{path}.cuda_devices", "must list at least one device"))
        if self.uses_cuda and not all(device >= 0 for device in self.cuda_devices):
            found.append(Problem(f"{path}.cuda_devices", "cannot mix CUDA devices and CPU (-1) processes"))
        if self.num_nodes < 1:
            found.append(Problem(f"{path}.num_nodes", f"must be at least 1, got {self.num_nodes}"))
        if not 0 <= self.node_rank < max(self.num_nodes, 1):
            found.append(Problem(f"{path}.node_rank", f"must be in [0, {self.num_nodes - 1}], got {self.node_rank}"))
        if self.num_nodes > 1 and self.master_port is None:
            found.append(Problem(f"{path}.master_port", "required when num_nodes > 1 (all nodes must agree on it)"))
        if self.backend == "nccl" and not self.uses_cuda:
            found.append(Problem(f"{path}.backend", "nccl needs CUDA devices; CPU (-1) processes use gloo"))
        if self.timeout <= 0:
            found.append(Problem(f"{path}.timeout", f"must be positive, got {self.timeout}"))
        if self.device_weights is not None:
            if len(self.device_weights) != self.world_size:
                found.append(Problem(
                    f"{path}.device_weights",
                    f"needs one weight per worker ({self.world_size}), got {len(self.device_weights)}",
                ))
            if any(weight <= 0 for weight in self.device_weights):
                found.append(Problem(f"{path}.device_weights", "weights must be positive"))
        return found
