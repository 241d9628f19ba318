"""A key-value cache of per-row slots and the attention that reads it: the decode step without padding.

Each layer keeps its keys and values in one preallocated tensor of ``slots x heads x capacity x dim``. A
row owns one slot while it runs; its token at position ``p`` is written in place at ``[slot, :, p]``
(``index_copy_``, never a concatenation), so a row joining or leaving copies nobody else's past. A step
feeds the model one flat sequence (batch 1) holding every row's new tokens side by side, each with its
own position id: one token for a decoding row, a chunk of its prompt for a row still prefilling. The
:class:`StepPlan` says which slot and position each token has; :class:`SlotCache` writes by it, and
:func:`slot_attention` (registered with transformers' ``AttentionInterface`` as ``distrain_slots``)
attends by it: the decoding rows together, each reading its own slot masked to its own length (through
:mod:`.decode_attention`'s compiled kernel where the batch asks for it; else torch's SDPA over the first
``longest live length`` positions of the slots in use, or, when few rows are left in scattered slots, over
theirs gathered); a prefill chunk alone, causally over its own slot. So the
matmuls see no padding at all and attention costs the longest live row, not the longest past row.

The model is called as transformers models are, with ``cache=`` (or ``past_key_values=``) a
:class:`SlotCache`, ``position_ids`` per token and the plan passed through as the ``slot_plan`` keyword,
which transformers hands on to ``cache.update`` and to the attention function. Only plain causal
self-attention is served: a sliding window, a recurrent layer or cross-attention is refused with one
error (:func:`require_servable`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

ATTENTION = "distrain_slots"


@dataclass
class StepPlan:
    """Where each of a step's ``T`` flat tokens goes and what it attends to.

    ``slot`` and ``position`` (``T``) place each token in the cache. The decoding tokens (one per row)
    are ``decode_tokens`` (indices into the flat sequence), in slots ``decode_slots``, each row then
    ``decode_lengths`` long; ``used_slots`` bounds the slots attention reads. ``chunks`` are the prefill
    pieces: (first flat index, token count, slot, start position)."""

    slot: torch.Tensor
    position: torch.Tensor
    decode_tokens: torch.Tensor
    decode_slots: torch.Tensor
    decode_lengths: torch.Tensor
    longest: int
    used_slots: int
    chunks: list[tuple[int, int, int, int]]
    #: the compiled kernel the decoding rows attend through (:mod:`.decode_attention`; None: eager SDPA)
    decode_kernel: Callable | None = None

    @property
    def tokens(self) -> int:
        return int(self.slot.numel())


def plan_step(feeds: list[tuple[int, int, int]], device: torch.device | str = "cpu") -> StepPlan:
    """The plan of a step that feeds, in order, ``(slot, start position, count)`` for each row: a count of
    1 is a decode token, more a prefill chunk (a prompt's single remaining token counts as decoding:
    attention over the prefix is the same)."""
    slots, positions, decode_tokens, decode_slots, decode_lengths, chunks = [], [], [], [], [], []
    flat = 0
    for slot, start, count in feeds:
        slots += [slot] * count
        positions += range(start, start + count)
        if count == 1:
            decode_tokens.append(flat)
            decode_slots.append(slot)
            decode_lengths.append(start + 1)
        else:
            chunks.append((flat, count, slot, start))
        flat += count
    as_tensor = lambda values: torch.tensor(values, dtype=torch.long, device=device)  # noqa: E731
    return StepPlan(as_tensor(slots), as_tensor(positions), as_tensor(decode_tokens), as_tensor(decode_slots),
                    as_tensor(decode_lengths), max(decode_lengths, default=0),
                    max(slots, default=-1) + 1, chunks)


class SlotCache:
    """Per-layer key and value slots, allocated on the first write (heads, dim and dtype come from the
    model) and grown, by doubling, only when a row needs more slots or positions than they hold."""

    is_compileable = False

    def __init__(self, slots: int = 1, capacity: int = 16) -> None:
        self.slots, self.capacity = slots, capacity
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []
        self.plan: StepPlan | None = None
        self._flat: tuple | None = None  # (heads, capacity, index, plan): the write index of this step

    # ------------------------------------------------------------------ what transformers calls
    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, layer_idx: int,
               cache_kwargs: dict | None = None, kwargs: dict | None = None, **_) -> tuple[torch.Tensor, torch.Tensor]:
        """Write the step's keys and values (``1 x heads x T x dim``) at their slots and positions; the
        layer's whole slot tensors come back (attention masks what each row has not written)."""
        plan = (kwargs or {}).get("slot_plan") or self.plan
        if plan is None:
            raise ValueError("a SlotCache is written by a step plan: pass slot_plan= to the model")
        if key_states.shape[0] != 1:
            raise ValueError(f"a slot step feeds one flat sequence (batch 1), not a batch of {key_states.shape[0]}")
        while len(self.keys) <= layer_idx:
            self.keys.append(None)
            self.values.append(None)
        if self.keys[layer_idx] is None:
            shape = (self.slots, key_states.shape[1], self.capacity, key_states.shape[-1])
            self.keys[layer_idx] = key_states.new_zeros(shape)
            self.values[layer_idx] = value_states.new_zeros(shape[:3] + (value_states.shape[-1],))
        keys, values = self.keys[layer_idx], self.values[layer_idx]
        index = self._flat_index(plan, keys.shape[1])
        keys.view(-1, keys.shape[-1]).index_copy_(0, index, key_states[0].transpose(0, 1).reshape(-1, keys.shape[-1]))
        values.view(-1, values.shape[-1]).index_copy_(0, index, value_states[0].transpose(0, 1).reshape(-1, values.shape[-1]))
        return keys, values

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return 0 if self.plan is None else int(self.plan.position.max()) + 1

    def __len__(self) -> int:
        return len(self.keys)

    # ------------------------------------------------------------------ what the batch calls
    def reserve(self, slots: int, capacity: int) -> None:
        """Hold at least ``slots`` slots of ``capacity`` positions: a copy only when that grows the tensors."""
        if slots <= self.slots and capacity <= self.capacity:
            return
        grown_slots, grown_capacity = self.slots, self.capacity
        while grown_slots < slots:
            grown_slots *= 2
        while grown_capacity < capacity:
            grown_capacity *= 2
        for layers in (self.keys, self.values):
            for index, old in enumerate(layers):
                if old is not None:
                    new = old.new_zeros((grown_slots, old.shape[1], grown_capacity, old.shape[3]))
                    new[:old.shape[0], :, :old.shape[2]] = old
                    layers[index] = new
        self.slots, self.capacity, self._flat = grown_slots, grown_capacity, None

    @property
    def held_bytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in [*self.keys, *self.values] if t is not None)

    def _flat_index(self, plan: StepPlan, heads: int) -> torch.Tensor:
        """The rows of the ``(slots * heads * capacity) x dim`` view that the plan's tokens fill, every head."""
        if self._flat is None or self._flat[:2] != (heads, self.capacity) or self._flat[3] is not plan:
            head = torch.arange(heads, device=plan.slot.device)
            index = ((plan.slot[:, None] * heads + head[None, :]) * self.capacity + plan.position[:, None]).reshape(-1)
            self._flat = (heads, self.capacity, index, plan)
        return self._flat[2]


