"""The parallel degrees of a job in one validated place: pp x dp_replicate x dp_shard x tp = processes.

Ranks are laid out with tensor parallelism innermost (neighbouring ranks share a layer), then data
parallel shards, data parallel replicas, and pipeline stages outermost. The data loader and the loss
scaling ask for :attr:`dp_size` and :meth:`dp_rank`: ranks that share a data-parallel coordinate
receive the same slice of every global batch. ``World.size`` is only the process count.
"""

from __future__ import annotations

from dataclasses import dataclass

from distrain.config.errors import Problem


@dataclass(frozen=True)
class ParallelDims:
    world_size: int
    dp_replicate: int = 1
    dp_shard: int = 1
    tp: int = 1
    pp: int = 1

    @classmethod
    def data_parallel(cls, world_size: int, shard: int = 1) -> ParallelDims:
        """Every process a data-parallel rank: replicated, or sharded in groups of ``shard``."""
        return cls(world_size, dp_replicate=max(1, world_size // max(1, shard)), dp_shard=shard)

    @property
    def dp_size(self) -> int:
        return self.dp_replicate * self.dp_shard

    def problems(self, path: str = "distributed") -> list[Problem]:
        found = []
        for name in ("dp_replicate", "dp_shard", "tp", "pp"):
            if getattr(self, name) < 1:
                found.append(Problem(f"{path}.{name}", f"must be at least 1, got {getattr(self, name)}"))
        product = self.pp * self.dp_replicate * self.dp_shard * self.tp
        if not found and product != self.world_size:
            found.append(Problem(
                path, f"the parallel degrees multiply to {product} (pipeline {self.pp} x replicas "
                f"{self.dp_replicate} x shards {self.dp_shard} x tensor {self.tp}), not to the {self.world_size} processes",
            ))
        return found

    def coordinates(self, rank: int) -> dict[str, int]:
        """Where ``rank`` sits on each dimension."""
        tp, rest = rank % self.tp, rank // self.tp
        shard, rest = rest % self.dp_shard, rest // self.dp_shard
        replicate, pp = rest % self.dp_replicate, rest // self.dp_replicate
        return {"pp": pp, "dp_replicate": replicate, "dp_shard": shard, "tp": tp}

    def dp_rank(self, rank: int) -> int:
        """The data-parallel coordinate of ``rank``: which slice of each global batch it receives."""
        where = self.coordinates(rank)
        return where["dp_replicate"] * self.dp_shard + where["dp_shard"]

    def mesh_shape(self, keep: tuple[str, ...] = ()) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """Names and sizes of the mesh dimensions larger than 1 or named in ``keep`` (at least one)."""
        dims = [(n, s) for n, s in (("pp", self.pp), ("dp_replicate", self.dp_replicate),
                                     ("dp_shard", self.dp_shard), ("tp", self.tp)) if s > 1 or n in keep]
        dims = dims or [("dp_replicate", 1)]
        return tuple(n for n, _ in dims), tuple(s for _, s in dims)

    def describe(self) -> str:
        names, sizes = self.mesh_shape()
        return " x ".join(f"{name} {size}" for name, size in zip(names, sizes)) + f" = {self.world_size} process(es)"

    def build_mesh(self, device_type: str, keep: tuple[str, ...] = ()):
        """The job's one torch ``DeviceMesh`` (needs an initialised process group); every parallelism takes
        its dimensions from it by name. ``keep``: dimensions kept at size 1 (FSDP's ``dp_shard`` when
        groups of one rank replicate). A dry run's meta device lays the mesh out on the CPU."""
        from torch.distributed.device_mesh import init_device_mesh

        names, sizes = self.mesh_shape(keep)
        return init_device_mesh("cpu" if device_type == "meta" else device_type, sizes, mesh_dim_names=names)
