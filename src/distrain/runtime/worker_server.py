"""The fork server workers are started from, started early so its imports overlap the parent's work.

A spawned worker spends seconds importing torch and the built-in components before its first step.
The fork server imports them once (:mod:`distrain.runtime.preload`, and torch's compiler only for
workers that will use it: :func:`worker_preload`, and the strategy's own word on it) and forks every worker from itself. ``distrain
train`` starts it as soon as the config is evaluated, before the parent's own imports, validation and
data reading, so by the time workers are wanted it is usually ready. This module imports nothing heavy,
so starting the server costs the parent nothing.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
from typing import Any

PRELOAD = "distrain.runtime.preload"
#: preloaded too when the workers will import torch's compiler anyway
PRELOAD_COMPILER = "distrain.runtime.preload_compiler"
#: preloaded instead when only the configured strategy can say whether they will (see :func:`worker_preload`)
PRELOAD_FOR_STRATEGY = "distrain.runtime.preload_for_strategy"
#: how the fork server learns the configured strategy's type: it inherits the parent's environment
STRATEGY_VARIABLE = "DISTRAIN_PRELOAD_STRATEGY"
#: the arguments through which built-in components name a pretrained ``transformers`` model or
#: tokenizer; ``import transformers`` imports torch's compiler
PRETRAINED_KEYS = ("model_name", "tokenizer_name")


def worker_preload(config: dict[str, Any]) -> list[str]:
    """What the fork server imports for this (unvalidated) config's workers.

    Torch's compiler front end costs a second to import, as long as torch itself, and plain DDP
    workers never need it (:mod:`distrain.compat.deferred_compiler`); so it is preloaded only for workers that
    will import it: ones that compile (``trainer.compile``), split the model (tensor or pipeline parallelism:
    DTensor and pipelining use it) or load a pretrained ``transformers`` model or tokenizer, which the config
    says; and ones whose strategy applies itself with it (sharding: ``fully_shard``), which only the strategy
    says (:attr:`~distrain.distributed.strategy.ParallelStrategy.imports_compiler`). Its class imports torch,
    which this process has not yet, so the fork server asks it (:data:`PRELOAD_FOR_STRATEGY`, after the
    built-ins are imported there). A wrong guess costs start-up time, never correctness.
    """
    return [PRELOAD, PRELOAD_COMPILER] if workers_use_compiler(config) else [PRELOAD, PRELOAD_FOR_STRATEGY]


def workers_use_compiler(config: dict[str, Any]) -> bool:
    """Whether the config alone says the workers will import torch's compiler (the strategy aside)."""
    trainer = config.get("trainer") if isinstance(config.get("trainer"), dict) else {}
    distributed = config.get("distributed") if isinstance(config.get("distributed"), dict) else {}
    return bool(
        trainer.get("compile")
        or _more_than_one(distributed.get("tensor_parallel_size"))
        or _more_than_one(distributed.get("pipeline_parallel_size"))
        or _names_pretrained(config)
    )


def configured_strategy(config: dict[str, Any]) -> str:
    """The ``distributed.strategy`` type as written, for the fork server to ask; ``""``: the default strategy.
    A malformed block gives a name no strategy has (validation reports it; the fork server preloads all)."""
    distributed = config.get("distributed") if isinstance(config.get("distributed"), dict) else {}
    strategy = distributed.get("strategy")
    name = strategy.get("type", "") if isinstance(strategy, dict) else strategy if strategy is not None else ""
    return name if isinstance(name, str) else "<malformed>"


def strategy_imports_compiler(name: str) -> bool:
    """What strategy ``name`` (``""``: the default) declares, asked in the fork server, where the built-in and
    installed strategies are registered; one that is not (a plugin that ``--include-package`` imports in the
    workers, or a malformed name) is taken to import the compiler."""
    from distrain.distributed.strategy import ParallelStrategy

    name = name or ParallelStrategy.default_implementation
    return not ParallelStrategy.is_registered(name) or ParallelStrategy.by_name(name).imports_compiler


def _more_than_one(size: Any) -> bool:
    return isinstance(size, int) and size > 1


def _names_pretrained(block: Any) -> bool:
    if isinstance(block, dict):
        return any(key in PRETRAINED_KEYS or _names_pretrained(value) for key, value in block.items())
    if isinstance(block, list):
        return any(_names_pretrained(value) for value in block)
    return False


def use_worker_server(config: dict[str, Any] | None = None, with_compiler: bool | None = None) -> None:
    """Make the fork server (started now or later) preload what ``config``'s workers need, or, with
    ``with_compiler``, say outright whether they need torch's compiler; given neither, keep what an
    earlier call chose (the plain preload if none did)."""
    global _chosen
    if config is None and with_compiler is None and _chosen:
        return
    if with_compiler is None:
        preload = worker_preload(config or {})
        os.environ[STRATEGY_VARIABLE] = configured_strategy(config or {})
    else:
        preload = [PRELOAD, PRELOAD_COMPILER] if with_compiler else [PRELOAD]
    multiprocessing.get_context("forkserver").set_forkserver_preload(preload)
    _chosen = True


_chosen = False


def start_worker_server(config: dict[str, Any]) -> None:
    """Start the fork server now if this config will spawn workers from it (a ``distributed`` block,
    no external launcher, the default start method)."""
    from distrain.runtime.environments import detect

    if not config.get("distributed") or detect() is not None:
        return
    if os.environ.get("DISTRAIN_START_METHOD", "forkserver") != "forkserver":
        return
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return
    use_worker_server(config)
    multiprocessing.forkserver.ensure_running()
