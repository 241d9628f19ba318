"""AllenNLP's trainer callbacks by their names and keys, trained through the CLI: ``tensorboard`` writes AllenNLP's
``log/train`` and ``log/validation`` event files (batch loss and its moving average, batch metrics, parameter and
gradient statistics, learning rates, histograms, update ratios, batch sizes; epoch metrics), ``track_epoch_callback``
sets ``model.epoch``, ``should_validate_callback`` skips the epochs before ``validation_start``, ``console_logger``
(also what ``enable_default_callbacks: true`` adds) logs the first batch and a metrics table, and ``wandb`` runs
offline, or says in one line that its package is missing."""

from __future__ import annotations

import importlib.util
import json

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from distrain.experiment.trainer_keys import translate_trainer_keys
from support.cli import run_cli
from support.configs import text_config, write_config
from support.data import sentiment_records, write_jsonl

OBSERVER = '''
import json
from pathlib import Path

from distrain.training.callback import Callback


@Callback.register("epoch_observer")
class EpochObserver(Callback):
    """Writes the model's epoch attribute at every step (rank 0)."""

    def on_step(self, trainer, step, loss):
        with Path("epochs.jsonl").open("a") as seen:
            seen.write(json.dumps([step, getattr(trainer.model, "epoch", None)]) + "\\n")
'''


def data(folder):
    return {"train": write_jsonl(folder / "train.jsonl", sentiment_records(16, 1)),
            "validation": write_jsonl(folder / "validation.jsonl", sentiment_records(8, 2))}


def events(folder):
    accumulator = EventAccumulator(str(folder), size_guidance={"scalars": 0, "histograms": 0})
    accumulator.Reload()
    return accumulator


def test_allennlps_callbacks_do_what_allennlps_do(tmp_path):
    (tmp_path / "epoch_observer.py").write_text(OBSERVER)
    callbacks = [{"type": "tensorboard", "summary_interval": 1, "distribution_interval": 2, "batch_size_interval": 1,
                  "should_log_parameter_statistics": True, "should_log_learning_rate": True},
                 {"type": "track_epoch_callback"}, {"type": "epoch_observer"},
                 {"type": "should_validate_callback", "validation_start": 1}]
    config = text_config(data(tmp_path), num_epochs=3, callbacks=callbacks, enable_default_callbacks=True)
    trained = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", "run",
                      "--include-package", "epoch_observer", cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    run = tmp_path / "run"
    per_epoch = [json.loads((run / f"metrics_epoch_{epoch}.json").read_text()) for epoch in range(3)]
    assert ["validation_loss" in metrics for metrics in per_epoch] == [False, True, True]
    steps_per_epoch = 2  # 16 instances, 8 a batch
    seen = [json.loads(line) for line in (tmp_path / "epochs.jsonl").read_text().splitlines()]
    assert seen == [[step, (step - 1) // steps_per_epoch] for step in range(1, 3 * steps_per_epoch + 1)]

    train = events(run / "log" / "train")
    scalars = set(train.Tags()["scalars"])
    assert {"train/batch_loss", "train/batch_loss_mov_avg", "train/batch_accuracy", "train/batch_size",
            "train/mean_batch_size", "train/loss", "train/accuracy"} <= scalars
    for prefix in ("parameter_mean", "parameter_std", "gradient_mean", "gradient_std", "learning_rate",
                   "gradient_update"):
        assert any(tag.startswith(prefix + "/output.") for tag in scalars), prefix
    batch_losses = train.Scalars("train/batch_loss")
    assert [event.step for event in batch_losses] == list(range(2, 3 * steps_per_epoch + 2))
    for epoch in range(3):  # each step's own loss: an epoch's equal batches average to its training loss
        losses = [event.value for event in batch_losses[epoch * steps_per_epoch:(epoch + 1) * steps_per_epoch]]
        assert sum(losses) / steps_per_epoch == pytest.approx(per_epoch[epoch]["training_loss"], rel=1e-5)
    assert [event.value for event in train.Scalars("learning_rate/output.weight")] == pytest.approx([0.01] * 6)
    assert [event.step for event in train.Scalars("train/batch_size")][:2] == [2, 3]
    assert {event.value for event in train.Scalars("train/batch_size")} == {8}
    assert any(tag.startswith("parameter_histogram/") for tag in train.Tags()["histograms"])
    assert [event.step for event in train.Scalars("train/loss")] == [1, 2, 3]  # the epoch, plus one
    validation = events(run / "log" / "validation")
    assert [event.step for event in validation.Scalars("validation/accuracy")] == [2, 3]
    assert [event.value for event in validation.Scalars("validation/loss")] == pytest.approx(
        [metrics["validation_loss"] for metrics in per_epoch[1:]], rel=1e-6)  # TensorBoard keeps float32

    log = (run / "out_worker0.log").read_text()
    assert "Batch inputs" in log and "batch_input/tokens/tokens/tokens (Shape: 8 x " in log
    assert "Training |  Validation" in log and "accuracy" in log.split("Training |  Validation")[-1]


def test_enable_default_callbacks_adds_the_console_logger_once():
    def callbacks(trainer: dict) -> list:
        problems: list = []
        translated, _ = translate_trainer_keys({"trainer": trainer}, problems)
        assert not problems
        return translated["trainer"].get("callbacks")

    assert callbacks({"enable_default_callbacks": True}) == [{"type": "console_logger"}]
    assert callbacks({"enable_default_callbacks": True, "callbacks": ["console_logger"]}) == ["console_logger"]
    assert callbacks({"enable_default_callbacks": False}) is None


def test_wandb_runs_offline_or_says_its_package_is_missing(tmp_path):
    config = text_config(data(tmp_path), num_epochs=1, callbacks=[{"type": "wandb", "summary_interval": 1,
                                                                   "project": "semantics"}])
    path = write_config(tmp_path / "config.json", config)
    if importlib.util.find_spec("wandb") is None:
        checked = run_cli("check", str(path), cwd=tmp_path)
        assert checked.returncode == 2
        assert checked.stderr.strip().splitlines() == [
            "error: trainer.callbacks[0]: needs the wandb package, which is not installed: pip install wandb"]
        return
    trained = run_cli("train", str(path), "-s", "run", cwd=tmp_path, env={"WANDB_SILENT": "true"})
    assert trained.returncode == 0, trained.stderr
    assert list((tmp_path / "run" / "wandb").glob("offline-run-*"))
