"""A SQuAD answer whose ``answer_start`` does not point at its text: one line naming the file and the question id,
exit 2, nothing written (the folder train started is removed); with ``skip_invalid`` the question is skipped, counted, and the rest trains."""

from __future__ import annotations

import pytest

from support.cli import run_cli
from support.configs import write_config
from support.squad import squad_questions, write_squad, write_tiny_pretrained_bert


def config_with_a_bad_answer(tmp_path, workers: int = 1, skip: bool = False) -> dict:
    bert = write_tiny_pretrained_bert(tmp_path / "bert")
    paragraphs = squad_questions(6, seed=1)
    paragraphs[3]["qas"][0]["answers"][0]["answer_start"] += 2  # q3: the offset no longer points at the city
    config = {
        "dataset_reader": {"type": "transformer_squad", "transformer_model_name": str(bert), "length_limit": 24,
                           "skip_invalid": skip},
        "train_data_path": str(write_squad(tmp_path / "train.json", paragraphs)),
        "vocabulary": {"type": "empty"},
        "model": {"type": "transformer_qa", "transformer_model_name": str(bert)},
        "data_loader": {"batch_size": 2},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adamw", "lr": 0.001}, "progress_bar": False},
    }
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers}
    return config


@pytest.mark.parametrize("workers", [1, 2])
def test_answer_offset_not_matching_its_text_is_one_line_naming_file_and_question(tmp_path, workers):
    config = config_with_a_bad_answer(tmp_path, workers)
    result = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", str(tmp_path / "run"))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: {config['train_data_path']}: question q3: answer ") and "answer_start" in last
    assert not (tmp_path / "run").exists()  # nothing written: the config and logs of the start are removed


def test_skip_invalid_skips_and_counts_the_question_and_trains_on_the_rest(tmp_path):
    config = config_with_a_bad_answer(tmp_path, skip=True)
    result = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"{config['train_data_path']}: skipped 1 invalid record(s)" in result.stderr
    assert (tmp_path / "run" / "model.tar.gz").exists()
