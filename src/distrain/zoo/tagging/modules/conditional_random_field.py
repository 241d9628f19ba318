"""A linear-chain conditional random field: the sequence log-likelihood (forward algorithm), Viterbi
decoding, and which tag transitions a span encoding (BIO, BIOUL, IOB1, BMES) allows.

Taggers put it over per-token scores so the predicted tags form legal spans; constraints are applied
as -inf transition scores at decoding time only, so the likelihood is the model's plain one.
"""

from __future__ import annotations

from typing import Sequence

import torch

ENCODINGS = ("BIO", "BIOUL", "IOB1", "BMES")


def _split(label: str) -> tuple[str, str]:
    """``("B", "PER")`` for ``"B-PER"``, ``("O", "")`` for ``"O"`` and for the START/END pseudo-tags."""
    if label in ("START", "END"):
        return label, ""
    prefix, _, kind = label.partition("-")
    return prefix, kind


def is_transition_allowed(encoding: str, from_tag: str, from_kind: str, to_tag: str, to_kind: str) -> bool:
    """Whether ``to`` may follow ``from`` (prefixes like ``"B"``, types like ``"PER"``) under ``encoding``;
    ``"START"`` and ``"END"`` stand for the sequence's two ends."""
    if to_tag == "START" or from_tag == "END":
        return False
    same = from_kind == to_kind
    if encoding == "BIOUL":
        if from_tag == "START":
            return to_tag in ("O", "B", "U")
        if to_tag == "END":
            return from_tag in ("O", "L", "U")
        if from_tag in ("O", "L", "U"):
            return to_tag in ("O", "B", "U")
        return to_tag in ("I", "L") and same  # from B or I: the span goes on
    if encoding == "BIO":
        if from_tag == "START":
            return to_tag in ("O", "B")
        if to_tag == "END":
            return from_tag in ("O", "B", "I")
        return to_tag in ("O", "B") or (to_tag == "I" and from_tag in ("B", "I") and same)
    if encoding == "IOB1":
        if from_tag == "START":
            return to_tag in ("O", "I")
        if to_tag == "END":
            return from_tag in ("O", "B", "I")
        return to_tag in ("O", "I") or (to_tag == "B" and from_tag in ("B", "I") and same)
    if encoding == "BMES":
        if from_tag == "START":
            return to_tag in ("B", "S")
        if to_tag == "END":
            return from_tag in ("E", "S")
        if from_tag in ("E", "S"):
            return to_tag in ("B", "S")
        return to_tag in ("M", "E") and same  # from B or M
    raise ValueError(f"unknown label encoding {encoding!r}; expected one of {', '.join(ENCODINGS)}")


def allowed_transitions(encoding: str, labels: Sequence[str]) -> list[tuple[int, int]]:
    """Allowed ``(from, to)`` index pairs over ``labels`` plus START (index ``len``) and END (``len + 1``)."""
    names = [*labels, "START", "END"]
    return [(i, j) for i, a in enumerate(names) for j, b in enumerate(names)
            if is_transition_allowed(encoding, *_split(a), *_split(b))]


class ConditionalRandomField(torch.nn.Module):
    """Transition scores between ``num_tags`` tags (plus start/end scores when asked), trained by the
    sequence log-likelihood. ``constraints``: allowed ``(from, to)`` pairs as from :func:`allowed_transitions`."""

    def __init__(self, num_tags: int, constraints: list[tuple[int, int]] | None = None,
                 include_start_end_transitions: bool = True) -> None:
        super().__init__()
        self.num_tags = num_tags
        self.transitions = torch.nn.Parameter(torch.empty(num_tags, num_tags))
        allowed = torch.ones(num_tags + 2, num_tags + 2)
        if constraints is not None:
            allowed = torch.zeros(num_tags + 2, num_tags + 2)
            for i, j in constraints:
                allowed[i, j] = 1.0
        self.register_buffer("_allowed", allowed, persistent=False)
        self.include_start_end_transitions = include_start_end_transitions
        if include_start_end_transitions:
            self.start_transitions = torch.nn.Parameter(torch.empty(num_tags))
            self.end_transitions = torch.nn.Parameter(torch.empty(num_tags))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        torch.nn.init.xavier_normal_(self.transitions)
        if self.include_start_end_transitions:
            torch.nn.init.normal_(self.start_transitions)
            torch.nn.init.normal_(self.end_transitions)

    def _start_end(self, logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.include_start_end_transitions:
            return self.start_transitions, self.end_transitions
        zeros = logits.new_zeros(self.num_tags)
        return zeros, zeros

    def forward(self, logits: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Log-likelihood of ``tags`` given ``logits`` ``[B, T, C]``, one per sequence ``[B]``. The mask must
        be a prefix of ones (every sequence at least one token long)."""
        return self._gold_score(logits, tags, mask) - self._log_partition(logits, mask)

    def _log_partition(self, logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        start, end = self._start_end(logits)
        mask = mask.bool()
        alpha = start + logits[:, 0]
        for t in range(1, logits.shape[1]):
            step = torch.logsumexp(alpha.unsqueeze(2) + self.transitions + logits[:, t].unsqueeze(1), dim=1)
            alpha = torch.where(mask[:, t].unsqueeze(1), step, alpha)
        return torch.logsumexp(alpha + end, dim=1)

    def _gold_score(self, logits: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        start, end = self._start_end(logits)
        mask = mask.to(logits.dtype)
        tags = tags.clamp(min=0)  # padded positions carry an ignored label; the mask removes them
        emitted = logits.gather(2, tags.unsqueeze(2)).squeeze(2)
        score = start[tags[:, 0]] + (emitted * mask).sum(1)
        moved = self.transitions[tags[:, :-1], tags[:, 1:]]
        score = score + (moved * mask[:, 1:]).sum(1)
        last = tags.gather(1, (mask.sum(1).long() - 1).unsqueeze(1)).squeeze(1)
        return score + end[last]

    def viterbi_tags(self, logits: torch.Tensor, mask: torch.Tensor) -> list[tuple[list[int], float]]:
        """The best allowed tag sequence of each item (its unmasked length) and its score."""
        start, end = self._start_end(logits)
        C = self.num_tags
        blocked = (1.0 - self._allowed) * -1e4  # large, but finite: an all-blocked row still decodes
        transitions = self.transitions.detach() + blocked[:C, :C]
        start = start.detach() + blocked[C, :C]
        end = end.detach() + blocked[:C, C + 1]
        results = []
        for scores, keep in zip(logits.detach(), mask.bool()):
            length = int(keep.sum())
            best = start + scores[0]
            pointers = []
            for t in range(1, length):
                candidates = best.unsqueeze(1) + transitions
                best, pointer = candidates.max(dim=0)
                best = best + scores[t]
                pointers.append(pointer)
            best = best + end
            score, tag = best.max(dim=0)
            path = [int(tag)]
            for pointer in reversed(pointers):
                path.append(int(pointer[path[-1]]))
            results.append((path[::-1], float(score)))
        return results
