"""``import allennlp`` (and ``allennlp_models``) served by distrain, where no real AllenNLP is installed.

AllenNLP users' code imports ``allennlp.data.fields``, ``allennlp.nn.util``, ``allennlp.common.testing``...
This finder answers those names with distrain's modules of the same path under :mod:`distrain.allennlp`
(``allennlp.nn.util`` is ``distrain.allennlp.nn.util``: the very module object, not a copy, so a class a user
imports from either name is one class, registered once).

Why an import hook rather than a top-level ``allennlp`` package in the wheel: a package of that name would
overwrite a real AllenNLP's files when both are installed, and shadow it when it comes first on ``sys.path``.
The finder instead asks, the first time anything under ``allennlp`` is imported, whether the normal path
search finds a real AllenNLP, and if it does, it stands aside for good. It is installed by whatever runs a
user's AllenNLP code: distrain's plugin loading (every ``distrain`` and ``allennlp`` command), the pytest
plugin (users' own test suites) and, after ``scripts/setup.sh``, a ``.pth`` line in the environment (plain
``python``). Installing it imports nothing but this module, so ``distrain --help`` pays nothing for it; the
``.pth`` line even loads this file by its path, so a process's ``distrain`` is still whichever tree its path puts
first when something first imports it.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types

#: the top-level names served, and the distrain package each maps to
SERVED = {"allennlp": "distrain.allennlp", "allennlp_models": "distrain.allennlp_models"}


def _target(fullname: str) -> str | None:
    top, dot, rest = fullname.partition(".")
    package = SERVED.get(top)
    if package is None:
        return None
    return package + dot + rest


# The finder and loader follow the import protocols without subclassing importlib.abc's classes: importing
# importlib.abc imports importlib.resources (about 14 ms), and the .pth line runs this file at every interpreter start.
class _AliasLoader:
    """Loads ``allennlp.X`` by importing ``distrain.allennlp.X`` and putting that module in its place: the
    import system reads ``sys.modules`` back after ``exec_module``, so the caller gets distrain's module with
    its own name and spec intact."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return None  # a throwaway module; exec_module replaces it

    def exec_module(self, module: types.ModuleType) -> None:
        sys.modules[module.__name__] = importlib.import_module(self.target)


class AllenNLPFinder:
    """First on ``sys.meta_path`` (so the path search never loads a second copy of a submodule under the
    other name), and silent as soon as a real AllenNLP is found on the path."""

    def __init__(self):
        self._real: dict[str, bool] = {}

    def _real_installed(self, top: str) -> bool:
        if top not in self._real:
            # a bare folder of that name (a namespace package: a checkout's tests/allennlp) is no AllenNLP
            found = importlib.machinery.PathFinder.find_spec(top)
            self._real[top] = found is not None and found.origin is not None
        return self._real[top]

    def find_spec(self, fullname, path=None, target=None):
        destination = _target(fullname)
        if destination is None or self._real_installed(fullname.partition(".")[0]):
            return None
        import importlib.util  # here, not at the top: the .pth line's start-up cost stays nil

        try:
            found = importlib.util.find_spec(destination)
        except ModuleNotFoundError:
            return None
        if found is None:
            return None
        is_package = found.submodule_search_locations is not None
        # a package gets an empty search path: its submodules come through this finder too, never the path search
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(destination), is_package=is_package)


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once per process). The ``.pth`` line loads this file under a
    private name, without importing the ``distrain`` package, so its finder is known by its class name."""
    if not any(type(finder).__name__ == AllenNLPFinder.__name__ for finder in sys.meta_path):
        sys.meta_path.insert(0, AllenNLPFinder())


def serves(name: str = "allennlp") -> bool:
    """Whether ``import NAME`` would give distrain's modules (no real AllenNLP installed)."""
    return not AllenNLPFinder()._real_installed(name)
