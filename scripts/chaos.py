"""Prove "nothing lost" under many faults: train a small multi-epoch job while a seeded injector strikes it N
times, then compare its final weights with those of the same job run without a fault.

    sudo .venv/bin/python scripts/chaos.py --faults 50 --seed 1 --layout ddp

Layouts: ``ddp`` and ``fsdp`` (2 CPU workers, the built-in launcher restarting lost ones), ``tp`` (a tiny Llama
split over 2 workers), ``elastic`` (2 torchrun nodes of one worker, ``--nnodes 1:2``, a global batch). The
faults (scripts/chaos_faults.py): ``kill -9`` of one worker, of the whole job (then ``--recover``), SIGTERM
(pre-emption, then ``--recover``), a kill while a checkpoint, the archive or the dataset cache is written or
while validation runs, a second kill within a second of a restart, a disk that fills (the run lives on a
size-limited tmpfs in a private mount namespace: root) and frees, and for ``elastic`` a node lost and back.
After each: every checkpoint folder complete or absent, metrics, logs and history readable, the history
telling what happened; at the end no temporary file left and the final weights compared. The last lines are
``faults_survived=K/N`` and ``max_weight_difference=``; the exit status is 0 when every fault was survived and
the weights are bitwise equal (within 1e-5 for ``elastic``, whose world changes), 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness
from chaos_checks import (checkpoint_problems, history, history_problems, leftovers, readability_problems,
                          weight_difference)
from chaos_faults import (ELASTIC_ONLY, FAULTS, KINDS, Chaos, Disk, Fault, MomentMissed, plan)
from chaos_job import LAYOUTS, STEPS_PER_EPOCH, Events, Job, layout_configs

NAMESPACE = "DISTRAIN_CHAOS_NAMESPACE"
BACK_TIMEOUT = 300.0
DISK_SIZE = "512m"
ELASTIC_TOLERANCE = 1e-5


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, not a usage block
        print(f"error: {message} (see --help)", file=sys.stderr)
        raise SystemExit(2)


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = Parser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--faults", type=int, default=None, help="how many faults to inject (required)")
    parser.add_argument("--seed", type=int, default=1, help="picks the faults and their moments (default 1)")
    parser.add_argument("--layout", choices=LAYOUTS, default="ddp")
    parser.add_argument("--kinds", default=None,
                        help=f"comma-separated fault kinds to draw from (default all that apply: {', '.join(KINDS)})")
    parser.add_argument("--work", type=Path, default=None, help="folder for logs and data (default: a new temporary one)")
    parser.add_argument("--hold-s", type=float, default=0.1,
                        help="how long the probe holds a checkpoint write, archive write or cache build open (default 0.1)")
    parser.add_argument("--quick", action="store_true",
                        help="one kill -9 of a worker (--faults 1 --kinds kill_worker unless given): a smoke run")
    args = parser.parse_args(argv)
    if args.quick:
        args.faults = 1 if args.faults is None else args.faults
        args.kinds = args.kinds or "kill_worker"
    if args.faults is None:
        parser.error("the following arguments are required: --faults")
    if args.faults < 1:
        parser.error(f"--faults must be at least 1, got {args.faults}")
    if args.hold_s <= 0:
        parser.error(f"--hold-s must be positive, got {args.hold_s}")
    usable = tuple(kind for kind in KINDS if args.layout == "elastic" or kind not in ELASTIC_ONLY)
    own_disk = os.geteuid() == 0 and shutil.which("unshare") is not None
    if args.kinds is None:
        args.kinds = tuple(kind for kind in usable if own_disk or kind != "disk_full")
    else:
        args.kinds = tuple(kind.strip() for kind in args.kinds.split(",") if kind.strip())
        unknown = [kind for kind in args.kinds if kind not in usable]
        if unknown or not args.kinds:
            parser.error(f"--kinds: {', '.join(unknown) or 'none given'} not among {', '.join(usable)}")
        if "disk_full" in args.kinds and not own_disk:
            parser.error("--kinds: disk_full needs root and unshare (the run's disk is a tmpfs in a private "
                         "mount namespace)")
    return args


# ------------------------------------------------------------------------------- the machine
def in_private_mount_namespace(argv: list[str]) -> None:
    """Run again inside ``unshare --mount`` (root): the tmpfs mounted there is seen by this run alone and
    vanishes with it."""
    if os.environ.get(NAMESPACE):
        return
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return
    os.execvpe("unshare", ["unshare", "--mount", "--propagation", "private", sys.executable, __file__, *argv],
               {**os.environ, NAMESPACE: "1"})


def mount_disk(folder: Path) -> Disk | None:
    """A size-limited tmpfs at ``folder`` for the runs, or None outside a private mount namespace."""
    folder.mkdir(parents=True, exist_ok=True)
    if not os.environ.get(NAMESPACE):
        return None
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_SIZE}", "chaos-disk", str(folder)], check=True)
    return Disk(folder)


def job_environment(disk: Path, events: Path, hold_s: float) -> dict[str, str]:
    """The job's environment; its TMPDIR a folder of its own (short: a Unix socket's path lives there),
    checked for leftovers at the end."""
    scratch = Path(tempfile.mkdtemp(prefix="distrain-chaos-"))
    return harness.environment(DISTRAIN_CACHE=str(disk / "cache"), DISTRAIN_CURVES="off", HF_HUB_OFFLINE="1",
                               TMPDIR=str(scratch), DISTRAIN_CHAOS_EVENTS=str(events), DISTRAIN_CHAOS_HOLD_S=str(hold_s),
                               TORCH_DISABLE_SHARE_RDZV_TCP_STORE="1")


def epochs_for(faults: int, layout: str) -> int:
    """Long enough that the faults land in training, not after it (each moves the run on by ~0-2 steps; on
    ``elastic`` up to 4: a lost node's survivor trains on alone until the node is back)."""
    steps_per_fault = 4 if layout == "elastic" else 2
    return 3 if layout == "tp" else 3 + math.ceil(steps_per_fault * faults / STEPS_PER_EPOCH)


# ------------------------------------------------------------------------------------ the runs
def reference_run(config: Path, folder: Path, environment: dict, log) -> tuple[Path, float, float]:
    """The job without a fault: its folder, the mean time between checkpoint writes and of a validation pass."""
    events_file = folder / "reference-events.log"
    job = Job("reference", config, folder / "disk" / "reference", folder / "logs-reference",
              {**environment, "DISTRAIN_CHAOS_EVENTS": str(events_file)})
    job.logs.mkdir(exist_ok=True)
    started = time.monotonic()
    job.start(recover=False)
    if not job.wait(3600) or job.exit_codes()[0] != 0:
        job.kill_all()
        raise SystemExit(f"error: the uninterrupted run failed:\n{job.output()[-3000:]}")
    events = Events(events_file)
    events.poll()
    writes = [e.time for e in events.seen if e.kind == "state" and e.rank in ("0", "-")]
    passes, begun = [], None
    for event in (e for e in events.seen if e.kind == "validation" and e.rank == "0"):
        if event.detail == "begin":
            begun = event.time
        elif begun is not None:
            passes.append(event.time - begun)
    step_s = statistics.median(b - a for a, b in zip(writes, writes[1:])) if len(writes) > 1 else 0.5
    validation_s = statistics.median(passes) if passes else 0.1
    log(f"uninterrupted run: {time.monotonic() - started:.1f} s, {len(writes)} checkpoints, a step and its "
        f"checkpoint {step_s:.3f} s, a validation pass {validation_s:.3f} s")
    return job.run_dir, step_s, validation_s


def bring_back(chaos: Chaos, fault: Fault) -> float | None:
    """Start the job again where a user would (``--recover``) and wait until it trains again: a worker started
    after the fault struck begins a checkpoint or the archive, or the job finishes. Seconds, or None."""
    job = chaos.job
    for attempt in range(3):
        if fault.needs_recover or not job.running():
            if job.running():
                job.wait(60)
            if attempt == 0:
                check_exit(job, fault)
            if not fault.needs_recover:  # the launcher gave up on its own: a fault not survived
                fault.problems.append(f"the job stopped by itself (exit {job.exit_codes()}): "
                                      f"{last_line(job.last_output())}")
            fault.needs_recover = False
            job.start(recover=True)
        back = chaos.events.wait_for(
            lambda e: (e.kind == "state" or (e.kind, e.detail) == ("archive", "begin"))
            and chaos.events.born_after(e.pid, fault.struck), BACK_TIMEOUT, job, since=fault.struck)
        if back is not None:
            return back.time - fault.started
        if job.running():
            fault.problems.append(f"no progress within {BACK_TIMEOUT:.0f} s of the fault")
            job.kill_all()
        elif all(code == 0 for code in job.exit_codes().values()):
            return time.monotonic() - fault.started  # finished
    return None


def check_exit(job: Job, fault: Fault) -> None:
    """A run that stopped on its own (SIGTERM, a full disk) says so in its last line, without a traceback."""
    if fault.exit_line is None:
        return
    output = job.last_output()[fault.output_mark:]
    if fault.exit_line not in last_line(output):
        fault.problems.append(f"last line {last_line(output)!r} lacks {fault.exit_line!r}")
    if "Traceback" in output:
        fault.problems.append("a traceback where one line was due")


def last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1][:300] if lines else ""


