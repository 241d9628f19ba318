"""Preloaded by the worker fork server, after :mod:`distrain.distributed.preload`, for workers that
will import torch's compiler front end anyway (see
:func:`distrain.distributed.worker_server.worker_preload`): importing it here, while the parent still
validates and reads the data, takes that second off every worker's start."""

from distrain import import_gc
from distrain.lazy_compiler import load_compiler

import_gc.pause()
load_compiler()
import_gc.freeze_and_resume()  # as in preload: keeps the workers' garbage collector off these shared pages
