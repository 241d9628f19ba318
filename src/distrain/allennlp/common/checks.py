"""``allennlp.common.checks``: the configuration error and the shape checks AllenNLP models call in ``__init__``.

``ConfigurationError`` is distrain's own config error, so a user's ``raise ConfigurationError(...)`` ends a
``distrain`` or ``allennlp`` command with its one line and exit status 2, as a config problem of distrain's does.
"""

from __future__ import annotations

from typing import Any

from distrain.config.errors import ConfigError as ConfigurationError

__all__ = ["ConfigurationError", "ExperimentalFeatureWarning", "check_dimensions_match", "check_for_gpu"]


class ExperimentalFeatureWarning(RuntimeWarning):
    """Warned when a user turns on a feature whose behaviour may still change."""


def check_dimensions_match(dimension_1: int, dimension_2: int, dim_1_name: str, dim_2_name: str) -> None:
    """A :class:`ConfigurationError` naming both sizes when two parts of a model that must agree do not."""
    if dimension_1 != dimension_2:
        raise ConfigurationError(f"{dim_1_name} must match {dim_2_name}, but got {dimension_1} and {dimension_2} "
                                 "instead")


def check_for_gpu(device: Any) -> None:
    """A :class:`ConfigurationError` when ``device`` names a GPU this machine does not have (-1: the CPU)."""
    import torch

    if isinstance(device, (list, tuple)):
        for each in device:
            check_for_gpu(each)
        return
    index = torch.device(device).index if isinstance(device, str) and device.startswith("cuda") else device
    if isinstance(index, int) and index >= 0 and index >= torch.cuda.device_count():
        raise ConfigurationError(f"cuda device {index} was asked for, but this machine has "
                                 f"{torch.cuda.device_count()} GPU(s); use -1 for the CPU")
