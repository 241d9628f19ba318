"""An experiment config: its top-level keys, their validation, and the steps that run it.

:func:`resolve_experiment` checks the whole tree; :func:`prepare_data` reads the data once (in
the parent); :func:`train_worker` is what every worker runs. Each is callable from a test.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from distrain.config.errors import ConfigError, Problem
from distrain.config.schema import Build, resolve_object
from distrain.data.loader import DataLoaderConfig
from distrain.data.reader import DatasetReader
from distrain.data.vocabulary import VocabularyConfig
from distrain.distributed.config import DistributedConfig
from distrain.lazy import Lazy
from distrain.models.model import Model
from distrain.training.trainer import Trainer

logger = logging.getLogger(__name__)


class Experiment:
    """The top-level keys of a training config (this signature is their schema)."""

    def __init__(
        self,
        dataset_reader: DatasetReader,
        train_data_path: str,
        model: Lazy[Model],
        trainer: Lazy[Trainer],
        validation_data_path: str | None = None,
        validation_dataset_reader: DatasetReader | None = None,
        vocabulary: VocabularyConfig | None = None,
        data_loader: DataLoaderConfig | None = None,
        validation_data_loader: DataLoaderConfig | None = None,
        distributed: DistributedConfig | None = None,
    ) -> None:
        self.dataset_reader = dataset_reader
        self.train_data_path = train_data_path
        self.model = model
        self.trainer = trainer
        self.validation_data_path = validation_data_path
        self.validation_dataset_reader = validation_dataset_reader or dataset_reader
        self.vocabulary = vocabulary or VocabularyConfig()
        self.data_loader = data_loader or DataLoaderConfig()
        self.validation_data_loader = validation_data_loader or DataLoaderConfig(
            batch_size=self.data_loader.batch_size, shuffle=False
        )
        self.distributed = distributed


@dataclass
class ResolvedExperiment:
    plan: Build
    config: dict[str, Any]

    def build(self) -> Experiment:
        return self.plan.build()

    @property
    def random_seed(self) -> int:
        return self.plan.arguments["trainer"].argument("random_seed")

    @property
    def distributed(self) -> DistributedConfig | None:
        node = self.plan.arguments.get("distributed")
        return node.build() if node is not None else None


def resolve_experiment(config: dict[str, Any]) -> ResolvedExperiment:
    """Validate the whole config; raise :class:`ConfigError` listing every problem."""
    config = dict(config)
    config.setdefault("trainer", {})
    problems: list[Problem] = []
    plan = resolve_object(Experiment, config, "", problems)
    if not problems and isinstance(plan, Build):
        resolved = ResolvedExperiment(plan, config)
        distributed = resolved.distributed
        if distributed is not None:
            problems += distributed.problems()
        loader = plan.arguments.get("data_loader")
        if loader is not None and loader.build().batch_size < 1:
            problems.append(Problem("data_loader.batch_size", "must be at least 1"))
    if problems:
        raise ConfigError(problems)
    return resolved


# ---------------------------------------------------------------------------------------- data
@dataclass
class PreparedData:
    vocab: Any
    train: Any
    validation: Any | None


def prepare_data(experiment: Experiment) -> PreparedData:
    """Read and index the data once. Token namespaces come from the training data; label
    namespaces also from validation data, so an unseen validation label does not crash indexing."""
    from distrain.data.dataset import IndexedDataset
    from distrain.data.vocabulary import Vocabulary, is_padded

    train_instances = list(experiment.dataset_reader.read(experiment.train_data_path))
    if not train_instances:
        raise ConfigError([Problem("train_data_path", f"no instances read from {experiment.train_data_path}")])
    validation_instances = None
    if experiment.validation_data_path:
        reader = experiment.validation_dataset_reader
        validation_instances = list(reader.read(experiment.validation_data_path))
    counters: dict[str, Counter] = {}
    for instance in train_instances:
        for field in instance.values():
            field.count_vocab_items(counters)
    validation_counters: dict[str, Counter] = {}
    for instance in validation_instances or []:
        for field in instance.values():
            field.count_vocab_items(validation_counters)
    for namespace, counter in validation_counters.items():
        if not is_padded(namespace):
            counters.setdefault(namespace, Counter()).update(counter)
    vocab = Vocabulary.from_counters(counters, experiment.vocabulary)
    train = IndexedDataset.from_instances(train_instances, vocab)
    validation = IndexedDataset.from_instances(validation_instances, vocab) if validation_instances else None
    logger.info("read %d training and %d validation instances; %s", len(train),
                len(validation) if validation else 0, vocab)
    return PreparedData(vocab, train, validation)


# -------------------------------------------------------------------------------------- worker
def set_seed(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def train_worker(
    world: Any,
    config: dict[str, Any],
    serialization_dir: str | Path,
    prepared: PreparedData | None = None,
    recover: bool = False,
) -> dict[str, Any]:
    """Build the model, loaders and trainer for this worker and train. Rank 0 writes the archive.

    With ``recover`` the trainer first resumes from the latest checkpoint in ``serialization_dir``.
    """
    from distrain.archive import write_archive
    from distrain.data.loader import DataLoader

    serialization_dir = Path(serialization_dir)
    resolved = resolve_experiment(config)
    experiment = resolved.build()
    seed = resolved.random_seed
    set_seed(seed)
    if prepared is None:
        prepared = prepare_data(experiment)
    model = experiment.model.construct(vocab=prepared.vocab)
    train_loader = DataLoader(prepared.train, experiment.data_loader, world, seed)
    validation_loader = (
        DataLoader(prepared.validation, experiment.validation_data_loader, world, seed)
        if prepared.validation is not None
        else None
    )
    trainer = experiment.trainer.construct(
        model=model,
        train_loader=train_loader,
        validation_loader=validation_loader,
        serialization_dir=serialization_dir,
        world=world,
    )
    if recover:
        trainer.resume_from_latest_checkpoint()
    accumulation = getattr(trainer, "accumulation", 1)
    if world.is_primary:
        logger.info(
            "effective batch size %d = %d per worker x %d worker(s) x %d accumulation step(s)",
            experiment.data_loader.batch_size * world.size * accumulation,
            experiment.data_loader.batch_size, world.size, accumulation,
        )
    metrics = trainer.train()
    if world.is_primary:
        write_archive(serialization_dir, model, prepared.vocab, config)
    return metrics
