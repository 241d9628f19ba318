"""A corpus of bad values: every built-in component's constrained arguments (signs, ranges, patterns,
enumerations, checks across arguments) and the four a new user hit. Each is reported with its key
path, exit 2, no traceback, before any record is read (a reader that marks every record proves it).

All problems of a config are reported at once, so each config below carries many bad values and one
CLI call checks them all; the cross-argument checks get configs whose single values are all valid
(they run only then)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from support.cli import run_cli
from support.configs import write_config
from support.transformer_fixtures import write_corpus, write_tiny_bert

#: (config path, bad value, the line expected in stderr: "KEY.PATH: message"); the config goes through
#: jsonnet, which writes 1.0 as 1
SINGLE_VALUES = [
    # trainer
    ("trainer.validation_metric", "accuracy", 'trainer.validation_metric: must start with + or -, got "accuracy"'),
    ("trainer.grad_norm", -1, "trainer.grad_norm: must be greater than 0, got -1"),
    ("trainer.patience", -1, "trainer.patience: must be 0 or more, got -1"),
    ("trainer.num_epochs", -1, "trainer.num_epochs: must be 0 or more, got -1"),
    ("trainer.num_gradient_accumulation_steps", 0, "trainer.num_gradient_accumulation_steps: must be at least 1, got 0"),
    ("trainer.keep_checkpoints", -2, "trainer.keep_checkpoints: must be 0 or more, got -2"),
    ("trainer.save_every_num_batches", 0, "trainer.save_every_num_batches: must be at least 1, got 0"),
    ("trainer.save_every_num_seconds", -5, "trainer.save_every_num_seconds: must be 0 or more, got -5"),
    ("trainer.random_seed", -3, "trainer.random_seed: must be 0 or more, got -3"),
    ("trainer.amp_dtype", "fp8", "trainer.amp_dtype: expected 'bfloat16' or 'float16', got \"fp8\""),
    # optimizer (adam)
    ("trainer.optimizer.lr", -0.1, "trainer.optimizer.lr: must be 0 or more, got -0.1"),
    ("trainer.optimizer.eps", 0, "trainer.optimizer.eps: must be greater than 0, got 0"),
    ("trainer.optimizer.betas", [0.9, 1.0], "trainer.optimizer.betas[1]: must be less than 1, got 1"),
    ("trainer.optimizer.weight_decay", -0.01, "trainer.optimizer.weight_decay: must be 0 or more, got -0.01"),
    ("trainer.optimizer.no_decay", ["(bias"], 'trainer.optimizer.no_decay[0]: must be a valid regular expression, got "(bias"'),
    # scheduler (reduce_on_plateau)
    ("trainer.learning_rate_scheduler.warmup_steps", -1, "trainer.learning_rate_scheduler.warmup_steps: must be 0 or more, got -1"),
    ("trainer.learning_rate_scheduler.factor", 1.0, "trainer.learning_rate_scheduler.factor: must be less than 1, got 1"),
    ("trainer.learning_rate_scheduler.patience", -1, "trainer.learning_rate_scheduler.patience: must be 0 or more, got -1"),
    ("trainer.learning_rate_scheduler.min_lr", -1e-5, "trainer.learning_rate_scheduler.min_lr: must be 0 or more, got -1e-05"),
    ("trainer.learning_rate_scheduler.mode", "up", "trainer.learning_rate_scheduler.mode: expected 'min' or 'max', got \"up\""),
    # callbacks
    ("trainer.callbacks", [{"type": "tensorboard", "log_every": 0}], "trainer.callbacks[0].log_every: must be at least 1, got 0"),
    # reader and tokenizer
    ("dataset_reader.max_instances", -1, "dataset_reader.max_instances: must be 0 or more, got -1"),
    ("dataset_reader.tokenizer", {"type": "words_and_punctuation", "max_length": 0}, "dataset_reader.tokenizer.max_length: must be at least 1, got 0"),
    # model (basic_classifier), its transformer encoder and feed-forward
    ("model.dropout", 1.5, "model.dropout: must be at most 1, got 1.5"),
    ("model.encoder", {"type": "transformer", "num_heads": 0, "num_layers": 0, "dropout": -0.1, "max_length": 0,
                       "feedforward_dim": 0},
     "model.encoder.num_heads: must be at least 1, got 0"),
    (None, None, "model.encoder.num_layers: must be at least 1, got 0"),
    (None, None, "model.encoder.dropout: must be 0 or more, got -0.1"),
    (None, None, "model.encoder.max_length: must be at least 1, got 0"),
    (None, None, "model.encoder.feedforward_dim: must be at least 1, got 0"),
    ("model.feedforward", {"hidden_dims": [8, 0], "dropout": 2, "activation": "swish"},
     "model.feedforward.hidden_dims[1]: must be at least 1, got 0"),
    (None, None, "model.feedforward.dropout: must be at most 1, got 2"),
    (None, None, "model.feedforward.activation: expected 'relu', 'gelu', 'tanh', 'sigmoid' or 'linear', got \"swish\""),
    # metrics
    ("model.metrics", {"acc": {"type": "categorical_accuracy", "top_k": 0},
                       "fb": {"type": "fbeta", "beta": 0, "average": "mean", "labels": []},
                       "auc": {"type": "auc", "positive_label": -1},
                       "f1": {"type": "f1", "positive_label": -2},
                       "spans": {"type": "span_f1", "tag_scheme": "IOB2"}},
     "model.metrics.acc.top_k: must be at least 1, got 0"),
    (None, None, "model.metrics.fb.beta: must be greater than 0, got 0"),
    (None, None, "model.metrics.fb.average: expected 'micro', 'macro' or 'weighted', got \"mean\""),
    (None, None, "model.metrics.fb.labels: must have at least 1 item, got []"),
    (None, None, "model.metrics.auc.positive_label: must be 0 or more, got -1"),
    (None, None, "model.metrics.f1.positive_label: must be 0 or more, got -2"),
    (None, None, "model.metrics.spans.tag_scheme: expected 'BIO', 'IOB1', 'BIOUL' or 'BMES', got \"IOB2\""),
    # data loaders and vocabulary
    ("data_loader.batch_size", 0, "data_loader.batch_size: must be at least 1, got 0"),
    ("data_loader.num_workers", -1, "data_loader.num_workers: must be 0 or more, got -1"),
    ("data_loader.max_tokens_per_batch", 0, "data_loader.max_tokens_per_batch: must be at least 1, got 0"),
    ("validation_data_loader", {"batch_size": -4, "max_instances_in_memory": 0},
     "validation_data_loader.batch_size: must be at least 1, got -4"),
    (None, None, "validation_data_loader.max_instances_in_memory: must be at least 1, got 0"),
    ("vocabulary", {"min_count": -1, "max_size": {"tokens": 0}}, "vocabulary.min_count: must be 0 or more, got -1"),
    (None, None, "vocabulary.max_size.tokens: must be at least 1, got 0"),
    # distributed, with its strategy
    ("distributed", {"cuda_devices": [], "num_nodes": 0, "timeout": 0, "master_port": 70000, "backend": "mpi",
                     "device_weights": [0.0], "strategy": {"type": "ddp", "bucket_cap_mb": 0}},
     "distributed.cuda_devices: must have at least 1 item, got []"),
    (None, None, "distributed.num_nodes: must be at least 1, got 0"),
    (None, None, "distributed.timeout: must be greater than 0, got 0"),
    (None, None, "distributed.master_port: must be at most 65535, got 70000"),
    (None, None, "distributed.backend: expected 'gloo' or 'nccl', got \"mpi\""),
    (None, None, "distributed.device_weights[0]: must be greater than 0, got 0"),
    (None, None, "distributed.strategy.bucket_cap_mb: must be greater than 0, got 0"),
]

#: the other implementations of the same slots, in a second config
OTHER_IMPLEMENTATIONS = [
    ("trainer.optimizer", {"type": "sgd", "lr": -1, "momentum": -0.5, "dampening": 2,
                           "parameter_groups": [[["encoder[", "output"], {"lr": 0.1}]]},
     "trainer.optimizer.lr: must be 0 or more, got -1"),
    (None, None, "trainer.optimizer.momentum: must be 0 or more, got -0.5"),
    (None, None, "trainer.optimizer.dampening: must be at most 1, got 2"),
    (None, None, 'trainer.optimizer.parameter_groups[0][0][0]: must be a valid regular expression, got "encoder["'),
    ("trainer.learning_rate_scheduler", {"type": "polynomial", "power": 0, "end_factor": -1, "total_steps": 0},
     "trainer.learning_rate_scheduler.power: must be greater than 0, got 0"),
    (None, None, "trainer.learning_rate_scheduler.end_factor: must be 0 or more, got -1"),
    (None, None, "trainer.learning_rate_scheduler.total_steps: must be at least 1, got 0"),
    ("model.encoder", {"type": "cnn", "num_filters": 0, "ngram_filter_sizes": []},
     "model.encoder.num_filters: must be at least 1, got 0"),
    (None, None, "model.encoder.ngram_filter_sizes: must have at least 1 item, got []"),
    ("validation_dataset_reader", {"type": "huggingface", "fields": {}, "format": "xml"},
     "validation_dataset_reader.fields: must have at least 1 item, got {}"),
    (None, None, "validation_dataset_reader.format: expected 'json', 'csv', 'parquet', 'arrow' or 'text', got \"xml\""),
]


def lstm_and_scheduler_cases(bert: Path) -> list[tuple]:
    return [
        ("trainer.optimizer", {"type": "adamw", "lr": -1, "eps": -1e-8},
         "trainer.optimizer.lr: must be 0 or more, got -1"),
        (None, None, "trainer.optimizer.eps: must be greater than 0, got -1e-08"),
        ("trainer.learning_rate_scheduler", {"type": "cosine", "end_factor": -0.5},
         "trainer.learning_rate_scheduler.end_factor: must be 0 or more, got -0.5"),
        ("model.encoder", {"type": "lstm", "hidden_size": 0, "num_layers": -1},
         "model.encoder.hidden_size: must be at least 1, got 0"),
        (None, None, "model.encoder.num_layers: must be at least 1, got -1"),
        ("validation_dataset_reader", {"type": "text_blocks", "tokenizer_name": str(bert), "max_length": 2, "min_length": 0},
         "validation_dataset_reader.max_length: must be at least 3, got 2"),
        (None, None, "validation_dataset_reader.min_length: must be at least 1, got 0"),
    ]


def model_cases(bert: Path) -> list[tuple]:
    """The other models (one per config: a config has one model) and the pretrained tokenizer."""
    return [
        ("model", {"type": "transformer_classifier", "model_name": str(bert), "dropout": -0.2, "pad_token_id": -1},
         "model.dropout: must be 0 or more, got -0.2"),
        (None, None, "model.pad_token_id: must be 0 or more, got -1"),
        ("dataset_reader.tokenizer", {"type": "pretrained_transformer", "model_name": str(bert), "max_length": 0},
         "dataset_reader.tokenizer.max_length: must be at least 1, got 0"),
    ], [
        ("model", {"type": "transformer_masked_language_model", "tokenizer_name": str(bert), "config": str(bert),
                   "mask_probability": 0, "mask_fraction": -0.1, "random_fraction": 1.5},
         "model.mask_probability: must be greater than 0, got 0"),
        (None, None, "model.mask_fraction: must be 0 or more, got -0.1"),
        (None, None, "model.random_fraction: must be at most 1, got 1.5"),
    ], [
        ("model", {"type": "feedforward_classifier", "input_dim": 0}, "model.input_dim: must be at least 1, got 0"),
    ]


def cross_argument_cases(bert: Path) -> list[tuple]:
    """Rules that relate arguments: each value alone is fine (so the components' hooks run)."""
    return [
        ("trainer.optimizer", {"type": "sgd", "lr": 0.1, "nesterov": True},
         "trainer.optimizer.nesterov: needs momentum > 0 and dampening 0 (got momentum 0.0, dampening 0.0)"),
        ("trainer.learning_rate_scheduler", {"type": "linear", "warmup_steps": 10, "total_steps": 5},
         "trainer.learning_rate_scheduler.warmup_steps: must be at most total_steps (5), got 10"),
        ("model", {"type": "basic_classifier", "embedding_dim": 30, "encoder": {"type": "transformer", "num_heads": 4},
                   "metrics": {"acc": {"type": "categorical_accuracy", "top_k": 2, "tie_break": True},
                               "fb": {"type": "fbeta", "labels": [1, "pos", 1]}}},
         "model.embedding_dim: is not divisible by the encoder's num_heads (4), got 30"),
        (None, None, "model.metrics.acc.tie_break: only applies to top_k 1, got top_k 2"),
        (None, None, "model.metrics.fb.labels: lists 1 more than once"),
        ("data_loader", {"batch_size": 4, "lazy": True, "sort_by_length": True},
         "data_loader.sort_by_length: applies to indexed loading only; it cannot be used with lazy"),
        ("validation_dataset_reader", {"type": "text_blocks", "tokenizer_name": str(bert), "max_length": 10, "min_length": 9},
         "validation_dataset_reader.min_length: must be at most max_length - 2 (8) or no block is ever long enough, got 9"),
    ], [
        ("model", {"type": "transformer_masked_language_model", "tokenizer_name": str(bert), "mask_fraction": 0.8, "random_fraction": 0.3},
         "model: give exactly one of model_name (pretrained) and config (random init)"),
        (None, None, "model.random_fraction: mask_fraction + random_fraction must be at most 1, got 0.8 + 0.3"),
    ]


#: the four cases a new user hit, each through ``distrain train`` with ``-o``
NEW_USER_CASES = [
    ({"trainer.validation_metric": "accuracy"}, 'trainer.validation_metric: must start with + or -, got "accuracy"'),
    ({"trainer.learning_rate_scheduler": {"type": "linear", "warmup_steps": -1}},
     "trainer.learning_rate_scheduler.warmup_steps: must be 0 or more, got -1"),
    ({"trainer.grad_norm": -1}, "trainer.grad_norm: must be greater than 0, got -1"),
    ({"trainer.patience": -1}, "trainer.patience: must be 0 or more, got -1"),
]


@pytest.fixture
def corpus(tmp_path: Path) -> dict:
    """Real data, a tiny local BERT folder, and a base config whose reader marks every record read."""
    records = [{"text": f"{'good great' if i % 2 else 'bad awful'} movie", "label": "pos" if i % 2 else "neg"}
               for i in range(40)]
    train = tmp_path / "train.jsonl"
    train.write_text("".join(json.dumps(record) + "\n" for record in records))
    marks = tmp_path / "marks"
    base = {
        "dataset_reader": {"type": "read_counting_json", "marker_dir": str(marks)},
        "train_data_path": str(train),
        "validation_data_path": str(train),
        "model": {"type": "basic_classifier", "embedding_dim": 8, "encoder": {"type": "boe"}},
        "data_loader": {"batch_size": 8},
        "trainer": {"num_epochs": 1, "progress_bar": False, "validation_metric": "+accuracy",
                    "optimizer": {"type": "adam", "lr": 0.01},
                    "learning_rate_scheduler": {"type": "reduce_on_plateau"}},
    }
    write_corpus(tmp_path / "corpus", files=1, sentences=5)
    return {"dir": tmp_path, "base": base, "marks": marks, "bert": write_tiny_bert(tmp_path / "bert")}


def records_read(marker_dir: Path) -> int:
    """Records read by every process of a run, by the marks ``read_counting_json`` leaves (one per record)."""
    return sum(len(file.read_text().splitlines()) for file in Path(marker_dir).glob("reads.*.txt"))


def with_values(base: dict, cases: list[tuple]) -> dict:
    config = copy.deepcopy(base)
    for path, value, _ in cases:
        if path is None:
            continue
        *parents, last = path.split(".")
        node = config
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return config


def assert_reported_before_reading(result, expected: list[str], marks: Path) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = {line.strip().removeprefix("error: ") for line in result.stderr.splitlines()}
    missing = [line for line in expected if line not in lines]
    assert not missing, f"not reported: {missing}\nstderr:\n{result.stderr}"
    assert records_read(marks) == 0


def check(corpus: dict, name: str, cases: list[tuple]):
    config = write_config(corpus["dir"] / f"{name}.json", with_values(corpus["base"], cases))
    return run_cli("check", str(config), "--include-package", "read_counter")


def test_the_counting_reader_does_count_when_the_config_is_good(corpus):
    result = check(corpus, "good", [])
    assert result.returncode == 0, result.stderr
    assert records_read(corpus["marks"]) > 0


def test_every_component_s_bad_values_exit_2_with_their_key_paths_before_any_read(corpus):
    bert = corpus["bert"]
    transformer, mlm, feedforward = model_cases(bert)
    cross, mlm_cross = cross_argument_cases(bert)
    groups = {
        "single_values": SINGLE_VALUES,
        "other_implementations": OTHER_IMPLEMENTATIONS,
        "lstm_and_cosine": lstm_and_scheduler_cases(bert),
        "transformer_classifier": transformer,
        "masked_language_model": mlm,
        "feedforward_classifier": feedforward,
        "cross_arguments": cross,
        "masked_language_model_cross": mlm_cross,
    }
    for name, cases in groups.items():
        result = check(corpus, name, cases)
        assert_reported_before_reading(result, [expected for _, _, expected in cases], corpus["marks"])
    total = sum(len(cases) for cases in groups.values()) + len(NEW_USER_CASES)
    assert total >= 30


@pytest.mark.parametrize("override, expected", NEW_USER_CASES, ids=["validation_metric", "warmup_steps", "grad_norm", "patience"])
def test_the_new_user_cases_stop_train_before_any_read(corpus, override, expected):
    config = write_config(corpus["dir"] / "train.json", corpus["base"])
    result = run_cli("train", str(config), "-s", str(corpus["dir"] / "run"), "-o", json.dumps(override),
                     "--include-package", "read_counter")
    assert_reported_before_reading(result, [expected], corpus["marks"])
    assert not (corpus["dir"] / "run" / "metrics.json").exists()


def test_an_error_raised_while_building_a_component_names_its_key_path(corpus):
    """A check that needs run-time values (here: the model's parameter names) stays in the constructor;
    its ``ValueError`` is still one line with the block's key path, exit 2, not a traceback."""
    groups = {"trainer.optimizer": {"type": "adam", "parameter_groups": [[["no_such_parameter"], {"lr": 0.1}]]}}
    result = check(corpus, "runtime", [(path, value, "") for path, value in groups.items()])
    assert result.returncode == 2, result.stderr
    assert "trainer.optimizer: parameter_groups: no parameter matches [['no_such_parameter']]" in result.stderr
    assert "Traceback" not in result.stderr
