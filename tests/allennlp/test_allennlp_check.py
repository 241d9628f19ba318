"""``distrain check`` catches, before any data is read: reader fields the model's forward does not take
(or forward arguments no field gives), and GPUs this machine does not have (``train`` too)."""

from __future__ import annotations

import json

from support.cli import run_cli
from support.configs import text_config, write_config

HUGGINGFACE_TEXT = {"type": "huggingface", "fields": {"text": {"column": "text"},
                                                      "label": {"column": "label", "kind": "label"}}}


def error_lines(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


def test_reader_field_text_against_forward_argument_tokens_is_one_line_before_reading(tmp_path, text_data):
    config = text_config(text_data)
    config["dataset_reader"] = HUGGINGFACE_TEXT
    config["train_data_path"] = str(tmp_path / "missing.jsonl")  # never read: the check comes first
    result = run_cli("check", str(write_config(tmp_path / "c.json", config)))
    assert result.returncode == 2, result.stderr
    assert error_lines(result) == ['error: model: basic_classifier.forward needs "tokens", which no field of '
                                   'dataset_reader (huggingface) gives; its fields: label, text']


def test_field_no_forward_argument_takes_and_an_unknown_sorting_key_are_named(tmp_path, text_data):
    config = text_config(text_data)
    config["dataset_reader"] = {"type": "huggingface", "fields": {
        "tokens": {"column": "text"}, "label": {"column": "label", "kind": "label"},
        "source": {"column": "text", "kind": "metadata"}}}
    config["model"] = {"type": "strict_forward_classifier"}
    config["data_loader"] = {"batch_sampler": {"type": "bucket", "batch_size": 4, "sorting_keys": ["text"]}}
    result = run_cli("check", str(write_config(tmp_path / "c.json", config)), "--include-package", "strict_forward")
    assert result.returncode == 2, result.stderr
    assert "2 problems in the config" in result.stderr
    assert ('  dataset_reader: field "source" of huggingface is taken by no argument of model '
            'strict_forward_classifier.forward (tokens, label)') in result.stderr
    assert ('  data_loader.batch_sampler.sorting_keys[0]: "text" is not a field of dataset_reader; '
            'its fields: label, source, tokens') in result.stderr


def test_matching_fields_pass_and_train(tmp_path, text_data):
    config = text_config(text_data, num_epochs=1)
    config["model"] = {"type": "strict_forward_classifier"}
    result = run_cli("train", str(write_config(tmp_path / "c.json", config)), "-s", str(tmp_path / "run"),
                     "--include-package", "strict_forward")
    assert result.returncode == 0, result.stderr[-2000:]


def gpu_config(tmp_path, text_data) -> dict:
    config = text_config(text_data)
    config["train_data_path"] = str(tmp_path / "missing.jsonl")  # reading it would fail differently
    config["distributed"] = {"cuda_devices": [0, 1, 2, 3]}
    return config


MISSING_GPUS = ("error: distributed.cuda_devices: [0, 1, 2, 3] names GPUs this machine does not have "
                "(it has none); use -1 for CPU processes")


def test_check_and_train_refuse_gpus_that_are_not_there_before_reading_data(tmp_path, text_data):
    path = write_config(tmp_path / "c.json", gpu_config(tmp_path, text_data))
    for command in (["check", str(path)], ["train", str(path), "-s", str(tmp_path / "run")]):
        result = run_cli(*command)
        assert result.returncode == 2, result.stderr
        assert [line for line in error_lines(result) if line.startswith("error")] == [MISSING_GPUS], command
        assert "missing.jsonl" not in result.stderr and "Traceback" not in result.stderr


def test_trainer_cuda_device_without_distributed_block_is_checked_too(tmp_path, text_data):
    config = text_config(text_data, cuda_device=0)
    result = run_cli("check", str(write_config(tmp_path / "c.json", config)))
    assert result.returncode == 2
    assert error_lines(result) == ["error: trainer.cuda_device: 0 names GPUs this machine does not have "
                                   "(it has none); use -1 for the CPU"]


def test_cpu_processes_pass_and_a_dry_run_for_another_machine_only_notes_the_gpus(tmp_path, text_data):
    config = gpu_config(tmp_path, text_data)
    config["train_data_path"] = str(text_data["train"])
    result = run_cli("check", str(write_config(tmp_path / "c.json", config)), "--world-size", "2")
    assert result.returncode == 0, result.stderr
    assert "note             this machine's GPUs (none) are not the 2 per node planned for" in result.stdout
    config["distributed"] = {"cuda_devices": [-1, -1]}
    config["trainer"]["cuda_device"] = 3  # AllenNLP ignores it beside a distributed block
    result = run_cli("check", str(write_config(tmp_path / "c.json", config)))
    assert result.returncode == 0, result.stderr
    assert json.dumps(config["distributed"]["cuda_devices"]) in result.stdout


def test_a_reader_subclass_that_reads_differently_is_not_trusted_with_its_parents_fields():
    from distrain.config.schema import Build
    from distrain.data.readers.text_classification_json import TextClassificationJsonReader
    from distrain.experiment.field_check import reader_fields

    class Renamed(TextClassificationJsonReader):
        def text_to_instance(self, text, label=None):
            return {"text": self.tokenizer.to_field(text)}

    class Declared(Renamed):
        @classmethod
        def declared_fields(cls, arguments):
            return {"text": True}

    assert reader_fields(Build(TextClassificationJsonReader, {})) == {"tokens": True, "label": False}
    assert reader_fields(Build(Renamed, {})) is None
    assert reader_fields(Build(Declared, {})) == {"text": True}
