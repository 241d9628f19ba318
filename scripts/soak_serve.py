"""Soak ``distrain serve`` under mixed, partly hostile load, then stop it with SIGTERM mid-load.

    .venv/bin/python scripts/soak_serve.py --minutes 10

A classifier archive and a causal-LM archive (trained here in seconds, or ``--classifier``/``--language-model``)
are served on loopback with an API key, a small queue and a small body limit, and for ``--minutes`` receive:
steady well-formed requests (predictions, completions, streamed completions), streams their clients drop after
the first chunk, malformed, mistyped, oversized and key-less bodies, slow senders dribbling their body, and
bursts past the queue (every window the same schedule). At the end requests are put in flight and both servers
get SIGTERM. It prints requests by status, connection resets, each server's RSS over time and p50/p99 per window
(``--window-s``, a minute by default), then one line per promise and exits 0 when all hold: no connection reset,
no 5xx but 503, RSS growth under 50 MB, the last window's p99 within 1.5x the first's, every request in flight
at SIGTERM answered and both servers exiting 0.
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
from dataclasses import dataclass, field
from pathlib import Path

import httpx

import harness
from chaos_job import classifier_config, language_model_config, write_data
from soak_clients import (Target, Tally, burst, classify, complete, malformed, slow_sender, stream,
                          unauthorized)

KEY = "soak-" + os.urandom(8).hex()
MAX_QUEUE = 16
MAX_BYTES = 65536
#: seconds a client keeps an idle connection: under the server's keep-alive (uvicorn's 5 s), see soak()
KEEPALIVE_S = 2.0
RSS_GROWTH_MB = 50
P99_RATIO = 1.5


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        print(f"error: {message} (see --help)", file=sys.stderr)
        raise SystemExit(2)


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=None, help="how long the load runs (required)")
    parser.add_argument("--window-s", type=float, default=60.0, help="latency and RSS are reported per window (60)")
    parser.add_argument("--clients", type=int, default=4, help="steady clients per server (default 4)")
    parser.add_argument("--classifier", type=Path, default=None, help="a classifier archive (default: trains one)")
    parser.add_argument("--language-model", type=Path, default=None, help="a causal-LM archive (default: trains one)")
    parser.add_argument("--work", type=Path, default=None, help="folder for archives and logs (default: temporary)")
    parser.add_argument("--quick", action="store_true", help="6 s of load in one window, 1 client: a smoke run")
    args = parser.parse_args(argv)
    if args.quick:
        args.minutes, args.window_s, args.clients = args.minutes or 0.1, 6.0, 1
    if args.minutes is None:
        parser.error("the following arguments are required: --minutes")
    if not args.minutes > 0:
        parser.error(f"--minutes must be positive, got {args.minutes}")
    if not 1 <= args.window_s <= args.minutes * 60:
        parser.error(f"--window-s must be between 1 and the soak's length ({args.minutes * 60:g} s)")
    if args.clients < 1:
        parser.error(f"--clients must be at least 1, got {args.clients}")
    for archive in (args.classifier, args.language_model):
        if archive is not None and not archive.is_file():
            parser.error(f"{archive}: archive not found")
    return args


# ------------------------------------------------------------------------------------ archives
def environment(work: Path) -> dict[str, str]:
    return harness.environment(DISTRAIN_CURVES="off", HF_HUB_OFFLINE="1", DISTRAIN_CACHE=str(work / "cache"))


def train(config: dict, folder: Path, work: Path) -> Path:
    (folder / "config.json").parent.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    harness.run_distrain(["train", folder / "config.json", "-s", folder / "run", "--force"], environment(work),
                         what="error: training the soak's archive", tail=2000)
    return folder / "run" / "model.tar.gz"


def archives(args: argparse.Namespace, work: Path) -> tuple[Path, Path]:
    classifier = args.classifier or train(classifier_config(write_data(work / "data"), 2, 0.0), work / "classifier", work)
    language_model = args.language_model or train(language_model_config(work / "lm", 3), work / "lm", work)
    return classifier, language_model


# ------------------------------------------------------------------------------------- servers
@dataclass
class Server:
    name: str
    archive: Path
    folder: Path
    process: subprocess.Popen | None = None
    url: str = ""
    rss: list[tuple[float, float]] = field(default_factory=list)

    def start(self, work: Path) -> Server:
        self.folder.mkdir(parents=True, exist_ok=True)
        port_file = self.folder / "port"
        port_file.unlink(missing_ok=True)
        log = open(self.folder / "server.log", "w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "distrain", "serve", str(self.archive), "--port", "0", "--port-file", str(port_file),
             "--max-queue", str(MAX_QUEUE), "--max-request-bytes", str(MAX_BYTES)],
            stdout=log, stderr=subprocess.STDOUT, env={**environment(work), "DISTRAIN_API_KEY": KEY})
        log.close()
        return self

    def wait_ready(self) -> Server:
        port_file = self.folder / "port"
        deadline = time.monotonic() + 180
        while not port_file.exists() or not self.ready():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"error: the {self.name} server did not start:\n{self.output()[-2000:]}")
            time.sleep(0.1)
        return self

    def ready(self) -> bool:
        self.url = f"http://127.0.0.1:{(self.folder / 'port').read_text().strip()}"
        try:
            return httpx.get(self.url + "/ready", headers=auth(), timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    def sample_rss(self, moment: float) -> None:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                self.rss.append((moment, int(line.split()[1]) / 1024))

    def output(self) -> str:
        return (self.folder / "server.log").read_text(errors="replace")


def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {KEY}"}


# ---------------------------------------------------------------------------------------- load
async def steady(client, target: Target, tally: Tally, stop: float, language_model: bool, offset: int) -> None:
    number = offset
    while time.monotonic() < stop:
        if not language_model:
            await classify(client, target, tally, number)
        elif number % 2:
            await complete(client, target, tally, number)
        else:
            await stream(client, target, tally, number, drop=False)
        number += 1
        await asyncio.sleep(0.05)


async def hostile(client, targets: dict[str, Target], tally: Tally, stop: float, window_s: float) -> None:
    """The same schedule every window: each second a malformed, a key-less body and a dropped stream; every
    5 s a slow sender; at a third and two thirds of the window a burst past each server's queue."""
    started, second, tasks = time.monotonic(), 0, []
    while time.monotonic() < stop:
        into = (time.monotonic() - started) % window_s
        target = targets["classifier" if second % 2 else "language_model"]
        tasks += [asyncio.create_task(malformed(client, target, tally, second, MAX_BYTES)),
                  asyncio.create_task(unauthorized(client, target, tally, second)),
                  asyncio.create_task(stream(client, targets["language_model"], tally, second, drop=True))]
        if second % 5 == 0:
            tasks.append(asyncio.create_task(slow_sender(targets["classifier"], tally, second)))
        if int(into) in (int(window_s / 3), int(2 * window_s / 3)):
            tasks += [asyncio.create_task(burst(client, targets["classifier"], tally, 3 * MAX_QUEUE, False)),
                      asyncio.create_task(burst(client, targets["language_model"], tally, 2 * MAX_QUEUE, True))]
        second += 1
        await asyncio.sleep(max(0.0, started + second - time.monotonic()))
    await asyncio.gather(*tasks)


