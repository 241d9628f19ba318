"""The faults of a chaos run (scripts/chaos.py): each waits for its moment in the running job, strikes, and says
what the run's history must show for it. Bringing the run back (``--recover`` where a user would type it) and
checking what must hold afterwards is the caller's job.

A moment is seeded: the same ``--seed`` picks the same faults at the same points of the run (the exact
millisecond a kill lands still depends on the machine's load, which is why each fault says where it landed).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from chaos_checks import checkpoint_digest, checkpoint_problems, checkpoints, latest_checkpoint
from chaos_job import Events, Job, alive, kill, wait_until

#: every kind, in the order a plan covers them before drawing at random; the archive is written once, at the end
KINDS = ("kill_worker", "kill_job", "sigterm", "kill_in_checkpoint", "kill_in_validation", "kill_in_cache_build",
         "double_fault", "disk_full", "node_lost", "kill_in_archive")
ELASTIC_ONLY = ("node_lost",)
LAST = ("kill_in_archive",)
MOMENT_TIMEOUT = 300.0


class MomentMissed(Exception):
    """The job ended (or stalled) before the fault's moment came."""


@dataclass
class Disk:
    """The run's own filesystem (a size-limited tmpfs in a private mount namespace): one file fills it."""

    mount: Path

    @property
    def filler(self) -> Path:
        return self.mount / "filler"

    def fill(self) -> int:
        """Take every free byte (all but less than a page); return how many were taken. A running job writes
        meanwhile, and a request for more than is free takes nothing: so ever smaller pieces, to the last page."""
        stat = os.statvfs(self.mount)
        piece, taken = stat.f_bavail * stat.f_frsize, 0
        descriptor = os.open(self.filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while piece >= stat.f_frsize:
                try:
                    os.posix_fallocate(descriptor, taken, piece)
                    taken += piece
                except OSError:
                    piece //= 2
        finally:
            os.close(descriptor)
        return taken

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)


@dataclass
class Chaos:
    """What the faults act on and how long the job's phases last (measured in the uninterrupted run)."""

    job: Job
    events: Events
    rng: random.Random
    hold_s: float
    step_s: float
    validation_s: float
    disk: Disk | None
    cache: Path


@dataclass
class Fault:
    number: int
    kind: str
    started: float = 0.0
    #: where the fault struck, in words
    landed: list[str] = field(default_factory=list)
    #: (event, text) the history must gain, in order
    expect: list[tuple[str, str]] = field(default_factory=list)
    #: the job's launchers must be started again (``--recover``) after this fault
    needs_recover: bool = False
    #: a line the failed launcher must have printed last, and what it must contain
    exit_line: str | None = None
    problems: list[str] = field(default_factory=list)
    #: from the strike to training again
    seconds: float | None = None
    #: when it last struck: the run is back once a worker started after it writes a checkpoint (or the archive)
    struck: float = 0.0
    #: how much the job's launcher had printed when it struck (what it prints after is the fault's)
    output_mark: int = 0


def plan(rng: random.Random, count: int, kinds: tuple[str, ...]) -> list[str]:
    """``count`` kinds: each of ``kinds`` once (shuffled) while the count allows, then drawn at random; the
    archive kills last, since the archive is written when training ends."""
    chosen = list(kinds)
    rng.shuffle(chosen)
    chosen = chosen[:count] + [rng.choice(kinds) for _ in range(count - len(chosen))]
    return [kind for kind in chosen if kind not in LAST] + [kind for kind in chosen if kind in LAST]


# ------------------------------------------------------------------------------------ moments
def checkpoint_write(event) -> bool:
    return event.kind in ("write", "state") and "/checkpoints/.tmp-epoch" in event.detail


