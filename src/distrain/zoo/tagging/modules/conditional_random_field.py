"""A linear-chain conditional random field: the sequence log-likelihood (forward algorithm), Viterbi
decoding, and which tag transitions a span encoding (BIO, BIOUL, IOB1, BMES) allows.

Taggers put it over per-token scores so the predicted tags form legal spans; constraints are applied
as -inf transition scores at decoding time only, so the likelihood is the model's plain one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

ENCODINGS = ("BIO", "BIOUL", "IOB1", "BMES")


def _split(label: str) -> tuple[str, str]:
    """``("B", "PER")`` for ``"B-PER"``, ``("O", "")`` for ``"O"`` and for the START/END pseudo-tags."""
    if label in ("START", "END"):
        return label, ""
    prefix, _, kind = label.partition("-")
    return prefix, kind


@dataclass(frozen=True)
class _Scheme:
    """Which tag prefixes a span encoding lets follow which. ``first``: those that may open the sequence, and
    follow any tag after which no span must go on; ``last``: those that may end it; ``inside``: those that go on
    a span of the same type, after one of ``spans``. With ``closes`` a span goes on until one of ``last`` ends it
    (BIOUL's L, BMES's E): after its other tags only ``inside`` may follow."""

    first: tuple[str, ...]
    last: tuple[str, ...]
    inside: tuple[str, ...]
    spans: tuple[str, ...]
    closes: bool


_SCHEMES = {
    "BIO": _Scheme(first=("O", "B"), last=("O", "B", "I"), inside=("I",), spans=("B", "I"), closes=False),
    "BIOUL": _Scheme(first=("O", "B", "U"), last=("O", "L", "U"), inside=("I", "L"), spans=("B", "I"), closes=True),
    "IOB1": _Scheme(first=("O", "I"), last=("O", "B", "I"), inside=("B",), spans=("B", "I"), closes=False),
    "BMES": _Scheme(first=("B", "S"), last=("E", "S"), inside=("M", "E"), spans=("B", "M"), closes=True),
}


def is_transition_allowed(encoding: str, from_tag: str, from_kind: str, to_tag: str, to_kind: str) -> bool:
    """Whether ``to`` may follow ``from`` (prefixes like ``"B"``, types like ``"PER"``) under ``encoding``;
    ``"START"`` and ``"END"`` stand for the sequence's two ends."""
    if to_tag == "START" or from_tag == "END":
        return False
    scheme = _SCHEMES.get(encoding)
    if scheme is None:
        raise ValueError(f"unknown label encoding {encoding!r}; expected one of {', '.join(ENCODINGS)}")
    if from_tag == "START":
        return to_tag in scheme.first
    if to_tag == "END":
        return from_tag in scheme.last
    goes_on = to_tag in scheme.inside and from_kind == to_kind
    if scheme.closes and from_tag not in scheme.last:  # a span is open: only its own tags may follow
        return goes_on
    return to_tag in scheme.first or (goes_on and from_tag in scheme.spans)


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

    def _log_partition(self, logits: torch.Tensor, mask: torch.Tensor,
                       transitions: torch.Tensor | None = None) -> torch.Tensor:
        start, end = self._start_end(logits)
        transitions = self.transitions if transitions is None else transitions
        mask = mask.bool()
        alpha = start + logits[:, 0]
        for t in range(1, logits.shape[1]):
            step = torch.logsumexp(alpha.unsqueeze(2) + transitions + logits[:, t].unsqueeze(1), dim=1)
            alpha = torch.where(mask[:, t].unsqueeze(1), step, alpha)
        return torch.logsumexp(alpha + end, dim=1)

    def _gold_score(self, logits: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor,
                    transitions: torch.Tensor | None = None) -> torch.Tensor:
        start, end = self._start_end(logits)
        transitions = self.transitions if transitions is None else transitions
        mask = mask.to(logits.dtype)
        tags = tags.clamp(min=0)  # padded positions carry an ignored label; the mask removes them
        emitted = logits.gather(2, tags.unsqueeze(2)).squeeze(2)
        score = start[tags[:, 0]] + (emitted * mask).sum(1)
        moved = transitions[tags[:, :-1], tags[:, 1:]]
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
