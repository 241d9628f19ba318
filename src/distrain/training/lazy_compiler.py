"""Keep torch's compiler unimported in processes that never compile.

distrain's metric updates are marked as never to be compiled with ``torch._disable_dynamo``, which
imports the compiler's front end, ``torch._dynamo``, on the first call: about a second of some 800
modules on a small CPU, paid by ``evaluate``, ``predict`` and ``serve`` although they compile nothing.
(A training process imports it anyway: torch's optimizers call ``torch._dynamo.graph_break()`` in every
``step``.) Until that module is imported no frame can be compiled, so the mark changes nothing yet:
:func:`defer_disable` has such a function run as it is until ``torch._dynamo`` appears in the process,
and from then on exactly as torch would run it.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

#: where torch's ``_disable_dynamo`` caches the disabled function on the function it wraps
_CACHE = "__dynamo_disable"
#: the functions :func:`defer_disable` seeded, with their ``recursive`` flag
_DEFERRED: list[tuple[Callable[..., Any], bool]] = []


def defer_disable(function: Callable[..., Any], recursive: bool = True) -> None:
    """Seed the cache that ``torch._disable_dynamo``'s wrapper of ``function`` reads, so its first
    call imports nothing while ``torch._dynamo`` is not loaded. If torch stops reading that
    cache, this does nothing and the first call imports the compiler as before."""
    if getattr(function, _CACHE, None) is not None or "torch._dynamo" in sys.modules:
        return

    def run(*args: Any, **kwargs: Any) -> Any:
        if "torch._dynamo" not in sys.modules:
            return function(*args, **kwargs)
        import torch._dynamo

        disabled = torch._dynamo.disable(function, recursive, wrapping=False)
        setattr(function, _CACHE, disabled)  # torch's own behaviour from now on
        return disabled(*args, **kwargs)

    setattr(function, _CACHE, run)
    _DEFERRED.append((function, recursive))


def disable_deferred() -> None:
    """Before compiling: give every deferred function torch's own disabled version now, so the
    compiler meets torch's mark instead of tracing into the deferral (which would still run right,
    but break the graph and recompile: ``trainer.compile`` runs took half as long again)."""
    import torch._dynamo

    for function, recursive in _DEFERRED:
        setattr(function, _CACHE, torch._dynamo.disable(function, recursive, wrapping=False))