def training_moment(chaos: Chaos, fault: Fault) -> None:
    """0 to 2 more checkpoint writes begun, then a random part of a step: anywhere in training."""
    writes = chaos.rng.randint(0, 2)
    delay = chaos.rng.uniform(0, chaos.step_s)
    for _ in range(writes):
        if chaos.events.wait_for(lambda e: e.kind == "state", MOMENT_TIMEOUT, chaos.job) is None:
            raise MomentMissed(f"no checkpoint write within {MOMENT_TIMEOUT:.0f} s")
    time.sleep(delay)
    fault.landed.append(f"{delay:.3f} s after {writes} more checkpoint write(s) began" if writes else
                        f"{delay:.3f} s into whatever ran")


def wait_for_event(chaos: Chaos, match, what: str):
    event = chaos.events.wait_for(match, MOMENT_TIMEOUT, chaos.job)
    if event is None:
        raise MomentMissed(f"no {what} within {MOMENT_TIMEOUT:.0f} s, or the job ended first")
    return event


def struck(chaos: Chaos, fault: Fault) -> None:
    """Note the moment of a strike (the first is when the fault's cost starts)."""
    fault.struck = time.monotonic()
    fault.started = fault.started or fault.struck
    fault.output_mark = len(chaos.job.last_output())


def strike(chaos: Chaos, fault: Fault, target: str, rank: str | None = None) -> None:
    """``kill -9`` of one worker (``rank``, or one drawn; its launcher starts them all again) or of the whole
    job (``--recover``)."""
    chaos.events.poll()  # every worker that has started is known
    struck(chaos, fault)
    if target == "worker":
        workers = chaos.events.workers()
        if rank is not None:
            workers = {rank: workers[rank]} if rank in workers else {}
        if not workers:
            target = "job"  # between two starts: nothing but the launcher lives
        else:
            rank = chaos.rng.choice(sorted(workers))
            kill([workers[rank]])
            fault.landed.append(f"kill -9 of worker rank {rank}")
            fault.expect.append(("restart", "torchrun" if chaos.job.elastic else ""))
            return
    chaos.job.kill_all()
    fault.landed.append("kill -9 of the whole job")
    fault.needs_recover = True
    fault.expect.append(comeback(chaos))


def comeback(chaos: Chaos) -> tuple[str, str]:
    """What the history notes when the stopped job starts again: ``recover``; or, under torchrun, once the run
    folder knows its job (``launched_job.json``), a torchrun ``restart``; or ``started`` where it was killed
    before it wrote its config (then a requeued job's script starts it afresh, as Job.start does)."""
    if chaos.job.elastic and (chaos.job.run_dir / "launched_job.json").exists():
        return ("restart", "torchrun")
    return ("recover", "") if (chaos.job.run_dir / "config.json").exists() else ("started", "")


def target(chaos: Chaos) -> str:
    return chaos.rng.choice(("worker", "job"))


# -------------------------------------------------------------------------------------- faults
def kill_worker(chaos: Chaos, fault: Fault) -> None:
    training_moment(chaos, fault)
    strike(chaos, fault, "worker")


def kill_job(chaos: Chaos, fault: Fault) -> None:
    training_moment(chaos, fault)
    strike(chaos, fault, "job")


def sigterm(chaos: Chaos, fault: Fault) -> None:
    """Pre-emption: SIGTERM to the launchers only; every worker stops after the same step with a checkpoint."""
    training_moment(chaos, fault)
    struck(chaos, fault)
    chaos.job.signal_launchers(signal.SIGTERM)
    fault.landed.append("SIGTERM to the launcher(s)")
    if not chaos.job.wait(180):
        fault.problems.append("the job did not stop within 180 s of SIGTERM")
        chaos.job.kill_all()
    if not chaos.job.elastic:
        fault.exit_line = "resume with: "
    fault.expect += [("stopped", "SIGTERM"), comeback(chaos)]
    fault.needs_recover = True


def kill_in_checkpoint(chaos: Chaos, fault: Fault) -> None:
    event = wait_for_event(chaos, checkpoint_write, "checkpoint write")
    delay = chaos.rng.uniform(0, chaos.hold_s)
    time.sleep(delay)
    step = "its weights written" if event.kind == "write" else "its training state about to be written"
    fault.landed.append(f"{delay:.3f} s into a checkpoint write ({step}, {Path(event.detail).parent.name})")
    strike(chaos, fault, target(chaos))


