"""GlobalBatchSampler's cuts: by count, by a token budget (``max_tokens``), the last batch dropped or kept, lengths
sorted within chunks of 100 batches, and each epoch's batches computed once."""

from __future__ import annotations

import numpy as np
import pytest

from distrain.data.sampler import GlobalBatchSampler


def cut(sampler: GlobalBatchSampler, epoch: int = 0) -> list[list[int]]:
    return [[int(i) for i in batch] for batch in sampler.batches(epoch)]


def test_a_batch_of_one_is_allowed_and_none_is_refused():
    assert cut(GlobalBatchSampler(3, 1, shuffle=False)) == [[0], [1], [2]]
    with pytest.raises(ValueError, match="^batch_size must be at least 1, got 0$"):
        GlobalBatchSampler(3, 0)


def test_drop_last_drops_only_a_short_last_batch():
    assert cut(GlobalBatchSampler(8, 4, shuffle=False, drop_last=True)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert cut(GlobalBatchSampler(10, 4, shuffle=False, drop_last=True)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert cut(GlobalBatchSampler(10, 4, shuffle=False)) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert len(GlobalBatchSampler(10, 4, drop_last=True)) == 2 and len(GlobalBatchSampler(10, 4)) == 3


def test_a_token_budget_cuts_a_batch_before_its_padded_size_exceeds_it():
    lengths = np.array([3, 5, 2, 8, 1, 1, 1, 1, 1])
    sampler = GlobalBatchSampler(9, 4, shuffle=False, lengths=lengths, max_tokens=12)
    # 3+5 pad to 2 x 5 = 10; with the 2 to 3 x 5 = 15 > 12; the 8 then alone (2 x 8 = 16); four 1s make a full batch
    assert cut(sampler) == [[0, 1], [2], [3], [4, 5, 6, 7], [8]]
    equal = GlobalBatchSampler(4, 10, shuffle=False, lengths=np.array([3, 3, 3, 3]), max_tokens=9)
    assert cut(equal) == [[0, 1, 2], [3]]  # 3 x 3 = 9 is within the budget, 4 x 3 is not
    empty = GlobalBatchSampler(3, 8, shuffle=False, lengths=np.array([0, 0, 0]), max_tokens=1)
    assert cut(empty) == [[0, 1, 2]]  # empty samples pad to nothing
    assert cut(GlobalBatchSampler(5, 2, shuffle=False, max_tokens=3)) == [[0, 1], [2, 3], [4]]  # no lengths: by count


def test_a_token_budget_keeps_a_batch_whose_longest_came_first():
    sampler = GlobalBatchSampler(4, 8, shuffle=False, lengths=np.array([6, 1, 1, 1]), max_tokens=18)
    assert cut(sampler) == [[0, 1, 2], [3]]  # 3 x 6 = 18; a fourth makes 24


def test_lengths_without_sort_by_length_change_nothing():
    lengths = np.arange(20)[::-1].copy()
    assert cut(GlobalBatchSampler(20, 5, shuffle=False, lengths=lengths)) == cut(GlobalBatchSampler(20, 5, shuffle=False))
    assert cut(GlobalBatchSampler(20, 5, seed=2, lengths=lengths)) == cut(GlobalBatchSampler(20, 5, seed=2))


def test_lengths_are_sorted_within_chunks_of_a_hundred_batches_ties_in_order():
    lengths = np.arange(250)[::-1].copy()  # the longest first: every chunk comes out reversed
    sampler = GlobalBatchSampler(250, 1, shuffle=False, lengths=lengths, sort_by_length=True)
    flat = [i for batch in cut(sampler) for i in batch]
    assert flat == list(range(99, -1, -1)) + list(range(199, 99, -1)) + list(range(249, 199, -1))
    ties = np.array([2, 1] * 20)
    sampler = GlobalBatchSampler(40, 40, shuffle=False, lengths=ties, sort_by_length=True)
    assert cut(sampler) == [list(range(1, 40, 2)) + list(range(0, 40, 2))]
    assert cut(GlobalBatchSampler(0, 4, lengths=np.zeros(0, dtype=int), sort_by_length=True)) == []


def test_the_default_seed_is_zero():
    assert cut(GlobalBatchSampler(30, 4)) == cut(GlobalBatchSampler(30, 4, seed=0))
    assert cut(GlobalBatchSampler(30, 4)) != cut(GlobalBatchSampler(30, 4, seed=1))


def test_an_epochs_batches_are_computed_once_and_without_shuffle_once_for_every_epoch():
    sampler = GlobalBatchSampler(30, 4, seed=5)
    first = sampler.batches(1)
    assert sampler.batches(1) is first and sampler.batches(2) is not first
    assert cut(sampler, 1) == [[int(i) for i in batch] for batch in first]
    fixed = GlobalBatchSampler(30, 4, shuffle=False)
    assert fixed.batches(0) is fixed.batches(3)
