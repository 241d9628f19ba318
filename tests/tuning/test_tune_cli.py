"""`distrain tune` end to end with real processes, on tiny data and a tiny model."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.cli import run_cli
from support.configs import text_config, write_config
from support.data import sentiment_records, write_jsonl
from support.paths import PLUGINS, ROOT

LR = {"trainer.optimizer.lr": {"type": "float", "low": 0.003, "high": 0.05, "log": True}}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tune")
    data = {
        "train": write_jsonl(root / "train.jsonl", sentiment_records(120, seed=1)),
        "validation": write_jsonl(root / "validation.jsonl", sentiment_records(40, seed=2)),
    }
    config = text_config(data, num_epochs=3, validation_metric="+accuracy")
    config["model"]["metrics"] = {"accuracy": {"type": "categorical_accuracy"}}
    return {"root": root, "config": write_config(root / "exp.json", config), "cache": root / "cache"}


def tune(tiny, search: dict, directory: Path, *flags: str, timeout: float = 600) -> subprocess.CompletedProcess:
    search_file = write_config(directory.parent / f"{directory.name}_search.json", search)
    return run_cli("tune", str(tiny["config"]), str(search_file), "-s", str(directory), *flags,
                   timeout=timeout, env={"DISTRAIN_CACHE": str(tiny["cache"])})


def study_trials(directory: Path, study_name: str | None = None):
    import optuna

    return optuna.load_study(study_name=study_name or directory.name,
                             storage=f"sqlite:///{directory / 'study.db'}").get_trials()


@pytest.fixture(scope="module")
def searched(tiny):
    directory = tiny["root"] / "search"
    search = {**LR, "model.embedding_dim": {"type": "int", "low": 4, "high": 16, "step": 4}}
    result = tune(tiny, search, directory, "--trials", "3", "--pruner", "none", "--seed", "1")
    assert result.returncode == 0, result.stderr
    return directory, result


def test_search_runs_each_trial_in_its_own_folder_and_writes_outputs(searched):
    directory, result = searched
    rows = list(csv.DictReader(open(directory / "trials.csv")))
    assert [row["number"] for row in rows] == ["0", "1", "2"]
    assert {row["state"] for row in rows} == {"COMPLETE"}
    assert set(rows[0]) >= {"number", "state", "trainer.optimizer.lr", "model.embedding_dim", "value", "epochs",
                            "duration_s"}
    for row in rows:
        trial_dir = directory / f"trial_{int(row['number']):04d}"
        assert (trial_dir / "model.tar.gz").is_file()
        metrics = json.loads((trial_dir / "metrics.json").read_text())
        assert float(row["value"]) == metrics["best_validation_accuracy"]
        assert json.loads((trial_dir / "trial.json").read_text())["state"] == "COMPLETE"
    assert (directory / "search.png").stat().st_size > 1000
    assert "best: trial" in result.stdout and "3 trials (3 complete)" in result.stdout


def test_best_config_retrained_alone_reproduces_the_best_trial_exactly(searched, tiny):
    directory, _ = searched
    rows = list(csv.DictReader(open(directory / "trials.csv")))
    best = max(rows, key=lambda row: float(row["value"]))
    best_config = json.loads((directory / "best_config.json").read_text())
    assert best_config["trainer"]["optimizer"]["lr"] == float(best["trainer.optimizer.lr"])
    assert "callbacks" not in best_config["trainer"]  # trainable as is: no pruning callback inside
    retrained = tiny["root"] / "retrained"
    result = run_cli("train", str(directory / "best_config.json"), "-s", str(retrained),
                     env={"DISTRAIN_CACHE": str(tiny["cache"])})
    assert result.returncode == 0, result.stderr
    accuracy = json.loads((retrained / "metrics.json").read_text())["best_validation_accuracy"]
    assert accuracy == float(best["value"])


@pytest.mark.parametrize("search, key", [
    ({**LR, "data_loader.batch_size": {"type": "int", "low": -8, "high": 16}}, "data_loader.batch_size"),
    ({**LR, "model.embedding_dimm": {"type": "int", "low": 4, "high": 8}}, "model.embedding_dimm"),
])
def test_bad_search_space_exits_2_naming_the_key_before_any_trial(tiny, search, key):
    directory = tiny["root"] / f"bad_{key.replace('.', '_')}"
    result = tune(tiny, search, directory, "--trials", "2")
    assert result.returncode == 2, result.stderr
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(error_lines) == 1 and f'search key "{key}"' in error_lines[0]
    assert not list(directory.glob("trial_*")) and not (directory / "study.db").exists()


def test_failed_trial_is_recorded_with_its_message_and_the_study_goes_on(tiny):
    directory = tiny["root"] / "failing"
    # a valid config whose data is not: the trial fails when it reads its second record
    bad = tiny["root"] / "bad_train.jsonl"
    bad.write_text('{"text": "good film", "label": "pos"}\n{"text": 3\n')
    good = str(tiny["root"] / "train.jsonl")
    search = {"train_data_path": {"type": "categorical", "choices": [good, str(bad)]}}
    result = tune(tiny, search, directory, "--trials", "2", "--sampler", "grid", "--pruner", "none")
    assert result.returncode == 0, result.stderr
    rows = {row["train_data_path"]: row for row in csv.DictReader(open(directory / "trials.csv"))}
    assert rows[good]["state"] == "COMPLETE"
    assert rows[str(bad)]["state"] == "FAIL"
    assert f"{bad}:2" in rows[str(bad)]["message"]
    assert json.loads((directory / "best_config.json").read_text())["train_data_path"] == good


def test_hopeless_trial_is_pruned_after_an_epoch_and_its_folder_says_so(tiny):
    import optuna

    directory = tiny["root"] / "pruning"
    directory.mkdir()
    study = optuna.create_study(study_name="pruning", storage=f"sqlite:///{directory / 'study.db'}",
                                direction="maximize")
    for lr in [0.05, 0.05, 0.05, 0.05, 1e-7]:  # 4 trials the median pruner learns from, then a hopeless one
        study.enqueue_trial({"trainer.optimizer.lr": lr})
    search = {"trainer.optimizer.lr": {"type": "float", "low": 1e-7, "high": 0.1, "log": True}}
    result = tune(tiny, search, directory, "--trials", "5", "--pruner", "median", "-o",
                  '{"trainer.num_epochs": 6}')
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(open(directory / "trials.csv")))
    assert [row["state"] for row in rows] == ["COMPLETE"] * 4 + ["PRUNED"]
    hopeless = directory / "trial_0004"
    pruned = json.loads((hopeless / "pruned.json").read_text())
    assert pruned["epochs_trained"] < 6 and int(rows[4]["epochs"]) == pruned["epochs_trained"]
    assert (hopeless / "model.tar.gz").is_file()  # a pruned run still ends cleanly
    assert "pruned" in json.loads((hopeless / "trial.json").read_text())["message"]
    assert "stopping: pruned" in (hopeless / "out_worker0.log").read_text()


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _wait_for(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_kill_9_mid_trial_then_rerun_gives_exactly_the_requested_trials(tiny):
    directory = tiny["root"] / "killed"
    search_file = write_config(tiny["root"] / "killed_search.json", LR)
    command = [sys.executable, "-m", "distrain", "tune", str(tiny["config"]), str(search_file), "-s", str(directory),
               "--trials", "4", "--pruner", "none", "-o", '{"trainer.num_epochs": 10}']  # 9 epochs to kill trial 1 in
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(PLUGINS)]),
               DISTRAIN_CACHE=str(tiny["cache"]))
    first = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(lambda: (directory / "trial_0000" / "trial.json").is_file(), 300, "trial 0 to finish")
        _wait_for(lambda: (directory / "trial_0001" / "metrics_epoch_0.json").is_file(), 300, "trial 1 to train")
        finished = (directory / "trial_0000" / "trial.json").read_text()
        finished_mtime = (directory / "trial_0000" / "metrics.json").stat().st_mtime_ns
        first.send_signal(signal.SIGKILL)
    finally:
        first.wait()
    # the trial process dies with its distrain tune (SIGTERM from the kernel: it checkpoints and stops)
    _wait_for(lambda: not _processes_mentioning(str(directory / "trial_0001")), 120, "trial 1's process to stop")

    rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    trials = study_trials(directory)
    assert [t.number for t in trials] == [0, 1, 2, 3]
    assert [t.state.name for t in trials] == ["COMPLETE", "FAIL", "COMPLETE", "COMPLETE"]
    assert "interrupted" in trials[1].user_attrs["message"]
    assert (directory / "trial_0000" / "trial.json").read_text() == finished
    assert (directory / "trial_0000" / "metrics.json").stat().st_mtime_ns == finished_mtime
    assert json.loads((directory / "trial_0001" / "trial.json").read_text())["state"] == "FAIL"
    assert "this process ran 2 trial(s): 2, 3" in rerun.stderr


def test_two_processes_on_one_sqlite_study_run_disjoint_trials(tiny):
    directory = tiny["root"] / "shared"
    search_file = write_config(tiny["root"] / "shared_search.json", LR)
    command = [sys.executable, "-m", "distrain", "tune", str(tiny["config"]), str(search_file), "-s", str(directory),
               "--trials", "5", "--pruner", "none"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(PLUGINS)]),
               DISTRAIN_CACHE=str(tiny["cache"]))
    processes = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
    outputs = [process.communicate(timeout=600) for process in processes]
    assert [process.returncode for process in processes] == [0, 0], outputs
    ran = []
    for _, stderr in outputs:
        line = next(line for line in stderr.splitlines() if "this process ran" in line)
        numbers = line.rpartition(":")[2].strip()
        ran.append({int(n) for n in numbers.split(", ")} if numbers != "none" else set())
    assert ran[0].isdisjoint(ran[1]) and ran[0] | ran[1] == {0, 1, 2, 3, 4}
    trials = study_trials(directory)
    assert [t.number for t in trials] == [0, 1, 2, 3, 4]
    assert {t.state.name for t in trials} == {"COMPLETE"}
    assert len({t.user_attrs["tune_process"] for t in trials}) == 2


def test_n_jobs_runs_trials_at_once_on_disjoint_cpu_shares(tiny):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPU cores")
    directory = tiny["root"] / "parallel"
    result = tune(tiny, LR, directory, "--trials", "2", "--n-jobs", "2", "--pruner", "none")
    assert result.returncode == 0, result.stderr
    cpus = [set(json.loads((directory / f"trial_{n:04d}" / "trial.json").read_text())["cpus"]) for n in (0, 1)]
    assert cpus[0] and cpus[1] and cpus[0].isdisjoint(cpus[1])
    assert len(study_trials(directory)) == 2


def test_n_jobs_beyond_the_cores_is_refused(tiny):
    result = tune(tiny, LR, tiny["root"] / "too_many", "--trials", "2", "--n-jobs", str(os.cpu_count() * 4))
    assert result.returncode == 2 and "--n-jobs" in result.stderr
