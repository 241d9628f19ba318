"""The package a tracking callback writes to, imported when the run starts (not when the config is read), or one
line saying which extra installs it."""

from __future__ import annotations

import importlib
from types import ModuleType


def import_for(callback: str, module: str, package: str, extra: str) -> ModuleType:
    """``module``, which the ``callback`` callback needs; ``package`` and ``extra`` name what to install."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise RuntimeError(f"the {callback} callback needs {package}: pip install 'distrain[{extra}]'") from error
