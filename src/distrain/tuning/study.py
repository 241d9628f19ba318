"""The Optuna side of a search: storage, sampler, pruner, and which trials count toward the total.

Every trial a study holds counts toward ``--trials`` (finished, pruned, failed, and running ones, which
will end as one of those), so the total is respected however many ``distrain tune`` processes share the
study and however often one is killed and re-run. A running trial whose ``distrain tune`` process is gone
is marked failed: at once when that process ran on this machine (its pid no longer exists), else by
Optuna's heartbeat once it has missed :data:`GRACE_SECONDS` of beats.
"""

from __future__ import annotations

import contextlib
import os
import socket
from typing import Any, Iterator

SAMPLERS = ("tpe", "random", "grid")
PRUNERS = ("median", "hyperband", "none")
HEARTBEAT_SECONDS = 10
GRACE_SECONDS = 60
#: user attribute naming the ``distrain tune`` process that runs a trial: "HOST:PID"
OWNER_ATTR = "tune_process"
MESSAGE_ATTR = "message"


def make_pruner(name: str, max_epochs: int | None = None):
    """The pruner by name; ``distrain tune`` and the pruning callback in each trial build the same one."""
    import optuna

    if name == "median":
        # 4 unpruned trials first, and never on the first epoch (its accuracy is mostly noise)
        return optuna.pruners.MedianPruner(n_startup_trials=4, n_warmup_steps=1)
    if name == "hyperband":
        return optuna.pruners.HyperbandPruner(min_resource=1, max_resource=max_epochs or "auto")
    if name == "none":
        return optuna.pruners.NopPruner()
    raise ValueError(f"unknown pruner {name!r}")


def make_sampler(name: str, seed: int | None, grid: dict[str, list[Any]] | None = None):
    import optuna

    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=5)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if name == "grid":
        return _AskTellGridSampler(grid or {}, seed=seed)
    raise ValueError(f"unknown sampler {name!r}")


def _grid_sampler_class():
    import optuna

    class AskTellGridSampler(optuna.samplers.GridSampler):
        """Optuna's grid sampler stops ``Study.optimize`` when the grid is used up, which an ask/tell loop
        refuses; here ``--trials`` alone ends the search (beyond the grid's size, points repeat)."""

        def after_trial(self, study, trial, state, values) -> None:
            pass

    return AskTellGridSampler


def _AskTellGridSampler(*args, **kwargs):  # noqa: N802 - a class made on demand, so optuna loads lazily
    return _grid_sampler_class()(*args, **kwargs)


def open_storage(url: str, heartbeat: bool = True):
    """An RDB storage (SQLite, PostgreSQL, MySQL URL); SQLite waits for a lock instead of failing at once."""
    import optuna

    import warnings

    # distrain runs its own ask/tell loop and beats for each trial itself (see search.Search._heartbeat)
    warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used with Study.optimize")
    engine_kwargs = {"connect_args": {"timeout": 60}} if url.startswith("sqlite") else None
    beats = {"heartbeat_interval": HEARTBEAT_SECONDS, "grace_period": GRACE_SECONDS} if heartbeat else {}
    return optuna.storages.RDBStorage(url, engine_kwargs=engine_kwargs, **beats)


def owner_tag() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def counted_trials(study) -> list:
    """The trials that count toward the total: every state but WAITING (a queued, never-started point)."""
    from optuna.trial import TrialState

    return [t for t in study.get_trials(deepcopy=False) if t.state != TrialState.WAITING]


def running_trials(study) -> list:
    from optuna.trial import TrialState

    return study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))


def fail_interrupted_trials(study) -> list[int]:
    """Mark failed the running trials whose ``distrain tune`` process is gone; return their numbers."""
    import optuna
    from optuna.trial import TrialState

    failed = []
    host = socket.gethostname()
    for trial in running_trials(study):
        owner = str(trial.user_attrs.get(OWNER_ATTR, ""))
        owner_host, _, pid = owner.rpartition(":")
        if owner_host != host or not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        live = optuna.trial.Trial(study, trial._trial_id)
        try:
            live.set_user_attr(MESSAGE_ATTR, f"interrupted: distrain tune (pid {pid}) ended during this trial")
            study.tell(trial.number, state=TrialState.FAIL, skip_if_finished=True)
        except (RuntimeError, ValueError):  # another process finished it first
            continue
        failed.append(trial.number)
    # trials of other machines, by their missed heartbeats. Only other processes' trials are looked at, and only
    # those failed in between: one of this process's threads may finish its own trial meanwhile (its record,
    # written by that thread, is not an interrupted one)
    mine = owner_tag()
    before = {t.number for t in running_trials(study) if t.user_attrs.get(OWNER_ATTR) != mine}
    optuna.storages.fail_stale_trials(study)
    stale = [t.number for t in study.get_trials(deepcopy=False, states=(TrialState.FAIL,)) if t.number in before]
    return failed + sorted(stale)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def storage_lock(url: str) -> Iterator[None]:
    """A file lock beside a SQLite database, so processes on this machine create the study and ask for
    trials one at a time (other storages: no lock)."""
    if not url.startswith("sqlite:///"):
        yield
        return
    import fcntl

    with open(url[len("sqlite:///"):] + ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