def inject(chaos: Chaos, number: int, kind: str) -> Fault:
    """One fault: strike at its moment, bring the run back, check what must hold."""
    fault = Fault(number, kind)
    mark = len(history(chaos.job.run_dir))
    try:
        FAULTS[kind](chaos, fault)
    except MomentMissed as missed:
        fault.problems.append(f"not injected: {missed}")
        return fault
    fault.problems += checkpoint_problems(chaos.job.run_dir)  # right after the strike, before any recovery
    seconds = bring_back(chaos, fault)
    fault.landed.append(f"back in {seconds:.1f} s" if seconds is not None else "never came back")
    fault.seconds = seconds
    fault.problems += checkpoint_problems(chaos.job.run_dir) + readability_problems(chaos.job.run_dir)
    fault.problems += history_problems(history(chaos.job.run_dir)[mark:], fault.expect)
    return fault


def finish(chaos: Chaos, log) -> list[str]:
    """Let the job end (bringing it back once if it stops short) and check what it left."""
    job = chaos.job
    if not job.wait(3600):
        job.kill_all()
        return ["the job did not finish within an hour"]
    if any(code != 0 for code in job.exit_codes().values()):
        log(f"the job stopped ({job.exit_codes()}): {last_line(job.last_output())}; --recover")
        job.start(recover=True)
        job.wait(3600)
    problems = []
    if any(code != 0 for code in job.exit_codes().values()):
        problems.append(f"the job failed: {last_line(job.last_output())}")
    events = history(job.run_dir)
    if not events or events[-1]["event"] != "finished":
        problems.append("the history does not end with 'finished'")
    left, torchs = leftovers(job.run_dir, chaos.cache, Path(job.environment["TMPDIR"]))
    if left:
        problems.append(f"temporary files outlived the run: {', '.join(left[:10])}")
    if not left and not torchs:
        Path(job.environment["TMPDIR"]).rmdir()
    if torchs:
        log(f"note: torch's own processes left {len(torchs)} folder(s) in TMPDIR ({', '.join(torchs[:3])}, ...); "
            "torchrun's agents are not distrain's to clean")
    return problems + readability_problems(job.run_dir) + checkpoint_problems(job.run_dir)


