"""What the worker fork server imports once, before any worker is forked from it.

Every worker needs torch, torch's compiler front end (``torch._dynamo``: any optimizer's first
``add_param_group`` imports it, about a second of some 800 modules) and the built-in components.
The fork server imports them while the parent is still reading the data, and each worker forked
from it starts with all of them loaded.
"""

import torch
import torch._dynamo  # noqa: F401 - imported on first use by every optimizer; see the docstring
import torch.distributed  # noqa: F401
import torch.nn.parallel  # noqa: F401

from distrain.plugins import import_builtins

import_builtins()

import distrain.worker  # noqa: E402,F401

import gc  # noqa: E402

# What was imported above is shared copy-on-write by every worker forked from here. Frozen objects
# are skipped by the workers' garbage collector, which would otherwise walk them and so copy their
# pages into each worker (measured: ~95 MiB more private memory per worker without this).
gc.freeze()
