"""split_global_batch at its edges (one sample per worker, a step per sample, an accumulation skipped between two
that fit) and its messages word for word; test_global_batch.py has the main cases and the runs through the CLI."""

from __future__ import annotations

import pytest

from distrain.distributed.global_batch import GlobalBatchError, split_global_batch


def cut(*args, **kwargs) -> tuple[int, tuple[int, ...]]:
    split = split_global_batch(*args, **kwargs)
    return split.accumulation, split.per_worker


def failure(*args, **kwargs) -> str:
    with pytest.raises(GlobalBatchError) as raised:
        split_global_batch(*args, **kwargs)
    return str(raised.value)


def test_one_sample_per_worker_and_one_step_per_sample_are_cuts():
    assert cut(2, 2) == (1, (1, 1))
    assert cut(4, 1, max_micro_batch=1) == (4, (1,))
    assert cut(6, 2, max_micro_batch=1) == (3, (1, 1))


def test_an_accumulation_that_does_not_cut_is_skipped_for_a_later_one_that_does():
    assert cut(36, 2, max_micro_batch=3) == (6, (3, 3))  # 4 steps of 9 split over 2 do not cut; 6 steps of 6 do
    assert cut(24, 2, [3, 1], 3) == (6, (3, 1))  # 4 steps of 6 in 3:1 are no whole samples; 6 steps of 4 are
    assert cut(6, 2, [2, 1]) == (1, (4, 2))


def test_shares_are_exact_to_a_thousandth():
    assert cut(1000, 2, [0.999, 0.001]) == (1, (999, 1))


def test_a_micro_batch_the_workers_cannot_share_equally_is_no_cut_even_where_the_shares_make_whole_samples():
    # 3 samples in 2:1 are 2 + 1, but the loader's batch_size (micro-batch / workers) must be whole
    assert failure(3, 2, [2, 1]) == ("3 samples do not cut into micro-batches of whole samples for the 2 data-parallel "
                                     "worker(s) of world size 2 in the shares [2.0, 1.0]")


def test_the_messages_name_the_world_the_shares_and_the_cap():
    assert failure(7, 2, world_size=4) == ("7 samples do not cut into micro-batches of whole samples for the 2 "
                                           "data-parallel worker(s) of world size 4")
    assert failure(8, 2, [3, 1], max_micro_batch=1) == (
        "8 samples do not cut into micro-batches of whole samples for the 2 data-parallel worker(s) of world size 2 "
        "in the shares [3.0, 1.0], at most 1 per worker")
    assert failure(9, 2, max_micro_batch=2) == (
        "9 samples do not cut into micro-batches of whole samples for the 2 data-parallel worker(s) of world size 2, "
        "at most 2 per worker")
    assert failure(8, 2, [1, 1, 1]) == "3 shares for 2 data-parallel workers"
    assert failure(1, 2) == ("1 samples are fewer than the 2 data-parallel workers of world size 2: each needs at "
                             "least one")


def test_describe_says_the_steps_the_micro_batch_and_each_workers_share():
    split = split_global_batch(32, 2, [3, 1], 8)
    assert (split.micro_batch, split.batch_size) == (8, 4)
    assert split.describe() == ("global batch 32 = 4 accumulation step(s) x 8 samples, split 6 + 2 over 2 "
                                "data-parallel worker(s)")
