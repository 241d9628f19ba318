"""AllenNLP's ``Batch``: instances indexed and padded together into the tensors a model's ``forward`` takes.

distrain indexes fields as it batches them, so ``index_instances`` only keeps the vocabulary, and ``as_tensor_dict``
is the batch distrain's loader makes of the same instances (text fields as ``TextFieldTensors``, each dimension
padded to the batch's longest). AllenNLP's ``get_padding_lengths`` and explicit ``padding_lengths`` are not kept:
distrain pads to the batch itself.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

import numpy as np


class Batch:
    def __init__(self, instances: Iterable[dict]) -> None:
        self.instances = list(instances)
        self.vocab: Any = None

    def index_instances(self, vocab: Any) -> None:
        self.vocab = vocab

    def as_tensor_dict(self, padding_lengths: dict | None = None, verbose: bool = False) -> dict[str, Any]:
        from distrain.data.dataset import IndexedDataset
        from distrain.data.vocabulary import Vocabulary

        if padding_lengths:
            raise ValueError("Batch.as_tensor_dict: distrain pads to the batch's own lengths; padding_lengths is "
                             "AllenNLP's internal")
        dataset = IndexedDataset.from_instances(self.instances, self.vocab or Vocabulary())
        return dataset.batch(np.arange(len(self.instances)))

    def __iter__(self) -> Iterator[dict]:
        return iter(self.instances)

    def __len__(self) -> int:
        return len(self.instances)
