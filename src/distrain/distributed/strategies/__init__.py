"""Parallel strategies, one module each (see :mod:`distrain.distributed.strategy`)."""