async def watch(servers: list[Server], tally: Tally, started: float, stop: float, window_s: float) -> None:
    while time.monotonic() < stop:
        tally.window = int((time.monotonic() - started) // window_s)
        for server in servers:
            server.sample_rss(time.monotonic() - started)
        await asyncio.sleep(min(5.0, window_s / 4))


async def soak(servers: list[Server], seconds: float, window_s: float, clients: int) -> Tally:
    tally = Tally()
    targets = {server.name: Target(server.url, auth()) for server in servers}
    started = time.monotonic()
    stop = started + seconds
    # idle connections retire after 2 s, before the server's keep-alive (uvicorn's 5 s) closes them: reusing one
    # at the instant the server closes it reads as a reset that no server could avoid
    limits = httpx.Limits(max_connections=400, max_keepalive_connections=50, keepalive_expiry=KEEPALIVE_S)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        await asyncio.gather(
            watch(servers, tally, started, stop, window_s), hostile(client, targets, tally, stop, window_s),
            *(steady(client, targets["classifier"], tally, stop, False, k) for k in range(clients)),
            *(steady(client, targets["language_model"], tally, stop, True, k) for k in range(clients)))
    for server in servers:
        server.sample_rss(time.monotonic() - started)
    return tally


async def sigterm_in_flight(servers: list[Server]) -> tuple[int, int, int]:
    """Requests in flight on both servers, then SIGTERM to each: (answered 200, sent, unanswered at the signal)."""
    tally = Tally()
    targets = {server.name: Target(server.url, auth()) for server in servers}
    async with httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=100,
                                                                  keepalive_expiry=KEEPALIVE_S)) as client:
        requests = [classify(client, targets["classifier"], tally, k, "drain") for k in range(16)]
        requests += [stream(client, targets["language_model"], tally, k, drop=False) for k in range(8)]
        tasks = [asyncio.create_task(request) for request in requests]
        await asyncio.sleep(0.1)  # sent and accepted
        unanswered = sum(not task.done() for task in tasks)
        for server in servers:
            server.process.send_signal(signal.SIGTERM)
        await asyncio.gather(*tasks)
    answered = sum(count for (_, status), count in tally.statuses.items() if status == 200)
    return answered, len(requests), unanswered


