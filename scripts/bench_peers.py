"""Against the peers: distrain, PyTorch Lightning and Hugging Face accelerate on 1 and 2 CPU workers.

All three train the very same ``nn.Module`` (distrain's ``basic_classifier`` with the 2-layer
transformer encoder of ``bench_scaling.py``: width 128, 4 heads, sequences of 64 tokens, a vocabulary
of about 5,000) on the same synthetic data (``bench_scaling.make_data``, tensorised once by distrain's
own data preparation, so every framework sees the same token ids), with Adam (lr 5e-4), the same
global batch (64: 64 on 1 worker, 32 per worker on 2) and the same number of optimizer steps. Each is
launched the way its own documentation says:

- distrain: ``distrain train CONFIG`` with ``"distributed": {"cuda_devices": [-1] * N}`` (gloo);
- Lightning: ``Trainer(accelerator="cpu", devices=N, strategy="ddp")`` in a script (``devices=1``
  runs the default single-device strategy); Lightning re-launches the script for the other rank;
- accelerate: ``accelerate launch --cpu`` for 1 process; for 2, ``accelerate launch --multi_gpu
  --num_processes 2`` with ``Accelerator(cpu=True)`` in the script (``--cpu`` alone runs 2 processes
  only through ``mpirun``, which is not installed; the multi-process launcher is torchrun underneath,
  and ``cpu=True`` makes it a gloo ``MULTI_CPU`` run).

Threads: every process of every framework runs ``cores // processes`` torch threads (2 cores: 2
threads on 1 worker, 1 thread each on 2), set the same way for all: ``OMP_NUM_THREADS`` in the
environment of each launch, and ``torch.set_num_threads`` in the peers' scripts (distrain sets the
same figure itself, ``runtime.worker_process.cpu_threads_per_worker``). torch's default of all cores
in every process over-subscribes the machine and is 3-6x slower. Each worker reports the thread
count it trained with, and the script checks they agree.

Throughput is timed by rank 0 inside the training loop, from the end of optimizer step ``warmup``
to the end of the last step (start-up and the first steps excluded); the whole launch (start-up
included) is reported too. The six runs alternate for ``--rounds`` rounds; each figure printed is
the median over rounds, with its range; the ratio is also given per round (distrain against that
round's faster peer), which is steadier when other work shares the machine. Data loading is
in-memory for all three.

Run it on a quiet machine. Under load from other sessions the launchers differ in more than the
loop: torchrun (under ``accelerate launch``) starts each worker in a session of its own
(``start_new_session=True``), and with Linux's ``sched_autogroup_enabled`` each session is a
scheduler group with its own fair share, so accelerate's 2 workers then get more CPU than
distrain's or Lightning's, which share the launching session's one share.

Prints examples/s of each framework on 1 and 2 workers and, as the last line,
``ratio_vs_best_peer=<distrain 2 workers / the faster peer on 2 workers>`` (medians).

    python scripts/bench_peers.py            # the reported configuration (needs: pip install -e '.[bench]')
    python scripts/bench_peers.py --quick    # a smoke run: 2 workers only, 3 steps timed after 1, one round
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # harness.py beside it, also when a test loads it by path
from harness import (StepClock, available_cores, build_model as build_distrain_model, clock_callback,  # noqa: E402
                     environment, free_port, median_and_range, per_process_batch, prepare, rate, read_clock, resolve,
                     threads_per_process)

GLOBAL_BATCH = 64
LEARNING_RATE = 0.0005
FRAMEWORKS = ("distrain", "lightning", "accelerate")
WORKER_COUNTS = (1, 2)


# ------------------------------------------------------------------------------- pure helpers
def ratio_vs_best_peer(medians: dict[str, float], workers: int = 2) -> tuple[str, float]:
    """distrain's median examples/s on ``workers`` over the faster peer's; returns (peer, ratio)."""
    peers = {name: medians[run_name(name, workers)] for name in FRAMEWORKS
             if name != "distrain" and run_name(name, workers) in medians}
    best = max(peers, key=peers.get)
    return best, medians[f"distrain_{workers}"] / peers[best]


def run_name(framework: str, workers: int) -> str:
    return f"{framework}_{workers}"


# ---------------------------------------------------------------------------------- the model
def model_config(train_path: Path, workers: int) -> dict:
    """distrain's config for the benchmark model (bench_scaling's, with this benchmark's global batch and
    learning rate); the peers build their model from the same one."""
    from bench_scaling import config_for

    config = config_for(train_path, workers, None, 0)
    config["data_loader"]["batch_size"] = per_process_batch(GLOBAL_BATCH, workers)
    config["trainer"]["optimizer"]["lr"] = LEARNING_RATE
    return config


def _distrain_data_api():
    """(resolve_experiment, None): distrain's resolution, the built-ins registered
    (tests/scripts/test_bench_peers.py)."""
    return resolve, None


def tensorise(data: Path, output: Path) -> None:
    """Read the data once with distrain's own preparation; save token ids, labels and vocabulary."""
    import numpy as np
    import torch

    from distrain import get_token_ids_from_text_field_tensors

    prepared = prepare(model_config(data, 1))
    everything = prepared.train.batch(np.arange(len(prepared.train)))
    torch.save({"tokens": get_token_ids_from_text_field_tensors(everything["tokens"]), "label": torch.as_tensor(everything["label"]),
                "vocab": prepared.vocab, "data": str(data)}, output)


