"""The maximum spanning arborescence of a dependency graph (Chu-Liu-Edmonds), as AllenNLP's
``allennlp.nn.chu_liu_edmonds.decode_mst`` finds it, ties included, so a parser decodes the same trees.

``energy[h, c]`` scores word ``h`` as the head of word ``c``; node 0 is the root. The greedy graph (each node's
best head, the root winning ties) is kept if it has no cycle; otherwise the first cycle found is contracted into
one node, the smaller graph solved, and the cycle broken where the solution enters it. A pure function over
numpy arrays, unit-tested without a model.
"""

from __future__ import annotations

import numpy as np


def decode_mst(energy: np.ndarray, length: int, has_labels: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """``(heads, labels)`` of the maximum spanning tree over the first ``length`` nodes, each as long as the padded
    input; the root's head is -1 (AllenNLP's), padding's 0. ``energy``: ``(labels, n, n)`` with ``has_labels``
    (each arc scored by its best label, which ``labels`` gives, else 1), ``(n, n)`` without."""
    if energy.ndim != (3 if has_labels else 2):
        raise ValueError(f"energy has {energy.ndim} dimensions; expected {3 if has_labels else 2}")
    padded = energy.shape[-1]
    if has_labels:
        best_labels = energy[:, :length, :length].argmax(axis=0)
        scores = np.array(energy[:, :length, :length].max(axis=0), copy=True)
    else:
        best_labels = None
        scores = np.array(energy[:length, :length], copy=True)
    np.fill_diagonal(scores, 0.0)
    # each contracted arc remembers the original arc it stands for: (head, child) of the uncontracted graph
    arc_head = np.repeat(np.arange(length, dtype=np.int32)[:, None], length, axis=1)
    arc_child = np.repeat(np.arange(length, dtype=np.int32)[None, :], length, axis=0)
    np.fill_diagonal(arc_head, 0)
    np.fill_diagonal(arc_child, 0)
    final: dict[int, int] = {}
    _contract(length, scores, [True] * length, final, arc_head, arc_child, [{node} for node in range(length)])
    heads = np.zeros([padded], np.int32)
    labels = np.ones([padded], np.int32) if has_labels else None
    for child, head in final.items():
        heads[child] = head
        if labels is not None:
            labels[child] = best_labels[head, child]
    return heads, labels


def _contract(length: int, scores: np.ndarray, alive: list[bool], final: dict[int, int], arc_head: np.ndarray,
              arc_child: np.ndarray, members: list[set[int]]) -> None:
    """One level of the recursion; fills ``final`` (child -> head, in original nodes); edits its arguments."""
    parents = [-1]
    for node in range(1, length):
        parents.append(0)
        if not alive[node]:
            continue
        best = scores[0, node]
        for head in range(1, length):
            if head != node and alive[head] and scores[head, node] > best:
                best, parents[node] = scores[head, node], head
    cycle = _find_cycle(parents, length, alive)
    if cycle is None:
        final[0] = -1
        for node in range(1, length):
            if alive[node]:
                final[int(arc_child[parents[node], node])] = int(arc_head[parents[node], node])
        return
    cycle_weight = 0.0
    for node in cycle:
        cycle_weight += scores[parents[node], node]
    representative = cycle[0]
    for node in range(length):
        if not alive[node] or node in cycle:
            continue
        in_weight, in_from, out_weight, out_to = float("-inf"), -1, float("-inf"), -1
        for member in cycle:
            if scores[member, node] > in_weight:
                in_weight, in_from = scores[member, node], member
            # entering the cycle at ``member`` replaces the arc that entered it there
            score = cycle_weight + scores[node, member] - scores[parents[member], member]
            if score > out_weight:
                out_weight, out_to = score, member
        scores[representative, node] = in_weight
        arc_head[representative, node] = arc_head[in_from, node]
        arc_child[representative, node] = arc_child[in_from, node]
        scores[node, representative] = out_weight
        arc_child[node, representative] = arc_child[node, out_to]
        arc_head[node, representative] = arc_head[node, out_to]
    held: list[set[int]] = []
    for index, member in enumerate(cycle):
        held.append(set(members[member]))
        if index > 0:
            alive[member] = False
            members[representative].update(members[member])
    _contract(length, scores, alive, final, arc_head, arc_child, members)
    # break the cycle where the solution entered it: at the member whose nodes already have a head
    entered = next((member for index, member in enumerate(cycle) if any(node in final for node in held[index])), -1)
    previous = parents[entered]
    while previous != entered:
        final[int(arc_child[parents[previous], previous])] = int(arc_head[parents[previous], previous])
        previous = parents[previous]


def _find_cycle(parents: list[int], length: int, alive: list[bool]) -> list[int] | None:
    """The first cycle of the parent pointers among live nodes, in AllenNLP's order (a set's), or None."""
    added = [False] * length
    added[0] = True
    for start in range(1, length):
        if added[start] or not alive[start]:
            continue
        path = {start}
        added[start] = True
        node, closed = start, True
        while parents[node] not in path:
            node = parents[node]
            if added[node]:  # reached a node already walked: any cycle there was found then
                closed = False
                break
            added[node] = True
            path.add(node)
        if closed:
            cycle = {node}
            walk = parents[node]
            while walk != node:
                cycle.add(walk)
                walk = parents[walk]
            return list(cycle)
    return None
