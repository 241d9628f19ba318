"""Short smokes of the two long proofs (the full runs stay out of CI's 20 minutes): ``scripts/chaos.py`` strikes a
2-worker job three times (a kill -9 of a worker, a kill inside a checkpoint write, a full disk when run as root)
and ends with the uninterrupted run's weights, and ``scripts/soak_serve.py`` loads a classifier and a language
model with mixed, partly hostile traffic for a few seconds, then drains them with SIGTERM."""

from __future__ import annotations

import os
import subprocess
import sys

from support.paths import ROOT


def script(name: str, *arguments: str, timeout: float) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, str(ROOT / "scripts" / name), *arguments], capture_output=True, text=True,
                          timeout=timeout, env=environment)


def test_three_faults_are_survived_and_the_weights_are_bitwise_those_of_the_uninterrupted_run(tmp_path):
    root = os.geteuid() == 0  # the disk that fills is a tmpfs in a private mount namespace
    kinds = "kill_worker,kill_in_checkpoint" + (",disk_full" if root else "")
    result = script("chaos.py", "--faults", "3", "--seed", "7", "--layout", "ddp", "--kinds", kinds,
                    "--work", str(tmp_path), timeout=600)
    lines = result.stdout.strip().splitlines()
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert lines[-2:] == ["faults_survived=3/3", "max_weight_difference=0"]
    faults = [line for line in lines if line.startswith("fault ")]
    assert len(faults) == 3 and all(line.endswith("survived") for line in faults)
    assert "final_weights=bitwise equal" in result.stdout
    if root:
        disk = next(line for line in faults if "disk_full" in line)
        assert "error: cannot write " in disk and "/checkpoints/epoch_" in disk and "space freed" in disk


def test_bad_chaos_flags_are_one_line():
    for arguments, message in ((["--faults", "0"], "--faults must be at least 1"),
                               (["--faults", "2", "--kinds", "kill_everything"], "--kinds: kill_everything not among"),
                               (["--faults", "2", "--kinds", "node_lost"], "--kinds: node_lost not among"),
                               (["--faults", "2", "--layout", "zero"], "argument --layout: invalid choice")):
        result = script("chaos.py", *arguments, timeout=60)
        assert result.returncode == 2, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr, result.stderr


def test_a_few_seconds_of_mixed_load_reset_nothing_fail_nothing_and_sigterm_answers_what_is_in_flight(
        drug_archive, cycle_lm_archive, tmp_path):
    result = script("soak_serve.py", "--minutes", "0.2", "--window-s", "6", "--clients", "2", "--classifier",
                    str(drug_archive.archive), "--language-model", str(cycle_lm_archive), "--work", str(tmp_path),
                    timeout=300)
    output = result.stdout
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    for line in ("connection_resets=0 ok", "status_5xx_other_than_503=0 ok", "sigterm_in_flight_answered=24/24"):
        assert line in output, output[-4000:]
    assert "exit statuses [0, 0] ok" in output
    statuses = next(line for line in output.splitlines() if line.startswith("requests by status: "))
    for seen in ("predict 200", "completion 200", "stream_dropped 200", "no_key 401", "bad_json 400", "oversized 413",
                 "wrong_type 415", "unknown_field 422", "slow_sender 200"):
        assert seen in statuses, statuses
    # timing (p99 over windows) and memory growth need minutes, not seconds: the full soak checks them


def test_bad_soak_flags_are_one_line(tmp_path):
    for arguments, message in ((["--minutes", "0"], "--minutes must be positive"),
                               (["--minutes", "1", "--window-s", "90"], "--window-s must be between 1 and"),
                               (["--minutes", "1", "--classifier", str(tmp_path / "none.tar.gz")], "archive not found")):
        result = script("soak_serve.py", *arguments, timeout=60)
        assert result.returncode == 2, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr, result.stderr
