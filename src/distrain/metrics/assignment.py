"""The best one-to-one matching of rows and columns of a score matrix (the Hungarian method), which both the
coreference CEAF scorer and DROP's multi-span F1 align by; scipy is not a dependency, and the matrices are small."""

from __future__ import annotations

import numpy as np


def best_assignment(scores: np.ndarray) -> list[tuple[int, int]]:
    """The (row, column) pairs, one per row or column (the smaller side), of largest summed ``scores``, sorted by
    row: the Hungarian method with potentials, O(n³), on costs ``-scores``."""
    scores = np.asarray(scores, dtype=float)
    if scores.shape[0] > scores.shape[1]:
        return sorted((row, column) for column, row in best_assignment(scores.T))
    rows, columns = scores.shape
    cost = -scores
    row_potential, column_potential = np.zeros(rows + 1), np.zeros(columns + 1)
    owner = [0] * (columns + 1)  # owner[j]: the row (1-based) holding column j; column 0 is the one being placed
    previous = [0] * (columns + 1)
    for row in range(1, rows + 1):
        owner[0], column = row, 0
        slack, visited = [np.inf] * (columns + 1), [False] * (columns + 1)
        while True:
            visited[column] = True
            placing, step, nearest = owner[column], np.inf, 0
            for j in range(1, columns + 1):
                if visited[j]:
                    continue
                reduced = cost[placing - 1, j - 1] - row_potential[placing] - column_potential[j]
                if reduced < slack[j]:
                    slack[j], previous[j] = reduced, column
                if slack[j] < step:
                    step, nearest = slack[j], j
            for j in range(columns + 1):
                if visited[j]:
                    row_potential[owner[j]] += step
                    column_potential[j] -= step
                else:
                    slack[j] -= step
            column = nearest
            if owner[column] == 0:
                break
        while column:  # flip the augmenting path back to its start
            owner[column] = owner[previous[column]]
            column = previous[column]
    return sorted((owner[j] - 1, j - 1) for j in range(1, columns + 1) if owner[j])
