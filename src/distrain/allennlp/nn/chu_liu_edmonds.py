"""``allennlp.nn.chu_liu_edmonds``: the maximum spanning tree of a dependency parse's scores."""

from distrain.zoo.structured_prediction.modules.chu_liu_edmonds import decode_mst, _find_cycle

__all__ = [
    "_find_cycle", "decode_mst",
]
