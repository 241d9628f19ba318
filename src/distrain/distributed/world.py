"""Where this process sits in the job: rank, process count, device, and its data-parallel slice."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class World:
    """Built only by :mod:`distrain.runtime.launch`.

    ``size`` counts processes; ``dp_size``/``dp_rank`` say which slice of every global batch this
    process receives (equal to ``size``/``rank`` when every process is a data-parallel rank).
    """

    rank: int = 0
    size: int = 1
    local_rank: int = 0
    local_size: int = 1
    device: str = "cpu"
    #: relative share of every global batch per data-parallel rank (None: equal shares)
    weights: tuple[float, ...] | None = None
    dp_rank: int | None = None
    dp_size: int | None = None

    def __post_init__(self) -> None:
        if self.dp_size is None:
            object.__setattr__(self, "dp_size", self.size)
        if self.dp_rank is None:
            object.__setattr__(self, "dp_rank", self.rank)

    @property
    def is_primary(self) -> bool:
        return self.rank == 0

    @property
    def is_distributed(self) -> bool:
        return self.size > 1

    def shares(self) -> tuple[float, ...]:
        """Each data-parallel rank's relative share of a global batch."""
        return self.weights or (1.0,) * self.dp_size


SINGLE = World()
