"""Sync modes other than every-step gradient averaging, one module each (see :mod:`distrain.distributed.sync`)."""
