"""A strategy that does not replicate the model on every worker (as a sharded one would not), for
the check that local SGD and DiLoCo refuse it."""

from __future__ import annotations

from distrain.distributed.strategy import ParallelStrategy


@ParallelStrategy.register("test_not_replicated")
class NotReplicated(ParallelStrategy):
    """Declares that workers do not each hold the whole model (the base class's default)."""