def kill_in_validation(chaos: Chaos, fault: Fault) -> None:
    begun = wait_for_event(chaos, lambda e: e.kind == "validation" and e.detail == "begin" and e.rank == "0",
                           "validation pass")
    delay = chaos.rng.uniform(0, chaos.validation_s)
    time.sleep(delay)
    strike(chaos, fault, target(chaos))
    ended = any(e.kind == "validation" and e.detail == "end" and e.pid == begun.pid for e in chaos.events.poll())
    fault.landed.insert(0, f"{delay:.3f} s into a validation pass ({'after it ended' if ended else 'inside it'})")


def kill_in_cache_build(chaos: Chaos, fault: Fault) -> None:
    """The dataset cache is built when a job starts: stop the job, empty the cache, start it, and kill it
    while the entry is written."""
    training_moment(chaos, fault)
    chaos.job.kill_all()
    fault.expect.append(comeback(chaos))
    shutil.rmtree(chaos.cache, ignore_errors=True)
    chaos.job.start(recover=True)
    event = wait_for_event(chaos, lambda e: e.kind == "cache_build", "cache build")
    delay = chaos.rng.uniform(0, chaos.hold_s)
    time.sleep(delay)
    struck(chaos, fault)
    chaos.job.kill_all()
    fault.landed.append(f"job stopped, cache emptied, restarted, then kill -9 of the whole job {delay:.3f} s into "
                        f"the cache build (by {'the launcher' if event.rank == '-' else 'rank ' + event.rank})")
    fault.expect.append(comeback(chaos))
    fault.needs_recover = True


def double_fault(chaos: Chaos, fault: Fault) -> None:
    """A kill, then a second within a second of the restarted workers starting."""
    training_moment(chaos, fault)
    strike(chaos, fault, target(chaos))
    if fault.needs_recover:
        chaos.job.start(recover=True)
        fault.needs_recover = False
    new = chaos.events.wait_for(lambda e: e.kind == "worker", MOMENT_TIMEOUT, chaos.job, since=fault.struck)
    if new is None:
        raise MomentMissed(f"no restarted worker within {MOMENT_TIMEOUT:.0f} s")
    delay = chaos.rng.uniform(0, 1.0)
    time.sleep(delay)
    fault.landed.append(f"then {delay:.3f} s after the restarted worker rank {new.rank} started:")
    strike(chaos, fault, target(chaos))


def disk_full(chaos: Chaos, fault: Fault) -> None:
    """Right after a checkpoint is in place, the disk fills: the next checkpoint write is refused. The run
    stops with one line naming the path; the checkpoint before is untouched; space returns; ``--recover``."""
    if chaos.disk is None:
        raise MomentMissed("no disk of its own to fill (needs root: a tmpfs in a private mount namespace)")
    wait_for_event(chaos, lambda e: e.kind == "state", "checkpoint write")
    before = latest_checkpoint(chaos.job.run_dir)
    wait_until(lambda: latest_checkpoint(chaos.job.run_dir) != before or not chaos.job.running(), 30)
    previous = latest_checkpoint(chaos.job.run_dir)
    digests = {folder.name: checkpoint_digest(folder) for folder in checkpoints(chaos.job.run_dir)}
    struck(chaos, fault)
    earlier = refusals(chaos)
    taken = chaos.disk.fill()
    fault.landed.append(f"the disk filled ({taken / 2**20:.1f} MiB taken) after {previous.name if previous else '-'}")
    refused = wait_until(lambda: refusals(chaos) - earlier or not chaos.job.running(), MOMENT_TIMEOUT)
    if chaos.job.elastic:  # torchrun restarts the failed workers at once: free the space as soon as it is seen
        refused = wait_until(lambda: refusals(chaos) - earlier, MOMENT_TIMEOUT)
    else:
        if not chaos.job.wait(MOMENT_TIMEOUT):
            fault.problems.append(f"the job did not stop within {MOMENT_TIMEOUT:.0f} s of the disk filling")
            chaos.job.kill_all()
        fault.exit_line = "error: cannot write "
        fault.needs_recover = True
    fault.expect.append(comeback(chaos))
    new = sorted(refusals(chaos) - earlier, key=lambda line: line.startswith("error: "))  # the job's own line last
    if not refused or not new:
        fault.problems.append("no 'cannot write' line: the full disk went unnoticed")
    fault.landed.append(new[-1].strip()[:200] if new else "")
    # pruning (the newest two plus the best are kept) frees space, so a checkpoint or two may still be written
    # after the fill and an older one removed: each checkpoint still there must be as it was
    for name, digest in digests.items():
        folder = chaos.job.run_dir / "checkpoints" / name
        if folder.exists() and checkpoint_digest(folder) != digest:
            fault.problems.append(f"{name} changed while the disk was full")
    if latest_checkpoint(chaos.job.run_dir) is None and digests:
        fault.problems.append("no checkpoint left after the disk filled")
    fault.problems += checkpoint_problems(chaos.job.run_dir)
    chaos.disk.free()
    fault.landed.append("space freed")


