"""What the worker fork server imports once, before any worker is forked from it.

Every worker needs torch, torch.distributed, the built-in components and what building them from a
config imports or looks up on first use (pydantic's validators and plugins, numpy's random
generators, the installed distrain plugins, the archive writer).
The fork server imports them while the parent is still reading the data, and each worker forked
from it starts with all of them loaded.

Torch's compiler front end (``torch._dynamo``, a second of some 800 modules: as long as torch
itself) is not among them: workers that compile nothing train without it (see
:mod:`distrain.compat.deferred_compiler`), and a config whose workers will need it preloads it too
(:mod:`distrain.runtime.preload_compiler`, chosen by
:func:`distrain.runtime.worker_server.worker_preload` or, for the strategy, by
:mod:`distrain.runtime.preload_for_strategy`).
"""

from typing import Annotated

from distrain.compat import import_gc

import_gc.pause()  # no collections while importing (see distrain.compat.import_gc)

import torch  # noqa: E402
from annotated_types import Ge  # noqa: E402

from distrain.compat.deferred_compiler import defer_compiler_import  # noqa: E402

defer_compiler_import()  # before anything below could import the real one

import numpy.random  # noqa: E402,F401 - the data loaders' shuffling
import pydantic  # noqa: E402 - every component's arguments are checked with it
import torch.distributed  # noqa: E402,F401
import torch.nn.parallel  # noqa: E402,F401

from distrain.plugins import import_builtins, plugin_entry_points  # noqa: E402

import_builtins()
plugin_entry_points()

import distrain.experiment.assemble  # noqa: E402,F401 - what a worker runs, and all it imports

# the first adapter of a constrained type imports the rest of pydantic and finds its plugins
pydantic.TypeAdapter(Annotated[int, Ge(0)]).validate_python(0)

# DDP asks torch's compiler settings which mode it is in when it wraps a model; asking here loads
# that small settings module (not the compiler) once for every worker
torch._dynamo.utils.get_optimize_ddp_mode()

# What was imported above is shared copy-on-write by every worker forked from here. Frozen objects
# are skipped by the workers' garbage collector, which would otherwise walk them and so copy their
# pages into each worker (measured: ~95 MiB more private memory per worker without this).
import_gc.freeze_and_resume()
