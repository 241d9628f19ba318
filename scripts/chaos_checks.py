"""What must hold after every fault of a chaos run (scripts/chaos.py), and at its end: each checkpoint folder
complete or absent, the metrics, logs and history readable, the history telling what happened, no temporary
file left behind, and the final weights those of the uninterrupted run. Each check returns its problems as
lines (empty: it holds)."""

from __future__ import annotations

import hashlib
import json
import re
import tarfile
from pathlib import Path

CHECKPOINT = re.compile(r"epoch_\d+_batch_\d+$")


def checkpoint_problems(run_dir: Path) -> list[str]:
    """Every folder named as a checkpoint holds a whole one: meta.json, a training state that loads (plain
    data and tensors only), and weights that load, or a sharded folder with its index and every worker's file."""
    import torch
    from safetensors.torch import load_file

    problems = []
    for folder in sorted((run_dir / "checkpoints").glob("epoch_*")):
        if not CHECKPOINT.match(folder.name):
            continue
        try:
            meta = json.loads((folder / "meta.json").read_text())
            torch.load(folder / "training_state.pt", map_location="cpu", weights_only=True)
            sharded = folder / "sharded"
            if sharded.is_dir():
                shards = list(sharded.glob("*.distcp"))
                if not (sharded / ".metadata").is_file() or len(shards) != int(meta.get("world_size", 1)):
                    problems.append(f"{folder.name}: sharded weights incomplete ({len(shards)} shard files)")
            else:
                load_file(str(folder / "model.safetensors"))
        except Exception as error:  # noqa: BLE001 - any failure to read is the finding
            if isinstance(error, FileNotFoundError) and not folder.exists():
                continue  # pruned while it was read (moved away whole, then deleted): absent, as it may be
            problems.append(f"{folder.name}: incomplete checkpoint ({type(error).__name__}: {error})"[:300])
    return problems


def checkpoint_digest(folder: Path) -> str:
    """The sha256 of every file of a checkpoint folder, to tell it was left as it was."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def checkpoints(run_dir: Path) -> list[Path]:
    """The run's checkpoint folders, oldest first (a folder gets its final name only once complete)."""
    return sorted(p for p in (run_dir / "checkpoints").glob("epoch_*") if CHECKPOINT.match(p.name))


def latest_checkpoint(run_dir: Path) -> Path | None:
    folders = checkpoints(run_dir)
    return folders[-1] if folders else None


def readability_problems(run_dir: Path) -> list[str]:
    """metrics.json and each epoch's metrics parse, every worker log reads as text, every history line parses."""
    problems = []
    for path in sorted(run_dir.glob("metrics*.json")):
        try:
            json.loads(path.read_text())
        except (OSError, ValueError) as error:
            problems.append(f"{path.name} unreadable: {error}")
    for path in sorted(run_dir.glob("out_worker*.log")):
        try:
            path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            problems.append(f"{path.name} unreadable: {error}")
    history = run_dir / "history.jsonl"
    if history.exists():
        for number, line in enumerate(history.read_text().splitlines(), 1):
            try:
                json.loads(line)
            except ValueError:
                problems.append(f"history.jsonl line {number} does not parse: {line[:80]!r}")
    return problems


def history(run_dir: Path) -> list[dict]:
    path = run_dir / "history.jsonl"
    if not path.exists():
        return []
    events = []
    for line in path.read_text().splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events


def history_problems(events: list[dict], expected: list[tuple[str, str]]) -> list[str]:
    """``expected``: (event, text its line must contain) pairs, each found among ``events`` (the lines
    written since the fault) in that order."""
    problems, position = [], 0
    for name, text in expected:
        found = next((i for i in range(position, len(events))
                      if events[i]["event"] == name and text in json.dumps(events[i])), None)
        if found is None:
            seen = ", ".join(event["event"] for event in events) or "nothing"
            problems.append(f"the history lacks '{name}'{f' with {text!r}' if text else ''} (it has: {seen})")
        else:
            position = found + 1
    return problems


#: what torch's own processes keep in $TMPDIR whatever distrain does: torchrun's agents (not distrain processes)
#: leave a log folder per start, and torch's compiler keeps its cache there
TORCHS_OWN = ("torchelastic_", "torchinductor_")


def leftovers(run_dir: Path, cache: Path | None, scratch: Path | None) -> tuple[list[str], list[str]]:
    """Temporary files and folders that outlived the run: ``.tmp*`` anywhere in the run's folder, a dataset
    cache entry's build, discard or prune folder, and whatever the job left in its temporary folder; and,
    apart, what torch's own processes left there (:data:`TORCHS_OWN`)."""
    found = [str(path.relative_to(run_dir)) for path in run_dir.rglob(".tmp*")]
    if cache is not None and cache.is_dir():
        found += [f"cache/{path.name}" for path in cache.iterdir()
                  if path.name.endswith((".tmp", ".damaged", ".pruned"))]
    torchs = []
    if scratch is not None and scratch.is_dir():
        for path in scratch.iterdir():
            (torchs if path.name.startswith(TORCHS_OWN) else found).append(f"TMPDIR/{path.name}")
    return sorted(found), sorted(torchs)


def archived_weights(run_dir: Path) -> dict:
    from safetensors.torch import load

    with tarfile.open(run_dir / "model.tar.gz") as tar:
        return load(tar.extractfile("weights.safetensors").read())


def weight_difference(reference: Path, run: Path) -> tuple[float, bool]:
    """(the largest absolute difference of any archived weight, whether all are bitwise equal)."""
    import torch

    expected, actual = archived_weights(reference), archived_weights(run)
    if expected.keys() != actual.keys():
        return float("inf"), False
    largest = max(float((expected[name].double() - actual[name].double()).abs().max()) for name in expected)
    return largest, all(torch.equal(expected[name], actual[name]) for name in expected)
