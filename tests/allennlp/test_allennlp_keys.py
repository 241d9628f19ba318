"""AllenNLP's data and trainer keys are accepted and do what AllenNLP did: test data evaluated, the
vocabulary read from AllenNLP's files, checkpoints kept by the checkpointer, the three seeds."""

from __future__ import annotations

import json

import pytest
import torch

from support.allennlp import assert_evaluate_gives
from support.cli import run_cli
from support.configs import text_config, write_config
from support.data import sentiment_records, write_jsonl
from distrain.config.errors import ConfigError
from distrain.experiment.assemble import set_seed
from distrain.experiment.plan import Seeds, validate_experiment


def allennlp_vocabulary(directory):
    """A vocabulary directory as AllenNLP's save_to_files writes it (padding left out, OOV first)."""
    directory.mkdir()
    (directory / "non_padded_namespaces.txt").write_text("*tags\n*labels\n")
    words = ["@@UNKNOWN@@", "good", "bad", "great", "awful", "the", "movie"]
    (directory / "tokens.txt").write_text("\n".join(words) + "\n")
    (directory / "labels.txt").write_text("pos\nneg\n")
    return directory


def test_allennlp_keys_train_evaluate_on_test_and_keep_allennlp_vocabulary(tmp_path, text_data):
    test_path = write_jsonl(tmp_path / "test.jsonl", sentiment_records(30, seed=3))
    config = text_config(text_data, num_epochs=3, optimizer="adam", grad_norm=True, cuda_device=-1,
                         checkpointer={"num_serialized_models_to_keep": 1},
                         learning_rate_scheduler={"type": "polynomial_decay", "warmup_steps": 2})
    config.update({"test_data_path": str(test_path), "evaluate_on_test": True, "random_seed": 5, "numpy_seed": 6,
                   "pytorch_seed": 7, "vocabulary": {"type": "from_files",
                                                     "directory": str(allennlp_vocabulary(tmp_path / "vocab"))}})
    config["model"]["initializer"] = [["output.bias", {"type": "constant", "val": 0.25}]]  # AllenNLP's pre-1.0 list form
    config["model"]["regularizer"] = {"regexes": [["weight", "l1"]]}
    run = tmp_path / "run"
    result = run_cli("train", str(write_config(tmp_path / "c.json", config)), "-s", str(run))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "initialised 1 parameter(s) by model.initializer" in (run / "out_worker0.log").read_text()
    metrics = json.loads((run / "metrics.json").read_text())
    assert {"test_loss", "test_accuracy"} <= metrics.keys() and 0 <= metrics["test_accuracy"] <= 1
    assert_evaluate_gives(run, str(test_path), "test_accuracy", metrics["test_accuracy"], tmp_path)  # the best model's
    # keep 1 recent checkpoint (plus the best, which may be the same)
    assert len([p for p in (run / "checkpoints").iterdir() if p.name.startswith("epoch_")]) <= 2
    from distrain import load_archive

    archive = load_archive(run / "model.tar.gz")  # its config's model keys are set aside again when loading
    vocab = archive.vocab
    assert vocab.tokens("tokens") == ["@@PADDING@@", "@@UNKNOWN@@", "good", "bad", "great", "awful", "the", "movie"]
    assert vocab.tokens("labels") == ["pos", "neg"]


def problems_of(config) -> list[str]:
    with pytest.raises(ConfigError) as error:
        validate_experiment(config)
    return [f"{problem.path}: {problem.message}" for problem in error.value.problems]


def test_bad_allennlp_keys_are_one_line_each_with_their_key_path(tmp_path, text_data):
    config = text_config(text_data, random_seed=3, keep_checkpoints=5,
                         checkpointer={"keep_most_recent_by_count": 1})
    config.update({"evaluate_on_test": True, "random_seed": 4, "datasets_for_vocab_creation": ["train", "test"],
                   "vocabulary": {"type": "from_files", "directory": str(tmp_path)}})
    config["data_loader"] = {"batch_size": 8, "batch_sampler": {"type": "bucket", "batch_size": 4}, "shuffle": False}
    found = problems_of(config)
    assert sorted(found) == sorted([
        "data_loader.shuffle: is decided by batch_sampler; set it there",
        "data_loader.batch_size: 8 differs from batch_sampler.batch_size (4); keep one",
        f"vocabulary.directory: {tmp_path} is not an AllenNLP vocabulary (it has no non_padded_namespaces.txt)",
        "trainer.checkpointer.keep_most_recent_by_count: also given as trainer.keep_checkpoints; keep one",
        "evaluate_on_test: needs test_data_path",
        'datasets_for_vocab_creation[1]: "test" has no test_data_path',
    ])


def test_allennlp_trainer_keys_are_translated_before_validation_not_taken_by_the_trainer(text_data):
    """cuda_device, checkpointer, grad_norm's true/false, run_confidence_checks and enable_default_callbacks leave
    the trainer's signature; a config with them loads as before and a bad value is one line at its key path."""
    from distrain.config.schema import parameters_of
    from distrain.training.trainer import Trainer

    own = {parameter.name for parameter in parameters_of(Trainer.by_name("gradient_descent"))[0]}
    assert not own & {"cuda_device", "checkpointer", "run_confidence_checks", "enable_default_callbacks"}
    config = text_config(text_data, cuda_device=-1, grad_norm=True, run_confidence_checks=False,
                         enable_default_callbacks=False, keep_checkpoints=5, checkpointer={"save_every_num_seconds": 60})
    resolved = validate_experiment(config)[1]
    options = resolved.trainer_options()
    assert (options.keep_checkpoints, options.save_every_num_seconds) == (5, 60)  # no count given: the trainer's
    assert resolved.plan.arguments["trainer"].argument("grad_norm") is None and resolved.cuda_device == -1
    kept = validate_experiment(text_config(text_data, checkpointer={"num_serialized_models_to_keep": 1}))[1]
    assert kept.trainer_options().keep_checkpoints == 1
    bad = text_config(text_data, cuda_device=-2, grad_norm="x", run_confidence_checks="yes", enable_default_callbacks=1,
                      checkpointer={"keep_most_recent_by_count": -1})
    assert sorted(problems_of(bad)) == [
        "trainer.checkpointer.keep_most_recent_by_count: must be 0 or more, got -1",
        "trainer.cuda_device: must be at least -1, got -2",
        "trainer.enable_default_callbacks: expected true or false, got 1",
        'trainer.grad_norm: expected a number or true or false, got "x"',
        'trainer.run_confidence_checks: expected true or false, got "yes"',
    ]


