"""scripts/bench_llm.py: its pure helpers, the FLOP estimate, and that the model the peers build is the one
distrain builds from the same settings (the Trainer itself needs accelerate, which CI does not install)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from support.paths import ROOT

SCRIPT = ROOT / "scripts" / "bench_llm.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_llm", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_llm"] = module
    spec.loader.exec_module(module)
    return module


def test_the_step_flops_are_six_n_t_plus_the_attention_term(bench):
    assert bench.step_flops(parameters=1000, layers=2, hidden=8, sequence=4, tokens=10) == 6 * 1000 * 10 + 12 * 2 * 8 * 4 * 10


def test_the_ratio_is_distrain_over_the_faster_peer_on_as_many_workers(bench):
    speeds = {"distrain_2": 300.0, "handwritten_2": 250.0, "hf_trainer_2": 400.0, "distrain_1": 100.0,
              "handwritten_1": 80.0}
    assert bench.ratio_vs_best_peer(speeds, 2) == ("hf_trainer", 0.75)
    assert bench.ratio_vs_best_peer(speeds, 1) == ("handwritten", 1.25)  # a peer that could not run is left out


def test_the_40m_llama_is_about_40m_and_the_peers_build_distrains_model(bench):
    import torch

    from distrain.data.vocabulary import Vocabulary
    from distrain.models.causal_language_model import CausalLanguageModel

    settings = bench.model_settings(bench.LLAMA_40M, 32)
    assert 38e6 < bench.count_parameters(settings) < 42e6
    assert 280e6 < bench.count_parameters(bench.model_settings(bench.LLAMA_300M, 32)) < 320e6
    theirs = bench.build_llama(settings)
    torch.manual_seed(bench.SEED)
    ours = CausalLanguageModel(Vocabulary(), config={**bench.LLAMA_40M, "max_position_embeddings": 32},
                               tokenizer_name=bench.TOKENIZER).transformer
    assert type(theirs) is type(ours) and theirs.config.to_dict() == ours.config.to_dict()
    assert all(torch.equal(a, b) for a, b in zip(theirs.state_dict().values(), ours.state_dict().values()))


def test_the_benchmark_config_is_a_valid_distrain_experiment(bench):
    from distrain.experiment.plan import resolve_experiment
    from distrain.plugins import import_plugins

    import_plugins()
    for workers in (1, 2):
        job = {"sequence": 32, "blocks": 8, "architecture": bench.LLAMA_40M, "global_batch": 4, "processes": workers}
        experiment = resolve_experiment(bench.distrain_config(job)).build()
        assert experiment.data_loader.batch_size * workers == 4


def test_the_bf16_config_is_a_valid_distrain_experiment_in_bfloat16(bench):
    from distrain.experiment.plan import resolve_experiment
    from distrain.plugins import import_plugins

    import_plugins()
    job = {"sequence": 32, "blocks": 8, "architecture": bench.LLAMA_40M, "global_batch": 4, "processes": 2,
           "precision": "bf16", "loss_chunk_size": 64}
    config = bench.distrain_config(job)
    assert config["trainer"]["param_dtype"] == "bfloat16" and config["model"]["loss_chunk_size"] == 64
    resolve_experiment(config).build()
    assert "param_dtype" not in bench.distrain_config({**job, "precision": "fp32"})["trainer"]


def test_bf16_vs_fp32_is_distrains_median_ratio_with_two_workers_last(bench):
    runs = {"distrain_1": [100.0, 120.0, 110.0], "distrain_fp32_1": [50.0, 60.0, 40.0],
            "distrain_2": [300.0], "distrain_fp32_2": [100.0]}
    figures = {name: [{"tokens_per_s": value} for value in values] for name, values in runs.items()}
    medians = {name: sorted(values)[len(values) // 2] for name, values in runs.items()}
    lines = bench.bf16_vs_fp32_lines(figures, medians, [2, 1])
    assert lines[-1] == "bf16_vs_fp32=3.000"
    assert "bf16_vs_fp32_1_worker=2.200" in lines  # 110 / 50
    assert "1 worker(s): distrain bf16 / fp32 per round: 2.000 2.000 2.750" in lines
