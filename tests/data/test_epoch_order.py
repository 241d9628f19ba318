"""Each epoch draws its own sample order from (seed, epoch) alone: the same pair gives the same global batches
(so 1 and N workers, and a resumed run, see the same ones), another epoch or seed another order, and every sample
is seen once an epoch."""

from __future__ import annotations

import numpy as np

from distrain.data.sampler import GlobalBatchSampler


def order(sampler: GlobalBatchSampler, epoch: int) -> list[int]:
    return [int(i) for batch in sampler.batches(epoch) for i in batch]


def test_every_epoch_has_its_own_order_of_every_sample_and_the_same_pair_repeats_it():
    sampler = GlobalBatchSampler(50, batch_size=8, seed=3)
    orders = [order(sampler, epoch) for epoch in range(4)]
    assert all(sorted(o) == list(range(50)) for o in orders)
    assert len({tuple(o) for o in orders}) == 4  # four epochs, four orders
    assert order(GlobalBatchSampler(50, batch_size=8, seed=3), 2) == orders[2]  # a fresh sampler (a resumed run)
    assert order(GlobalBatchSampler(50, batch_size=8, seed=4), 2) != orders[2]


def test_without_shuffle_every_epoch_reads_in_file_order():
    sampler = GlobalBatchSampler(20, batch_size=6, shuffle=False, seed=3)
    assert order(sampler, 0) == order(sampler, 5) == list(range(20))
    assert [len(batch) for batch in sampler.batches(0)] == [6, 6, 6, 2]


def test_length_sorting_keeps_each_epoch_its_own_order_of_batches_of_like_lengths():
    lengths = np.random.default_rng(0).integers(1, 30, size=40)
    sampler = GlobalBatchSampler(40, batch_size=5, seed=1, lengths=lengths, sort_by_length=True)
    first, second = sampler.batches(0), sampler.batches(1)
    assert [list(b) for b in first] != [list(b) for b in second]
    for batches in (first, second):
        assert sorted(int(i) for b in batches for i in b) == list(range(40))
        assert all(list(lengths[b]) == sorted(lengths[b]) for b in batches)  # each batch cut from a sorted run
