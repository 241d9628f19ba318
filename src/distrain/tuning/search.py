"""The search loop: ask the study for a point, train it in a subprocess, tell the study what happened.

``--n-jobs K`` runs K such loops in threads, each with its own disjoint set of CPU cores (and
``OMP_NUM_THREADS`` to match); a trial's own ``distributed`` block spreads its workers inside that set.
Asking is serialised (a thread lock, plus a file lock next to a SQLite database, so several processes on one
machine never overshoot the trial count); with a database server, two machines asking in the same instant
can overshoot by one trial.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from distrain.errors import UsageError
from distrain.tuning.space import Param
from distrain.tuning.study import (
    HEARTBEAT_SECONDS, MESSAGE_ATTR, OWNER_ATTR, counted_trials, fail_interrupted_trials, owner_tag, running_trials,
    storage_lock,
)
from distrain.tuning.trial_runner import TrialOutcome, run_trial, trial_dir_name, write_trial_record

logger = logging.getLogger("distrain.tune")

CONFIG_ATTR = "config"
EPOCHS_ATTR = "epochs"


@dataclass
class SearchSettings:
    config_path: str
    params: list[Param]
    directory: Path
    storage_url: str
    study_name: str
    pruner: str
    trials: int
    timeout: float | None = None
    n_jobs: int = 1
    overrides: dict[str, Any] = field(default_factory=dict)
    ext_vars: dict[str, str] = field(default_factory=dict)
    include_packages: list[str] = field(default_factory=list)
    max_epochs: int | None = None


def cpu_shares(n_jobs: int) -> list[set[int] | None]:
    """Disjoint CPU sets, one per parallel trial (``None``: one job, it keeps every core it has)."""
    if n_jobs == 1:
        return [None]
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    if len(cores) < n_jobs:
        raise UsageError(f"--n-jobs {n_jobs}: needs at least {n_jobs} CPU cores, this process may use {len(cores)}")
    share = len(cores) // n_jobs
    return [set(cores[i * share:(i + 1) * share]) for i in range(n_jobs)]


class Search:
    def __init__(self, settings: SearchSettings, study: Any, storage: Any) -> None:
        self.settings = settings
        self.study = study
        self.storage = storage
        self.lock = threading.Lock()
        self.deadline = time.monotonic() + settings.timeout if settings.timeout else None
        self.ran: list[int] = []

    def run(self) -> list[int]:
        """Run trials until the study holds ``trials`` of them, then wait for other processes' trials."""
        shares = cpu_shares(self.settings.n_jobs)
        if len(shares) == 1:
            self._loop(shares[0])
        else:
            errors: list[BaseException] = []

            def loop(cpus: set[int]) -> None:
                try:
                    self._loop(cpus)
                except BaseException as error:  # noqa: BLE001 - re-raised in the main thread
                    errors.append(error)

            threads = [threading.Thread(target=loop, args=(cpus,), daemon=True) for cpus in shares]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            if errors:
                raise errors[0]
        self._wait_for_other_processes()
        return self.ran

    def _loop(self, cpus: set[int] | None) -> None:
        while True:
            asked = self._ask()
            if asked is None:
                return
            self._run(*asked, cpus)

    def _ask(self):
        with self.lock, self._storage_lock():
            for number in fail_interrupted_trials(self.study):
                logger.info("trial %d was interrupted (its distrain tune process is gone): marked failed", number)
                self._record_interrupted(number)
            if len(counted_trials(self.study)) >= self.settings.trials:
                return None
            if self.deadline is not None and time.monotonic() > self.deadline:
                logger.info("--timeout reached: no new trials")
                return None
            from distrain.tuning.space import suggest

            trial = self.study.ask()
            trial.set_user_attr(OWNER_ATTR, owner_tag())
            self.storage.record_heartbeat(trial._trial_id)
            return trial, suggest(trial, self.settings.params)

    def _run(self, trial: Any, point: dict[str, Any], cpus: set[int] | None) -> None:
        from optuna.trial import TrialState

        from distrain.config.errors import ConfigError
        from distrain.tuning.validation import point_config

        settings = self.settings
        name = trial_dir_name(trial.number)
        trial_dir = settings.directory / name
        logger.info("trial %d: %s", trial.number, json.dumps(point))
        self.ran.append(trial.number)
        with self._heartbeat(trial._trial_id):
            try:
                config = point_config(settings.config_path, point, settings.overrides, settings.ext_vars)
            except ConfigError as error:
                outcome = TrialOutcome("FAIL", None, 0, f"invalid config: {error}", 0.0)
            else:
                config_file = settings.directory / "configs" / f"{name}.json"
                config_file.parent.mkdir(parents=True, exist_ok=True)
                config_file.write_text(json.dumps(config, indent=2))
                trial.set_user_attr(CONFIG_ATTR, json.dumps(config))
                pruning = {"storage": settings.storage_url, "study_name": settings.study_name,
                           "trial_id": trial._trial_id, "pruner": settings.pruner, "max_epochs": settings.max_epochs}
                try:
                    outcome = run_trial(config, config_file, trial_dir, settings.directory / "logs" / f"{name}.log",
                                        pruning, settings.include_packages, cpus)
                except KeyboardInterrupt:
                    trial.set_user_attr(MESSAGE_ATTR, "interrupted by Ctrl-C")
                    self.study.tell(trial, state=TrialState.FAIL)
                    raise
        trial.set_user_attr(EPOCHS_ATTR, outcome.epochs)
        if outcome.message:
            trial.set_user_attr(MESSAGE_ATTR, outcome.message)
        state = getattr(TrialState, outcome.state)
        self.study.tell(trial, outcome.value if outcome.state == "COMPLETE" else None, state=state)
        write_trial_record(trial_dir, {
            "number": trial.number, "state": outcome.state, "params": point, "value": outcome.value,
            "epochs": outcome.epochs, "seconds": round(outcome.seconds, 2), "message": outcome.message,
            "cpus": sorted(cpus) if cpus else None,
        })
        value = f"{outcome.value:.4f}" if outcome.value is not None else "-"
        logger.info("trial %d %s: value %s, %d epoch(s) %s", trial.number, outcome.state.lower(), value,
                    outcome.epochs, outcome.message)

    def _record_interrupted(self, number: int) -> None:
        trial_dir = self.settings.directory / trial_dir_name(number)
        frozen = self.study.get_trials(deepcopy=False)[number]
        write_trial_record(trial_dir, {
            "number": number, "state": "FAIL", "params": frozen.params, "value": None,
            "message": frozen.user_attrs.get(MESSAGE_ATTR, "interrupted"),
        })

    def _wait_for_other_processes(self) -> None:
        """Trials still running belong to other ``distrain tune`` processes: wait so the outputs are final."""
        announced = False
        while True:
            with self._storage_lock():
                for number in fail_interrupted_trials(self.study):
                    logger.info("trial %d was interrupted (its distrain tune process is gone): marked failed", number)
                    self._record_interrupted(number)
            running = running_trials(self.study)
            if not running:
                return
            if not announced:
                logger.info("waiting for %d trial(s) running in other processes: %s", len(running),
                            ", ".join(str(t.number) for t in running))
                announced = True
            time.sleep(2)

    @contextlib.contextmanager
    def _heartbeat(self, trial_id: int) -> Iterator[None]:
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(HEARTBEAT_SECONDS):
                try:
                    self.storage.record_heartbeat(trial_id)
                except Exception:  # noqa: BLE001 - a missed beat is retried; staleness needs many
                    logger.debug("heartbeat failed", exc_info=True)

        thread = threading.Thread(target=beat, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def _storage_lock(self):
        return storage_lock(self.settings.storage_url)
