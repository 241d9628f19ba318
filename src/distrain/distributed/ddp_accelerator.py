"""AllenNLP's ``distributed.ddp_accelerator``, read as the ``distributed.strategy`` it names: ``torch`` (its
default: torch's ``DistributedDataParallel``) is distrain's ``ddp``; ``fairscale_fsdp`` (fairscale's fully sharded
data parallel) is distrain's ``fsdp`` (PyTorch's FSDP2), which shards the same way with the same updates.

``mixed_precision`` (fairscale: float16 parameters in forward and backward, float16 gradient reduction, float32
shards) is ``fsdp``'s ``mixed_precision: {param_dtype: float16, reduce_dtype: float16}``. ``flatten_parameters``
(fairscale packs a unit's parameters into one buffer) has no counterpart: FSDP2 shards each parameter, with the
same results, so the key is accepted and changes nothing.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Literal

from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.distributed.strategy import ParallelStrategy


@dataclass
class DdpAccelerator:
    """``{"type": "torch" | "fairscale_fsdp", ...}`` with AllenNLP's arguments of that kind (see the module)."""

    type: Literal["torch", "fairscale_fsdp"] = "torch"
    find_unused_parameters: bool = False  # torch's
    mixed_precision: bool = False  # fairscale_fsdp's, as the two below
    reshard_after_forward: bool = True
    flatten_parameters: bool = True

    def strategy(self) -> Lazy[ParallelStrategy]:
        """The distrain strategy this accelerator is, as the config would have built ``distributed.strategy``."""
        if self.type == "torch":
            name, arguments = "ddp", {"find_unused_parameters": self.find_unused_parameters}
        else:
            precision = {"param_dtype": "float16", "reduce_dtype": "float16"} if self.mixed_precision else None
            name, arguments = "fsdp", {"reshard_after_forward": self.reshard_after_forward}
            if precision is not None:
                arguments["mixed_precision"] = precision
        cls = ParallelStrategy.by_name(name)
        return Lazy(functools.partial(_build, cls, arguments), f"{name} (ddp_accelerator {self.type})", cls, arguments)

    def problems(self, path: str) -> list[Problem]:
        """A key of the other kind of accelerator (AllenNLP refused it too)."""
        other = ("mixed_precision", "reshard_after_forward", "flatten_parameters") if self.type == "torch" else (
            "find_unused_parameters",)
        defaults = DdpAccelerator()
        return [Problem(f"{path}.{key}", f"is not an argument of ddp_accelerator type {self.type}")
                for key in other if getattr(self, key) != getattr(defaults, key)]


def _build(cls: type[ParallelStrategy], arguments: dict[str, Any], **runtime: Any) -> ParallelStrategy:
    """The strategy (a module-level function: the config travels to spawned workers pickled)."""
    built = dict(arguments)
    if "mixed_precision" in built:
        from distrain.distributed.strategies.fsdp import MixedPrecisionConfig

        built["mixed_precision"] = MixedPrecisionConfig(**built["mixed_precision"])
    return cls(**built, **runtime)
