"""BucketBatchSampler.global_batches on lengths given directly: which field it sorts by, the noise's reach, ties, the
last batch, and the shuffle of the batches (test_bucket_sampler.py has it through the loader and on workers)."""

from __future__ import annotations

import numpy as np

from distrain.data.batch_samplers.bucket import BucketBatchSampler
from distrain.data.sampler import GlobalBatchSampler


def batches(sampler: BucketBatchSampler, lengths: np.ndarray, batch_size: int, seed: int = 0, epoch: int = 0,
            asked: list | None = None) -> list[list[int]]:
    def length_of(key):
        if asked is not None:
            asked.append(key)
        return lengths

    cut = sampler.global_batches(len(lengths), length_of, batch_size, seed, epoch)
    return [[int(i) for i in batch] for batch in cut]


def test_the_first_sorting_key_is_read_or_none_for_the_longest_field():
    asked = []
    batches(BucketBatchSampler(sorting_keys=["tokens", "chars"]), np.arange(4), 2, asked=asked)
    batches(BucketBatchSampler(), np.arange(4), 2, asked=asked)
    assert asked == ["tokens", None]


def test_without_shuffle_there_is_no_noise_and_ties_keep_their_order():
    lengths = np.array([100, 101] * 20)
    plain = BucketBatchSampler(padding_noise=0.5, shuffle=False)
    assert plain.padding_noise == 0.0 and BucketBatchSampler().padding_noise == 0.1
    assert batches(plain, lengths, 40) == [list(range(0, 40, 2)) + list(range(1, 40, 2))]
    ties = np.array([2, 1] * 20)
    assert batches(BucketBatchSampler(shuffle=False), ties, 40) == [list(range(1, 40, 2)) + list(range(0, 40, 2))]


def test_the_noise_reorders_close_lengths_but_never_lengths_further_apart_than_its_reach():
    close = np.array([100, 101] * 20)
    noisy = batches(BucketBatchSampler(padding_noise=0.1), close, 40, seed=1)[0]
    assert noisy != list(range(0, 40, 2)) + list(range(1, 40, 2))  # within ±10 of each other they mix
    apart = np.array([10, 100, 1000, 10000] * 5)
    for seed in range(5):  # ±10% never crosses a factor of 10: each batch of 5 holds one length
        cut = batches(BucketBatchSampler(padding_noise=0.1), apart, 5, seed=seed)
        assert sorted(len(set(apart[batch].tolist())) for batch in cut) == [1, 1, 1, 1]


def test_drop_last_drops_only_a_short_last_batch_and_the_batches_are_shuffled():
    lengths = np.arange(12)
    plain = BucketBatchSampler(shuffle=False, drop_last=True)
    assert batches(plain, lengths, 4) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    assert batches(plain, np.arange(10), 4) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert batches(BucketBatchSampler(shuffle=False), np.arange(10), 4) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    shuffled = [batches(BucketBatchSampler(padding_noise=0.0), np.arange(40) * 10, 4, epoch=epoch)
                for epoch in range(3)]
    assert all(sorted(cut) == [list(range(i, i + 4)) for i in range(0, 40, 4)] for cut in shuffled)
    assert len({str(cut) for cut in shuffled}) == 3 and shuffled[0] != sorted(shuffled[0])


def test_the_global_sampler_takes_its_shuffle_from_the_bucket_sampler():
    assert GlobalBatchSampler(10, 2, shuffle=True, batch_sampler=BucketBatchSampler(shuffle=False)).shuffle is False
    assert GlobalBatchSampler(10, 2, shuffle=False, batch_sampler=BucketBatchSampler()).shuffle is True
