"""Where ``from_pretrained_module`` finds a pretrained model's config and weights.

A name is a local folder or a Hugging Face hub id, located as everywhere in distrain
(:func:`distrain.pretrained.locate`: offline, a hub id must already be in the cache). The weights are the folder's
safetensors files (else its torch ``.bin`` files); for a hub id not downloaded yet they are fetched through the hub's
cache, which offline reports the model as missing in one line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Union

import torch

from distrain.errors import ConfigError

#: the weights files a hub model may have, the preferred first
HUB_WEIGHTS = ("model.safetensors", "pytorch_model.bin")


def pretrained_config(model_name: str, auto_config_kwargs: Dict[str, Any]) -> Any:
    """The Hugging Face config of ``model_name``."""
    from transformers import AutoConfig

    from distrain.pretrained import PretrainedNotFound, locate

    try:
        return AutoConfig.from_pretrained(locate(model_name), **auto_config_kwargs)
    except (OSError, ValueError, PretrainedNotFound) as error:
        raise _unavailable(model_name, error) from None


def pretrained_weights(model_name: str) -> List[Union[str, os.PathLike]]:
    """The weights files of ``model_name``, downloaded into the hub's cache when it is a hub id."""
    from distrain.modules.adapter import weights_files

    local = weights_files(model_name)
    if local:
        return list(local)
    if Path(model_name).expanduser().is_dir():
        raise ConfigError(f'pretrained model "{model_name}": the folder has no .safetensors or .bin weights')
    from huggingface_hub import hf_hub_download

    error: Exception = ConfigError("no weights file")
    for filename in HUB_WEIGHTS:
        try:
            return [hf_hub_download(model_name, filename)]
        except Exception as failure:  # noqa: BLE001 - the hub's errors differ by version; the next name is tried
            error = failure
    raise _unavailable(model_name, error)


def read_weights(path: Union[str, os.PathLike]) -> Dict[str, torch.Tensor]:
    """The tensors of a safetensors file or a torch state dict (read with ``weights_only``: no pickled code)."""
    if str(path).endswith(".safetensors"):
        from safetensors.torch import load_file

        return load_file(str(path))
    return torch.load(path, map_location="cpu", weights_only=True)


def _unavailable(model_name: str, error: Exception) -> ConfigError:
    lines = str(error).strip().splitlines()
    return ConfigError(f'pretrained model "{model_name}" cannot be loaded: {lines[0] if lines else type(error).__name__}')
