"""Gradient compressions, one module each (see :mod:`distrain.distributed.compression`)."""
