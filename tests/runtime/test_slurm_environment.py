"""SLURM tasks find the rendezvous from their own variables: the first host of the node list and
MASTER_PORT, else a port every task of the job derives alike from the job id (pure functions)."""

from __future__ import annotations

import pytest

from distrain.runtime.environments import slurm


@pytest.mark.parametrize("nodelist,hosts", [
    ("node[01-04]", ["node01", "node02", "node03", "node04"]),
    ("a,b", ["a", "b"]),
    ("gpu-[1,3-5]", ["gpu-1", "gpu-3", "gpu-4", "gpu-5"]),
    ("gpu[03-05,07],cpu1", ["gpu03", "gpu04", "gpu05", "gpu07", "cpu1"]),
    ("node[8-11]", ["node8", "node9", "node10", "node11"]),
    ("r[1-2]n[1-2]", ["r1n1", "r1n2", "r2n1", "r2n2"]),
    ("single", ["single"]),
    ("127.0.0.[1-2]", ["127.0.0.1", "127.0.0.2"]),
])
def test_node_lists_expand_in_order_keeping_zero_padding(nodelist, hosts):
    assert slurm.expand_nodelist(nodelist) == hosts
    assert slurm.first_host(nodelist) == hosts[0]


@pytest.mark.parametrize("job_id,port", [(0, 15000), (4242, 19242), (123456, 18456), (19999, 34999), (20000, 15000)])
def test_the_port_is_derived_from_the_job_id(job_id, port):
    assert slurm.port_for_job(job_id) == port


def task(**extra: str) -> dict[str, str]:
    return {"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1", "SLURM_STEP_ID": "0",
            "SLURM_STEP_TASKS_PER_NODE": "2(x4)", "SLURM_JOB_ID": "123456", **extra}


def test_a_task_meets_on_the_first_node_of_its_step_at_the_job_port():
    launched = slurm.detect(task(SLURM_STEP_NODELIST="gpu-[3,5-7]", SLURM_JOB_NODELIST="other[1-9]"))
    assert (launched.rank, launched.world_size, launched.local_rank, launched.local_world_size) == (5, 8, 1, 2)
    assert (launched.master_addr, launched.master_port) == ("gpu-3", 18456)
    assert slurm.detect(task(SLURM_JOB_NODELIST="node[01-04]")).master_addr == "node01"
    assert slurm.detect(task(SLURM_NODELIST="a,b")).master_addr == "a"


def test_master_addr_and_port_override_the_node_list_and_job_id():
    launched = slurm.detect(task(SLURM_JOB_NODELIST="node[01-04]", MASTER_ADDR="10.0.0.9", MASTER_PORT="29500"))
    assert (launched.master_addr, launched.master_port) == ("10.0.0.9", 29500)


def test_an_interactive_allocation_shell_is_not_a_task():
    shell = task(SLURM_JOB_NAME="bash")
    del shell["SLURM_STEP_ID"]
    assert slurm.detect(shell) is None
    assert slurm.detect({"SLURM_JOB_ID": "1"}) is None
