"""distrain: declarative, config-driven PyTorch training; distributed training is one config block away.

The public API is imported lazily so that ``distrain --help`` answers without importing torch.
:mod:`distrain.allennlp` gathers the names AllenNLP readers and models import, under AllenNLP's names.

distrain is also a pytest plugin (``import allennlp`` in users' test suites), already imported when pytest
starts where the environment's ``.pth`` hook loaded it: its own asserts are not tests, so pytest leaves them
alone (PYTEST_DONT_REWRITE) instead of warning that it cannot rewrite them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from distrain.version import __version__

_PUBLIC = {
    "Registrable": "distrain.registry",
    "Lazy": "distrain.config.lazy",
    "ConfigError": "distrain.config.errors",
    "load_config": "distrain.config.loading",
    "Field": "distrain.data.fields",
    "TextField": "distrain.data.fields",
    "TokenIdsField": "distrain.data.fields",
    "LabelField": "distrain.data.fields",
    "SequenceLabelField": "distrain.data.fields",
    "TensorField": "distrain.data.fields",
    "MetadataField": "distrain.data.fields",
    "ArrayField": "distrain.data.fields",
    "Instance": "distrain.data.fields",
    "Token": "distrain.data.tokenizer",
    "TokenIndexer": "distrain.data.token_indexer",
    "TextFieldEmbedder": "distrain.modules.text_field_embedder",
    "TextFieldTensors": "distrain.modules.text_field_embedder",
    "get_text_field_mask": "distrain.modules.text_field_embedder",
    "get_token_ids_from_text_field_tensors": "distrain.modules.text_field_embedder",
    "TokenEmbedder": "distrain.modules.token_embedder",
    "Seq2SeqEncoder": "distrain.modules.seq2seq_encoder",
    "Vocabulary": "distrain.data.vocabulary",
    "DatasetReader": "distrain.data.reader",
    "DataError": "distrain.data.reader",
    "ReaderShard": "distrain.data.reader",
    "Tokenizer": "distrain.data.tokenizer",
    "Model": "distrain.models.model",
    "Seq2VecEncoder": "distrain.modules.seq2vec_encoder",
    "FeedForward": "distrain.modules.feedforward",
    "Metric": "distrain.metrics.metric",
    "Optimizer": "distrain.optim.optimizers",
    "LearningRateScheduler": "distrain.optim.schedulers",
    "Callback": "distrain.training.callback",
    "Trainer": "distrain.training.trainer",
    "World": "distrain.distributed.world",
    "ParallelStrategy": "distrain.distributed.strategy",
    "ParallelDims": "distrain.distributed.parallel_dims",
    "DistrainError": "distrain.errors",
    "BadInput": "distrain.errors",
    "RunFailed": "distrain.errors",
    "load_archive": "distrain.experiment.archive.format",
    "Archive": "distrain.experiment.archive.format",
    "PretrainedName": "distrain.pretrained",
    "MaskingScheme": "distrain.modules.masking",
    "mask_tokens": "distrain.modules.masking",
    "MixedPrecision": "distrain.training.amp",
}

__all__ = sorted(_PUBLIC) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'distrain' has no attribute {name!r}")
    from distrain.plugins import import_builtins

    import_builtins()
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # pragma: no cover
    from distrain.experiment.archive.format import Archive, load_archive
    from distrain.config.errors import ConfigError
    from distrain.config.loading import load_config
    from distrain.data.fields import (ArrayField, Field, Instance, LabelField, MetadataField, SequenceLabelField,
                                      TensorField, TextField, TokenIdsField)
    from distrain.data.token_indexer import TokenIndexer
    from distrain.data.tokenizer import Token
    from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
    from distrain.modules.text_field_embedder import (TextFieldEmbedder, TextFieldTensors, get_text_field_mask,
                                                     get_token_ids_from_text_field_tensors)
    from distrain.modules.token_embedder import TokenEmbedder
    from distrain.data.reader import DataError, DatasetReader, ReaderShard
    from distrain.data.tokenizer import Tokenizer
    from distrain.data.vocabulary import Vocabulary
    from distrain.distributed.parallel_dims import ParallelDims
    from distrain.distributed.strategy import ParallelStrategy
    from distrain.distributed.world import World
    from distrain.errors import BadInput, DistrainError, RunFailed
    from distrain.config.lazy import Lazy
    from distrain.metrics.metric import Metric
    from distrain.models.model import Model
    from distrain.modules.feedforward import FeedForward
    from distrain.modules.seq2vec_encoder import Seq2VecEncoder
    from distrain.registry import Registrable
    from distrain.training.callback import Callback
    from distrain.optim.optimizers import Optimizer
    from distrain.optim.schedulers import LearningRateScheduler
    from distrain.training.trainer import Trainer
    from distrain.modules.masking import MaskingScheme, mask_tokens
    from distrain.pretrained import PretrainedName
    from distrain.training.amp import MixedPrecision
