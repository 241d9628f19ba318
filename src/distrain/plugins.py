"""Importing components so their ``register`` calls run: built-ins, ``--include-package`` modules,
and packages that declare the ``distrain.plugins`` entry point.

As in AllenNLP, an ``--include-package`` name is also looked for in the working directory (the
``distrain`` console script, unlike ``python -m``, does not put it on ``sys.path``), and a package's
public submodules are imported with it, so components registered in any of them exist.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
import pkgutil
import sys
from importlib.metadata import EntryPoint, entry_points

from distrain.errors import BadInput

logger = logging.getLogger(__name__)

#: every module directly inside these packages is imported, so a new component file needs no list
BUILTIN_PACKAGES = (
    "distrain.data.tokenizers",
    "distrain.data.readers",
    "distrain.data.batch_samplers",
    "distrain.data.token_indexers",
    "distrain.modules",
    "distrain.modules.token_embedders",
    "distrain.modules.seq2vec_encoders",
    "distrain.modules.seq2seq_encoders",
    "distrain.modules.matrix_attentions",
    "distrain.modules.attentions",
    "distrain.modules.span_extractors",
    "distrain.modules.adapters",
    "distrain.fairness.bias_directions",
    "distrain.fairness.bias_mitigators",
    "distrain.metrics",
    "distrain.models",
    "distrain.models.pair",
    "distrain.models.rc",
    "distrain.models.structured",
    "distrain.models.srl",
    "distrain.models.coref",
    "distrain.models.generation",
    "distrain.optim",
    "distrain.training",
    "distrain.training.callbacks",
    "distrain.training.moving_averages",
    "distrain.distributed.strategies",
    "distrain.distributed.syncs",
    "distrain.distributed.compressions",
)


class PluginError(BadInput):
    pass


#: built-in components that live beside what they need rather than in a package above (``from_archive``,
#: ``_pretrained`` and the language model embedders load archives, so they sit in experiment/, which models/,
#: modules/ and config/ must not import)
BUILTIN_MODULES = ("distrain.experiment.archived_model", "distrain.experiment.archived_module",
                   "distrain.experiment.language_model_embedder")


def import_builtins() -> None:
    for package_name in BUILTIN_PACKAGES:
        package = importlib.import_module(package_name)
        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package_name}.{module.name}")
    for module_name in BUILTIN_MODULES:
        importlib.import_module(module_name)


@functools.cache
def plugin_entry_points() -> tuple[EntryPoint, ...]:
    """The installed ``distrain.plugins`` entry points, found once per process (finding them reads
    the metadata of every installed package); workers forked from the fork server inherit them."""
    return tuple(entry_points(group="distrain.plugins"))


def import_plugins(include_packages: list[str] | tuple[str, ...] = ()) -> None:
    """Import built-ins, then every entry point of group ``distrain.plugins``, then ``include_packages``."""
    import_builtins()
    for entry_point in plugin_entry_points():
        try:
            entry_point.load()
        except Exception as error:  # noqa: BLE001 - a broken third-party plugin must not stop the run
            logger.warning("plugin %s could not be loaded: %s", entry_point.name, error)
    if include_packages:
        search_working_directory()
    for name in include_packages:
        try:
            import_with_submodules(name)
        except ImportError as error:
            raise PluginError(f'--include-package {name}: cannot import it ({error})') from None


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
    for found in pkgutil.iter_modules(getattr(module, "__path__", [])):
        if not found.name.startswith(("_", "test")):
            import_with_submodules(f"{name}.{found.name}")
