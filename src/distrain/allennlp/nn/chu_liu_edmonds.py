"""``allennlp.nn.chu_liu_edmonds``: the maximum spanning tree of a dependency parse's scores."""

from __future__ import annotations

import numpy as np

from distrain.config.errors import ConfigError
from distrain.zoo.structured_prediction.modules.chu_liu_edmonds import _find_cycle as _first_cycle
from distrain.zoo.structured_prediction.modules.chu_liu_edmonds import decode_mst as _decode_mst


def _find_cycle(parents: list[int], length: int, current_nodes: list[bool]) -> tuple[bool, list[int]]:
    """AllenNLP's contract: ``(has_cycle, the cycle's nodes)``, the nodes ``[]`` where there is none
    (distrain's own helper gives the cycle or ``None``)."""
    cycle = _first_cycle(parents, length, current_nodes)
    return cycle is not None, cycle or []


def decode_mst(energy: np.ndarray, length: int, has_labels: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """distrain's decoder; energy of the wrong rank is AllenNLP's ConfigurationError (distrain's: ValueError)."""
    try:
        return _decode_mst(energy, length, has_labels)
    except ValueError as error:
        raise ConfigError(str(error)) from error


__all__ = [
    "_find_cycle", "decode_mst",
]
