"""Continue prompts with a causal language model, one decode step at a time over a key-value cache.

This is transformers' ``generate`` loop reduced to what distrain promises, in the shape continuous
batching needs. A :class:`RunningBatch` holds one key-value cache for all its rows, each row's past
left-padded to the batch's common length (masked out, with each row's own position ids). At each
:meth:`~RunningBatch.step` every row takes its next token, greedy or sampled (``temperature``,
``top_p``); rows that stop (an end token, their token budget or the context) leave at once, their
cache rows dropped with the leading columns no row needs any more, and :meth:`~RunningBatch.admit`
prefills newcomers as a batch of their own and joins their cache to the running one, padding
whichever is shorter on the left. A row's tokens therefore depend only on its prompt and settings:
a sampled row draws from its own generator, seeded by the run's ``seed`` and the prompt's number, so
a completion does not depend on the rows it shared steps with or on how many workers split the file.
:func:`generate` is one batch that no one joins (``distrain predict``). The model is called as
transformers models are (``input_ids``, ``attention_mask``, ``position_ids``, the cache); a
tensor-parallel model works unchanged: every rank feeds the same tokens and draws the same samples.
Only caches of plain full-attention layers (transformers' ``DynamicLayer``) can be joined; a model
with sliding-window or recurrent layers is refused when it is admitted.

:class:`~distrain.generation.slot_batch.SlotBatch` keeps the same contract without padding (a cache slot per
row, written in place); :func:`batch_class` picks which one :func:`generate` and the server build.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch

from distrain.generation.decode_attention import decode_sdpa_kernels
from distrain.generation.request import (  # noqa: F401 - the names the loop's users import from here
    SEED_STRIDE, Continuation, GenerationSettings, Request, RunningRows, choose_next, choose_tokens, generators_for,
    take_token)

#: the running batch ``generate`` and the server build: ``slots`` (:class:`~distrain.generation.slot_batch.SlotBatch`,
#: no padding) or ``padded`` (:class:`RunningBatch`)
DEFAULT_BATCH = "slots"


def batch_class(kind: str | None = None) -> type:
    """The running batch of ``kind`` (default :data:`DEFAULT_BATCH`); both take the same arguments."""
    kind = kind or DEFAULT_BATCH
    if kind == "padded":
        return RunningBatch
    if kind == "slots":
        from distrain.generation.slot_batch import SlotBatch

        return SlotBatch
    raise ValueError(f"no running batch {kind!r}: choose 'slots' or 'padded'")


def generate(
    transformer: torch.nn.Module,
    prompts: Sequence[Sequence[int]],
    settings: GenerationSettings,
    end_ids: set[int],
    pad_id: int,
    context_length: int | None = None,
    prompt_numbers: Sequence[int] | None = None,
    compiled_attention: bool | None = None,
) -> list[Continuation]:
    """Continue every prompt (token ids, non-empty) as one running batch (:data:`DEFAULT_BATCH`) that no one
    joins: rows leave as they finish. ``context_length`` caps prompt + continuation; ``compiled_attention``
    as the batch takes it (None: where it pays)."""
    numbers = prompt_numbers if prompt_numbers is not None else range(len(prompts))
    requests = [Request(list(prompt), settings, number) for prompt, number in zip(prompts, numbers)]
    batch = batch_class()(transformer, end_ids, pad_id, context_length, compiled_attention=compiled_attention)
    batch.admit(requests)
    while len(batch):
        batch.step()
    return [Continuation(request.tokens, request.finish_reason or "length") for request in requests]


class RunningBatch(RunningRows):
    """The rows decoding now. ``end_ids`` stop a row; ``context_length`` caps prompt plus continuation.
    Newcomers' prompts are read whole when they are admitted: ``max_prefill_tokens`` is the slot batch's
    option, accepted here so either batch takes the same arguments (the padded batch relies on
    :class:`~distrain.generation.admission.Admissions` to keep the prompts admitted at once under it), and so
    is ``compiled_attention`` (this batch attends through the model's own attention)."""

    def __init__(self, transformer: torch.nn.Module, end_ids: set[int], pad_id: int,
                 context_length: int | None = None, max_prefill_tokens: int | None = None,
                 compiled_attention: bool | None = None) -> None:
        super().__init__(transformer, end_ids, pad_id, context_length)
        self._keep_last = {"logits_to_keep": 1} if self._keeps_logits else {}
        self.cache = None
        self.attention_mask = torch.zeros((0, 0), dtype=torch.long, device=self.device)
        self.positions = torch.zeros((0, 1), dtype=torch.long, device=self.device)

    def cached_lengths(self) -> list[int]:
        """The cache's columns for every row: each row's past, padded to the longest."""
        rows, columns = self.attention_mask.shape
        return [int(columns)] * int(rows)

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
    def advance(self, chosen: list[int], on_taken: Callable[[list[Request]], None] | None = None) -> list[Request]:
        """Every row takes its token in ``chosen`` (one a row); returns the rows that finished and left.
        ``on_taken(finished)``, if given, runs before the pass that feeds the tokens back."""
        finished = [request for request, token in zip(self.rows, chosen)
                    if take_token(request, token, self.end_ids, self.context_length)]
        staying = [row for row, request in enumerate(self.rows) if request.finish_reason is None]
        if len(staying) < len(self.rows):
            self._keep(staying)
        if on_taken is not None:
            on_taken(finished)
        if self.rows:
            step_ids = torch.tensor([[request.tokens[-1]] for request in self.rows], device=self.device)
            self.attention_mask = torch.cat([self.attention_mask, self.attention_mask.new_ones((len(self.rows), 1))], 1)
            self.logits = self._forward(step_ids, self.attention_mask, self.positions, self.cache)
            self.positions = self.positions + 1
        return finished

    def take_refused(self) -> list[tuple[Request, Exception]]:
        """Always empty here: this batch reads a prompt in :meth:`admit`, which raises for one the model fails
        on (a slot batch reads prompts with its steps and lists those here)."""
        return []

    # -------------------------------------------------------------------------------- helpers
    def _choose(self) -> list[int]:
        return choose_tokens(self.logits, self.rows)

    def _forward(self, input_ids, mask, positions, cache) -> torch.Tensor:
        with decode_sdpa_kernels(self.device):
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