def test_top_level_seeds_and_the_trainers_seed():
    def seeds(top: dict, trainer: dict | None = None) -> Seeds:
        config = text_config({"train": "t", "validation": "v"}, **(trainer or {}))
        return validate_experiment({**config, **top})[1].seeds()

    assert seeds({}) == Seeds(13, 13, 13)
    assert seeds({}, {"random_seed": 2}) == Seeds(2, 2, 2)
    assert seeds({"random_seed": 1, "numpy_seed": 2, "pytorch_seed": 3}) == Seeds(1, 2, 3)
    assert seeds({"numpy_seed": 9}, {"random_seed": 2}) == Seeds(2, 9, 2)
    config = {**text_config({"train": "t", "validation": "v"}, random_seed=2), "random_seed": 1}
    assert problems_of(config) == ["trainer.random_seed: also given as the top-level random_seed; keep one"]
    set_seed(Seeds(1, 2, 3))
    drawn = torch.rand(3)
    torch.manual_seed(3)
    assert torch.equal(drawn, torch.rand(3))


def test_datasets_for_vocab_creation_picks_the_splits_whose_tokens_count(tmp_path):
    from distrain.data.prepare import read_data

    data = {"train": write_jsonl(tmp_path / "train.jsonl", [{"text": "seen in training", "label": "a"}]),
            "validation": write_jsonl(tmp_path / "validation.jsonl", [{"text": "only validation", "label": "b"}])}
    test = write_jsonl(tmp_path / "test.jsonl", [{"text": "test words", "label": "c"}])

    def tokens(splits: list[str] | None) -> set[str]:
        config = {**text_config(data), "test_data_path": str(test)}
        if splits is not None:
            config["datasets_for_vocab_creation"] = splits
        vocab, _ = read_data(validate_experiment(config)[1].data_plan)
        assert vocab.tokens("labels") == ["a", "b", "c"]  # labels come from every split read
        return set(vocab.tokens("tokens")) - {"@@PADDING@@", "@@UNKNOWN@@"}

    assert tokens(None) == {"seen", "in", "training", "only", "validation", "test", "words"}  # AllenNLP's default
    assert tokens(["train"]) == {"seen", "in", "training"}
    assert tokens(["validation", "test"]) == {"only", "validation", "test", "words"}


def test_the_json_schema_accepts_allennlp_keys_and_short_forms():
    import jsonschema

    from distrain.experiment.plan import experiment_schema
    from distrain.plugins import import_plugins

    import_plugins([])
    validator = jsonschema.Draft202012Validator(experiment_schema())
    config = text_config({"train": "t", "validation": "v"}, optimizer="huggingface_adamw", grad_clipping=1.0,
                         learning_rate_scheduler="slanted_triangular", checkpointer={"keep_most_recent_by_count": 1})
    config["model"]["initializer"] = {"regexes": [["weight", {"type": "xavier_normal"}], ["bias", "zero"]]}
    config["model"]["regularizer"] = {"regexes": [["weight", {"type": "l2", "alpha": 0.1}]]}
    config["data_loader"] = {"batch_sampler": {"type": "bucket", "sorting_keys": ["tokens"]}}
    config.update({"random_seed": 1, "test_data_path": "t", "evaluate_on_test": True})
    assert list(validator.iter_errors(config)) == []
    config["model"]["initializer"]["regexes"][0] = ["weight", "xavier_nrmal"]
    assert list(validator.iter_errors(config))


def test_recover_on_another_worker_count_keeps_the_bucket_samplers_global_batch():
    from distrain.training.resume_check import changes_that_matter

    def config(per_worker: int, workers: int) -> dict:
        return {"data_loader": {"batch_sampler": {"type": "bucket", "batch_size": per_worker}},
                "distributed": {"cuda_devices": [-1] * workers}}

    assert changes_that_matter(config(16, 1), config(8, 2), 1, 2) == []
    assert changes_that_matter(config(16, 1), config(16, 2), 1, 2) == [
        "data_loader.batch_size x workers changed from 16 (1 worker(s)) to 32 (2 worker(s)); keep the global value the same"]


def test_vocabulary_from_an_allennlp_model_archive(tmp_path):
    import tarfile

    from distrain.data.vocabulary_files import read_vocabulary_directory

    folder = allennlp_vocabulary(tmp_path / "vocabulary")
    (folder / "tokens.txt").write_text("@@UNKNOWN@@\nline@@NEWLINE@@break\nword\n")
    with tarfile.open(tmp_path / "model.tar.gz", "w:gz") as archive:
        archive.add(folder, arcname="vocabulary")
    from_archive = read_vocabulary_directory(tmp_path / "model.tar.gz")
    assert from_archive == read_vocabulary_directory(folder)
    assert from_archive.tokens("tokens") == ["@@PADDING@@", "@@UNKNOWN@@", "line\nbreak", "word"]
    assert from_archive.tokens("labels") == ["pos", "neg"]
