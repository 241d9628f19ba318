"""``allennlp.data.data_loaders``: AllenNLP's Python data loaders over instances (see
:mod:`distrain.allennlp.data.data_loaders.data_loader` for why distrain's trainer does not use them)."""

from distrain.allennlp.data.data_loaders.data_loader import (DataCollator, DataLoader, DefaultDataCollator, TensorDict,
                                                              allennlp_collate)
from distrain.allennlp.data.data_loaders.multiprocess_data_loader import MultiProcessDataLoader, WorkerError
from distrain.allennlp.data.data_loaders.multitask_data_loader import MultiTaskDataLoader
from distrain.allennlp.data.data_loaders.simple_data_loader import SimpleDataLoader

__all__ = [
    "DataCollator", "DataLoader", "DefaultDataCollator", "MultiProcessDataLoader", "MultiTaskDataLoader",
    "SimpleDataLoader", "TensorDict",
    "WorkerError", "allennlp_collate",
]
