"""Configs the tests write: a JSON file, and the toy sentiment task's config."""

from __future__ import annotations

import json
from pathlib import Path


def write_config(path: Path, config: dict) -> Path:
    path.write_text(json.dumps(config, indent=2))
    return path


def text_config(data: dict[str, Path], **trainer) -> dict:
    return {
        "dataset_reader": {"type": "text_classification_json"},
        "train_data_path": str(data["train"]),
        "validation_data_path": str(data["validation"]),
        "model": {"type": "basic_classifier", "embedding_dim": 8, "encoder": {"type": "boe"}},
        "data_loader": {"batch_size": 8},
        "trainer": {"num_epochs": 2, "optimizer": {"type": "adam", "lr": 0.01}, "progress_bar": False, **trainer},
    }
