"""The study bookkeeping of `distrain tune` (tuning/study.py), on an in-memory SQLite study."""

from __future__ import annotations

import optuna
import pytest
from optuna.trial import TrialState

from distrain.tuning.study import OWNER_ATTR, fail_interrupted_trials, open_storage, owner_tag


@pytest.fixture
def study(tmp_path):
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna.create_study(storage=open_storage(f"sqlite:///{tmp_path / 'study.db'}"), study_name="s")


def test_a_trial_this_process_finishes_meanwhile_is_not_reported_interrupted(study, monkeypatch):
    """With ``--n-jobs 2``, one thread looks for interrupted trials while the other finishes its own: a trial
    that completes between the two looks is not one whose process is gone (it was reported as one, and its
    trial.json overwritten without its cpus)."""
    own = study.ask()
    own.set_user_attr(OWNER_ATTR, owner_tag())

    def the_other_thread_finishes(given):
        given.tell(own.number, 1.0)

    monkeypatch.setattr(optuna.storages, "fail_stale_trials", the_other_thread_finishes)  # imported in the call
    assert fail_interrupted_trials(study) == []
    assert study.trials[own.number].state == TrialState.COMPLETE


def test_a_trial_of_a_process_that_is_gone_is_marked_failed(study):
    lost = study.ask()
    lost.set_user_attr(OWNER_ATTR, f"{owner_tag().rpartition(':')[0]}:{2**22 + 12345}")  # no such pid
    assert fail_interrupted_trials(study) == [lost.number]
    assert study.trials[lost.number].state == TrialState.FAIL
