"""Importing components so their ``register`` calls run: built-ins, ``--include-package`` modules,
and packages that declare the ``distrain.plugins`` entry point.

As in AllenNLP, an ``--include-package`` name is also looked for in the working directory (the
``distrain`` console script, unlike ``python -m``, does not put it on ``sys.path``), and a package's
public submodules are imported with it, so components registered in any of them exist. AllenNLP's
plugin files are read too: ``.allennlp_plugins`` in the working directory, then ``~/.allennlp/plugins``.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
import sys
from importlib.metadata import EntryPoint, entry_points

from distrain.compat import allennlp_imports
from distrain.errors import BadInput

logger = logging.getLogger(__name__)

#: the packages components live in, walked whole (subpackages included) so a new component file or task
#: folder needs no list; ``tests/package/test_registry.py`` checks that every module calling ``register(`` is reached
COMPONENT_ROOTS = (
    "distrain.data",
    "distrain.modules",
    "distrain.metrics",
    "distrain.models",
    "distrain.optim",
    "distrain.training",
    "distrain.distributed",
    "distrain.zoo",
    "distrain.archived",
    "distrain.predictors",
)


class PluginError(BadInput):
    pass


#: a built-in component outside the component roots: ``optuna_pruning`` belongs to ``distrain tune``
BUILTIN_MODULES = ("distrain.tuning.pruning",)


def import_builtins() -> None:
    for root in COMPONENT_ROOTS:
        import_with_submodules(root)
    for module_name in BUILTIN_MODULES:
        importlib.import_module(module_name)


@functools.cache
def plugin_entry_points() -> tuple[EntryPoint, ...]:
    """The installed ``distrain.plugins`` entry points, found once per process (finding them reads
    the metadata of every installed package); workers forked from the fork server inherit them."""
    return tuple(entry_points(group="distrain.plugins"))


def import_plugins(include_packages: list[str] | tuple[str, ...] = ()) -> None:
    """Import built-ins, then every entry point of group ``distrain.plugins``, then ``include_packages``.
    AllenNLP users' packages import ``allennlp``: distrain serves it where no real AllenNLP is installed."""
    allennlp_imports.install()
    import_builtins()
    for entry_point in plugin_entry_points():
        try:
            entry_point.load()
        except Exception as error:  # noqa: BLE001 - a broken third-party plugin must not stop the run
            logger.warning("plugin %s could not be loaded: %s", entry_point.name, error)
    import_allennlp_plugin_files()
    if include_packages:
        search_working_directory()
    for name in include_packages:
        try:
            import_with_submodules(name)
        except ImportError as error:
            raise PluginError(f'--include-package {name}: cannot import it ({error})') from None


#: AllenNLP's plugin files: the working directory's, then the user's own
LOCAL_ALLENNLP_PLUGINS = ".allennlp_plugins"
GLOBAL_ALLENNLP_PLUGINS = os.path.join("~", ".allennlp", "plugins")


def allennlp_plugin_names() -> list[str]:
    """The module names of AllenNLP's plugin files, as AllenNLP reads them: one per line, stripped, blank lines
    skipped, each name once, the working directory's file first."""
    names: list[str] = []
    for path in (LOCAL_ALLENNLP_PLUGINS, os.path.expanduser(GLOBAL_ALLENNLP_PLUGINS)):
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as lines:
                for name in (line.strip() for line in lines):
                    if name and name not in names:
                        names.append(name)
    return names


def import_allennlp_plugin_files() -> None:
    """Import each module the plugin files name (the module alone: its package imports what it registers). As in
    AllenNLP, the working directory is searched, and a module that cannot be found is logged, not fatal."""
    names = allennlp_plugin_names()
    if names:
        search_working_directory()
    for name in names:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as error:
            logger.error("plugin %s (from an AllenNLP plugin file) could not be loaded: %s", name, error)


def search_working_directory() -> None:
    """Put the working directory on ``sys.path`` (last, so it shadows no installed module), as an absolute
    path: workers started later find the same folder whatever their own working directory."""
    folder = os.getcwd()
    if folder not in sys.path:
        sys.path.append(folder)
        importlib.invalidate_caches()


def import_with_submodules(name: str) -> None:
    """Import ``name`` and, if it is a package, its public submodules and subpackages, recursively (AllenNLP
    left out names starting with ``_`` or ``test``, and so does this: such folders are not even entered)."""
    module = importlib.import_module(name)
    for child in _submodule_names(getattr(module, "__path__", [])):
        import_with_submodules(f"{name}.{child}")


def _submodule_names(paths: list[str]) -> list[str]:
    """The public ``.py`` modules and package folders in ``paths``, sorted: one ``scandir`` per folder, where
    ``pkgutil.iter_modules`` lists every subfolder again to find its ``__init__`` (a tenth of the start-up's
    component imports, over the zoo's ~90 folders)."""
    names = set()
    for path in paths:
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(("_", "test", ".")):
                continue
            if entry.name.endswith(".py") and entry.is_file():
                names.add(entry.name[:-3])
            elif "." not in entry.name and entry.is_dir() and os.path.isfile(os.path.join(entry.path, "__init__.py")):
                names.add(entry.name)
    return sorted(names)
