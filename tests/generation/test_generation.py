"""``distrain predict`` on a causal-LM archive continues prompts: greedy completions are transformers'
own ``generate`` on the same weights, the same under tensor parallel 2; sampled ones are fixed by the
seed and the same on any number of workers; a prompt the context cannot hold is named by file and line.

The generation loop alone (:mod:`distrain.generation.decoding`) is checked against ``generate`` on
three architectures with prompts of different lengths batched together."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from support.cli import run_cli
from support.data import write_jsonl
from support.serving import LLAMA, TOKENIZER

PROMPTS = ["the cat", "a dog ran to the", "sat", "the big red", "on a mat"]


@pytest.fixture(scope="module")
def archive(cycle_lm_archive) -> Path:
    """A tiny Llama trained on the cycle corpus (one process), so its continuations depend on the prompt."""
    return cycle_lm_archive


@pytest.fixture(scope="module")
def prompts(tmp_path_factory) -> Path:
    return write_jsonl(tmp_path_factory.mktemp("prompts") / "prompts.jsonl", [{"prompt": p} for p in PROMPTS])


def predict(archive: Path, prompts: Path, output: Path, *options: str) -> list[dict]:
    result = run_cli("predict", str(archive), str(prompts), "--output-file", str(output), *options)
    assert result.returncode == 0, result.stderr[-3000:]
    return [json.loads(line) for line in output.read_text().splitlines()]


def transformers_greedy(archive: Path, max_new_tokens: int) -> list[str]:
    """What transformers' ``generate`` continues each prompt with, one prompt at a time, on the archive's weights."""
    from distrain.experiment.archive.format import load_archive
    from distrain.pretrained import load_tokenizer

    model = load_archive(archive).model.transformer
    tokenizer = load_tokenizer(TOKENIZER)
    completions = []
    for prompt in PROMPTS:
        ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]  # the tokenizer has no BOS
        out = model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                             max_new_tokens=max_new_tokens, do_sample=False, eos_token_id=tokenizer.sep_token_id,
                             pad_token_id=tokenizer.pad_token_id)[0, len(ids):].tolist()
        completions.append(tokenizer.decode([t for t in out if t != tokenizer.sep_token_id], skip_special_tokens=True))
    return completions


def test_greedy_completions_are_transformers_generate_on_one_process_and_under_tensor_parallel(archive, prompts, tmp_path):
    one = predict(archive, prompts, tmp_path / "one.jsonl", "--batch-size", "2")
    expected = transformers_greedy(archive, 12)
    print("\n".join(f"{p!r} -> {r['completion']!r} ({r['tokens']}, {r['finish_reason']})" for p, r in zip(PROMPTS, one)))
    assert [record["completion"] for record in one] == expected
    assert len({record["completion"] for record in one}) == len(PROMPTS)  # each continues its own prompt
    assert all(0 < record["tokens"] <= 12 and record["finish_reason"] in ("stop", "length") for record in one)
    split = predict(archive, prompts, tmp_path / "tp2.jsonl", "--batch-size", "2",
                    "-o", json.dumps({"distributed": {"cuda_devices": [-1, -1], "tensor_parallel_size": 2}}))
    assert split == one
    # this width-32 model attends eagerly unless asked: the compiled loop continues each prompt alike
    compiled = predict(archive, prompts, tmp_path / "compiled.jsonl", "--batch-size", "2",
                       "-o", json.dumps({"model.decode_attention": "compiled"}))
    assert compiled == one


def test_an_unknown_decode_attention_is_named_by_its_key_path(archive, prompts, tmp_path):
    result = run_cli("predict", str(archive), str(prompts), "--output-file", str(tmp_path / "out.jsonl"),
                     "-o", json.dumps({"model.decode_attention": "fused"}))
    assert result.returncode == 2 and "model.decode_attention" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "out.jsonl").exists()


def test_sampled_completions_follow_the_seed_on_any_number_of_workers(archive, prompts, tmp_path):
    sampling = {"model.generation.temperature": 1.0, "model.generation.top_p": 0.9, "model.generation.seed": 5}
    one = predict(archive, prompts, tmp_path / "one.jsonl", "-o", json.dumps(sampling))
    again = predict(archive, prompts, tmp_path / "ddp2.jsonl", "--batch-size", "1",
                    "-o", json.dumps({**sampling, "distributed": {"cuda_devices": [-1, -1]}}))
    other_seed = predict(archive, prompts, tmp_path / "seed6.jsonl", "-o",
                         json.dumps({**sampling, "model.generation.seed": 6}))
    greedy = predict(archive, prompts, tmp_path / "greedy.jsonl")
    assert again == one
    assert other_seed != one and one != greedy


def test_a_prompt_longer_than_the_context_is_named_by_file_and_line(archive, tmp_path):
    data = write_jsonl(tmp_path / "prompts.jsonl", [{"prompt": "the cat"}, {"prompt": " ".join(["word"] * 70)}])
    output = tmp_path / "out.jsonl"
    result = run_cli("predict", str(archive), str(data), "--output-file", str(output))
    assert result.returncode == 2
    assert f"{data}:2:" in result.stderr and "context of 64" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not output.exists()


def test_a_record_without_its_prompt_is_named_by_file_and_line(archive, tmp_path):
    data = write_jsonl(tmp_path / "prompts.jsonl", [{"prompt": "the cat"}, {"text": "no prompt"}])
    result = run_cli("predict", str(archive), str(data), "--output-file", str(tmp_path / "out.jsonl"))
    assert result.returncode == 2 and f"{data}:2: missing key 'prompt'" in result.stderr


# ------------------------------------------------------------------------------- the loop alone
@pytest.mark.parametrize("model_type", ["llama", "qwen2", "gpt2"])
def test_the_loop_continues_a_padded_batch_as_generate_continues_each_prompt(model_type):
    import transformers

    from distrain.generation.decoding import GenerationSettings, generate

    torch.manual_seed(0)
    sizes = ({"n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 64} if model_type == "gpt2" else
             {k: v for k, v in LLAMA.items() if k != "model_type"})
    config = transformers.AutoConfig.for_model(model_type, **sizes, vocab_size=100, bos_token_id=1, eos_token_id=5,
                                               pad_token_id=0)
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    prompts = [[1, 7, 8, 9, 10, 11], [1, 20, 21], [1, 30, 31, 32, 33, 34, 35, 36, 37]]
    ours = generate(model, prompts, GenerationSettings(max_new_tokens=12), {5}, pad_id=0, context_length=64)
    for prompt, continuation in zip(prompts, ours):
        theirs = model.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                                max_new_tokens=12, do_sample=False, eos_token_id=5, pad_token_id=0)
        assert continuation.tokens == theirs[0, len(prompt):len(prompt) + len(continuation.tokens)].tolist()
        assert continuation.finish_reason == ("stop" if continuation.tokens[-1] == 5 else "length")
        assert len(continuation.tokens) == 12 or continuation.finish_reason == "stop"


def test_the_context_caps_a_continuation_and_sampling_draws_from_the_top_p_set():
    from distrain.generation.decoding import GenerationSettings, choose_next, generate, generators_for

    class Counting(torch.nn.Module):
        """A 'model' that always predicts token 3 (never an end), to count how far generation goes."""

        def __init__(self) -> None:
            super().__init__()
            self.weight = torch.nn.Parameter(torch.zeros(1))

        def forward(self, input_ids, **_):
            logits = torch.full((*input_ids.shape, 8), -10.0)
            logits[..., 3] = 0.0
            return type("Output", (), {"logits": logits})()

    [capped] = generate(Counting(), [[1, 2, 2, 2]], GenerationSettings(max_new_tokens=50), {7}, 0, context_length=10)
    assert capped.tokens == [3] * 6 and capped.finish_reason == "length"
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]] * 400))
    settings = GenerationSettings(temperature=1.0, top_p=0.75, seed=1)
    drawn = choose_next(logits, settings, generators_for(settings, range(400)))
    assert set(drawn.tolist()) == {0, 1}  # 0.5 + 0.3 reach 0.75; the tail is never drawn
    assert 0.5 < drawn.eq(0).float().mean() < 0.75  # 0.5 / 0.8 = 0.625 of the draws
