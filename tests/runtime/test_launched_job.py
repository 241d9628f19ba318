"""Whether a process torchrun started continues its job's run or starts it: torchrun's restart count, or the job
id the run folder was started by (a node joining a running job counts no restarts of its own)."""

from __future__ import annotations

from distrain.runtime.environments import torchelastic
from distrain.runtime.launch import LAUNCHED_JOB_FILE, continues_its_job, record_launched_job

TORCHRUN = {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}


def test_torchrun_tells_its_restart_count_and_its_rendezvous_id_but_not_the_default_one():
    launched = torchelastic.detect(TORCHRUN | {"TORCHELASTIC_RESTART_COUNT": "2", "TORCHELASTIC_RUN_ID": "job-7"})
    assert (launched.restart_count, launched.job_id) == (2, "job-7")
    plain = torchelastic.detect(TORCHRUN | {"TORCHELASTIC_RUN_ID": "none"})
    assert (plain.restart_count, plain.job_id) == (0, None)


def test_a_fresh_agent_continues_a_folder_its_job_started_and_no_other(tmp_path):
    first = torchelastic.detect(TORCHRUN | {"TORCHELASTIC_RUN_ID": "job-7"})
    assert not continues_its_job(first, tmp_path)
    record_launched_job(first, tmp_path)
    assert (tmp_path / LAUNCHED_JOB_FILE).is_file()
    joining = torchelastic.detect(TORCHRUN | {"TORCHELASTIC_RUN_ID": "job-7", "TORCHELASTIC_RESTART_COUNT": "0"})
    assert continues_its_job(joining, tmp_path)
    other_job = torchelastic.detect(TORCHRUN | {"TORCHELASTIC_RUN_ID": "job-8"})
    assert not continues_its_job(other_job, tmp_path)


def test_without_a_job_id_only_a_restart_continues(tmp_path):
    anonymous = torchelastic.detect(TORCHRUN)
    record_launched_job(anonymous, tmp_path)
    assert not (tmp_path / LAUNCHED_JOB_FILE).exists()
    assert not continues_its_job(anonymous, tmp_path)
    assert continues_its_job(torchelastic.detect(TORCHRUN | {"TORCHELASTIC_RESTART_COUNT": "1"}), tmp_path)
