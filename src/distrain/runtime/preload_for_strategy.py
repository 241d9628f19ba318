"""Preloaded by the worker fork server after :mod:`distrain.runtime.preload`, which registered the built-in and
installed strategies, where only the configured strategy can say whether its workers import torch's compiler
(see :func:`distrain.runtime.worker_server.worker_preload`): it preloads the compiler when the strategy
declares so (:attr:`~distrain.distributed.strategy.ParallelStrategy.imports_compiler`)."""

import os

from distrain.runtime.worker_server import STRATEGY_VARIABLE, strategy_imports_compiler

if strategy_imports_compiler(os.environ.get(STRATEGY_VARIABLE, "")):
    import distrain.runtime.preload_compiler  # noqa: F401 - the compiler, as for a config that compiles
