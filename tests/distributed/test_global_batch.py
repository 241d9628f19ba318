"""``data_loader.global_batch_size``: one optimizer step's samples fixed whatever the world; each worker's
micro-batch and the accumulation steps follow from the world size, the shares and the cap per worker."""

from __future__ import annotations

import json

import pytest

from support.cli import run_cli
from support.distributed import final_metrics, max_weight_difference
from support.paths import ROOT
from distrain.data.sampler import GlobalBatchSampler
from distrain.distributed.global_batch import GlobalBatchError, split_global_batch
from distrain.training.checkpointing import CheckpointError
from distrain.training.recovery import order_fingerprint, position_in_batches, samples_in_batches

DIGITS = str(ROOT / "configs" / "digits_mlp.jsonnet")


# ------------------------------------------------------------- resuming onto other micro-batches
def test_a_position_saved_in_one_cut_of_the_global_batches_is_found_in_another():
    """A checkpoint counts the samples its batches held, so a run that cuts the same global batches into other
    micro-batches (another world under global_batch_size) resumes after the very same samples."""
    steps_of_16, micro_of_8 = (GlobalBatchSampler(120, batch_size=size, seed=3) for size in (16, 8))
    assert order_fingerprint(steps_of_16, 1) != order_fingerprint(micro_of_8, 1)
    assert order_fingerprint(steps_of_16, 1, cut=False) == order_fingerprint(micro_of_8, 1, cut=False)
    saved = {"epoch": 1, "batches": 3, "samples": samples_in_batches(steps_of_16, 1, 3)}
    assert saved["samples"] == 48
    assert position_in_batches(micro_of_8, saved) == 6
    assert position_in_batches(steps_of_16, {**saved, "batches": 6, "samples": 48}) == 3
    assert position_in_batches(micro_of_8, {"epoch": 1, "batches": 5}) == 5  # an older checkpoint: batches only
    with pytest.raises(CheckpointError, match="stopped 40 samples into epoch 2, where no batch of this run ends"):
        position_in_batches(steps_of_16, {"epoch": 1, "batches": 5, "samples": 40})


# ------------------------------------------------------------------------------------ the arithmetic
@pytest.mark.parametrize("global_batch,workers,shares,cap,expected", [
    (32, 1, None, None, (1, (32,))),
    (32, 2, None, None, (1, (16, 16))),
    (32, 2, [3, 1], None, (1, (24, 8))),
    (32, 2, [3, 1], 8, (4, (6, 2))),  # 24 > 8: 2 steps of 12+4 still too many, 4 steps of 6+2
    (24, 3, None, 4, (2, (4, 4, 4))),
    (30, 1, None, 8, (5, (6,))),  # 30 = 5 x 6: the fewest steps whose micro-batch fits
    (24, 4, [0.5, 0.25, 0.125, 0.125], None, (1, (12, 6, 3, 3))),
])
def test_the_fewest_accumulation_steps_whose_micro_batches_are_whole_and_fit(global_batch, workers, shares, cap,
                                                                              expected):
    split = split_global_batch(global_batch, workers, shares, cap)
    assert (split.accumulation, split.per_worker) == expected
    assert sum(split.per_worker) * split.accumulation == global_batch
    assert split.batch_size * workers == split.micro_batch


def test_a_global_batch_that_cannot_be_cut_names_the_world_size():
    with pytest.raises(GlobalBatchError):  # an eighth of 12 is no whole sample, nor of 6, 4 or 3
        split_global_batch(12, 4, [0.5, 0.25, 0.125, 0.125])
    with pytest.raises(GlobalBatchError, match="7 samples do not cut into micro-batches of whole samples for the 2 "
                                               "data-parallel worker\\(s\\) of world size 4"):
        split_global_batch(7, 2, world_size=4)
    with pytest.raises(GlobalBatchError, match="3 samples are fewer than the 4 data-parallel workers of world size 4"):
        split_global_batch(3, 4)
    with pytest.raises(GlobalBatchError, match="at most 1 per worker"):
        split_global_batch(8, 2, [3, 1], max_micro_batch=1)


