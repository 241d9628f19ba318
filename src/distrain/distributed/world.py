"""Where this process sits in the job: rank, world size, device and its share of each batch."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class World:
    rank: int = 0
    size: int = 1
    local_rank: int = 0
    local_size: int = 1
    device: str = "cpu"
    #: relative share of every global batch per rank (None: equal shares)
    weights: tuple[float, ...] | None = None

    @property
    def is_primary(self) -> bool:
        return self.rank == 0

    @property
    def is_distributed(self) -> bool:
        return self.size > 1

    def shares(self) -> tuple[float, ...]:
        return self.weights or (1.0,) * self.size


SINGLE = World()
