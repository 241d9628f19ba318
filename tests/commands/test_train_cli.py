"""``distrain train`` / ``check`` / ``list`` end to end on tiny configs, as a user runs them."""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import sys
import tarfile

import pytest

from support.cli import run_cli
from support.configs import text_config, write_config
from support.paths import ROOT


@pytest.fixture
def trained(tmp_path, text_data):
    config = write_config(tmp_path / "exp.json", text_config(text_data, num_epochs=3, keep_checkpoints=2))
    out = tmp_path / "run"
    result = run_cli("train", str(config), "-s", str(out))
    assert result.returncode == 0, result.stderr
    return out


def test_train_writes_allennlp_style_outputs(trained):
    names = {path.name for path in trained.iterdir()}
    assert {"config.json", "metrics.json", "model.tar.gz", "out_worker0.log", "checkpoints"} <= names
    assert {f"metrics_epoch_{epoch}.json" for epoch in range(3)} <= names
    metrics = json.loads((trained / "metrics.json").read_text())
    for key in ("epoch", "best_epoch", "training_duration", "training_loss", "training_accuracy",
                "validation_loss", "validation_accuracy", "best_validation_accuracy", "best_validation_loss"):
        assert key in metrics, key
    assert metrics["epoch"] == 2
    # AllenNLP's form of the training time so far (str of a timedelta, to the microsecond), growing by epoch
    durations = [json.loads((trained / f"metrics_epoch_{epoch}.json").read_text())["training_duration"]
                 for epoch in range(3)]
    seconds = [datetime.timedelta(**dict(zip(("hours", "minutes", "seconds"), map(float, text.split(":")))))
               for text in durations]
    # (a timedelta's str leaves out a fraction of exactly 0: one in a million)
    assert all(re.fullmatch(r"\d+:\d\d:\d\d(\.\d{6})?", text) for text in durations), durations
    assert any("." in text for text in durations), durations
    assert seconds[0] < seconds[1] < seconds[2], durations


def test_only_the_most_recent_checkpoints_are_kept_plus_the_best(trained):
    directory = trained / "checkpoints"
    folders = {path.name for path in directory.iterdir() if path.is_dir()}
    best = (directory / "best.txt").read_text().strip()
    # named by data position: the next epoch to train, global batches of it consumed
    assert folders == {"epoch_0002_batch_00000000", "epoch_0003_batch_00000000", best}
    assert (directory / "best.safetensors").is_file()


def test_archive_holds_config_vocabulary_and_safetensors_weights_only(trained):
    with tarfile.open(trained / "model.tar.gz") as archive:
        names = set(archive.getnames())
    assert {"config.json", "weights.safetensors", "meta.json", "vocabulary/tokens.txt", "vocabulary/labels.txt"} <= names
    assert not any(name.endswith((".pt", ".pkl", ".bin")) for name in names)


def test_archive_loads_back_through_the_public_api(trained):
    import distrain

    archive = distrain.load_archive(trained / "model.tar.gz")
    assert archive.vocab.size("labels") == 2
    assert type(archive.model).__name__ == "BasicClassifier"


def test_saved_config_is_the_resolved_config(tmp_path, text_data):
    config = write_config(tmp_path / "exp.json", text_config(text_data, num_epochs=1))
    out = tmp_path / "run"
    result = run_cli("train", str(config), "-s", str(out), "-o", '{"trainer.num_epochs": 2}')
    assert result.returncode == 0, result.stderr
    saved = json.loads((out / "config.json").read_text())
    assert saved["trainer"]["num_epochs"] == 2


def test_non_empty_output_dir_is_refused_unless_forced(trained, tmp_path, text_data):
    config = write_config(tmp_path / "exp2.json", text_config(text_data, num_epochs=1))
    before = (trained / "metrics.json").read_text()
    refused = run_cli("train", str(config), "-s", str(trained))
    assert refused.returncode == 2
    assert "is not empty; pass --recover to resume it or --force to start over" in refused.stderr
    assert (trained / "metrics.json").read_text() == before
    forced = run_cli("train", str(config), "-s", str(trained), "--force")
    assert forced.returncode == 0, forced.stderr
    assert not (trained / "metrics_epoch_2.json").exists()


def test_check_prints_components_parameters_and_effective_batch(tmp_path, text_data):
    config = write_config(tmp_path / "exp.json", text_config(text_data))
    result = run_cli("check", str(config), "-o", '{"distributed": {"cuda_devices": [-1, -1]}, "trainer.num_gradient_accumulation_steps": 3}')
    assert result.returncode == 0, result.stderr
    assert "config OK" in result.stdout
    assert "BasicClassifier" in result.stdout and "parameters" in result.stdout
    assert "effective batch  48 = 8 per worker x 2 worker(s) x 3 accumulation" in result.stdout
    assert not list(tmp_path.glob("**/metrics.json"))


def test_list_shows_components_with_their_arguments():
    result = run_cli("list", "Model")
    assert result.returncode == 0, result.stderr
    assert "basic_classifier" in result.stdout and "feedforward_classifier" in result.stdout
    assert "embedding_dim: int | None (default None), must be >= 1" in result.stdout  # 100 unless text_field_embedder
    everything = run_cli("list")
    for base in ("DatasetReader", "Metric", "Optimizer", "Seq2VecEncoder", "Tokenizer", "Trainer"):
        assert base in everything.stdout
    unknown = run_cli("list", "Modle")
    assert unknown.returncode == 2 and "unknown base class" in unknown.stderr


def test_custom_reader_and_model_from_a_plugin_package(tmp_path):
    lines = [f"{'pos' if i % 2 else 'neg'}\t{'good great' if i % 2 else 'bad awful'} film" for i in range(40)]
    (tmp_path / "train.tsv").write_text("\n".join(lines) + "\n")
    config = {
        "dataset_reader": {"type": "tsv_classification"},
        "train_data_path": str(tmp_path / "train.tsv"),
        "model": {"type": "mean_embedding_classifier", "dim": 4},
        "data_loader": {"batch_size": 8},
        "trainer": {"num_epochs": 15, "optimizer": {"lr": 0.05}, "progress_bar": False},
    }
    path = write_config(tmp_path / "plugin.json", config)
    without = run_cli("check", str(path))
    assert without.returncode == 2
    assert 'dataset_reader.type: unknown DatasetReader type "tsv_classification"' in without.stderr
    result = run_cli("train", str(path), "-s", str(tmp_path / "run"), "--include-package", "distrain_test_plugin")
    assert result.returncode == 0, result.stderr
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["training_accuracy"] == 1.0


def test_missing_plugin_package_is_a_one_line_error(tmp_path, text_data):
    config = write_config(tmp_path / "exp.json", text_config(text_data))
    result = run_cli("check", str(config), "--include-package", "no_such_plugin_xyz")
    assert result.returncode == 2
    assert "--include-package no_such_plugin_xyz: cannot import it" in result.stderr


def test_bad_record_is_reported_with_file_and_line(tmp_path, text_data):
    lines = text_data["train"].read_text().splitlines()
    lines[4] = '{"text": "broken", "label": '
    text_data["train"].write_text("\n".join(lines) + "\n")
    config = write_config(tmp_path / "exp.json", text_config(text_data))
    result = run_cli("train", str(config), "-s", str(tmp_path / "run"))
    assert result.returncode == 2
    assert f"{text_data['train']}:5:" in result.stderr


def test_help_answers_without_importing_torch():
    code = "import sys; from distrain.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\nprint('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={"PYTHONPATH": str(ROOT / "src")})
    assert result.stdout.strip().endswith("False")
    assert "train" in result.stdout
