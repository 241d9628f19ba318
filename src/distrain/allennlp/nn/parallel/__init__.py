"""``allennlp.nn.parallel``: the interface of a module wrapped for sharded data parallelism.

distrain shards through its own strategies (``distributed.strategy``); a user's code written against AllenNLP
only checks ``isinstance(module, ShardedModuleMixin)`` and asks for the module inside.
"""

from __future__ import annotations

import torch


class ShardedModuleMixin:
    """Mixed into a wrapper around a sharded module."""

    def get_original_module(self) -> torch.nn.Module:
        """The module this wrapper shards."""
        raise NotImplementedError


__all__ = ["ShardedModuleMixin"]