def build_model(saved: dict):
    """The same module distrain builds: the config's model, constructed with the saved vocabulary."""
    import torch

    torch.manual_seed(1)
    return build_distrain_model(model_config(Path(saved["data"]), 1), saved["vocab"])


def clock(job: dict) -> StepClock:
    """Rank 0's clock: started after optimizer step ``warmup``, read after the last step. With
    ``BENCH_PEERS_PROFILE=DIR`` in the environment it also writes a cProfile of rank 0's timed steps to
    ``DIR/<framework>_<workers>.prof`` (the figures then include the profiler's overhead)."""
    folder = os.environ.get("BENCH_PEERS_PROFILE")
    return StepClock(job["result"], job["warmup"], job["steps"],
                     str(Path(folder) / f"{job['name']}.prof") if folder else None)


# ---------------------------------------------------------------------------------- distrain
def distrain_command(job: dict, folder: Path) -> list[str]:
    config = model_config(Path(job["data"]), job["processes"])
    config["trainer"]["callbacks"] = [clock_callback(job["result"], job["warmup"], last=job["steps"],
                                                     profile=clock(job).profile)]
    path = folder / f"distrain{job['processes']}.json"
    path.write_text(json.dumps(config))
    return [sys.executable, "-m", "distrain", "train", str(path), "-s", str(folder / f"run{job['processes']}"), "-f",
            "--include-package", "harness"]


# --------------------------------------------------------------------------------- Lightning
def lightning_worker(job: dict) -> None:
    import lightning as L
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    torch.set_num_threads(job["threads"])
    saved = torch.load(job["tensors"], weights_only=False)
    timer = clock(job)

    class Classifier(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.model = build_model(saved)

        def training_step(self, batch, batch_index):
            tokens, label = batch
            return self.model(tokens={"tokens": {"tokens": tokens}}, label=label)["loss"]

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=LEARNING_RATE)

    class Timer(L.Callback):
        def on_train_batch_end(self, trainer, module, outputs, batch, batch_index) -> None:
            timer.after_step(trainer.global_step, trainer.global_rank)

    loader = DataLoader(TensorDataset(saved["tokens"], saved["label"]),
                        batch_size=per_process_batch(GLOBAL_BATCH, job["processes"]), shuffle=True)
    trainer = L.Trainer(
        accelerator="cpu", devices=job["processes"], strategy="ddp" if job["processes"] > 1 else "auto",
        max_epochs=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, callbacks=[Timer()],
    )
    trainer.fit(Classifier(), loader)


def lightning_command(job: dict, folder: Path) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--worker", "lightning", "--job", job["path"]]


# -------------------------------------------------------------------------------- accelerate
def accelerate_worker(job: dict) -> None:
    import torch
    from accelerate import Accelerator
    from torch.utils.data import DataLoader, TensorDataset

    accelerator = Accelerator(cpu=True)
    torch.set_num_threads(job["threads"])
    saved = torch.load(job["tensors"], weights_only=False)
    model = build_model(saved)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    loader = DataLoader(TensorDataset(saved["tokens"], saved["label"]),
                        batch_size=per_process_batch(GLOBAL_BATCH, job["processes"]), shuffle=True)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    if accelerator.num_processes != job["processes"]:
        raise SystemExit(f"accelerate started {accelerator.num_processes} process(es), not {job['processes']}")
    timer = clock(job)
    model.train()
    for step, (tokens, label) in enumerate(loader, start=1):
        loss = model(tokens={"tokens": {"tokens": tokens}}, label=label)["loss"]
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        timer.after_step(step, accelerator.process_index)
    accelerator.end_training()


def accelerate_command(job: dict, folder: Path) -> list[str]:
    launcher = [sys.executable, "-m", "accelerate.commands.launch", "--num_machines", "1", "--mixed_precision", "no",
                "--dynamo_backend", "no", "--num_processes", str(job["processes"])]
    launcher += ["--cpu"] if job["processes"] == 1 else ["--multi_gpu", "--main_process_port", str(free_port())]
    return launcher + [str(Path(__file__).resolve()), "--worker", "accelerate", "--job", job["path"]]


COMMANDS = {"distrain": distrain_command, "lightning": lightning_command, "accelerate": accelerate_command}


