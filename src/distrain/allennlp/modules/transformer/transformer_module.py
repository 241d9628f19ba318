"""``TransformerModule``: a toolkit module that can take its weights from a Hugging Face model's.

A Hugging Face checkpoint names its tensors after the Hugging Face classes (``LayerNorm``, ``layer.0``,
``q_lin``...), the toolkit after its own (``layer_norm``, ``layers.0``, ``query``). Each class states the
differences that concern its own children in ``_pretrained_mapping`` (Hugging Face name -> toolkit name);
:func:`map_state_dict` renames a checkpoint's keys with them, class by class down the module tree, so a mapping
never needs to know more than one level. ``from_pretrained_module`` builds a module from a model's config (each
class's ``_from_config``), keeps the part of the checkpoint under the class's ``_pretrained_relevant_module``,
renames it and loads it.
"""

from __future__ import annotations

import logging
import os
import re
import warnings
from typing import Any, Dict, List, Optional, Tuple, Type, TypeVar, Union

import torch

logger = logging.getLogger(__name__)

StateDict = Dict[str, torch.Tensor]
_T = TypeVar("_T", bound="TransformerModule")


class TransformerModule(torch.nn.Module):
    """The base of the toolkit's modules: the name mapping and pretrained loading (subclasses that can be built
    from a Hugging Face config override ``_from_config``)."""

    #: Hugging Face submodule (or parameter) name -> this module's name for it
    _pretrained_mapping: Dict[str, str] = {}
    #: where this module's weights sit in a whole model's checkpoint; a list is tried in order
    _pretrained_relevant_module: Optional[Union[str, List[str]]] = None
    #: regular expressions of checkpoint keys not to read
    _pretrained_ignore: Optional[List[str]] = None
    #: regular expressions of this module's keys a checkpoint may lack
    _pretrained_allow_missing: Optional[List[str]] = None

    @classmethod
    def _get_mapping(cls, mapping: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        """The class's mapping with ``mapping``'s entries over it."""
        return {**cls._pretrained_mapping, **(mapping or {})}

    def _get_mapped_state_dict(self, state_dict: StateDict, mapping: Optional[Dict[str, str]] = None) -> StateDict:
        """``state_dict`` (a Hugging Face module's) with its keys renamed to this module's."""
        return map_state_dict(self, state_dict, mapping)

    @classmethod
    def _get_relevant_submodule_state(cls, state_dict: StateDict,
                                      relevant_module: Optional[Union[str, List[str]]] = None) -> StateDict:
        """The entries of ``state_dict`` under the first of ``relevant_module`` (else the class's default) that has
        any, with that prefix taken off; the whole ``state_dict`` (and a warning) when none has any."""
        candidates = relevant_module or cls._pretrained_relevant_module
        if not candidates:
            return state_dict
        for prefix in [candidates] if isinstance(candidates, str) else candidates:
            inside = {key[len(prefix) + 1:]: value for key, value in state_dict.items()
                      if key.startswith(prefix + ".")}
            if inside:
                return inside
        warnings.warn(f"{candidates} was not found at top level of state_dict!", UserWarning)
        return state_dict

    @classmethod
    def _get_pretrained_state_dict(cls, model_name: str, weights_path: Optional[Union[str, os.PathLike]] = None,
                                   relevant_module: Optional[Union[str, List[str]]] = None,
                                   ignore: Optional[List[str]] = None) -> StateDict:
        """The part of ``model_name``'s checkpoint (or of ``weights_path``) that this class's modules hold."""
        from distrain.allennlp.modules.transformer.weights import pretrained_weights, read_weights

        files = [weights_path] if weights_path is not None else pretrained_weights(model_name)
        patterns = ignore if ignore is not None else cls._pretrained_ignore or []
        state_dict: StateDict = {}
        for path in files:
            logger.info("Reading state dict from %s", path)
            state_dict.update({key: value for key, value in read_weights(path).items()
                               if not any(re.match(pattern, key) for pattern in patterns)})
        return cls._get_relevant_submodule_state(state_dict, relevant_module)

    def _post_load_state_dict(self, missing_keys: List[str],
                              unexpected_keys: List[str]) -> Tuple[List[str], List[str]]:
        """The keys a loaded checkpoint lacked and had, less those this module accounts for otherwise (a weight
        shared under another name); AllenNLP's hook."""
        return missing_keys, unexpected_keys

    @classmethod
    def _from_config(cls: Type[_T], config: Any, **kwargs: Any) -> _T:
        """This module sized as the Hugging Face ``config`` says (``kwargs`` override)."""
        raise NotImplementedError(f"{cls.__name__} cannot be built from a Hugging Face config")

    @classmethod
    def from_pretrained_module(cls: Type[_T], model_name: str, *, load_weights: bool = True,
                               weights_path: Optional[Union[str, os.PathLike]] = None,
                               auto_config_kwargs: Optional[Dict[str, Any]] = None,
                               mapping: Optional[Dict[str, str]] = None,
                               relevant_module: Optional[Union[str, List[str]]] = None,
                               ignore: Optional[List[str]] = None, allow_missing: Optional[List[str]] = None,
                               strict: bool = True, **kwargs: Any) -> _T:
        """This class built from the config of the pretrained ``model_name`` (a folder or a hub name) and, with
        ``load_weights``, given its weights. ``kwargs`` go to ``_from_config`` (a smaller ``num_hidden_layers``
        with ``strict=False`` takes the first layers only). Every process reads the checkpoint itself: a
        distributed run's workers each load the same weights, so no broadcast is needed."""
        from distrain.allennlp.modules.transformer.weights import pretrained_config

        module = cls._from_config(pretrained_config(model_name, auto_config_kwargs or {}), **kwargs)
        if load_weights:
            state_dict = cls._get_pretrained_state_dict(model_name, weights_path, relevant_module, ignore)
            missing, unexpected = module._post_load_state_dict(*module.load_state_dict(
                module._get_mapped_state_dict(state_dict, mapping), strict=False))
            allowed = allow_missing if allow_missing is not None else cls._pretrained_allow_missing or []
            missing = [key for key in missing if not any(re.match(pattern, key) for pattern in allowed)]
            if strict and (missing or unexpected):
                raise RuntimeError(f"{cls.__name__} from {model_name}: missing keys {missing}, "
                                   f"unexpected keys {unexpected}")
            if missing or unexpected:
                logger.warning("%s from %s: missing keys %s, unexpected keys %s", cls.__name__, model_name,
                               missing, unexpected)
        return module


def map_state_dict(module: torch.nn.Module, state_dict: StateDict,
                   mapping: Optional[Dict[str, str]] = None) -> StateDict:
    """``state_dict`` renamed for ``module``: its own mapping first (the most dotted names first, and never over a
    key already there, so a specific entry wins over a general one), then each child's part, recursively."""
    own = module._get_mapping(mapping) if isinstance(module, TransformerModule) else {}
    for old, new in sorted(own.items(), key=lambda item: item[0].count("."), reverse=True):
        for key in [key for key in state_dict if key == old or key.startswith(old + ".")]:
            renamed = new + key[len(old):]
            if renamed not in state_dict:
                state_dict[renamed] = state_dict.pop(key)
    for name, child in module.named_children():
        if hasattr(child, "get_original_module"):  # a sharded wrapper: the keys are the wrapped module's
            child = child.get_original_module()
        prefix = name + "."
        part = {key[len(prefix):]: state_dict.pop(key) for key in [key for key in state_dict
                                                                   if key.startswith(prefix)]}
        state_dict.update({prefix + key: value for key, value in map_state_dict(child, part).items()})
    return state_dict