def slot_attention(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                   attention_mask: torch.Tensor | None, scaling: float | None = None, dropout: float = 0.0,
                   slot_plan: StepPlan | None = None, sliding_window: int | None = None, **_) -> tuple[torch.Tensor, None]:
    """``query`` is ``1 x heads x T x dim`` (the step's flat tokens); ``key`` and ``value`` the layer's slot
    tensors (``slots x kv heads x capacity x dim``). Returns ``1 x T x heads x dim``, as transformers'
    attention functions do."""
    if slot_plan is None:
        raise ValueError(f"the {ATTENTION!r} attention reads a slot cache: pass slot_plan= to the model")
    if sliding_window is not None:
        raise ValueError("the slot cache serves full attention only; this layer has a sliding window")
    sdpa = torch.nn.functional.scaled_dot_product_attention
    gqa = query.shape[1] != key.shape[1]
    out = query.new_empty((query.shape[2], query.shape[1], value.shape[-1]))
    plan = slot_plan
    if plan.decode_tokens.numel() and plan.decode_kernel is not None:
        queries = query[0, :, plan.decode_tokens].transpose(0, 1)  # rows x heads x dim
        scaled = torch.empty(queries.shape, device=query.device)  # float32, strides as compiled (a 1-row view's are not)
        torch.mul(queries, scaling if scaling is not None else query.shape[-1] ** -0.5, out=scaled)
        attended = plan.decode_kernel(scaled, key, value, plan.decode_slots, plan.decode_lengths, plan.longest)
        out[plan.decode_tokens] = attended.to(out.dtype)
    elif plan.decode_tokens.numel():
        longest, rows = plan.longest, plan.decode_tokens.numel()
        queries = query[0, :, plan.decode_tokens].transpose(0, 1).unsqueeze(2)  # rows x heads x 1 x dim
        if 2 * rows >= plan.used_slots:  # the slots in use are mostly decoding: read them in place, masked
            used = plan.used_slots
            placed = query.new_zeros((used, *queries.shape[1:]))
            placed[plan.decode_slots] = queries
            lengths = torch.ones(used, dtype=torch.long, device=query.device)  # slots not decoding: a dummy row
            lengths[plan.decode_slots] = plan.decode_lengths
            keys, values = key[:used, :, :longest], value[:used, :, :longest]
        else:  # few rows left in scattered slots: gather theirs rather than read the dead ones between
            placed, lengths = queries, plan.decode_lengths
            keys = key[:, :, :longest].index_select(0, plan.decode_slots)
            values = value[:, :, :longest].index_select(0, plan.decode_slots)
        mask = (torch.arange(longest, device=query.device)[None, :] < lengths[:, None])[:, None, None, :]
        attended = sdpa(placed, keys, values, attn_mask=mask, scale=scaling, enable_gqa=gqa)
        out[plan.decode_tokens] = attended[plan.decode_slots, :, 0] if placed is not queries else attended[:, :, 0]
    for first, count, slot, start in plan.chunks:
        end = start + count
        mask = (torch.arange(end, device=query.device)[None, :]
                <= torch.arange(start, end, device=query.device)[:, None])  # causal, offset by the cached past
        attended = sdpa(query[:, :, first:first + count], key[slot:slot + 1, :, :end], value[slot:slot + 1, :, :end],
                        attn_mask=mask, scale=scaling, enable_gqa=gqa)
        out[first:first + count] = attended[0].transpose(0, 1)
    return out.unsqueeze(0), None


def register_attention() -> None:
    from transformers import AttentionInterface

    AttentionInterface.register(ATTENTION, slot_attention)


def require_servable(transformer: torch.nn.Module) -> None:
    """Refuse, with one error naming the reason, a model whose layers the slot cache cannot serve."""
    config = next((module.config for module in transformer.modules() if hasattr(module, "config")), None)
    if config is None:
        return
    reasons = []
    if getattr(config, "sliding_window", None) is not None and getattr(config, "use_sliding_window", True):
        reasons.append(f"a sliding window of {config.sliding_window}")
    kinds = set(getattr(config, "layer_types", None) or []) - {"full_attention"}
    if kinds:
        reasons.append(f"layers of type {sorted(kinds)}")
    if getattr(config, "add_cross_attention", False) or getattr(config, "is_encoder_decoder", False):
        reasons.append("cross-attention")
    if reasons:
        raise ValueError(f"the slot cache serves full causal self-attention only; this model "
                         f"({type(transformer).__name__}) has {' and '.join(reasons)}")
