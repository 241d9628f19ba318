"""What the worker fork server preloads for a config: torch's compiler only for workers that will
import it anyway (compiling, sharded or split models, pretrained transformers). What the config says is
decided in the parent; whether the strategy applies itself with the compiler, the strategy says
(``imports_compiler``), asked in the fork server, where the strategies are imported."""

from __future__ import annotations

import pytest

from distrain.plugins import import_builtins
from distrain.runtime.worker_server import (PRELOAD, PRELOAD_COMPILER, PRELOAD_FOR_STRATEGY, configured_strategy,
                                            strategy_imports_compiler, worker_preload)

PLAIN = {
    "dataset_reader": {"type": "text_classification_json"},
    "model": {"type": "basic_classifier", "embedding_dim": 16, "encoder": {"type": "boe"}},
    "trainer": {"num_epochs": 1},
    "distributed": {"cuda_devices": [-1, -1]},
}


def preloads_compiler(config: dict) -> bool:
    """What the fork server ends up preloading: the compiler the parent lists, or the one the strategy asks for."""
    import_builtins()  # as the fork server's preload did before it asks
    preload = worker_preload(config)
    assert preload[0] == PRELOAD
    if PRELOAD_FOR_STRATEGY in preload:
        return strategy_imports_compiler(configured_strategy(config))
    return PRELOAD_COMPILER in preload


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
    assert not preloads_compiler(config)


@pytest.mark.parametrize("config", [
    with_(trainer={"compile": True}),
    with_(distributed={"strategy": {"type": "fsdp"}}),
    with_(distributed={"strategy": {"type": "my_own_strategy"}}),
    with_(distributed={"tensor_parallel_size": 2}),
    with_(distributed={"pipeline_parallel_size": 2}),
    with_(dataset_reader={"tokenizer": {"type": "pretrained_transformer", "model_name": "some/model"}}),
    with_(model={"type": "transformer_masked_language_model", "tokenizer_name": "some/model"}),
    with_(trainer={"callbacks": [{"type": "x", "nested": [{"model_name": "m"}]}]}),
], ids=["compile", "fsdp", "user-strategy", "tensor-parallel", "pipeline", "pretrained-tokenizer", "mlm", "nested"])
def test_workers_that_will_import_the_compiler_get_it_preloaded(config):
    assert preloads_compiler(config)


def test_the_parent_decides_what_the_config_says_and_asks_the_strategy_only_for_the_rest():
    assert worker_preload(with_(trainer={"compile": True})) == [PRELOAD, PRELOAD_COMPILER]
    assert worker_preload(with_(distributed={"strategy": {"type": "fsdp"}})) == [PRELOAD, PRELOAD_FOR_STRATEGY]


def test_the_strategy_says_whether_it_imports_the_compiler_not_its_name(monkeypatch):
    from distrain.distributed.strategies.ddp import DistributedDataParallelStrategy

    config = with_(distributed={"strategy": {"type": "ddp"}})
    assert not preloads_compiler(config)
    monkeypatch.setattr(DistributedDataParallelStrategy, "imports_compiler", True)
    assert preloads_compiler(config)


def test_a_malformed_block_leaves_the_decision_to_validation():
    """The fork server starts before the config is validated: a wrong shape must not raise here."""
    assert not preloads_compiler({"trainer": "oops", "distributed": ["x"]})
    assert preloads_compiler({"distributed": {"strategy": "fsdp", "tensor_parallel_size": "2"}})
    assert preloads_compiler({"distributed": {"strategy": {"type": ["fsdp"]}}})
