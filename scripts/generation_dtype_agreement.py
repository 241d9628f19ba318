"""Serving in bfloat16 against float32: how many greedy completions stay the same, and the perplexity.

``distrain serve --dtype bfloat16`` casts the weights once at load; this measures what that changes. On
an archive (default: ``bench_generate``'s, ``LLAMA_40M`` after 2 optimizer steps on Shakespeare, trained
into ``runs/bench_generate_llama`` if missing; ``--archive`` picks another), in this process, with one
torch thread (as the server's decode thread):

1. ``--requests`` (64) greedy requests, ``bench_generate``'s workload (prompts of 8-128 tokens of
   Shakespeare) with ``max_tokens`` 8-32 (``--max-tokens``; bench_generate draws 16-128, cut here so the
   bfloat16 runs, slow on a CPU without bfloat16 matrix instructions, keep the whole run under 5 minutes
   once the archive exists, on a 2-core AVX2 EPYC), run four ways through the server's running batch
   (``Predictor.make_batch(max_prefill_tokens=2048)``) under
   :class:`~distrain.generation.admission.Admissions`, rows joining and leaving as in the server:
   ``fp32 batched`` and ``bf16 batched`` (``Limits(max_batch_size=32)``), ``bf16 one at a time`` and
   ``fp32 one at a time`` (``Limits(max_batch_size=1)``). float32 promises the same tokens whatever the
   batch: fp32 batched against fp32 one at a time is counted (it should be all of them). Reported: the
   share of requests whose bf16 batched completion equals fp32's token for token, equals bf16 one at a
   time's (kernels may round differently by batch size), and of bf16 one at a time equal to fp32's; and
   for the pairs that differ, the mean first diverging position (the length of their common prefix).
2. Perplexity in each dtype, teacher-forced: the model's logits (cast to float32) and the cross-entropy
   of each next token, over ``--blocks`` (16) blocks of 256 tokens of held-out Shakespeare: the first
   tokens of the corpus's last files in sorted order (the archive was trained on the first 16 blocks of
   the first file). Printed: ``perplexity float32=... bfloat16=... relative_difference=...``
   ((bfloat16 - float32) / float32).

Each part prints its elapsed time, and how many distinct tokens fp32 generated: the 2-step bench archive
is nearly untrained and answers every prompt with one token ("."), which every dtype agrees on. Other
models: ``--steps N`` trains the same Llama for N steps instead (8 blocks a step from the corpus's first
files, kept in ``runs/generation_dtype_llama_N``; 32 steps still answer with one token), ``--steps 1 --lr
0`` keeps its random init (diverse greedy tokens with small logit margins: a worst case for rounding), and
``--test-model`` takes the test suite's trained model (tests/support/serving.py's cycle LM: a 2 x 32 Llama
of context 64 trained on lines of words in a cyclic order, in a temporary folder) with 64 prompts of 3-10
words from a cycle corpus drawn with another seed, ``max_tokens`` 8-32 (the context caps them) and
perplexity blocks of 32 tokens of that corpus.

Last line: ``bf16_equal_to_fp32_share=<share of requests whose bf16 batched completion equals fp32
batched's>``; the run then exits 1 if any fp32 batched completion differs from fp32 one at a time's.

    python scripts/generation_dtype_agreement.py                 # the bench archive, 64 requests, 16 blocks
    python scripts/generation_dtype_agreement.py --archive runs/x/model.tar.gz --max-tokens 16 128
    python scripts/generation_dtype_agreement.py --quick         # a smoke run: a tiny Llama (bench_llm's
                                                                 # LLAMA_TINY) trained in a temporary folder,
                                                                 # 8 requests of 4-8 tokens, 2 blocks
    python scripts/generation_dtype_agreement.py --test-model    # the test suite's cycle LM (~1 minute)
    python scripts/generation_dtype_agreement.py --steps 1 --lr 0   # LLAMA_40M at its random init
"""

from __future__ import annotations

import argparse
import glob
import math
import tempfile
import time
from pathlib import Path

from bench_generate import CORPUS, DEFAULT_RUN, TOKENIZER, train_archive, workload

DTYPES = ("float32", "bfloat16")
BLOCK = 256


def completions(predictor, prompts: list[list[int]], budgets: list[int], rows_at_most: int) -> list[list[int]]:
    """The greedy tokens of each request, run through the server's batch and admission."""
    import torch

    from distrain.generation.admission import Admissions, Limits
    from distrain.generation.decoding import GenerationSettings, Request

    requests = [Request(list(prompt), GenerationSettings(max_new_tokens=budget), number)
                for number, (prompt, budget) in enumerate(zip(prompts, budgets))]
    scheduler = Admissions(predictor.make_batch(max_prefill_tokens=2048),
                           Limits(max_batch_size=rows_at_most, max_prefill_tokens=2048))
    for request in requests:
        scheduler.submit(request)
    with torch.inference_mode():
        while not scheduler.idle:
            scheduler.step()
    return [request.tokens for request in requests]


def common_prefix(a: list[int], b: list[int]) -> int:
    for position, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return position
    return min(len(a), len(b))


