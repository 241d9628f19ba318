"""Preloaded by the worker fork server, after :mod:`distrain.runtime.preload`, for workers that
will import torch's compiler front end anyway (see
:func:`distrain.runtime.worker_server.worker_preload`): importing it here, while the parent still
validates and reads the data, takes that second off every worker's start."""

from distrain.compat import import_gc
from distrain.compat.deferred_compiler import load_compiler

import_gc.pause()
load_compiler()
import_gc.freeze_and_resume()  # as in preload: keeps the workers' garbage collector off these shared pages
