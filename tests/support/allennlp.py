"""What the tests of AllenNLP's configs share: where the copied configs are, movie-review sentences to train
on, check-then-train-an-epoch, and an archive AllenNLP trained beside AllenNLP's outputs of it."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from support.cli import run_cli
from support.configs import write_config
from support.golden_informative import assert_outputs_vary
from support.paths import TESTS

#: allennlp-models' training configs, with only data paths and pretrained names changed (each names its source)
CONFIGS = TESTS / "allennlp_configs"
#: archives AllenNLP trained and its outputs of them, one folder a case (scripts/allennlp_golden.py)
GOLDEN = TESTS / "allennlp_golden"


def archive_config(case: str) -> dict:
    """The config inside a golden case's archive."""
    import tarfile

    with tarfile.open(GOLDEN / case / "model.tar.gz") as archive:
        return json.loads(archive.extractfile("config.json").read())


def golden_job(case: str):
    """A golden case's archive loaded by distrain over its own validation data (relative paths: run from the
    case's repository folder), and AllenNLP's outputs, one per validation instance, which vary across the instances
    (tests/support/golden_informative.py; unless the case is listed as not telling yet)."""
    from distrain.experiment.archive.jobs import load_job

    job = load_job(str(GOLDEN / case / "model.tar.gz"), archive_config(case)["validation_data_path"], {})
    golden = json.loads((GOLDEN / case / "outputs.json").read_text())
    assert len(job.dataset) == len(golden)
    assert_outputs_vary(case, golden)  # else outputs that ignore the input would match
    return job, golden


def assert_span_answers_match(job, golden: list[dict]) -> None:
    """A reading-comprehension model's span scores (within 1e-5), best spans and answers equal AllenNLP's, one
    question at a time (padding-free: every position is scored)."""
    import numpy as np
    import torch

    with torch.inference_mode():
        for index, theirs in enumerate(golden):
            mine = job.model(**job.dataset.batch(np.arange(index, index + 1)))
            for key in ("span_start_logits", "span_end_logits"):
                np.testing.assert_allclose(mine[key][0].numpy(), theirs[key], atol=1e-5, rtol=0)
            assert mine["best_span"][0].tolist() == theirs["best_span"]
            assert mine["best_span_str"][0] == theirs["best_span_str"]

POSITIVE = "great fun moving superb charming".split()
NEGATIVE = "dull boring awful mess tedious".split()
FILLER = "the movie was a film plot and".split()


def sentences(count: int, seed: int) -> list[tuple[list[str], str]]:
    """Labelled reviews: four filler words and two words of the label's kind, shuffled."""
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        label = rng.choice(["pos", "neg"])
        words = rng.choices(FILLER, k=4) + rng.choices(POSITIVE if label == "pos" else NEGATIVE, k=2)
        rng.shuffle(words)
        rows.append((words, label))
    return rows


def check_and_train_an_epoch(workdir: Path, config: dict, name: str, metric: str = "validation_accuracy",
                             also: tuple[str, ...] = ()) -> Path:
    """``distrain check`` passes on the config as given, then ``train`` runs one epoch whose ``metric`` lies in
    [0, 1] and, with the metrics named in ``also``, is what ``distrain evaluate`` gives the archive on the validation
    data (the trainer's validation pass and a fresh process over the archive, within 1e-6): its run folder."""
    path = write_config(workdir / f"{name}.json", config)
    checked = run_cli("check", str(path), cwd=workdir)
    assert checked.returncode == 0, checked.stderr
    trained = run_cli("train", str(path), "-s", f"runs/{name}", "-f", "-o", '{"trainer.num_epochs": 1}', cwd=workdir)
    assert trained.returncode == 0, trained.stderr
    run = workdir / "runs" / name
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["epoch"] == 0 and 0 <= metrics[metric] <= 1
    assert_evaluate_gives_each(run, config["validation_data_path"], {name: metrics[name] for name in (metric, *also)},
                               workdir)
    return run


def assert_evaluate_gives(run: Path, data: str, metric: str, reported: float, cwd: Path, *flags: str) -> None:
    """``distrain evaluate`` of ``run``'s archive on ``data`` gives the ``metric`` the trainer reported (its
    ``best_``/``validation_``/``test_`` prefix dropped) within 1e-6: a fresh process reading the data with the
    archive's reader and the archived weights, against the training run's own pass (synced over its workers)."""
    assert_evaluate_gives_each(run, data, {metric: reported}, cwd, *flags)


def assert_evaluate_gives_each(run: Path, data: str, reported: dict[str, float], cwd: Path, *flags: str) -> None:
    """:func:`assert_evaluate_gives` for several metrics of one run, from one ``distrain evaluate``."""
    out = run / f"evaluated_{Path(data).stem}.json"
    evaluated = run_cli("evaluate", str(run / "model.tar.gz"), str(data), "--output-file", str(out), *flags, cwd=cwd)
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    again = json.loads(out.read_text())
    for metric, value in reported.items():
        name = re.sub(r"^(best_)?(validation_|test_)", "", metric)
        assert abs(again[name] - value) <= 1e-6, (metric, again[name], value)


def train_on_one_and_two_workers(workdir: Path, config_for) -> dict[int, Path]:
    """``config_for(workers)`` (the same global batch either way) trained by 1 and by 2 CPU workers: the run
    folders, by worker count."""
    runs = {}
    for workers in (1, 2):
        path = write_config(workdir / f"workers_{workers}.json", config_for(workers))
        runs[workers] = workdir / "runs" / f"workers_{workers}"
        trained = run_cli("train", str(path), "-s", str(runs[workers]), "-f", cwd=workdir)
        assert trained.returncode == 0, trained.stderr
    return runs


def plain_sgd_on(config: dict, data_path: str, workers: int, global_batch: int = 2, lr: float = 0.5,
                 epochs: int = 2) -> dict:
    """``config`` trained and validated on ``data_path``: ``epochs`` of plain SGD (its step is linear in the
    gradient) over global batches of ``global_batch`` split among ``workers`` CPU workers."""
    config["train_data_path"] = config["validation_data_path"] = data_path
    config["data_loader"] = {"batch_size": global_batch // workers}
    config["trainer"] |= {"num_epochs": epochs, "cuda_device": None, "optimizer": {"type": "sgd", "lr": lr}}
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers}
    return config
