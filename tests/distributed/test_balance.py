"""The shares' arithmetic (:mod:`distrain.distributed.balance`) at its edges: which worker a rounding sample goes to,
the one-sample floor, a move exactly at the tolerance, a cap under one sample. (test_auto_balance.py has the main
rules and the whole runs.)"""

from __future__ import annotations

import pytest

from distrain.distributed.balance import next_shares, proportional_shares, split_counts


def test_the_rounding_samples_go_to_the_largest_remainders_ties_to_the_lower_rank():
    assert split_counts(4, (1.0, 2.0)) == [1, 3]  # 1.33 + 2.67: the 0.67 rounds up, not rank 0's 0.33
    assert split_counts(5, (1.0, 1.0)) == [3, 2]  # 2.5 each: the tie goes to rank 0
    assert split_counts(7, (1.0, 1.0, 1.0, 1.0)) == [2, 2, 2, 1]
    assert proportional_shares([1.0, 2.0], 4) == [1, 3]


def test_a_worker_rounded_to_nothing_takes_one_sample_from_the_largest_share_the_lower_rank_on_a_tie():
    assert split_counts(4, (1.0, 1.0, 0.0001)) == [2, 2, 0]
    assert proportional_shares([1.0, 1.0, 0.0001], 4) == [1, 2, 1]
    assert proportional_shares([1000.0, 1.0], 2) == [1, 1]  # exactly one sample each: still every worker
    assert proportional_shares([1000.0, 1.0], 1) == [1, 0]  # fewer samples than workers: no floor


def test_no_workers_or_a_speed_not_positive_and_finite_is_refused_with_why():
    with pytest.raises(ValueError, match="^no workers to share among$"):
        proportional_shares([], 16)
    for speeds in ([1.0, 0.0], [1.0, -2.0], [float("inf"), 1.0], [float("nan"), 1.0]):
        with pytest.raises(ValueError, match=r"^speeds must be positive and finite, got \["):
            proportional_shares(speeds, 16)


def test_a_move_of_exactly_the_tolerance_is_ignored_and_one_just_over_it_is_made():
    # speeds 2:1 make [11, 5] of 16: rank 0 would move by 3, and 3 / 16 = 0.1875 is the tolerance exactly
    assert next_shares([8, 8], [0.5, 1.0], max_change=1.0, tolerance=0.1875) == [8, 8]
    assert next_shares([8, 8], [0.5, 1.0], max_change=1.0, tolerance=0.18) == [11, 5]


def test_a_max_change_under_one_sample_still_moves_one_sample():
    assert next_shares([8, 8], [1.0, 100.0], max_change=0.01, tolerance=0.0) == [9, 7]
    assert next_shares([8, 8], [1.0, 100.0], max_change=0.125, tolerance=0.0) == [10, 6]