def describe(fault: Fault, total: int) -> str:
    outcome = "survived" if not fault.problems else "NOT survived: " + "; ".join(fault.problems)
    return f"fault {fault.number:3d}/{total} {fault.kind}: {'; '.join(fault.landed)} — {outcome}"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = arguments(argv)
    in_private_mount_namespace(argv)
    started = time.monotonic()
    work = args.work or Path(tempfile.mkdtemp(prefix="distrain-chaos-"))
    work.mkdir(parents=True, exist_ok=True)
    disk = mount_disk(work / "disk")
    if disk is None and "disk_full" in args.kinds:
        args.kinds = tuple(kind for kind in args.kinds if kind != "disk_full")
        print("note: not root (or no unshare): no disk_full faults, the run has no disk of its own to fill")

    def log(line: str) -> None:
        print(line, flush=True)

    log(f"chaos: layout={args.layout} seed={args.seed} faults={args.faults} work={work}")
    config, reference = layout_configs(args.layout, work, epochs_for(args.faults, args.layout))
    paths = {name: work / f"{name}.json" for name in ("chaos", "reference")}
    for name, body in (("chaos", config), ("reference", reference)):
        paths[name].write_text(json.dumps(body, indent=2))
    environment = job_environment(work / "disk", work / "events.log", args.hold_s)
    reference_dir, step_s, validation_s = reference_run(paths["reference"], work, environment, log)
    (work / "logs").mkdir(exist_ok=True)
    job = Job(args.layout, paths["chaos"], work / "disk" / "run", work / "logs", environment)
    rng = random.Random(args.seed)
    chaos = Chaos(job, Events(work / "events.log"), rng, args.hold_s, step_s, validation_s, disk,
                  work / "disk" / "cache")
    job.start(recover=False)
    faults = []
    try:
        for number, kind in enumerate(plan(rng, args.faults, args.kinds), 1):
            fault = inject(chaos, number, kind)
            faults.append(fault)
            log(describe(fault, args.faults))
        problems = finish(chaos, log)
    finally:
        if job.running():
            job.kill_all()
    for problem in problems:
        log(f"at the end: {problem}")
    archived = (job.run_dir / "model.tar.gz").is_file()
    difference, bitwise = weight_difference(reference_dir, job.run_dir) if archived else (float("inf"), False)
    survived = sum(not fault.problems for fault in faults)
    costs = [fault.seconds for fault in faults if fault.seconds is not None]
    kinds = {kind: sum(f.kind == kind for f in faults) for kind in args.kinds}
    log("faults by kind: " + ", ".join(f"{kind} {count}" for kind, count in kinds.items() if count))
    if costs:
        log(f"time each cost (fault to training again): median {statistics.median(costs):.1f} s, "
            f"max {max(costs):.1f} s, total {sum(costs):.0f} s")
    log(f"layout={args.layout} seed={args.seed} wall_time={time.monotonic() - started:.0f}s "
        f"final_weights={'bitwise equal' if bitwise else 'differ'}")
    log(f"faults_injected={sum(not any(p.startswith('not injected') for p in f.problems) for f in faults)}")
    log(f"faults_survived={survived}/{args.faults}")
    log(f"max_weight_difference={difference:.3g}")
    tolerance_met = bitwise or (args.layout == "elastic" and difference <= ELASTIC_TOLERANCE)
    return 0 if survived == args.faults and not problems and tolerance_met else 1


if __name__ == "__main__":
    sys.exit(main())
