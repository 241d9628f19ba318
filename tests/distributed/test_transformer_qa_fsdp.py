"""``transformer_qa`` under FSDP on 2 CPU processes ends within 1e-5 of one process on the same global batches
(batch_size per worker halved): a question's windows travel together, and the loss is a mean over questions.

The optimizer is SGD with momentum, not Adam: the QA head's bias and the last LayerNorm's bias shift every start
(end) logit of a window equally, which no softmax sees, so their true gradient is zero and what they get is float
noise that differs with padding and summation order; Adam divides that noise by its own size and moves them by
about ``lr`` per step in either direction (1.7e-3 apart after 6 steps here), which says nothing about FSDP."""

from __future__ import annotations

import pytest

from support.cli import run_cli
from support.configs import write_config
from support.distributed import final_metrics, max_weight_difference
from support.squad import squad_questions, write_squad, write_tiny_pretrained_bert

GLOBAL_BATCH = 4


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("qa_fsdp")
    bert = write_tiny_pretrained_bert(root / "bert")
    base = {
        "dataset_reader": {"type": "transformer_squad", "transformer_model_name": str(bert), "length_limit": 24,
                           "stride": 6},
        "train_data_path": str(write_squad(root / "train.json", squad_questions(10, seed=1, filler=2))),
        "validation_data_path": str(write_squad(root / "dev.json", squad_questions(4, seed=2, filler=2, start=50))),
        "vocabulary": {"type": "empty"},
        "model": {"type": "transformer_qa", "transformer_model_name": str(bert), "max_span_length": 4},
        # "auto" kernel: foreach on FSDP's DTensor shards (torch's fused SGD has no sharding rule for them)
        "trainer": {"num_epochs": 2, "optimizer": {"type": "sgd", "lr": 0.5, "momentum": 0.9},
                    "grad_norm": 1.0,
                    "progress_bar": False},
    }
    outputs = {}
    for name, workers in (("one", 1), ("fsdp", 2)):
        config = {**base, "data_loader": {"batch_size": GLOBAL_BATCH // workers}}
        if workers > 1:
            config["distributed"] = {"cuda_devices": [-1] * workers, "strategy": {"type": "fsdp"}}
        outputs[name] = root / name
        result = run_cli("train", str(write_config(root / f"{name}.json", config)), "-s", str(outputs[name]))
        assert result.returncode == 0, result.stderr[-3000:]
    outputs["bert"] = bert
    return outputs


def test_transformer_qa_under_fsdp_on_two_workers_matches_one_process(runs):
    difference = max_weight_difference(runs["one"], runs["fsdp"])
    print(f"max |weight difference| = {difference:.2e}")
    assert difference <= 1e-5
    one, fsdp = final_metrics(runs["one"]), final_metrics(runs["fsdp"])
    for key in ("training_loss", "validation_loss", "validation_per_instance_em", "validation_per_instance_f1"):
        assert fsdp[key] == pytest.approx(one[key], abs=1e-5), key
    from safetensors.torch import load_file

    from support.distributed import archived_weights

    initial = load_file(runs["bert"] / "model.safetensors")
    trained = archived_weights(runs["one"])
    moved = max(float((trained[f"encoder.transformer.{name}"] - value).abs().max()) for name, value in initial.items()
                if f"encoder.transformer.{name}" in trained)
    assert moved > 1e-3  # the runs trained: equal weights are not the initial ones
    assert "fsdp: 2 shard unit(s)" in (runs["fsdp"] / "out_worker0.log").read_text()
