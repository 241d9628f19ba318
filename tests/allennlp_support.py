"""What the tests of AllenNLP's configs share: where the copied configs are, and check-then-train-an-epoch."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli, write_config

#: configs copied from AllenNLP's guide, allennlp-models and AllenNLP's fixtures (each names its source)
CONFIGS = Path(__file__).resolve().parent / "allennlp_configs"


def check_and_train_an_epoch(workdir: Path, config: dict, name: str, metric: str = "validation_accuracy") -> Path:
    """``distrain check`` passes on the config as given, then ``train`` runs one epoch whose ``metric`` lies in
    [0, 1]: its run folder."""
    path = write_config(workdir / f"{name}.json", config)
    checked = run_cli("check", str(path), cwd=workdir)
    assert checked.returncode == 0, checked.stderr
    trained = run_cli("train", str(path), "-s", f"runs/{name}", "-f", "-o", '{"trainer.num_epochs": 1}', cwd=workdir)
    assert trained.returncode == 0, trained.stderr
    metrics = json.loads((workdir / "runs" / name / "metrics.json").read_text())
    assert metrics["epoch"] == 0 and 0 <= metrics[metric] <= 1
    return workdir / "runs" / name
