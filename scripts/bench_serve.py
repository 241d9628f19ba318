"""Throughput and latency of ``distrain serve`` with and without dynamic batching, on the MiniLM drug-review model.

Starts the server (``--port 0 --port-file``) on the archive, checks that 200 reviews sent by 32 concurrent
clients get the answers of ``distrain predict`` (same labels, probabilities within 1e-5), then drives it with a
closed-loop asyncio client (httpx): CLIENTS concurrent clients for DURATION seconds, once batched (the
defaults) and once with ``--max-batch-size 1``, then one client alone against each: both servers run at
once and are measured in alternating rounds, so load drift on a shared machine hits both figures alike. Prints requests/s, p50 and
p99 latency, non-200 answers and the mean batch size (from /metrics) per run, and last
``batched_vs_unbatched=<requests/s ratio>``.

Before that last line it prints what batching can give at best on this machine, the model alone in this
process (no HTTP, no queue): the same reviews predicted one at a time and in length-sorted batches of 32 (so
next to no padding), in alternating rounds, as ``model_only_sorted_batches_vs_one_by_one=<records/s ratio>``.
On a CPU the model's cost is mostly arithmetic that batching does not reduce, so the server's ratio can pass
this one only by what it spends per batch outside the model (thread hand-offs, small next to a request's
model time); ``batched_server_vs_model_only_sorted=`` is the batched server's requests/s over the model-alone
sorted batches' records/s: what the server keeps of that ceiling.

Without ``--archive`` it trains a short MiniLM run first (200 reviews, 1 epoch: the model's accuracy does not
matter here, only its cost per request), kept in ``runs/bench_serve_minilm`` for the next time.

Run: /work/bin/cpuslot --all .venv/bin/python scripts/bench_serve.py [--archive A] [--duration 20] [--quick]

``--quick`` (a smoke run): without ``--archive``, not MiniLM but configs/drug_reviews_boe.jsonnet (a bag of
embeddings, 1 epoch on 200 reviews) trained in a temporary folder, on data prepared there; the check on 16 reviews;
the many-clients pair only (8 clients, 0.5 s after a 0.5 s warm-up, 1 round; no one-client pair), and the model
alone on 32 reviews, 1 round; the check's server (the default flags) is the pair's batched server (started once).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import ROOT, environment, example_data, run_distrain

DEFAULT_RUN = ROOT / "runs" / "bench_serve_minilm"


def distrain(*args: str, **kwargs) -> subprocess.CompletedProcess:
    """``distrain ARGS`` with this checkout, offline, its output shown unless captured; exits on failure."""
    return run_distrain(args, environment(HF_HUB_OFFLINE="1"), capture=False, **kwargs)


def data_dir(root: Path = ROOT) -> Path:
    data = root / "data" / "drug_reviews"
    if not (data / "validation.jsonl").exists():
        subprocess.run([sys.executable, str(ROOT / "scripts" / "prepare_data.py"), "--only", "drug_reviews"], check=True,
                       cwd=root)
    return data


def train_short_archive(run: Path, data: Path | None = None, quick: bool = False) -> Path:
    data = data or data_dir()
    overrides = {
        "train_data_path": str(data / "train.jsonl"), "validation_data_path": str(data / "validation.jsonl"),
        "dataset_reader.max_instances": 200, "trainer.num_epochs": 1, "trainer.progress_bar": False,
        "distributed": None, "data_loader.batch_size": 16,
    }
    # quick: a bag of embeddings (a MiniLM step, its checkpoint and its answers take seconds here)
    config = "drug_reviews_boe.jsonnet" if quick else "drug_reviews_minilm.jsonnet"
    if quick:
        overrides.pop("data_loader.batch_size")
    print(f"training a short {config} archive in {run} (no --archive given)", flush=True)
    distrain("train", str(ROOT / "configs" / config), "-s", str(run), "--force", "-o", json.dumps(overrides), check=True)
    return run / "model.tar.gz"


class Server:
    def __init__(self, archive: Path, flags: list[str], folder: Path) -> None:
        port_file = folder / f"port-{time.monotonic_ns()}"
        self.log = open(folder / "server.log", "a")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "distrain", "serve", str(archive), "--port", "0", "--port-file", str(port_file), *flags],
            stdout=self.log, stderr=subprocess.STDOUT, env=environment(HF_HUB_OFFLINE="1"))
        deadline = time.monotonic() + 300
        while not port_file.exists():
            self._check(deadline)
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{port_file.read_text().strip()}"
        import httpx

        while True:
            self._check(deadline)
            try:
                if httpx.get(self.url + "/ready", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)

    def _check(self, deadline: float) -> None:
        if self.process.poll() is not None:
            raise SystemExit(f"the server exited with {self.process.returncode}; see {self.log.name}")
        if time.monotonic() > deadline:
            raise SystemExit("the server did not become ready in 300 s")

    def batch_stats(self) -> tuple[float, float]:
        import httpx

        values = {}
        for line in httpx.get(self.url + "/metrics", timeout=10).text.splitlines():
            for name in ("distrain_batch_size_sum", "distrain_batch_size_count"):
                if line.startswith(name + " "):
                    values[name] = float(line.split()[1])
        return values.get("distrain_batch_size_sum", 0.0), values.get("distrain_batch_size_count", 0.0)

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(120)
        self.log.close()
        return status


async def closed_loop(url: str, texts: list[str], clients: int, seconds: float) -> tuple[list[float], list[int]]:
    """``clients`` clients, each sending its next request as soon as the last is answered, for ``seconds``."""
    import httpx

    latencies: list[float] = []
    statuses: list[int] = []
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        end = time.perf_counter() + seconds

        async def worker(offset: int) -> None:
            i = offset
            while time.perf_counter() < end:
                started = time.perf_counter()
                response = await client.post(url + "/predict", json={"text": texts[i % len(texts)]})
                latencies.append(time.perf_counter() - started)
                statuses.append(response.status_code)
                i += clients

        await asyncio.gather(*(worker(k) for k in range(clients)))
    return latencies, statuses


async def send_all(url: str, records: list[dict], clients: int) -> list[tuple[int, dict]]:
    import httpx

    answers: list = [None] * len(records)
    queue = iter(range(len(records)))
    async with httpx.AsyncClient(timeout=120) as client:
        async def worker() -> None:
            for i in queue:
                response = await client.post(url + "/predict", json=records[i])
                answers[i] = (response.status_code, response.json())

        await asyncio.gather(*(worker() for _ in range(clients)))
    return answers


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure_pair(archive: Path, flags: dict[str, list[str]], texts: list[str], clients: int, seconds: float,
                 folder: Path, rounds: int = 5, warmup: float = 3.0,
                 running: dict[str, Server] | None = None) -> dict[str, dict]:
    """Both servers up at once, measured in alternating rounds (``seconds`` each in all), so a change in
    the machine's load shows in both figures rather than in their ratio. ``running``: servers already
    started with those flags (by name), measured (and stopped) here instead of new ones."""
    running = running or {}
    servers = {name: running.get(name) or Server(archive, server_flags, folder) for name, server_flags in flags.items()}
    pooled: dict[str, tuple[list[float], list[int]]] = {name: ([], []) for name in servers}
    try:
        for name, server in servers.items():
            asyncio.run(closed_loop(server.url, texts, clients, min(warmup, seconds)))  # warm-up
        before = {name: server.batch_stats() for name, server in servers.items()}
        for _ in range(rounds):
            for name, server in servers.items():
                latencies, statuses = asyncio.run(closed_loop(server.url, texts, clients, seconds / rounds))
                pooled[name][0].extend(latencies)
                pooled[name][1].extend(statuses)
        after = {name: server.batch_stats() for name, server in servers.items()}
    finally:
        exits = {name: server.stop() for name, server in servers.items()}
    results = {}
    for name, (latencies, statuses) in pooled.items():
        batches = after[name][1] - before[name][1]
        result = {
            "rps": len(latencies) / seconds,
            "p50_ms": 1000 * statistics.median(latencies),
            "p99_ms": 1000 * percentile(latencies, 0.99),
            "non_200": sum(s != 200 for s in statuses),
            "mean_batch": (after[name][0] - before[name][0]) / batches if batches else float("nan"),
            "exit": exits[name],
        }
        print(f"{name}: clients={clients} requests={len(latencies)} requests_per_s={result['rps']:.1f} "
              f"p50_ms={result['p50_ms']:.1f} p99_ms={result['p99_ms']:.1f} non_200={result['non_200']} "
              f"mean_batch_size={result['mean_batch']:.2f} server_exit={result['exit']}", flush=True)
        results[name] = result
    return results


def check_equal_to_predict(archive: Path, records: list[dict], folder: Path, server: Server | None = None) -> None:
    """``records`` served by a server with the default flags (``server`` if given, left running; else one
    started and stopped here) get the answers of ``distrain predict``."""
    data = folder / "check.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    # the short training run capped its reader at 200 instances: lift the cap so every record is predicted
    distrain("predict", str(archive), str(data), "--output-file", str(folder / "check.out"),
             "-o", json.dumps({"dataset_reader.max_instances": None}), check=True, capture_output=True)
    expected = [json.loads(line) for line in (folder / "check.out").read_text().splitlines()]
    own = server is None
    server = server or Server(archive, [], folder)
    try:
        answers = asyncio.run(send_all(server.url, records, 32))
    finally:
        if own:
            server.stop()
    non_200 = sum(status != 200 for status, _ in answers)
    labels = sum(body.get("label") == want["label"] for (_, body), want in zip(answers, expected))
    worst = max(abs(a - b) for (_, body), want in zip(answers, expected) for a, b in zip(body["probs"], want["probs"]))
    print(f"check: {len(records)} reviews from 32 clients: non_200={non_200} same_labels={labels}/{len(records)} "
          f"max_prob_difference={worst:.2g}", flush=True)
    if non_200 or labels != len(records) or worst > 1e-5:
        raise SystemExit("served answers differ from distrain predict")


def model_only_ceiling(archive: Path, texts: list[str], batch_size: int = 32, rounds: int = 3) -> tuple[float, float]:
    """Records/s of the archive's model alone on ``texts``: (length-sorted batches over one record at a
    time, the length-sorted batches' records/s)."""
    import numpy as np

    from distrain.serving.batcher import padded_tokens
    from distrain.serving.predictor import Predictor

    predictor = Predictor.from_archive(str(archive))
    prepared = [predictor.prepare({"text": text}) for text in texts]
    by_length = sorted(prepared, key=lambda record: record.length)
    predictor.predict(by_length[:batch_size])  # warm-up

    def records_per_s(records: list, size: int) -> float:
        started = time.perf_counter()
        for first in range(0, len(records), size):
            predictor.predict(records[first:first + size])
        return len(records) / (time.perf_counter() - started)

    alone, batched = [], []
    for _ in range(rounds):
        alone.append(records_per_s(prepared, 1))
        batched.append(records_per_s(by_length, batch_size))
    lengths = [record.length for record in by_length]
    padded = sum(padded_tokens(lengths[first:first + batch_size]) for first in range(0, len(lengths), batch_size))
    padding = padded / sum(lengths) - 1
    print(f"model_only: records={len(prepared)} mean_tokens={np.mean(lengths):.1f} "
          f"one_by_one_per_s={statistics.median(alone):.1f} "
          f"sorted_batches_of_{batch_size}_per_s={statistics.median(batched):.1f} "
          f"padding_per_token={padding:.3f} (medians of {rounds} alternating rounds)", flush=True)
    return statistics.median(b / a for a, b in zip(alone, batched)), statistics.median(batched)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archive", type=Path, default=None, help="a model.tar.gz (default: train a short MiniLM one)")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds per measured run (default 20)")
    parser.add_argument("--clients", type=int, default=32, help="concurrent clients (default 32)")
    parser.add_argument("--quick", action="store_true", help="a bag-of-embeddings archive, the check on 16 reviews by the "
                        "pair's batched server, the many-clients pair only, 0.5 s: a smoke run")
    parser.add_argument("--batched-flags", default="", help='extra flags for the batched server, e.g. "--max-padding 0.1"')
    parser.add_argument("--skip-check", action="store_true", help="skip the comparison with distrain predict")
    parser.add_argument("--skip-model-only", action="store_true",
                        help="skip the in-process bound on what batching can give")
    args = parser.parse_args()
    seconds, rounds, checked, modelled = (0.5, 1, 16, 32) if args.quick else (args.duration, 5, 200, 512)
    if args.quick:
        args.clients = 8

    with tempfile.TemporaryDirectory(prefix="bench-serve-") as folder:
        folder = Path(folder)
        archive = args.archive
        data = data_dir(example_data(folder / "examples", "drug_reviews")) if args.quick else data_dir()
        if archive is None and args.quick:
            archive = train_short_archive(folder / "minilm", data, quick=True)
        elif archive is None:
            archive = DEFAULT_RUN / "model.tar.gz"
            if not archive.exists():
                archive = train_short_archive(DEFAULT_RUN)
        records = [json.loads(line) for line in (data / "validation.jsonl").read_text().splitlines()]
        texts = [r["text"] for r in records]
        print(f"archive={archive} torch_threads=default cores={os.cpu_count()}", flush=True)
        # quick: the check's server (the default flags) is the batched one measured next, one start fewer
        shared = ({"batched": Server(archive, [], folder)} if args.quick and not args.skip_check
                  and not args.batched_flags.split() else {})
        if not args.skip_check:
            try:
                check_equal_to_predict(archive, [{"text": t} for t in texts[:checked]], folder, shared.get("batched"))
            except BaseException:
                for server in shared.values():
                    server.stop()
                raise
        many = measure_pair(archive, {"batched": args.batched_flags.split(), "unbatched": ["--max-batch-size", "1"]}, texts, args.clients,
                            seconds, folder, rounds, warmup=min(3.0, seconds), running=shared)
        alone = None if args.quick else measure_pair(
            archive, {"batched_1_client": args.batched_flags.split(), "unbatched_1_client": ["--max-batch-size", "1"]}, texts,
            1, seconds, folder)
        if not args.skip_model_only:
            ceiling, sorted_per_s = model_only_ceiling(archive, texts[:modelled], rounds=1 if args.quick else 3)
            print(f"model_only_sorted_batches_vs_one_by_one={ceiling:.2f}", flush=True)
            # the server's batched throughput against the most the model allows: HTTP, queue and padding included
            print(f"batched_server_vs_model_only_sorted={many['batched']['rps'] / sorted_per_s:.3f}", flush=True)
    if alone is not None:
        print(f"one_client_p50_difference_ms={alone['batched_1_client']['p50_ms'] - alone['unbatched_1_client']['p50_ms']:.2f}")
    print(f"batched_vs_unbatched={many['batched']['rps'] / many['unbatched']['rps']:.2f}")


if __name__ == "__main__":
    main()
