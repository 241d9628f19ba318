"""Continuous batching over a slot cache (:mod:`distrain.generation.slots`): rows decode without padding.

:class:`SlotBatch` keeps :class:`~distrain.generation.decoding.RunningBatch`'s contract (``admit``,
``step``, ``advance``, ``cancel``, ``take_refused``, ``len``, ``cached_tokens``, each row's ``tokens`` and
``finish_reason``, each sampled row's own generator), so the scheduler, the server's engine and the
tensor-parallel mirror drive either. What differs is inside:

- a row admitted takes the lowest free slot and copies nobody's cache; a row that ends frees its slot;
- a step is one forward pass over one flat sequence: the token each decoding row chose, then chunks of
  the prompts still being read, as many prompt tokens as ``max_prefill_tokens`` allows (a long prompt
  is read over several steps, beside the decoding rows, instead of stalling them);
- logits are computed only at each row's last fed token (``logits_to_keep`` with their indices).

``admit`` gives the newcomers slots; their prompts are read with the next step, in the same forward pass as
the decoding rows (as far as the prefill budget allows, the rest with the steps after), not in a pass of their
own: on bench_slots' continuous workload a pass of their own cost 1.10x the time (368.3 against 404.6 tokens/s,
float32, 3 rounds, one process). A prompt the model fails on still fails alone: where a pass that reads a prompt
for the first time raises, the pass is run again without the newcomers, then each newcomer's first chunk is read
alone, and one that raises leaves the batch, listed with its error in :meth:`take_refused` (the running rows are
untouched; a pass that raises without newcomers raises). ``rows`` lists every row, read or not; a row still being
read has no token yet (``tokens`` empty) and chooses none.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch

from distrain.generation.decode_attention import WIDTH_STEP, decode_kernel, decode_sdpa_kernels, inductor_kernel
from distrain.generation.packed_linears import PackedLinears
from distrain.generation.request import Request, RunningRows, choose_tokens, take_token
from distrain.generation.slots import ATTENTION, SlotCache, plan_step, register_attention, require_servable


class SlotBatch(RunningRows):
    """The rows decoding now, each in its own cache slot. ``end_ids`` stop a row; ``context_length`` caps
    prompt plus continuation; ``max_prefill_tokens`` caps the prompt tokens read in one step;
    ``packed_linears`` runs the linear layers on weights packed once for the CPU (:mod:`.packed_linears`);
    ``compiled_attention`` has the decoding rows attend through a compiled kernel (:mod:`.decode_attention`;
    None: where it pays, see :func:`~distrain.generation.decode_attention.decode_kernel`)."""

    def __init__(self, transformer: torch.nn.Module, end_ids: set[int], pad_id: int,
                 context_length: int | None = None, max_prefill_tokens: int = 512, packed_linears: bool = True,
                 compiled_attention: bool | None = None) -> None:
        require_servable(transformer)
        register_attention()
        super().__init__(transformer, end_ids, pad_id, context_length)
        self.max_prefill_tokens = max(1, max_prefill_tokens)
        # the config whose attention implementation the step switches (a wrapper's inner model's, if need be)
        self.config = next((module.config for module in transformer.modules()
                            if hasattr(getattr(module, "config", None), "_attn_implementation")), None)
        self.linears = PackedLinears(transformer if packed_linears else torch.nn.Module())
        self.decode_kernel = decode_kernel(transformer, self.config, compiled_attention)
        self.cache = SlotCache()
        self._slot: dict[int, int] = {}  # id(request) -> its slot
        self._fed: dict[int, int] = {}  # id(request) -> tokens written to its slot
        self._free: list[int] = []  # slots freed, reused lowest first
        self._ready: list[Request] = []  # rows whose prompt is read: each has a row of self.logits
        self._refused: list[tuple[Request, Exception]] = []  # newcomers the model failed on (take_refused)

    def cached_lengths(self) -> list[int]:
        """Each row's positions written to its slot (no padding)."""
        return list(self._fed.values())

    # ------------------------------------------------------------------------------ admission
    @torch.inference_mode()  # growing the slots copies them
    def admit(self, requests: Sequence[Request]) -> None:
        """Give each request a slot; its prompt is read with the next step (beside the decoding rows)."""
        if not requests:
            return
        for request in requests:
            if not request.prompt:
                raise ValueError("a prompt needs at least one token")
        for request in requests:
            self._slot[id(request)] = self._take_slot()
            self._fed[id(request)] = 0
            self.rows.append(request)
        # room for each newcomer's whole run now, so the slots grow (a copy) at admission, not mid-decode
        longest = max(len(request.prompt) + request.settings.max_new_tokens for request in requests)
        if self.context_length is not None:
            longest = min(longest, self.context_length)
        self.cache.reserve(max(self._slot.values()) + 1, longest)

    def take_refused(self) -> list[tuple[Request, Exception]]:
        """The newcomers whose prompt the model failed on (they left the batch), each with its error, since
        the last call."""
        refused, self._refused = self._refused, []
        return refused

    # ---------------------------------------------------------------------------------- a step
    @torch.inference_mode()
    def advance(self, chosen: list[int], on_taken: Callable[[list[Request]], None] | None = None) -> list[Request]:
        """Every read row takes its token in ``chosen`` (one a row, in ``rows`` order); the rows that
        finished and left. Then (after ``on_taken(finished)``, if given) one forward pass: the chosen tokens
        and the next prompt chunks."""
        finished = [request for request, token in zip(self._ready, chosen)
                    if take_token(request, token, self.end_ids, self.context_length)]
        decoding = [request for request in self._ready if request.finish_reason is None]
        if finished:
            self._keep([row for row, request in enumerate(self.rows) if request.finish_reason is None])
        if on_taken is not None:
            on_taken(finished)
        if self.rows:
            self._forward_apart_from_failing_prompts(decoding)
        return finished

    # -------------------------------------------------------------------------------- helpers
    def _forward_apart_from_failing_prompts(self, decoding: list[Request]) -> None:
        """:meth:`_forward`; where it raises and prompts never read were in the pass, the pass again without
        them (raising if it still fails: that is the running rows' failure), then each of those prompts' first
        chunk alone: one the model fails on leaves the batch for :meth:`take_refused`."""
        try:
            self._forward(decoding)
            return
        except Exception:  # noqa: BLE001 - whose failure it is is found below
            unread = [request for request in self.rows if self._fed[id(request)] == 0]
            if not unread:
                raise
        unread_ids = {id(request) for request in unread}
        self._forward(decoding, reading={id(request) for request in self.rows} - unread_ids)
        for request in unread:
            try:
                self._forward([], reading={id(request)})
            except Exception as error:  # noqa: BLE001 - this prompt's own failure
                self._refused.append((request, error))
                self._keep([row for row, other in enumerate(self.rows) if other is not request])

    def _choose(self) -> list[int]:
        return choose_tokens(self.logits, self._ready) if self._ready else []

    def _take_slot(self) -> int:
        if self._free:
            self._free.sort()
            return self._free.pop(0)
        return len(self._slot)

    def _keep(self, rows: list[int]) -> None:
        """Keep ``rows`` (indices into ``rows``); the others' slots are free at once, nothing is copied."""
        kept = [self.rows[row] for row in rows]
        kept_ids = {id(request) for request in kept}
        for request in self.rows:
            if id(request) not in kept_ids:
                self._free.append(self._slot.pop(id(request)))
                del self._fed[id(request)]
        ready = [row for row, request in enumerate(self._ready) if id(request) in kept_ids]
        self._ready = [self._ready[row] for row in ready]
        if self.logits is not None:
            self.logits = self.logits[ready] if self._ready else None
        self.rows = kept
        if not self.rows:  # all free: later slots start from 0 again
            self._free.clear()

    def _forward(self, decoding: list[Request], reading: set[int] | None = None) -> None:
        """One pass: the last token of each ``decoding`` row, then prompt chunks within the prefill budget (of
        the rows whose ids are in ``reading``; None: any); afterwards the read rows (``decoding`` and prompts
        just finished) hold their next-token logits."""
        feeds, tokens, fed_rows, owners = [], [], [], []
        for request in decoding:
            feeds.append((self._slot[id(request)], self._fed[id(request)], 1))
            tokens.append(request.tokens[-1])
            fed_rows.append(request)
            owners.append(request)
        budget, ready_ids = self.max_prefill_tokens, {id(request) for request in self._ready}
        for request in self.rows:
            fed = self._fed[id(request)]
            if id(request) in ready_ids or budget <= 0 or (reading is not None and id(request) not in reading):
                continue
            count = min(budget, len(request.prompt) - fed)
            feeds.append((self._slot[id(request)], fed, count))
            tokens += request.prompt[fed:fed + count]
            fed_rows.append(request)
            owners.append(request if fed + count == len(request.prompt) else None)  # None: more prompt to read
            budget -= count
        if not feeds:
            return
        plan = plan_step(feeds, self.device)
        plan.decode_kernel = self.decode_kernel
        # the Inductor loop reads a width rounded up to WIDTH_STEP, and torch compiles a partial read of the
        # slots apart from a whole one: a spare WIDTH_STEP of positions keeps every read partial
        spare = WIDTH_STEP if self.decode_kernel is inductor_kernel else 0
        self.cache.reserve(plan.used_slots, int(plan.position.max()) + 1 + spare)
        self.cache.plan = plan
        ends = torch.tensor(feeds and [count for _, _, count in feeds], device=self.device).cumsum(0) - 1
        logits = self._call(torch.tensor([tokens], device=self.device), plan, ends)
        for request, (_, start, count) in zip(fed_rows, feeds):
            self._fed[id(request)] = start + count
        # read rows in the order of ``rows``, so ``chosen`` lines up with what a follower holds
        order = {id(request): row for row, request in enumerate(self.rows)}
        fresh = [k for k, owner in enumerate(owners) if owner is not None]
        decoding_ids = {id(request) for request in decoding}
        waiting = [row for row, request in enumerate(self._ready) if id(request) not in decoding_ids]  # not fed now
        rows = [self._ready[row] for row in waiting] + [owners[k] for k in fresh]
        ready = sorted(range(len(rows)), key=lambda k: order[id(rows[k])])
        self._ready = [rows[k] for k in ready]
        if waiting:
            self.logits = torch.cat([self.logits[waiting], logits[fresh]])[ready]
        else:  # one gather (none when every fed row is read, in order: each step of a steady batch)
            picked = [fresh[k] for k in ready]
            self.logits = logits if picked == list(range(len(logits))) else logits[picked]

    def _call(self, input_ids: torch.Tensor, plan, ends: torch.Tensor) -> torch.Tensor:
        """The model over the flat step; the logits (float) at ``ends``, one row each."""
        keep = {"logits_to_keep": ends} if self._keeps_logits else {}
        previous = getattr(self.config, "_attn_implementation", None)
        if self.config is not None:
            self.config._attn_implementation = ATTENTION
        try:
            with self.linears.applied(), decode_sdpa_kernels(self.device):
                output = self.transformer(input_ids=input_ids, position_ids=plan.position[None, :], use_cache=True,
                                          slot_plan=plan, **{self._cache_argument: self.cache}, **keep)
        finally:
            if self.config is not None:
                self.config._attn_implementation = previous
        logits = output.logits[0].float()  # a bfloat16 model's too: tokens are chosen from float logits
        return logits if self._keeps_logits else logits[ends]
