"""Keep torch's compiler front end, ``torch._dynamo``, unimported in processes that never compile.

Importing it costs about a second and 70 MB of memory on a small CPU (some 800 modules), and every
training process paid it although nothing was compiled: torch's optimizers run
``import torch._dynamo; torch._dynamo.graph_break()`` in every ``step``, and functions marked never to
be compiled (``torch._disable_dynamo``: ``Optimizer.add_param_group``, distrain's metric updates)
import it on their first call. Until the module is imported no frame can be compiled, so those
uses change nothing yet:

- :func:`defer_compiler_import` puts a stand-in for ``torch._dynamo`` in ``sys.modules`` that answers
  what training without compiling asks of it (``graph_break``, ``trace_rules.clear_lru_cache`` and
  DDP's ``utils.get_optimize_ddp_mode``: see ``_STAND_INS``); any other use (``torch.compile``,
  ``torch._dynamo.config``, a submodule) imports the real module into the same module object, which
  from then on is exactly torch's. Where a process needs the compiler anyway it loads as before:
  DTensor (FSDP, tensor parallelism) marks its constructor never to be compiled, and ``import
  transformers`` marks functions with ``torch.compiler.disable``. The saving goes to DDP workers
  (2 workers' ``distrain train`` to the first step: medians 2.4-2.6 s -> 1.4-1.6 s in
  ``scripts/bench_launch.py``, as the fork server no longer imports it), to training other models
  in one process (a tiny text classifier's ``distrain train``: 3.9 s -> 2.4 s), to
  ``evaluate``/``predict`` of them, and to tune trials.
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


class _Submodule:
    """A submodule of ``torch._dynamo`` as far as processes that never compile use it: the names in
    ``known`` are answered without the compiler; any other name loads it and is read from the real
    submodule."""

    def __init__(self, name: str, **known: Callable[..., Any]) -> None:
        self._name, self._known = name, known

    def __getattr__(self, name: str) -> Any:
        if name in self._known:
            return self._known[name]
        return getattr(getattr(_load(sys.modules[_NAME]), self._name), name)


def _optimize_ddp_mode() -> str:
    """``torch._dynamo.utils.get_optimize_ddp_mode`` (DDP asks it when it wraps a model) before the
    compiler is loaded, from torch's own settings module: a small one, loaded alone under its own
    name (the compiler, when it loads, takes that very module as its ``config``). Nothing can have
    changed the setting yet, as any use of ``torch._dynamo.config`` loads the compiler first."""
    optimize_ddp = _settings().optimize_ddp
    if isinstance(optimize_ddp, bool):
        return "ddp_optimizer" if optimize_ddp else "no_optimization"
    return optimize_ddp


def _settings() -> types.ModuleType:
    name = _NAME + ".config"
    with _LOADING:
        module = sys.modules.get(name)
        if module is None:
            folder = sys.modules[_NAME].__spec__.submodule_search_locations[0]
            spec = importlib.util.spec_from_file_location(name, f"{folder}/config.py")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                sys.modules.pop(name, None)
                raise
    return module


#: What processes that never compile read of the compiler, and get without loading it:
#: ``init_process_group`` clears its cached trace rules (none are cached yet), DDP asks which of its
#: compiled modes is set (the default), and torch's optimizers break the graph (outside a compiled
#: frame, nothing).
_STAND_INS = {
    "graph_break": _graph_break,
    "trace_rules": _Submodule("trace_rules", clear_lru_cache=lambda: None),
    "utils": _Submodule("utils", get_optimize_ddp_mode=_optimize_ddp_mode),
}


class _DeferredCompiler(types.ModuleType):
    """``torch._dynamo`` before anything needs it; the first real use loads it in place."""

    def __getattr__(self, name: str) -> Any:
        if name in _STAND_INS:
            return _STAND_INS[name]
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


def load_compiler() -> None:
    """Import the real ``torch._dynamo`` now (in place of the stand-in, if there is one)."""
    module = sys.modules.get(_NAME)
    if module is not None and type(module) is _DeferredCompiler:
        _load(module)
    else:
        importlib.import_module(_NAME)


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
    """:func:`defer_disable` for every method of ``cls`` wrapped with ``torch._disable_dynamo``,
    under other decorators too (DDP's ``_inside_ddp_forward`` is a context manager)."""
    for method in vars(cls).values():
        marked = _disabled_by_torch(method)
        if marked is not None:
            defer_disable(*marked)


def _disabled_by_torch(method: Any) -> tuple[Callable[..., Any], bool] | None:
    """The function ``torch._disable_dynamo`` wrapped somewhere in ``method``'s chain of wrappers,
    and its ``recursive`` flag (read from the wrapper's closure)."""
    while callable(method):
        code = getattr(method, "__code__", None)
        if code is not None and code.co_filename.endswith("_compile.py") and method.__closure__:
            captured = dict(zip(code.co_freevars, (cell.cell_contents for cell in method.__closure__)))
            if callable(captured.get("fn")):
                return captured["fn"], bool(captured.get("recursive", True))
        method = getattr(method, "__wrapped__", None)
    return None
