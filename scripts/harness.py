"""What the scripts of scripts/ share: where this checkout is, the environment its processes get, ``distrain``
launched as a user launches it, one step clock (registered as the ``bench_clock`` callback), median/range
summaries, synthetic records, and distrain's own data preparation and assembly for in-process runs.

The scripts reach distrain's assembly through the functions at the end (:func:`resolve`, :func:`prepare`,
:func:`train_loader`, :func:`build_model`, :func:`assemble_run`), so an API change there is mended here once.
Importing this module registers ``bench_clock`` (when distrain is importable) and nothing else; a
training run's workers find it with ``--include-package harness`` (``scripts/`` is on their path).
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterable

ROOT = Path(__file__).resolve().parents[1]
SRC, SCRIPTS = ROOT / "src", ROOT / "scripts"
for _path in (str(SCRIPTS), str(SRC)):  # this checkout's distrain first, and the scripts beside each other
    if _path not in sys.path:
        sys.path.insert(0, _path)


# -------------------------------------------------------------------------------------- launching
def environment(**extra: str) -> dict[str, str]:
    """This process's environment with this checkout's ``src/`` and ``scripts/`` first on ``PYTHONPATH``
    (the workers import this distrain and find the scripts' plugins), updated with ``extra``."""
    path = os.pathsep.join(filter(None, [str(SRC), str(SCRIPTS), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, **extra}


def run_distrain(args: Iterable[Any], env: dict[str, str] | None = None, *, what: str | None = None,
                 capture: bool = True, check: bool = True, tail: int = 3000, **kwargs: Any) -> subprocess.CompletedProcess:
    """``python -m distrain ARGS`` in a fresh process (``env`` defaults to :func:`environment`); with ``check``
    a failure exits this script with ``what`` failed and the last ``tail`` characters of its stderr."""
    arguments = [str(arg) for arg in args]
    if capture:
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("text", True)
    result = subprocess.run([sys.executable, "-m", "distrain", *arguments], env=env or environment(), **kwargs)
    if check and result.returncode != 0:
        stderr = result.stderr if isinstance(result.stderr, str) else ""
        raise SystemExit(f"{what or 'distrain ' + arguments[0]} failed (exit {result.returncode}):\n{stderr[-tail:]}")
    return result


def free_port() -> int:
    """A TCP port free on this machine now (for a hand-written process group's rendezvous)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def threads_per_process(cores: int, processes: int) -> int:
    """The torch threads each process gets: the cores shared evenly, at least one."""
    return max(1, cores // max(1, processes))


def per_process_batch(global_batch: int, processes: int) -> int:
    if global_batch % processes:
        raise ValueError(f"global batch {global_batch} does not split evenly over {processes} processes")
    return global_batch // processes


# ------------------------------------------------------------------------------------------ timing
class StepClock:
    """Rank 0's clock over any training loop: started at the end of step ``warmup``, read at the end of step
    ``last``; writes ``{"seconds", "steps", "cpu_ms_per_step", "threads"}`` (JSON) to ``output``. distrain's
    loop calls it through the ``bench_clock`` callback, hand-written and peer loops call :meth:`after_step`.
    With ``profile`` (a path) it also writes a cProfile of the timed steps there."""

    def __init__(self, output: str | Path, warmup: int, last: int | None = None, profile: str | None = None) -> None:
        self.output, self.warmup, self.last, self.profile = Path(output), warmup, last, profile
        self.started = self.cpu_started = self.profiler = None

    def after_step(self, step: int, rank: int = 0, last: int | None = None) -> None:
        if rank != 0:
            return
        if step == self.warmup:
            if self.profile:
                import cProfile

                self.profiler = cProfile.Profile()
                self.profiler.enable()
            self.started, self.cpu_started = time.perf_counter(), time.process_time()
        if step == (last or self.last) and self.started is not None:
            seconds, cpu = time.perf_counter() - self.started, time.process_time() - self.cpu_started
            if self.profiler is not None:
                self.profiler.disable()
                self.profiler.dump_stats(self.profile)
            import torch

            timed = step - self.warmup
            self.output.write_text(json.dumps({"seconds": seconds, "steps": timed, "cpu_ms_per_step": 1000 * cpu / timed,
                                               "threads": torch.get_num_threads()}))


def rate(clock: dict, per_step: float) -> float:
    """What a step clock's result makes per second, ``per_step`` made by each timed step."""
    return clock["steps"] * per_step / clock["seconds"]


def read_clock(path: Path) -> dict:
    return json.loads(Path(path).read_text())


try:  # registered when distrain's workers import this module (--include-package harness)
    from distrain.training.callback import Callback
except ImportError:  # pragma: no cover - distrain itself not importable
    Callback = None

if Callback is not None:
    @Callback.register("bench_clock")
    class BenchClock(Callback):
        """distrain's side of :class:`StepClock` (``last``: the epoch's last step unless given); with
        ``first_step_folder`` each worker also writes the wall-clock time of its first optimizer step
        there, as ``first_step_rank{r}``."""

        def __init__(self, output: str | None = None, warmup: int = 0, last: int | None = None,
                     first_step_folder: str | None = None, profile: str | None = None) -> None:
            self.clock = StepClock(output, warmup, last, profile) if output else None
            self.first_step_folder = first_step_folder

        def on_step(self, trainer, step, loss) -> None:
            if self.first_step_folder and step == 1:
                Path(self.first_step_folder, f"first_step_rank{trainer.world.rank}").write_text(repr(time.time()))
            if self.clock is not None:
                self.clock.after_step(step, trainer.world.rank, self.clock.last or trainer.steps_per_epoch)


def clock_callback(output: Path | None = None, warmup: int = 0, **options: Any) -> dict:
    """The config block of a ``bench_clock`` callback."""
    block = {"type": "bench_clock", **({"output": str(output)} if output else {}), "warmup": warmup}
    return block | {key: str(value) if isinstance(value, Path) else value for key, value in options.items()}


# --------------------------------------------------------------------------------------- summaries
def duration_seconds(text: str) -> float:
    """Seconds of a run folder's ``training_duration``: ``str`` of a ``timedelta`` (``1 day, 0:03:37.081524``), the
    form AllenNLP and distrain write."""
    days, _, clock = text.rpartition(", ")
    hours, minutes, seconds = clock.split(":")
    return (int(days.split()[0]) * 86400 if days else 0) + int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def median_and_range(values: Iterable[float]) -> tuple[float, float, float]:
    values = list(values)
    return statistics.median(values), min(values), max(values)


# ------------------------------------------------------------------------------------ records, configs
def write_jsonl(path: Path, records: Iterable[dict]) -> Path:
    """One JSON record a line; returns ``path``."""
    with open(path, "w") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")
    return path


def example_data(folder: Path, only: str | None = None) -> Path:
    """The example datasets (``scripts/prepare_data.py``, ``only`` digits or drug_reviews) written to
    ``folder/data/``: run the example configs with ``folder`` as the working directory. Written by
    prepare_data's own functions in this process (no interpreter started for it), its progress lines kept
    out of this script's output."""
    import io

    import prepare_data

    out = Path(folder) / "data"
    with contextlib.redirect_stdout(io.StringIO()):
        if only in (None, "digits"):
            prepare_data.prepare_digits(out)
        if only in (None, "drug_reviews"):
            prepare_data.prepare_drug_reviews(out)
    return Path(folder)


def feature_records(count: int, seed: int = 0) -> Iterable[dict]:
    """``count`` records of 64 small integer features, labelled by the sum of the first 8 (10 classes)."""
    import random

    rng = random.Random(seed)
    for _ in range(count):
        features = [rng.randint(0, 16) for _ in range(64)]
        yield {"features": features, "label": str(sum(features[:8]) % 10)}


def text_classifier_config(train: Path | str, embedding_dim: int = 8, batch_size: int = 8,
                           encoder: dict | None = None, trainer: dict | None = None, **top: Any) -> dict:
    """A tiny ``basic_classifier`` (bag of embeddings unless ``encoder``) on a ``text_classification_json``
    file; ``trainer`` and ``data_loader`` options and further top-level keys as given."""
    config = {
        "dataset_reader": {"type": "text_classification_json"},
        "train_data_path": str(train),
        "model": {"type": "basic_classifier", "embedding_dim": embedding_dim, "encoder": encoder or {"type": "boe"}},
        "data_loader": {"batch_size": batch_size, **top.pop("data_loader", {})},
    }
    if trainer is not None:
        config["trainer"] = trainer
    return config | top


# --------------------------------------------------------------- distrain's own preparation and assembly
def _plugins() -> None:
    from distrain.plugins import import_plugins

    import_plugins()


def resolve(config: dict):
    """The config validated and resolved, as ``distrain train`` resolves it (``.build()``: its objects)."""
    from distrain.experiment.plan import resolve_experiment

    _plugins()
    return resolve_experiment(config)


def prepare(config: dict, cache: bool = False):
    """The config's data read and indexed as ``distrain train`` prepares it in the parent (``.vocab``,
    ``.train``, ``.validation``); ``cache``: through the shared dataset cache, as a run does."""
    from distrain.data.prepare import prepare_data
    from distrain.experiment.plan import data_plan_of

    return prepare_data(data_plan_of(resolve(config).build(), config if cache else None))


def train_loader(config: dict, prepared, world=None, seed: int = 0):
    """The loader a worker of ``world`` (default: the only one) iterates over the prepared training split:
    a global-batch loader, or a streaming one for a ``lazy`` data loader (distrain's own choice)."""
    from distrain import World
    experiment = resolve(config).build()
    return prepared.loader("train", experiment.dataset_reader, experiment.data_loader, world or World(), seed)


def build_model(config: dict, vocab):
    """The config's model built with ``vocab`` (seeding is the caller's)."""
    return resolve(config).build().model.construct(vocab=vocab)


def assemble_run(config: dict, serialization_dir: str | Path, prepared=None):
    """What a one-process ``distrain train`` worker builds from ``config`` (distrain's own assembly: seeds,
    data unless ``prepared``, strategy, model, loaders, trainer); ``.trainer.train()`` trains it.

    glibc's malloc policy stays as this process found it: a worker's strategy would set its own
    (``distrain.compat.host_memory``), and a hand-written loop timed in the same process must not run
    under a policy a distrain run chose before it; as for a user's own malloc settings, distrain then
    leaves it alone."""
    from distrain import World
    from distrain.experiment.assemble import assemble

    resolved = resolve(config)
    with _malloc_as_found():
        return assemble(World(), resolved, serialization_dir, prepared)


@contextlib.contextmanager
def _malloc_as_found():
    saved = os.environ.get("GLIBC_TUNABLES")
    os.environ["GLIBC_TUNABLES"] = ":".join(filter(None, [saved, "glibc.malloc.perturb=0"]))  # glibc's default
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("GLIBC_TUNABLES", None)
        else:
            os.environ["GLIBC_TUNABLES"] = saved