# ----------------------------------------------------------------------------------- through the CLI
def global_batch(size: int, **loader) -> dict:
    return {"data_loader": {"batch_size": None, "global_batch_size": size, **loader},
            "trainer.num_epochs": 2, "trainer.progress_bar": False}


def test_one_worker_and_two_workers_with_shares_and_a_cap_take_the_same_steps(prepared_data, tmp_path):
    """32 samples a step: one worker at once; 2 workers sharing 3:1 with at most 8 each, 4 micro-batches
    of 6 + 2. The final weights and metrics agree within 1e-5, and the log says how the batch was cut."""
    runs = {"one": global_batch(32),
            "two": {**global_batch(32, max_micro_batch_size=8),
                    "distributed": {"cuda_devices": [-1, -1], "device_weights": [3, 1]}}}
    for name, overrides in runs.items():
        result = run_cli("train", DIGITS, "-s", str(tmp_path / name), "-o", json.dumps(overrides), cwd=prepared_data)
        assert result.returncode == 0, result.stderr[-3000:]
    assert "effective batch size 32 = 4 per worker x 2 worker(s) x 4 accumulation step(s)" in \
        (tmp_path / "two" / "out_worker0.log").read_text()
    assert max_weight_difference(tmp_path / "one", tmp_path / "two") <= 1e-5
    one, two = final_metrics(tmp_path / "one"), final_metrics(tmp_path / "two")
    for key in ("training_loss", "validation_loss", "validation_accuracy"):
        assert two[key] == pytest.approx(one[key], abs=1e-5), key


@pytest.mark.parametrize("overrides,message", [
    ({**global_batch(7), "distributed": {"cuda_devices": [-1, -1]}},
     "error: data_loader.global_batch_size: 7 samples do not cut into micro-batches of whole samples for the 2 "
     "data-parallel worker(s) of world size 2"),
    ({**global_batch(10), "distributed": {"cuda_devices": [-1, -1], "device_weights": [3, 1]}},
     "error: data_loader.global_batch_size: 10 samples do not cut into micro-batches of whole samples for the 2 "
     "data-parallel worker(s) of world size 2 in the shares [3.0, 1.0]"),
    ({**global_batch(1), "distributed": {"cuda_devices": [-1, -1]}},
     "error: data_loader.global_batch_size: 1 samples are fewer than the 2 data-parallel workers of world size 2: "
     "each needs at least one"),
    ({"data_loader": {"global_batch_size": 32}},
     "error: data_loader.batch_size: cannot be given with global_batch_size: each worker's batch follows from it "
     "and the world size"),
    ({**global_batch(32), "trainer.num_gradient_accumulation_steps": 2},
     "error: trainer.num_gradient_accumulation_steps: cannot be given with data_loader.global_batch_size, which "
     "decides the accumulation steps"),
], ids=["indivisible", "indivisible-shares", "fewer-than-workers", "with-batch-size", "with-accumulation"])
def test_a_global_batch_the_world_cannot_take_is_one_line_before_any_data_is_read(tmp_path, overrides, message):
    """Run from an empty folder: the digits config's data paths do not exist there, so any error but the
    batch's would be about the data."""
    result = run_cli("check", DIGITS, "-o", json.dumps(overrides), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [message]


def test_min_workers_needs_restarts_and_no_more_than_the_workers(tmp_path):
    overrides = {**global_batch(12), "distributed": {"cuda_devices": [-1, -1], "min_workers": 3, "max_restarts": 1}}
    result = run_cli("check", DIGITS, "-o", json.dumps(overrides), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: 2 problems in the config:",
        "  distributed.min_workers: 3 is more than the 2 worker(s) of cuda_devices",
        "  distributed.min_workers: needs max_restarts of at least 2: a worker is left out when it fails again "
        "right after a restart",
    ]
