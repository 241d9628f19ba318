"""A reader that does not declare its fields (one a user wrote, as AllenNLP readers are written) is checked through
what it yields: the first instance of each split against the model's ``forward``, once the data is read.
``check`` and ``train`` both stop there with one line, exit 2, before any step; ``train`` leaves no run
folder behind. The wording is the declared-fields check's, so both paths read alike."""

from __future__ import annotations

import pytest
from support.cli import run_cli
from support.configs import write_config

PLUGINS = ("--include-package", "tsv_text_classifier", "--include-package", "strict_forward")
ROWS = ["good fun\tpos", "awful plot\tneg", "great film\tpos", "dull mess\tneg"] * 3


def tsv_config(tmp_path, **data_loader) -> dict:
    """The AllenNLP tutorial's ``tsv_labelled_text`` reader (it yields ``words`` and ``label``) before a model whose
    ``forward(tokens, label=None)`` takes no ``**kwargs``."""
    for name in ("train", "dev"):
        (tmp_path / f"{name}.tsv").write_text("\n".join(ROWS) + "\n")
    return {
        "dataset_reader": {"type": "tsv_labelled_text"},
        "train_data_path": str(tmp_path / "train.tsv"),
        "validation_data_path": str(tmp_path / "dev.tsv"),
        "model": {"type": "strict_forward_classifier"},
        "data_loader": {"batch_size": 4, **data_loader},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adam", "lr": 0.01}, "progress_bar": False},
    }


def mismatch(tmp_path) -> str:
    return (f'error: dataset_reader: field "words" of tsv_labelled_text\'s first instance in {tmp_path / "train.tsv"} '
            'is taken by no argument of model strict_forward_classifier.forward (tokens, label), which needs '
            '"tokens"; its fields: label, words')


def error_lines(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("error")]


@pytest.mark.parametrize("scale", [(), ("--world-size", "2")], ids=["as configured", "dry run"])
def test_check_names_the_reader_its_yielded_field_and_forwards_arguments_in_one_line(tmp_path, scale):
    result = run_cli("check", str(write_config(tmp_path / "c.json", tsv_config(tmp_path))), *scale, *PLUGINS)
    assert result.returncode == 2, result.stderr
    assert error_lines(result) == [mismatch(tmp_path)]
    assert "Traceback" not in result.stderr and "config OK" not in result.stdout


@pytest.mark.parametrize("layout", ["one process", "two workers", "streamed"])
def test_train_stops_before_its_first_step_and_leaves_no_run_folder(tmp_path, layout):
    config = tsv_config(tmp_path, **({"lazy": True} if layout == "streamed" else {}))
    if layout == "two workers":  # the parent checks before it spawns anyone: no worker waits on another
        config["distributed"] = {"cuda_devices": [-1, -1]}
    run = tmp_path / "run"
    result = run_cli("train", str(write_config(tmp_path / "c.json", config)), "-s", str(run), *PLUGINS, timeout=120)
    assert result.returncode == 2, result.stderr
    assert error_lines(result) == [mismatch(tmp_path)]
    assert "Traceback" not in result.stderr and "TypeError" not in result.stderr
    assert not run.exists()  # only its config and log were written: removed, as for other bad input


def test_validation_reader_is_named_and_a_forward_with_kwargs_is_told_what_it_needs(tmp_path, text_data):
    """A declared reader for training (checked before reading), the user's for validation (checked on its
    first instance); ``basic_classifier`` swallows extra fields, so only the missing ``tokens`` is told."""
    config = tsv_config(tmp_path)
    config["dataset_reader"] = {"type": "text_classification_json"}
    config["train_data_path"] = str(text_data["train"])
    config["validation_dataset_reader"] = {"type": "tsv_labelled_text"}
    config["model"] = {"type": "basic_classifier", "embedding_dim": 4, "encoder": {"type": "boe"}}
    result = run_cli("check", str(write_config(tmp_path / "c.json", config)), *PLUGINS)
    assert result.returncode == 2, result.stderr
    assert error_lines(result) == [
        'error: model: basic_classifier.forward needs "tokens", which no field of validation_dataset_reader '
        f"(tsv_labelled_text's first instance in {tmp_path / 'dev.tsv'}) gives; its fields: label, words"]


def test_a_declared_reader_with_the_same_mismatch_reads_alike_before_any_data_is_read(tmp_path):
    config = tsv_config(tmp_path)
    config["dataset_reader"] = {"type": "huggingface", "fields": {"text": {"column": "text"},
                                                                 "label": {"column": "label", "kind": "label"}}}
    config["train_data_path"] = str(tmp_path / "missing.jsonl")  # never read: the declared check comes first
    result = run_cli("check", str(write_config(tmp_path / "c.json", config)), *PLUGINS)
    assert result.returncode == 2, result.stderr
    assert error_lines(result) == [
        'error: dataset_reader: field "text" of huggingface is taken by no argument of model '
        'strict_forward_classifier.forward (tokens, label), which needs "tokens"; its fields: label, text']
