"""Keep torch's compiler front end, ``torch._dynamo``, unimported in processes that never compile.

Importing it costs about a second and 70 MB of memory on a small CPU (some 800 modules), and every
training process paid it although nothing was compiled: torch's optimizers run
``import torch._dynamo; torch._dynamo.graph_break()`` in every ``step``, and functions marked never to
be compiled (``torch._disable_dynamo``: ``Optimizer.add_param_group``, distrain's metric updates)
import it on their first call. Until the module is imported no frame can be compiled, so those
uses change nothing yet:

- :func:`defer_compiler_import` puts a stand-in for ``torch._dynamo`` in ``sys.modules``: its
  ``graph_break`` does nothing (as the real one does outside a compiled frame), and so does
  ``trace_rules.clear_lru_cache`` (nothing is cached yet); any other use (``torch.compile``,
  ``torch._dynamo.config``, a submodule) imports the real module into the same module object, which
  from then on is exactly torch's. Where a process needs the compiler anyway it loads as before:
  DDP reads its config when it wraps a model, and ``import transformers`` marks functions with
  ``torch.compiler.disable``; so the saving goes to processes that train other models in one
  process (a tiny text classifier's ``distrain train``: 3.9 s -> 2.4 s), to ``evaluate``/``predict``
  of them, and to tune trials. Workers forked from the fork server have the real module preloaded.
- :func:`defer_disable` lets a function marked with ``torch._disable_dynamo`` run as it is until the
  compiler is loaded, and from then on exactly as torch would run it; :func:`disable_deferred` gives
  them torch's own disabled versions right before ``trainer.compile`` compiles.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import types
from typing import Any, Callable

_NAME = "torch._dynamo"
#: where torch's ``_disable_dynamo`` caches the disabled function on the function it wraps
_CACHE = "__dynamo_disable"
#: the functions :func:`defer_disable` seeded, with their ``recursive`` flag
_DEFERRED: list[tuple[Callable[..., Any], bool]] = []
_LOADING = threading.RLock()


def _graph_break(msg: str = "") -> None:
    """``torch._dynamo.graph_break`` outside a compiled frame: nothing."""


#: ``init_process_group`` clears the compiler's cached trace rules when ``torch._dynamo`` is in
#: ``sys.modules``; before the real module is loaded nothing is cached, so there is nothing to clear
_TRACE_RULES = types.SimpleNamespace(clear_lru_cache=lambda: None)


class _DeferredCompiler(types.ModuleType):
    """``torch._dynamo`` before anything needs it; the first real use loads it in place."""

    def __getattr__(self, name: str) -> Any:
        if name == "graph_break":
            return _graph_break
        if name == "trace_rules":
            return _TRACE_RULES
        if name.startswith("__") and name not in ("__path__", "__all__"):
            raise AttributeError(name)
        return getattr(_load(self), name)


def _load(module: types.ModuleType) -> types.ModuleType:
    """Run ``torch/_dynamo/__init__.py`` in ``module`` itself, so every reference already taken to
    it (``sys.modules``, ``torch._dynamo``) is the real module afterwards."""
    with _LOADING:
        if type(module) is _DeferredCompiler:
            spec = module.__spec__
            module.__class__ = types.ModuleType
            module.__path__ = list(spec.submodule_search_locations or [])
            module.__loader__ = spec.loader
            module.__package__ = _NAME
            try:
                spec.loader.exec_module(module)
            except BaseException:
                sys.modules.pop(_NAME, None)  # the next import starts over, as after any failed import
                raise
    return module


def compiler_loaded() -> bool:
    """Whether the real ``torch._dynamo`` has been imported in this process."""
    module = sys.modules.get(_NAME)
    return module is not None and type(module) is not _DeferredCompiler


def defer_compiler_import() -> None:
    """Put the stand-in in place (once; nothing if torch's compiler is already imported)."""
    import torch

    with _LOADING:
        if _NAME in sys.modules:
            return
        spec = importlib.util.find_spec(_NAME)
        if spec is None or spec.loader is None:
            return
        module = _DeferredCompiler(_NAME)
        module.__spec__ = spec
        module.__file__ = spec.origin  # read by inspect.getmodule, which walks every module
        sys.modules[_NAME] = module
        torch._dynamo = module  # what ``import torch._dynamo`` would have set on the package


def defer_disable(function: Callable[..., Any], recursive: bool = True) -> None:
    """Seed the cache that ``torch._disable_dynamo``'s wrapper of ``function`` reads, so its first
    call imports nothing while the compiler is not loaded. If torch stops reading that cache, this
    does nothing and the first call imports the compiler as before."""
    if getattr(function, _CACHE, None) is not None or compiler_loaded():
        return

    def run(*args: Any, **kwargs: Any) -> Any:
        if not compiler_loaded():
            return function(*args, **kwargs)
        return _mark_as_torch_does(function, recursive)(*args, **kwargs)  # torch's own behaviour from now on

    setattr(function, _CACHE, run)
    _DEFERRED.append((function, recursive))


def disable_deferred() -> None:
    """Before compiling: give every deferred function torch's own disabled version now, so the
    compiler meets torch's mark instead of tracing into the deferral (which would still run right,
    but break the graph and recompile: ``trainer.compile`` runs took half as long again)."""
    for function, recursive in _DEFERRED:
        _mark_as_torch_does(function, recursive)


def _mark_as_torch_does(function: Callable[..., Any], recursive: bool) -> Callable[..., Any]:
    """What ``torch._disable_dynamo`` caches on ``function`` (it loads the real compiler)."""
    import torch._dynamo

    disabled = torch._dynamo.disable(function, recursive, wrapping=False)
    setattr(function, _CACHE, disabled)
    return disabled


def defer_disabled_methods(cls: type) -> None:
    """:func:`defer_disable` for every method of ``cls`` wrapped with ``torch._disable_dynamo``."""
    for method in vars(cls).values():
        wrapped = getattr(method, "__wrapped__", None)
        code = getattr(method, "__code__", None)
        if wrapped is not None and code is not None and code.co_filename.endswith("_compile.py"):
            defer_disable(wrapped)
