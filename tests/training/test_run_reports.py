"""What a run leaves to look at: curves (``distrain plot``, ``DIR/curves.png``), the summary table
printed at the end, and MLflow tracking (with TensorBoard alongside) into a local SQLite store."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from support.cli import run_cli
from support.configs import write_config
from support.data import digits_records, write_jsonl
from test_recovery import PLUGIN as RECOVERY_PLUGIN, start_training


def digits_config(folder: Path, tracking_uri: str | None = None, epochs: int = 3, **trainer) -> Path:
    data = {"train": write_jsonl(folder / "train.jsonl", digits_records(96, 0)),
            "validation": write_jsonl(folder / "validation.jsonl", digits_records(48, 3))}
    callbacks = [{"type": "tensorboard"}]
    if tracking_uri:
        callbacks.append({"type": "mlflow", "tracking_uri": tracking_uri, "experiment_name": "digits",
                          "artifact_location": str(folder / "artifacts")})
    config = {
        "dataset_reader": {"type": "feature_classification_json"},
        "train_data_path": str(data["train"]),
        "validation_data_path": str(data["validation"]),
        "model": {"type": "feedforward_classifier", "input_dim": 64, "feature_scale": 1 / 16,
                  "feedforward": {"hidden_dims": [16]}},
        "data_loader": {"batch_size": 16},
        "trainer": {"num_epochs": epochs, "optimizer": {"type": "adam", "lr": 0.01}, "progress_bar": False,
                    "validation_metric": "+accuracy", "callbacks": callbacks, **trainer},
    }
    return write_config(folder / "config.json", config)


@pytest.fixture(scope="module")
def tracked_run(tmp_path_factory):
    """digits trained with the MLflow and TensorBoard callbacks into a SQLite store."""
    folder = tmp_path_factory.mktemp("tracked")
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    config = digits_config(folder, uri)
    result = run_cli("train", str(config), "-s", str(folder / "run"),
                     env={"DISTRAIN_CACHE": str(folder / "cache"), "DISTRAIN_CURVES": "on"})
    assert result.returncode == 0, result.stderr
    return folder / "run", uri, result


@pytest.fixture(scope="module")
def second_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("second")
    config = digits_config(folder, epochs=2, optimizer={"type": "sgd", "lr": 0.05})
    result = run_cli("train", str(config), "-s", str(folder / "run"),
                     env={"DISTRAIN_CACHE": str(folder / "cache"), "DISTRAIN_CURVES": "off"})
    assert result.returncode == 0, result.stderr
    return folder / "run"


def mlflow_runs(uri: str):
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("digits")
    return client, client.search_runs([experiment.experiment_id])


# ------------------------------------------------------------------------------------------ MLflow
def test_mlflow_run_holds_params_every_epoch_metric_the_archive_and_finished(tracked_run):
    run_dir, uri, _ = tracked_run
    client, runs = mlflow_runs(uri)
    assert len(runs) == 1
    run = runs[0]
    assert run.info.status == "FINISHED"
    params = run.data.params
    assert params["trainer.optimizer.lr"] == "0.01"
    assert params["model.feedforward.hidden_dims"] == "[16]"
    assert params["trainer.callbacks.1.type"] == "mlflow"
    epochs = sorted(run_dir.glob("metrics_epoch_*.json"))
    assert len(epochs) == 3
    for path in epochs:
        expected = json.loads(path.read_text())
        epoch = expected["epoch"]
        for key, value in expected.items():
            if isinstance(value, (int, float)):
                history = {metric.step: metric.value for metric in client.get_metric_history(run.info.run_id, key)}
                assert history[epoch] == pytest.approx(value, rel=1e-12), (key, epoch)
    artifacts = [item.path for item in client.list_artifacts(run.info.run_id)]
    assert artifacts == ["model.tar.gz"]
    local = Path(client.download_artifacts(run.info.run_id, "model.tar.gz", str(run_dir.parent)))
    assert local.read_bytes() == (run_dir / "model.tar.gz").read_bytes()


def test_tensorboard_writes_alongside_mlflow(tracked_run):
    run_dir, _, _ = tracked_run
    assert list((run_dir / "log" / "train").glob("events.out.tfevents.*"))  # AllenNLP's layout


def test_a_run_stopped_by_sigterm_and_recovered_is_one_mlflow_run(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    config = digits_config(tmp_path, uri, epochs=2, save_every_num_batches=2)
    data = json.loads(config.read_text())
    data["trainer"]["callbacks"].append({"type": "test_kill_switch"})
    write_config(config, data)
    run, marker = tmp_path / "run", tmp_path / "marker"
    environment = {"DISTRAIN_TEST_MARK_AT_STEP": "3", "DISTRAIN_TEST_MARKER": str(marker),
                   "DISTRAIN_CACHE": str(tmp_path / "cache")}
    process = start_training(config, run, env=environment)
    deadline = time.monotonic() + 240
    while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=240)
    assert process.returncode == 1 and "stopped by SIGTERM" in stderr, stderr
    client, runs = mlflow_runs(uri)
    assert [r.info.status for r in runs] == ["KILLED"]  # pre-empted, resumable

    resumed = run_cli("train", str(config), "-s", str(run), *RECOVERY_PLUGIN, "--recover",
                      env={"DISTRAIN_CACHE": str(tmp_path / "cache")})
    assert resumed.returncode == 0, resumed.stderr
    client, runs = mlflow_runs(uri)
    assert len(runs) == 1 and runs[0].info.status == "FINISHED"
    history = client.get_metric_history(runs[0].info.run_id, "training_loss")
    assert sorted(metric.step for metric in history) == [0, 1]
    assert "run summary" in resumed.stdout  # --recover ends with the summary too


# ------------------------------------------------------------------------------------ summary table
def test_training_ends_with_a_summary_table(tracked_run):
    run_dir, _, result = tracked_run
    metrics = json.loads((run_dir / "metrics.json").read_text())
    out = result.stdout
    assert f"run summary ({run_dir})" in out
    assert f"best epoch                {metrics['best_epoch'] + 1}" in out
    assert f"{metrics['best_validation_accuracy']:.4f}" in out
    assert f"{metrics['training_loss']:.4f}" in out
    assert f"archive                   {run_dir / 'model.tar.gz'}" in out
    assert "examples/s" in out and str(run_dir / "out_worker0.log") in out


def test_summary_rows_are_rendered_from_the_metrics():
    from distrain.training.summary import render_table, training_rows

    metrics = {"epoch": 4, "best_epoch": 2, "best_validation_accuracy": 0.93125, "best_validation_loss": 0.25,
               "training_loss": 0.1234567, "validation_accuracy": 0.9}
    rows = training_rows(metrics, "accuracy", 125.0, 5000, Path("runs/x/model.tar.gz"), Path("runs/x/out_worker0.log"))
    assert rows == [
        ("epochs trained", "5"), ("best epoch", "3"), ("best validation accuracy", "0.9313"),
        ("best validation loss", "0.2500"), ("final training loss", "0.1235"), ("duration", "2:05.0"),
        ("examples/s", "40.0"), ("archive", "runs/x/model.tar.gz"), ("logs", "runs/x/out_worker0.log"),
    ]
    text = render_table("run summary", rows)
    assert text.splitlines()[0] == "run summary"
    assert text.splitlines()[2] == "  best epoch                3"
    # a run tracking the loss shows it once; one without validation shows what it has
    assert [label for label, _ in training_rows({"epoch": 0, "training_loss": 1.0}, "loss", 0.0, 0, None, Path("l"))] \
        == ["epochs trained", "final training loss", "duration", "logs"]


def test_evaluate_ends_with_a_summary_table(tracked_run):
    run_dir, _, _ = tracked_run
    data = run_dir.parent / "validation.jsonl"
    result = run_cli("evaluate", str(run_dir / "model.tar.gz"), str(data), "--output-file", str(run_dir / "eval.json"))
    assert result.returncode == 0, result.stderr
    assert f"evaluation summary ({data})" in result.stdout
    assert "  examples            48" in result.stdout


# --------------------------------------------------------------------------------------------- plots
def test_collect_series_reads_every_epoch_in_order(tmp_path):
    from distrain.training.curves import collect_series

    for epoch in (0, 1, 10, 2):
        (tmp_path / f"metrics_epoch_{epoch}.json").write_text(json.dumps(
            {"epoch": epoch, "training_loss": 1.0 / (epoch + 1), "validation_accuracy": epoch / 10,
             "best_validation_accuracy": 0.5, "training_duration": "00:00:01"}))
    series = collect_series(tmp_path)
    assert series == {
        "loss": {"training": [(0, 1.0), (1, 0.5), (2, 1 / 3), (10, 1 / 11)]},
        "accuracy": {"validation": [(0, 0.0), (1, 0.1), (2, 0.2), (10, 1.0)]},
    }
    assert collect_series(tmp_path, ["loss"]).keys() == {"loss"}


def test_plot_two_runs_writes_a_png_of_their_curves(tracked_run, second_run, tmp_path):
    import numpy as np
    from matplotlib.image import imread

    from distrain.training.curves import collect_series

    run_dir, _, _ = tracked_run
    output = tmp_path / "curves.png"
    result = run_cli("plot", str(run_dir), str(second_run), "-o", str(output), "--metrics", "loss,accuracy")
    assert result.returncode == 0, result.stderr
    pixels = imread(output)
    assert pixels.shape[:2] == (600, 700)  # two panels of 7 x 3 inches at 100 dpi
    assert (pixels[..., :3] < 0.9).any(axis=-1).mean() > 0.01  # lines and text, not a blank image
    # the plotted values are those of the run folders
    first, second = collect_series(run_dir, ["loss", "accuracy"]), collect_series(second_run, ["loss", "accuracy"])
    assert [epoch for epoch, _ in first["loss"]["training"]] == [0, 1, 2]
    assert [epoch for epoch, _ in second["accuracy"]["validation"]] == [0, 1]
    expected = json.loads((second_run / "metrics_epoch_1.json").read_text())["validation_accuracy"]
    assert second["accuracy"]["validation"][1] == (1, expected)
    assert float(np.asarray(pixels).std()) > 0.01
    # training also drew its own curves, unless told not to (the second run ran with DISTRAIN_CURVES=off)
    assert (run_dir / "curves.png").stat().st_size > 10_000
    assert not (second_run / "curves.png").exists()


def test_plot_refuses_a_folder_without_metrics(tmp_path):
    result = run_cli("plot", str(tmp_path), "-o", str(tmp_path / "x.png"))
    assert result.returncode == 2
    assert "no per-epoch metrics" in result.stderr
