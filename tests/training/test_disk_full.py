"""A disk that refuses a write (simulated with RLIMIT_FSIZE: ``write`` fails with EFBIG, as on a full
disk) stops the run with one line naming the path, keeps the previous checkpoint loadable, and
``--recover`` once the limit is gone ends bitwise equal to an uninterrupted run."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import torch

from support.cli import run_cli
from support.configs import text_config, write_config
from support.paths import PLUGINS, ROOT
from safetensors.torch import load_file

FINAL = "checkpoints/epoch_0002_batch_00000000/model.safetensors"
LIMIT = 64 * 1024  # bytes per file: logs, config and metrics fit; the checkpoint's state does not


def limited_train(config, directory, *extra: str) -> subprocess.CompletedProcess:
    def limit_file_size() -> None:  # in the child only; Python already ignores SIGXFSZ, so write gets EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(PLUGINS)]))
    environment["DISTRAIN_CACHE"] = "off"
    return subprocess.run([sys.executable, "-m", "distrain", "train", str(config), "-s", str(directory), *extra],
                          capture_output=True, text=True, env=environment, preexec_fn=limit_file_size, timeout=300)


def test_a_full_disk_stops_with_one_line_and_recover_ends_bitwise_equal(text_data, tmp_path):
    config = text_config(text_data)
    config["model"]["embedding_dim"] = 512  # ~70 KB of weights, ~210 KB of optimizer state
    path = write_config(tmp_path / "config.json", config)
    reference = run_cli("train", str(path), "-s", str(tmp_path / "reference"), env={"DISTRAIN_CACHE": "off"})
    assert reference.returncode == 0, reference.stderr

    first_epoch = run_cli("train", str(path), "-s", str(tmp_path / "run"), "-o", '{"trainer.num_epochs": 1}',
                          env={"DISTRAIN_CACHE": "off"})
    assert first_epoch.returncode == 0, first_epoch.stderr
    checkpoints = tmp_path / "run" / "checkpoints"
    before = sorted(p.name for p in checkpoints.iterdir())
    full = limited_train(path, tmp_path / "run", "--recover")
    assert full.returncode == 1, full.stderr
    last = full.stderr.strip().splitlines()[-1]
    assert last.startswith("error: cannot write ") and "File too large" in last and str(tmp_path / "run") in last
    assert "/checkpoints/epoch_0002_batch_00000000:" in last and ".tmp-" not in last  # the folder, not a temporary
    assert "Traceback" not in full.stderr
    assert sorted(p.name for p in checkpoints.iterdir() if not p.name.startswith(".")) == before
    assert not [p for p in checkpoints.iterdir() if p.name.startswith(".tmp")]
    latest = checkpoints / "epoch_0001_batch_00000000"
    load_file(str(latest / "model.safetensors"))
    torch.load(latest / "training_state.pt", weights_only=True)

    recovered = run_cli("train", str(path), "-s", str(tmp_path / "run"), "--recover", env={"DISTRAIN_CACHE": "off"})
    assert recovered.returncode == 0, recovered.stderr
    expected, actual = load_file(str(tmp_path / "reference" / FINAL)), load_file(str(tmp_path / "run" / FINAL))
    for name in expected:
        assert torch.equal(expected[name], actual[name]), name