def refusals(chaos: Chaos) -> set[str]:
    """The lines in which the job said the disk refused a write."""
    return {line for line in chaos.job.output().splitlines() if "cannot write" in line}


def node_lost(chaos: Chaos, fault: Fault) -> None:
    """Elastic: the node without the rendezvous store is lost (its agent and worker killed); the other goes on
    alone; later the node starts again and the run grows back to 2."""
    training_moment(chaos, fault)
    struck(chaos, fault)
    chaos.job.kill_node(1)
    fault.landed.append("node 1 lost (kill -9 of its agent and worker)")
    alone = wait_for_event(chaos, lambda e: e.kind == "state" and chaos.events.born_after(e.pid, fault.struck),
                           "step of the survivor")
    fault.landed.append(f"node 0 went on alone after {alone.time - fault.started:.1f} s")
    writes = chaos.rng.randint(1, 3)
    for _ in range(writes):
        wait_for_event(chaos, lambda e: e.kind == "state", "checkpoint write")
    struck(chaos, fault)  # the join: the run is back once the workers of the world of 2 write a checkpoint
    chaos.job.start_node(1)
    fault.landed.append(f"node 1 started again after {writes} more checkpoint(s)")
    # the workers torchrun starts after each change note their world; a "resumed" line shows the change only
    # against the world that wrote the checkpoint (none, if the lost world wrote none since the last change)
    fault.expect += [("restart", '"world_size": 1,'), ("restart", '"world_size": 2,')]


def kill_in_archive(chaos: Chaos, fault: Fault) -> None:
    """A kill while the archive is written: the one under way (a run brought back from the previous archive kill
    is back once it begins writing it again), or the next."""
    begun = archive_under_way(chaos) or wait_for_event(chaos, lambda e: (e.kind, e.detail) == ("archive", "begin"),
                                                       "archive write")
    time.sleep(max(0.0, begun.time + chaos.rng.uniform(0, chaos.hold_s) - time.monotonic()))
    fault.landed.append(f"{time.monotonic() - begun.time:.3f} s into the archive's writing")
    strike(chaos, fault, target(chaos), rank=begun.rank)  # the worker writing it (the others are done)
    if any((e.kind, e.detail) == ("archive", "end") and e.pid == begun.pid for e in chaos.events.poll()):
        fault.landed[-2] += " (after it ended)"


def archive_under_way(chaos: Chaos):
    """The latest archive write begun by a live worker and not ended, if any."""
    chaos.events.poll()
    ended = {e.pid for e in chaos.events.seen if (e.kind, e.detail) == ("archive", "end")}
    return next((e for e in reversed(chaos.events.seen) if (e.kind, e.detail) == ("archive", "begin")
                 and e.pid not in ended and alive(e.pid)), None)


FAULTS = {name: globals()[name] for name in KINDS}
