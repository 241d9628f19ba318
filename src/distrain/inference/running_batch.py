"""Sequences that decode together and change at every step: the core of continuous batching.

A :class:`RunningBatch` holds one key-value cache for all its rows, each row's past left-padded to the
batch's common length (masked out, with each row's own position ids), as :mod:`generation` lays out a
batch of prompts. At each :meth:`~RunningBatch.step` every row takes its next token; rows that finish
leave at once (their cache rows dropped, and the leading columns no row needs any more trimmed), and
:meth:`~RunningBatch.admit` prefills newcomers as a batch of their own and joins their cache to the
running one, padding whichever is shorter on the left. A row's tokens therefore depend only on its
prompt and settings, never on which rows it shared steps with (``tests/test_running_batch.py``).
Only caches of plain full-attention layers (transformers' ``DynamicLayer``) can be joined; a model
with sliding-window or recurrent layers is refused when it is admitted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import torch

from distrain.inference.generation import GenerationSettings, choose_next, generators_for


@dataclass
class Request:
    """One prompt to continue; ``number`` seeds its samples (see :func:`generators_for`)."""

    prompt: list[int]
    settings: GenerationSettings = GenerationSettings()
    number: int = 0
    tokens: list[int] = field(default_factory=list)
    finish_reason: str | None = None

    def __post_init__(self) -> None:
        generators = generators_for(self.settings, [self.number])
        self.generator = generators[0] if generators else None


class RunningBatch:
    """The rows decoding now. ``end_ids`` stop a row; ``context_length`` caps prompt plus continuation."""

    def __init__(self, transformer: torch.nn.Module, end_ids: set[int], pad_id: int,
                 context_length: int | None = None) -> None:
        import inspect

        self.transformer, self.end_ids, self.pad_id, self.context_length = transformer, end_ids, pad_id, context_length
        self.device = next(transformer.parameters()).device
        parameters = inspect.signature(transformer.forward).parameters
        self._cache_argument = "cache" if "cache" in parameters else "past_key_values"
        self._keep_last = {"logits_to_keep": 1} if "logits_to_keep" in parameters else {}
        self.rows: list[Request] = []
        self.cache = None
        self.attention_mask = torch.zeros((0, 0), dtype=torch.long, device=self.device)
        self.positions = torch.zeros((0, 1), dtype=torch.long, device=self.device)
        self.logits: torch.Tensor | None = None  # each row's distribution over its next token

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def cached_tokens(self) -> int:
        """Key-value positions held, padding included (rows x columns)."""
        return int(self.attention_mask.numel())

    # ------------------------------------------------------------------------------ admission
    @torch.inference_mode()
    def admit(self, requests: Sequence[Request]) -> None:
        """Prefill ``requests`` together and join them to the running rows."""
        from transformers import DynamicCache

        if not requests:
            return
        width = max(len(request.prompt) for request in requests)
        input_ids = torch.full((len(requests), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(requests), width), dtype=torch.long)
        for row, request in enumerate(requests):
            input_ids[row, width - len(request.prompt):] = torch.tensor(request.prompt, dtype=torch.long)
            mask[row, width - len(request.prompt):] = 1
        input_ids, mask = input_ids.to(self.device), mask.to(self.device)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        cache = DynamicCache(config=getattr(self.transformer, "config", None))
        logits = self._forward(input_ids, mask, positions, cache)
        _require_joinable(cache)
        if self.rows:
            self.cache = _join(self.cache, self.attention_mask.shape[1], cache, width)
            self.attention_mask = _join_masks(self.attention_mask, mask)
            self.logits = torch.cat([self.logits, logits])
        else:
            self.cache, self.attention_mask, self.logits = cache, mask, logits
        self.positions = torch.cat([self.positions, positions[:, -1:] + 1])
        self.rows.extend(requests)

    # ---------------------------------------------------------------------------------- a step
    @torch.inference_mode()
    def step(self) -> list[Request]:
        """Every row takes its next token; returns the rows that finished (and left the batch)."""
        if not self.rows:
            return []
        chosen = self._choose()
        finished = []
        for request, token in zip(self.rows, chosen):
            request.tokens.append(token)
            budget = request.settings.max_new_tokens
            if self.context_length is not None:
                budget = min(budget, self.context_length - len(request.prompt))
            if token in self.end_ids:
                request.finish_reason = "stop"
            elif len(request.tokens) >= budget:
                request.finish_reason = "length"
            if request.finish_reason is not None:
                finished.append(request)
        staying = [row for row, request in enumerate(self.rows) if request.finish_reason is None]
        if len(staying) < len(self.rows):
            self._keep(staying)
        if self.rows:
            step_ids = torch.tensor([[request.tokens[-1]] for request in self.rows], device=self.device)
            self.attention_mask = torch.cat([self.attention_mask, self.attention_mask.new_ones((len(self.rows), 1))], 1)
            self.logits = self._forward(step_ids, self.attention_mask, self.positions, self.cache)
            self.positions = self.positions + 1
        return finished

    def cancel(self, request: Request) -> None:
        """Drop a row before it finishes (its client went away)."""
        self._keep([row for row, other in enumerate(self.rows) if other is not request])

    # -------------------------------------------------------------------------------- helpers
    def _choose(self) -> list[int]:
        """Greedy rows and sampled rows choose apart: each sampled row draws from its own generator."""
        chosen = self.logits.argmax(-1).tolist()
        for row, request in enumerate(self.rows):
            if request.generator is not None:
                chosen[row] = int(choose_next(self.logits[row:row + 1], request.settings, [request.generator])[0])
        return chosen

    def _forward(self, input_ids, mask, positions, cache) -> torch.Tensor:
        output = self.transformer(input_ids=input_ids, attention_mask=mask, position_ids=positions,
                                  use_cache=True, **{self._cache_argument: cache}, **self._keep_last)
        return output.logits[:, -1]

    def _keep(self, rows: list[int]) -> None:
        self.rows = [self.rows[row] for row in rows]
        if not rows:
            self.cache, self.logits = None, None
            self.attention_mask = self.attention_mask[:0, :0]
            self.positions = self.positions[:0]
            return
        index = torch.tensor(rows, device=self.device)
        self.attention_mask, self.positions, self.logits = self.attention_mask[index], self.positions[index], self.logits[index]
        start = int(self.attention_mask.any(0).nonzero()[0])  # leading columns that only padding fills
        self.attention_mask = self.attention_mask[:, start:]
        for layer in self.cache.layers:
            layer.keys, layer.values = layer.keys[index, :, start:], layer.values[index, :, start:]


def _require_joinable(cache) -> None:
    from transformers.cache_utils import DynamicLayer

    kinds = {type(layer).__name__ for layer in cache.layers if type(layer) is not DynamicLayer}
    if kinds:
        raise ValueError(f"continuous batching joins only full-attention caches; this model has {sorted(kinds)}")


def _left_pad(tensor: torch.Tensor, columns: int) -> torch.Tensor:
    """Pad dimension 2 (the cache's positions) with ``columns`` zeros in front."""
    if columns == 0:
        return tensor
    shape = list(tensor.shape)
    shape[2] = columns
    return torch.cat([tensor.new_zeros(shape), tensor], dim=2)


def _join(running, running_width: int, newcomers, newcomer_width: int):
    width = max(running_width, newcomer_width)
    for mine, theirs in zip(running.layers, newcomers.layers):
        mine.keys = torch.cat([_left_pad(mine.keys, width - running_width), _left_pad(theirs.keys, width - newcomer_width)])
        mine.values = torch.cat([_left_pad(mine.values, width - running_width),
                                 _left_pad(theirs.values, width - newcomer_width)])
    return running


def _join_masks(running: torch.Tensor, newcomers: torch.Tensor) -> torch.Tensor:
    width = max(running.shape[1], newcomers.shape[1])
    pad = lambda mask: torch.nn.functional.pad(mask, (width - mask.shape[1], 0))  # noqa: E731
    return torch.cat([pad(running), pad(newcomers)])