def agreement(name: str, ours: list[list[int]], theirs: list[list[int]]) -> float:
    """Print and return the share of equal completions, with the mean first diverging position of the others."""
    differing = [common_prefix(a, b) for a, b in zip(ours, theirs) if a != b]
    equal = len(ours) - len(differing)
    mean = f"{sum(differing) / len(differing):.1f}" if differing else "-"
    print(f"{name}: equal={equal}/{len(ours)} share={equal / len(ours):.3f} "
          f"mean_first_divergence_where_different={mean} (over {len(differing)})", flush=True)
    return equal / len(ours)


def shakespeare_ids(count: int) -> list[int]:
    """At least ``count`` ids from the corpus's last files in sorted order (the bench archive trains on the first
    file's first blocks), tokenized as the packed_text reader does."""
    from distrain.pretrained import load_tokenizer, resolve_package_path

    tokenizer = load_tokenizer(TOKENIZER)
    ids: list[int] = []
    for path in reversed(sorted(glob.glob(resolve_package_path(CORPUS)))):
        text = Path(path).read_text(encoding="utf-8", errors="replace")[:(count - len(ids)) * 8 + 1000]
        ids += tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"]
        if len(ids) >= count:
            break
    return ids


def blocks_of(ids: list[int], count: int, length: int) -> list[list[int]]:
    return [ids[start:start + length] for start in range(0, count * length, length)]


def longer_trained(steps: int, lr: float = 1e-3) -> Path:
    """``bench_generate``'s archive trained for ``steps`` optimizer steps instead of 2 (``8 * steps`` blocks of the
    corpus's first files, one epoch), kept in ``runs/generation_dtype_llama_<steps>``: the 2-step archive is
    nearly untrained (it answers every prompt with one token, so its agreement says little)."""
    import json

    from bench_llm import LLAMA_40M
    from bench_serve import distrain

    run = DEFAULT_RUN.parent / (f"generation_dtype_llama_{steps}" + (f"_lr{lr:g}" if lr != 1e-3 else ""))
    if (run / "model.tar.gz").exists():
        return run / "model.tar.gz"
    config = {
        "dataset_reader": {"type": "packed_text", "tokenizer_name": TOKENIZER, "sequence_length": BLOCK,
                           "max_instances": 8 * steps},
        "train_data_path": CORPUS,
        "model": {"type": "causal_language_model", "tokenizer_name": TOKENIZER,
                  "config": {**LLAMA_40M, "max_position_embeddings": 512}},
        "data_loader": {"batch_size": 8},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adamw", "lr": lr}, "progress_bar": False},
    }
    run.mkdir(parents=True, exist_ok=True)
    (run.parent / f"{run.name}.json").write_text(json.dumps(config))
    print(f"training {run.name} ({steps} steps) in {run}", flush=True)
    distrain("train", str(run.parent / f"{run.name}.json"), "-s", str(run), "--force", check=True)
    return run / "model.tar.gz"


def cycle_model(folder: Path) -> tuple[Path, list[dict], list[int]]:
    """The test suite's trained model (tests/support/serving.py's cycle LM, context 64), 64 request bodies (the
    first 3-10 words of lines of a cycle corpus it was not trained on) and that corpus's ids."""
    import random
    import sys

    from harness import ROOT

    sys.path.insert(0, str(ROOT / "tests"))
    from support.serving import TOKENIZER as CYCLE_TOKENIZER
    from support.serving import train_cycle_lm, write_cycle_corpus

    from distrain.pretrained import load_tokenizer

    archive = train_cycle_lm(folder / "cycle")
    lines = (write_cycle_corpus(folder / "held_out", seed=11) / "cycle.txt").read_text().splitlines()
    rng = random.Random(0)
    bodies = [{"prompt": " ".join(line.split()[:rng.randint(3, 10)]), "max_tokens": rng.randint(8, 32)}
              for line in rng.sample(lines, 64)]
    ids = load_tokenizer(CYCLE_TOKENIZER)("\n".join(lines), add_special_tokens=False)["input_ids"]
    return archive, bodies, ids