# -------------------------------------------------------------------------------------- report
def percentiles(values: list[float]) -> str:
    if len(values) < 2:
        return "-"
    cuts = statistics.quantiles(values, n=100)
    return f"p50 {1000 * cuts[49]:.0f} ms, p99 {1000 * cuts[98]:.0f} ms ({len(values)})"


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98] if len(values) >= 2 else float("nan")


def report(tally: Tally, servers: list[Server], windows: int, drained: tuple[int, int, int], exits: list[int],
           log) -> bool:
    log("requests by status: " + ", ".join(f"{kind} {status}: {count}"
                                            for (kind, status), count in sorted(tally.statuses.items())))
    log(f"streams dropped by their clients: {tally.dropped_streams}")
    for (kind, error), count in sorted(tally.resets.items()):
        log(f"reset: {kind}: {error} x{count}")
    for server in servers:
        log(f"{server.name} RSS MB over time: " + ", ".join(f"{moment:.0f}s {mb:.0f}" for moment, mb in server.rss))
    for window in range(windows):
        log(f"window {window + 1}: predict {percentiles(tally.latencies[(window, 'predict')])}; "
            f"completion {percentiles(tally.latencies[(window, 'completion')])}; "
            f"stream {percentiles(tally.latencies[(window, 'stream')])}")
    resets = sum(tally.resets.values())
    server_errors = sum(count for (_, status), count in tally.statuses.items() if status >= 500 and status != 503)
    growth = max(server.rss[-1][1] - server.rss[1 if len(server.rss) > 2 else 0][1] for server in servers)
    ratios = [p99(tally.latencies[(windows - 1, kind)]) / p99(tally.latencies[(0, kind)])
              for kind in ("predict", "completion")]
    checks = {
        f"connection_resets={resets}": resets == 0,
        f"status_5xx_other_than_503={server_errors}": server_errors == 0,
        f"rss_growth_mb={growth:.1f} (under {RSS_GROWTH_MB})": growth < RSS_GROWTH_MB,
        f"p99_last_over_first_window={'/'.join(f'{ratio:.2f}' for ratio in ratios)} (predict/completion, at most "
        f"{P99_RATIO})": all(ratio <= P99_RATIO for ratio in ratios),
        f"sigterm_in_flight_answered={drained[0]}/{drained[1]} ({drained[2]} unanswered when the signal came), "
        f"exit statuses {exits}":
            drained[0] == drained[1] and exits == [0, 0],
    }
    for line, holds in checks.items():
        log(f"{line} {'ok' if holds else 'FAILED'}")
    return all(checks.values())


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="distrain-soak-"))
    work.mkdir(parents=True, exist_ok=True)

    def log(line: str) -> None:
        print(line, flush=True)

    started = time.monotonic()
    classifier, language_model = archives(args, work)
    log(f"soak: {args.minutes:g} min, windows of {args.window_s:g} s, archives ready in "
        f"{time.monotonic() - started:.0f} s (work: {work})")
    servers = [Server("classifier", classifier, work / "serve-classifier").start(work),
               Server("language_model", language_model, work / "serve-lm").start(work)]
    try:
        for server in servers:
            server.wait_ready()
        seconds = args.minutes * 60
        tally = asyncio.run(soak(servers, seconds, args.window_s, args.clients))
        drained = asyncio.run(sigterm_in_flight(servers))
        exits = [server.process.wait(120) for server in servers]
    finally:
        for server in servers:
            if server.process.poll() is None:
                server.process.kill()
    windows = max(1, int(seconds // args.window_s))
    return 0 if report(tally, servers, windows, drained, exits, log) else 1


if __name__ == "__main__":
    sys.exit(main())
