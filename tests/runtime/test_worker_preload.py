"""What the worker fork server preloads for a config: torch's compiler only for workers that will
import it anyway (compiling, sharded or split models, pretrained transformers)."""

from __future__ import annotations

import pytest

from distrain.runtime.worker_server import PRELOAD, PRELOAD_COMPILER, worker_preload

PLAIN = {
    "dataset_reader": {"type": "text_classification_json"},
    "model": {"type": "basic_classifier", "embedding_dim": 16, "encoder": {"type": "boe"}},
    "trainer": {"num_epochs": 1},
    "distributed": {"cuda_devices": [-1, -1]},
}


def with_(**blocks) -> dict:
    config = {key: dict(value) for key, value in PLAIN.items()}
    for key, value in blocks.items():
        config[key] = {**config.get(key, {}), **value}
    return config


@pytest.mark.parametrize("config", [
    PLAIN,
    with_(distributed={"strategy": {"type": "ddp", "bucket_cap_mb": 5}}),
    with_(distributed={"tensor_parallel_size": 1, "pipeline_parallel_size": 1}),
    with_(trainer={"compile": False}),
], ids=["plain", "ddp-strategy", "degrees-of-one", "compile-off"])
def test_plain_data_parallel_workers_get_no_compiler(config):
    assert worker_preload(config) == [PRELOAD]


@pytest.mark.parametrize("config", [
    with_(trainer={"compile": True}),
    with_(distributed={"strategy": {"type": "fsdp"}}),
    with_(distributed={"strategy": {"type": "my_own_strategy"}}),
    with_(distributed={"tensor_parallel_size": 2}),
    with_(distributed={"pipeline_parallel_size": 2}),
    with_(dataset_reader={"tokenizer": {"type": "pretrained_transformer", "model_name": "some/model"}}),
    with_(model={"type": "masked_language_model", "tokenizer_name": "some/model"}),
    with_(trainer={"callbacks": [{"type": "x", "nested": [{"model_name": "m"}]}]}),
], ids=["compile", "fsdp", "user-strategy", "tensor-parallel", "pipeline", "pretrained-tokenizer", "mlm", "nested"])
def test_workers_that_will_import_the_compiler_get_it_preloaded(config):
    assert worker_preload(config) == [PRELOAD, PRELOAD_COMPILER]


def test_a_malformed_block_leaves_the_decision_to_validation():
    """The fork server starts before the config is validated: a wrong shape must not raise here."""
    assert worker_preload({"trainer": "oops", "distributed": ["x"]}) == [PRELOAD]
    assert worker_preload({"distributed": {"strategy": "fsdp", "tensor_parallel_size": "2"}}) == [PRELOAD, PRELOAD_COMPILER]
