"""AllenNLP's ``load_archive``: a trained ``model.tar.gz`` as its model (best weights, eval mode), config and
the dataset readers it was trained and validated with, for predictors and scripts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from distrain.data.reader import DatasetReader
from distrain.models.model import Model


@dataclass
class Archive:
    """AllenNLP's fields; ``config`` is the archived config as a dict (AllenNLP's was ``Params``)."""

    model: Model
    config: dict[str, Any]
    dataset_reader: DatasetReader
    validation_dataset_reader: DatasetReader


def load_archive(archive_file: str, cuda_device: int = -1, overrides: str | dict[str, Any] = "") -> Archive:
    """The archive at ``archive_file``, its model on ``cuda_device`` (-1: the CPU); ``overrides`` (a JSON
    string or a dict, dotted keys allowed) change its config before anything is built. Components from
    ``--include-package`` packages must be imported first, as in AllenNLP."""
    from distrain.config.loading import parse_overrides
    from distrain.experiment.archive.jobs import load_for_inference

    changes = parse_overrides(overrides) if isinstance(overrides, str) else dict(overrides)
    archive, experiment = load_for_inference(archive_file, changes)
    model = archive.model.to("cpu" if cuda_device < 0 else f"cuda:{cuda_device}")
    return Archive(model, archive.config, experiment.dataset_reader, experiment.validation_dataset_reader)
