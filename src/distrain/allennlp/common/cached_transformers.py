"""``allennlp.common.cached_transformers``: Hugging Face models and tokenizers loaded once per process.

AllenNLP's embedders, indexers and tests ask for the same pretrained model many times; ``get`` builds it the first
time (located as everywhere in distrain, so offline a hub id must be in the cache) and hands out the cached
instance, or a deep copy of it (``make_copy``) for a caller that will change its weights.
"""

from __future__ import annotations

import copy
import re
import warnings
from typing import Any, Dict, Optional, Tuple, Union

from distrain.allennlp.common.checks import ConfigurationError

_model_cache: Dict[Tuple[Any, ...], Any] = {}
_tokenizer_cache: Dict[Tuple[str, str], Any] = {}


def get(model_name: str, make_copy: bool, override_weights_file: Optional[str] = None,
        override_weights_strip_prefix: Optional[str] = None,
        reinit_modules: Optional[Union[int, Tuple[int, ...], Tuple[str, ...]]] = None, load_weights: bool = True,
        **kwargs: Any) -> Any:
    """The ``AutoModel`` of ``model_name`` (``kwargs`` go to ``from_pretrained``): with its pretrained weights,
    random ones (``load_weights=False``), or those of ``override_weights_file`` (a torch state dict, keys under
    ``override_weights_strip_prefix`` only, the prefix taken off). ``reinit_modules`` re-initialises, after
    loading, the last N encoder layers (an int), the layers of those indices, or the modules whose names match
    those regular expressions (re-initialising the top layers steadies fine-tuning on small data sets)."""
    key = (model_name, override_weights_file, override_weights_strip_prefix, reinit_modules, load_weights,
           repr(sorted(kwargs.items())))
    if key not in _model_cache:
        _model_cache[key] = _load(model_name, override_weights_file, override_weights_strip_prefix, reinit_modules,
                                  load_weights, kwargs)
    return copy.deepcopy(_model_cache[key]) if make_copy else _model_cache[key]


def _load(model_name: str, weights_file: Optional[str], strip_prefix: Optional[str], reinit_modules: Any,
          load_weights: bool, kwargs: Dict[str, Any]) -> Any:
    from distrain.pretrained import load_config, load_model, model_from_config

    ignored = [name for name, value in (("override_weights_file", weights_file), ("reinit_modules", reinit_modules))
               if value is not None]
    if not load_weights or weights_file is not None:
        for name in ignored if not load_weights else ignored[1:]:
            warnings.warn(f"cached_transformers.get: {name} is ignored when "
                          f"{'load_weights is False' if not load_weights else 'override_weights_file is given'}",
                          UserWarning)
        config = load_config(model_name)
        for setting, value in kwargs.items():
            setattr(config, setting, value)
        model = model_from_config(config)
        if load_weights:
            _override_weights(model, weights_file, strip_prefix)
        return model
    model = load_model(model_name, **kwargs)
    if reinit_modules is not None:
        _reinitialise(model, model_name, reinit_modules)
    return model


def _override_weights(model: Any, weights_file: str, strip_prefix: Optional[str]) -> None:
    import torch

    from distrain.allennlp.common.file_utils import cached_path

    weights = torch.load(cached_path(weights_file), map_location="cpu", weights_only=True)
    if strip_prefix is not None:
        weights = {key[len(strip_prefix):]: value for key, value in weights.items() if key.startswith(strip_prefix)}
        if not weights:
            raise ValueError(f"Specified prefix of '{strip_prefix}' means no tensors will be loaded from "
                             f"{weights_file}.")
    # a state dict saved from a DataParallel wrapper has the model under "module"
    (model.module if hasattr(model, "module") else model).load_state_dict(weights)


def _reinitialise(model: Any, model_name: str, reinit_modules: Any) -> None:
    layers = model.config.num_hidden_layers
    if isinstance(reinit_modules, int):
        reinit_modules = tuple(range(layers - reinit_modules, layers))
    if all(isinstance(item, int) for item in reinit_modules):
        if any(index < 0 or index > layers for index in reinit_modules):
            raise ValueError(f"A layer index in reinit_modules ({reinit_modules}) is invalid. Must be between 0 "
                             f"and the maximum layer index ({layers - 1}.)")
        try:
            for index in reinit_modules:
                model.encoder.layer[index].apply(model._init_weights)
        except AttributeError:
            raise ConfigurationError(f"Unable to re-initialize the layers of transformer model {model_name} using "
                                     "layer indices. Please provide a tuple of strings corresponding to the names "
                                     "of the layers to re-initialize.") from None
    elif all(isinstance(item, str) for item in reinit_modules):
        for pattern in reinit_modules:
            for name, module in model.named_modules():
                if re.search(pattern, name):
                    module.apply(model._init_weights)
    else:
        raise ValueError("reinit_modules must be either an integer, a tuple of strings, or a tuple of integers.")


def get_tokenizer(model_name: str, **kwargs: Any) -> Any:
    """The ``AutoTokenizer`` of ``model_name`` with ``kwargs``, built once per name and settings."""
    key = (model_name, repr(sorted(kwargs.items())))
    if key not in _tokenizer_cache:
        from transformers import AutoTokenizer

        from distrain.pretrained import PretrainedNotFound, locate

        try:
            _tokenizer_cache[key] = AutoTokenizer.from_pretrained(locate(model_name), **kwargs)
        except (OSError, ValueError, PretrainedNotFound) as error:
            reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise ConfigurationError(f'pretrained tokenizer "{model_name}" cannot be loaded: {reason}') from None
    return _tokenizer_cache[key]


def _clear_caches() -> None:
    """Empties both caches (tests do, between modules)."""
    _model_cache.clear()
    _tokenizer_cache.clear()