# -------------------------------------------------------------------------------------- main
def run_once(framework: str, workers: int, folder: Path, data: dict, steps: int, warmup: int, cores: int) -> dict:
    name = run_name(framework, workers)
    threads = threads_per_process(cores, workers)
    job = {"name": name, "processes": workers, "steps": steps, "warmup": warmup, "threads": threads, "data": str(data[workers]),
           "tensors": str(data[f"tensors{workers}"]), "result": str(folder / f"{name}.result.json"),
           "path": str(folder / f"{name}.job.json")}
    Path(job["path"]).write_text(json.dumps(job))
    Path(job["result"]).unlink(missing_ok=True)
    env = environment(OMP_NUM_THREADS=str(threads), HF_HUB_OFFLINE="1", DISTRAIN_CACHE=str(folder / "cache"),
                      PYTHONWARNINGS="ignore")
    started = time.perf_counter()
    result = subprocess.run(COMMANDS[framework](job, folder), env=env, capture_output=True, text=True, cwd=folder)
    wall = time.perf_counter() - started
    if result.returncode != 0 or not Path(job["result"]).exists():
        raise SystemExit(f"{name} failed (exit {result.returncode}):\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}")
    measured = read_clock(job["result"])
    if measured["threads"] != threads:
        raise SystemExit(f"{name} trained with {measured['threads']} thread(s) per process, not {threads}")
    return {**measured, "examples_per_s": rate(measured, GLOBAL_BATCH), "launch_to_exit_s": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     epilog="Needs the bench extra: pip install -e '.[bench]'.")
    parser.add_argument("--quick", action="store_true", help="2 workers only (the last line's runs), 3 steps timed after 1, one round: a smoke run")
    parser.add_argument("--steps", type=int, default=None, help="optimizer steps per run (default 60; quick 3)")
    parser.add_argument("--warmup", type=int, default=None, help="steps before the clock starts (default 8; quick 1)")
    parser.add_argument("--rounds", type=int, default=None, help="alternating rounds (default 3; quick 1)")
    parser.add_argument("--only", choices=FRAMEWORKS, action="append", help="run only these frameworks (repeatable)")
    parser.add_argument("--workers", type=int, choices=WORKER_COUNTS, action="append",
                        help="run only these worker counts (repeatable)")
    parser.add_argument("--worker", choices=("lightning", "accelerate"), help=argparse.SUPPRESS)
    parser.add_argument("--job", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        job = json.loads(Path(args.job).read_text())
        (lightning_worker if args.worker == "lightning" else accelerate_worker)(job)
        return

    steps = args.steps or (3 if args.quick else 60)
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else 8)
    rounds = args.rounds or (1 if args.quick else 3)
    if not 0 < warmup < steps:
        parser.error(f"--warmup must be between 1 and --steps - 1 ({steps - 1}), got {warmup}")
    frameworks = args.only or FRAMEWORKS
    # quick: the 2-worker runs alone, the ones the last line compares
    worker_counts = sorted(args.workers or ((2,) if args.quick else WORKER_COUNTS), reverse=True)
    cores = available_cores()
    from bench_scaling import make_data

    figures: dict[str, list[dict]] = {run_name(f, w): [] for f in frameworks for w in sorted(worker_counts)}
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as folder:
        folder = Path(folder)
        os.environ["DISTRAIN_CACHE"] = str(folder / "cache")
        data = {}
        for workers in worker_counts:  # identical content; a file per worker count keeps the cache keys apart
            data[workers] = folder / f"train{workers}.jsonl"
            make_data(data[workers], steps * GLOBAL_BATCH)
            data[f"tensors{workers}"] = folder / f"tensors{workers}.pt"
            tensorise(data[workers], data[f"tensors{workers}"])
        for round_number in range(1, rounds + 1):
            for workers in worker_counts:
                for framework in frameworks:
                    measured = run_once(framework, workers, folder, data, steps, warmup, cores)
                    figures[run_name(framework, workers)].append(measured)
                    print(f"round {round_number}: {framework} on {workers} worker(s): "
                          f"{measured['examples_per_s']:.1f} examples/s, rank 0 CPU {measured['cpu_ms_per_step']:.1f} "
                          f"ms/step, launch to exit {measured['launch_to_exit_s']:.1f} s", flush=True)

    print(f"{steps} optimizer steps per run, timed after {warmup}; global batch {GLOBAL_BATCH}; "
          f"{cores} cores, {threads_per_process(cores, 1)} thread(s) on 1 worker, "
          f"{threads_per_process(cores, 2)} per process on 2; median [min-max] of {rounds} round(s)")
    medians = {}
    for name, runs in figures.items():
        speed = median_and_range([run["examples_per_s"] for run in runs])
        launch = median_and_range([run["launch_to_exit_s"] for run in runs])
        cpu = statistics.median(run["cpu_ms_per_step"] for run in runs)
        medians[name] = speed[0]
        print(f"{name}_examples_per_s={speed[0]:.1f}  [{speed[1]:.1f}-{speed[2]:.1f}]  "
              f"rank 0 CPU {cpu:.1f} ms/step, launch to exit {launch[0]:.1f} s")
    if "distrain_2" in medians and len(frameworks) > 1:
        peer, ratio = ratio_vs_best_peer(medians)
        paired = [ratio_vs_best_peer({name: runs[index]["examples_per_s"] for name, runs in figures.items()})[1]
                  for index in range(rounds)]
        print(f"per-round ratios (distrain 2 workers / that round's faster peer): "
              f"{' '.join(f'{value:.3f}' for value in paired)}; median {statistics.median(paired):.3f}")
        print(f"faster peer on 2 workers: {peer}")
        print(f"ratio_vs_best_peer={ratio:.3f}")


if __name__ == "__main__":
    main()
