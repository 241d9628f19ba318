"""``allennlp.common.util``: the small helpers AllenNLP users call from readers, models and scripts, with
AllenNLP's signatures (distrain's own code; the JSON helpers are :mod:`distrain.allennlp.sanitize`'s)."""

from __future__ import annotations

import contextlib
import importlib
import os
import pkgutil
import random
import sys
from itertools import islice, zip_longest
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

from distrain.allennlp.sanitize import JsonDict, sanitize

__all__ = [
    "END_SYMBOL", "JsonDict", "START_SYMBOL", "cycle_iterator_function", "ensure_list", "get_spacy_model",
    "group_by_count", "import_module_and_submodules", "int_to_device", "is_distributed", "is_lazy", "lazy_groups_of",
    "namespace_match", "pad_sequence_to_length", "prepare_environment", "push_python_path", "pushd", "sanitize",
]

#: the boundary tokens AllenNLP's sequence-to-sequence readers and models add
START_SYMBOL = "@start@"
END_SYMBOL = "@end@"

A = TypeVar("A")


def group_by_count(iterable: Sequence[Any], count: int, default_value: Any) -> list[list[Any]]:
    """``iterable`` in groups of ``count``, the last one filled up with ``default_value``."""
    return [list(group) for group in zip_longest(*[iter(iterable)] * count, fillvalue=default_value)]


def cycle_iterator_function(iterator_function: Callable[[], Iterable[A]]) -> Iterator[A]:
    """The items of ``iterator_function()``, then of a fresh call of it, without end (an epoch after another)."""
    while True:
        yield from iterator_function()


def lazy_groups_of(iterable: Iterable[A], group_size: int) -> Iterator[list[A]]:
    """``iterable`` in lists of ``group_size`` items, read as they are needed; the last may be shorter."""
    iterator = iter(iterable)
    while group := list(islice(iterator, group_size)):
        yield group


def pad_sequence_to_length(sequence: Sequence[A], desired_length: int, default_value: Callable[[], Any] = lambda: 0,
                           padding_on_right: bool = True) -> list:
    """A new list of exactly ``desired_length`` items: ``sequence`` cut (keeping its start, or with
    ``padding_on_right=False`` its end) or filled up with ``default_value()`` on that side."""
    items = list(sequence)
    kept = items[:desired_length] if padding_on_right else items[max(0, len(items) - desired_length):]
    padding = [default_value()] * (desired_length - len(kept))
    return kept + padding if padding_on_right else padding + kept


def namespace_match(pattern: str, namespace: str) -> bool:
    """Whether ``namespace`` matches ``pattern``: the name itself, or ``*suffix`` for any name ending so."""
    return pattern == namespace or (pattern.startswith("*") and namespace.endswith(pattern[1:]))


def ensure_list(iterable: Iterable[A]) -> list[A]:
    """``iterable`` as a list (itself if it is one already)."""
    return iterable if isinstance(iterable, list) else list(iterable)


def is_lazy(iterable: Iterable[Any]) -> bool:
    """Whether ``iterable`` is read as it is iterated (anything but a list)."""
    return not isinstance(iterable, list)


def int_to_device(device: Any):
    """AllenNLP's device numbers as a ``torch.device``: -1 is the CPU, ``n >= 0`` GPU ``n``."""
    import torch

    if isinstance(device, torch.device):
        return device
    return torch.device("cpu") if device < 0 else torch.device("cuda", device)


def prepare_environment(params: Mapping[str, Any]) -> None:
    """Seed Python, numpy and torch from ``random_seed``, ``numpy_seed`` and ``pytorch_seed`` (AllenNLP's
    defaults when missing: 13370, 1337, 133; an explicit null leaves that generator alone). ``params`` is a
    :class:`~distrain.allennlp.common.params.Params` (the keys are popped, as AllenNLP does) or a plain dict."""
    import numpy
    import torch

    take = params.pop_int if hasattr(params, "pop_int") else params.get
    seeds = take("random_seed", 13370), take("numpy_seed", 1337), take("pytorch_seed", 133)
    if seeds[0] is not None:
        random.seed(int(seeds[0]))
    if seeds[1] is not None:
        numpy.random.seed(int(seeds[1]))
    if seeds[2] is not None:
        torch.manual_seed(int(seeds[2]))  # every GPU too


@contextlib.contextmanager
def pushd(new_dir: str | os.PathLike, verbose: bool = False) -> Iterator[None]:
    """Work in ``new_dir`` for the block, then return to where we were."""
    previous = os.getcwd()
    os.chdir(new_dir)
    try:
        yield
    finally:
        os.chdir(previous)


@contextlib.contextmanager
def push_python_path(path: str | os.PathLike) -> Iterator[None]:
    """``path`` first on ``sys.path`` for the block."""
    path = os.fspath(path)
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def import_module_and_submodules(package_name: str, exclude: set[str] | None = None) -> None:
    """Import ``package_name`` and, recursively, its submodules, so the components they register exist;
    names starting with ``_`` or ``test`` and the dotted names in ``exclude`` are left out. The working directory
    is searched too (as for ``--include-package``)."""
    exclude = exclude or set()
    if package_name in exclude:
        return
    importlib.invalidate_caches()
    with push_python_path("."):
        module = importlib.import_module(package_name)
        for found in pkgutil.iter_modules(getattr(module, "__path__", [])):
            if not found.name.startswith(("_", "test")):
                import_module_and_submodules(f"{package_name}.{found.name}", exclude)


def is_distributed() -> bool:
    """Whether this process is one of a started ``torch.distributed`` group."""
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized()


def get_spacy_model(spacy_model_name: str, pos_tags: bool = True, parse: bool = False, ner: bool = False) -> Any:
    """The spaCy pipeline of ``spacy_model_name``, loaded once per process. Without the model package (none installs
    from PyPI, and distrain downloads nothing) it is ``spacy.blank`` of its language: the same tokenization, no
    tags, parses or entities (see :mod:`distrain.data.tokenizers.spacy`)."""
    from distrain.data.tokenizers.spacy import model_installed, pipeline

    installed = model_installed(spacy_model_name)
    return pipeline(spacy_model_name, pos_tags and installed, parse and installed, ner and installed)