def perplexity(predictor, blocks: list[list[int]], per_pass: int = 4) -> float:
    """exp of the mean cross-entropy (float32, on the model's logits) of each block's next tokens."""
    import torch

    total, count = 0.0, 0
    with torch.inference_mode():
        for start in range(0, len(blocks), per_pass):
            ids = torch.tensor(blocks[start:start + per_pass])
            logits = predictor.model.transformer(input_ids=ids).logits.float()
            total += torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                                                       ids[:, 1:].reshape(-1), reduction="sum").item()
            count += ids[:, 1:].numel()
    return math.exp(total / count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archive", type=Path, default=None, help="a causal-LM model.tar.gz (default: the bench's, "
                        "trained if missing)")
    parser.add_argument("--requests", type=int, default=64)
    parser.add_argument("--max-tokens", type=int, nargs=2, default=(8, 32), metavar=("LOW", "HIGH"),
                        help="range of the requests' max_tokens (default 8 32)")
    parser.add_argument("--blocks", type=int, default=16, help="held-out blocks of 256 tokens for the perplexity")
    parser.add_argument("--steps", type=int, default=None, help="the bench archive trained for this many optimizer "
                        "steps instead of 2 (8 blocks a step; kept in runs/generation_dtype_llama_STEPS)")
    parser.add_argument("--lr", type=float, default=1e-3, help="with --steps: the learning rate (default 1e-3; "
                        "0 keeps the random init, whose small logit margins make a worst case for rounding)")
    parser.add_argument("--test-model", action="store_true", help="the test suite's cycle LM (trained in a temporary "
                        "folder, ~10 s) instead: prompts of its held-out corpus, perplexity blocks of 32 tokens")
    parser.add_argument("--quick", action="store_true", help="a tiny Llama (bench_llm's LLAMA_TINY) trained in a "
                        "temporary folder, 8 requests of 4-8 tokens, 2 perplexity blocks: a smoke run")
    args = parser.parse_args()
    import torch

    from distrain.serving.predictor import Predictor

    torch.set_num_threads(1)  # as the server's decode thread
    if args.quick:
        args.requests, args.max_tokens, args.blocks = 8, (4, 8), 2
    started = time.perf_counter()
    block, ids = BLOCK, None
    with tempfile.TemporaryDirectory(prefix="generation-dtype-") as folder:
        archive = args.archive
        if args.test_model:
            archive, bodies, ids = cycle_model(Path(folder))
            bodies, block = bodies[:args.requests], 32
        elif archive is None and args.steps:
            archive = longer_trained(args.steps, args.lr)
        elif archive is None and args.quick:
            from bench_llm import LLAMA_TINY

            archive = train_archive(Path(folder) / "tiny", LLAMA_TINY, sequence=32)
        elif archive is None:
            archive = DEFAULT_RUN / "model.tar.gz"
            if not archive.exists():
                archive = train_archive(DEFAULT_RUN)
        predictors = {dtype: Predictor.from_archive(str(archive), dtype=dtype) for dtype in DTYPES}
    if ids is None:
        bodies = workload(args.requests, max_tokens=tuple(args.max_tokens))
        ids = shakespeare_ids(args.blocks * block)
    prompts = [predictors["float32"].prompt_ids(body["prompt"]) for body in bodies]
    budgets = [body["max_tokens"] for body in bodies]
    print(f"archive={archive} requests={args.requests} prompts of {min(map(len, prompts))}-{max(map(len, prompts))} "
          f"tokens, max_tokens {min(budgets)}-{max(budgets)}, greedy, threads=1 "
          f"(ready in {time.perf_counter() - started:.1f} s)", flush=True)

    runs = {}
    for name, dtype, rows in (("fp32_batched", "float32", 32), ("bf16_batched", "bfloat16", 32),
                              ("bf16_one_at_a_time", "bfloat16", 1), ("fp32_one_at_a_time", "float32", 1)):
        began = time.perf_counter()
        runs[name] = completions(predictors[dtype], prompts, budgets, rows)
        tokens = sum(map(len, runs[name]))
        print(f"{name}: {tokens} tokens in {time.perf_counter() - began:.1f} s", flush=True)
    distinct = {token for tokens in runs["fp32_batched"] for token in tokens}
    print(f"fp32 batched: {len(distinct)} distinct generated tokens, "
          f"{sum(len(set(tokens)) == 1 for tokens in runs['fp32_batched'])}/{args.requests} completions one token "
          f"repeated (a model that says one thing agrees with itself trivially)", flush=True)
    fp32_promise = sum(a == b for a, b in zip(runs["fp32_batched"], runs["fp32_one_at_a_time"]))
    print(f"fp32 batched equal to fp32 one at a time: {fp32_promise}/{args.requests}", flush=True)
    share = agreement("bf16 batched vs fp32 batched", runs["bf16_batched"], runs["fp32_batched"])
    agreement("bf16 batched vs bf16 one at a time", runs["bf16_batched"], runs["bf16_one_at_a_time"])
    agreement("bf16 one at a time vs fp32 batched", runs["bf16_one_at_a_time"], runs["fp32_batched"])

    began = time.perf_counter()
    blocks = blocks_of(ids, args.blocks, block)
    perplexities = {dtype: perplexity(predictors[dtype], blocks) for dtype in DTYPES}
    relative = (perplexities["bfloat16"] - perplexities["float32"]) / perplexities["float32"]
    print(f"perplexity over {len(blocks)} held-out blocks of {block} tokens in {time.perf_counter() - began:.1f} s",
          flush=True)
    print(f"perplexity float32={perplexities['float32']:.4f} bfloat16={perplexities['bfloat16']:.4f} "
          f"relative_difference={relative:+.5f}", flush=True)
    print(f"elapsed {time.perf_counter() - started:.1f} s", flush=True)
    print(f"bf16_equal_to_fp32_share={share:.3f}")
    if fp32_promise != args.requests:  # after the figures: float32's promise broken fails the run (and --quick's test)
        raise SystemExit(f"float32 completions differ between batched and one at a time: "
                         f"{fp32_promise}/{args.requests} equal")


if __name__ == "__main__":
    main()
