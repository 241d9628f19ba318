"""``allennlp.modules.encoder_base``: AllenNLP's ``_EncoderBase``, the sorting, packing and (when stateful) the
state kept between batches that AllenNLP's wrappers of torch RNNs share.

A stateful encoder keeps each batch row's final state and starts the same row of the next batch from it (a
language model reading a long text in consecutive batches). Rows that grow the batch start from zeros; rows a
smaller batch leaves out, and rows that were all padding, keep their state. States are stored detached, in the
caller's row order, one tensor (a GRU's) or two (an LSTM's hidden and memory), each (layers, batch, hidden)."""

from __future__ import annotations

from typing import Any, Callable, Union

import torch
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

from distrain.modules.tensor_ops import sort_batch_by_length

RnnState = Union[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]


def _as_tuple(state: RnnState | list[torch.Tensor]) -> tuple[torch.Tensor, ...]:
    return (state,) if isinstance(state, torch.Tensor) else tuple(state)


def _sorted_rows(states: tuple[torch.Tensor, ...], sorting_indices: torch.Tensor, num_valid: int) -> RnnState:
    """The states' batch rows in sorted order, the first ``num_valid`` of them, contiguous; a single state
    comes back as a tensor, a pair as a tuple."""
    rows = tuple(state.index_select(1, sorting_indices)[:, :num_valid].contiguous() for state in states)
    return rows[0] if len(rows) == 1 else rows


class _EncoderBase(torch.nn.Module):
    def __init__(self, stateful: bool = False) -> None:
        super().__init__()
        self.stateful = stateful
        self._states: tuple[torch.Tensor, ...] | None = None

    def sort_and_run_forward(self, module: Callable[[Any, Any], tuple[Any, Any]], inputs: torch.Tensor,
                             mask: torch.Tensor, hidden_state: RnnState | None = None,
                             ) -> tuple[Any, Any, torch.Tensor]:
        """``module`` on the batch sorted by length and packed, all-padding rows left out, from
        ``hidden_state`` (or, stateful, the kept state) sorted the same way: its output and final states
        (``num_valid`` rows, sorted) and the indices that restore the caller's order."""
        batch_size = mask.shape[0]
        num_valid = int(mask[:, 0].sum().item())
        lengths = mask.long().sum(-1)
        sorted_inputs, sorted_lengths, restoration_indices, sorting_indices = sort_batch_by_length(inputs, lengths)
        packed = pack_padded_sequence(sorted_inputs[:num_valid], sorted_lengths[:num_valid].tolist(),
                                      batch_first=True)
        if self.stateful:
            initial_states = self._get_initial_states(batch_size, num_valid, sorting_indices)
        elif hidden_state is None:
            initial_states = None
        else:
            initial_states = _sorted_rows(_as_tuple(hidden_state), sorting_indices, num_valid)
        module_output, final_states = module(packed, initial_states)
        return module_output, final_states, restoration_indices

    def _get_initial_states(self, batch_size: int, num_valid: int,
                            sorting_indices: torch.Tensor) -> RnnState | None:
        """The kept state for a batch of ``batch_size`` rows, sorted and cut to ``num_valid``; ``None`` the
        first time. A larger batch grows the kept state with zero rows (kept); a smaller one reads its first rows."""
        if self._states is None:
            return None
        kept = self._states[0].shape[1]
        if batch_size > kept:
            self._states = tuple(torch.cat([state, state.new_zeros(state.shape[0], batch_size - kept,
                                                                   state.shape[2])], 1) for state in self._states)
        return _sorted_rows(tuple(state[:, :batch_size] for state in self._states), sorting_indices, num_valid)

    def _update_states(self, final_states: RnnState | list[torch.Tensor],
                       restoration_indices: torch.Tensor) -> None:
        """Keep the final states (``restoration_indices`` puts them in the caller's order), detached; a row
        whose new state is all zeros (all padding) keeps its old state, as do rows past the new batch."""
        new_states = tuple(state.index_select(1, restoration_indices) for state in _as_tuple(final_states))
        if self._states is None:
            self._states = tuple(state.detach() for state in new_states)
            return
        updated = []
        for old, new in zip(self._states, new_states):
            rows = new.shape[1]
            if old.shape[1] < rows:  # kept for fewer rows than came back: the new rows start from zeros
                old = torch.cat([old, old.new_zeros(old.shape[0], rows - old.shape[1], old.shape[2])], 1)
            used = (new[0].sum(-1) != 0).view(1, rows, 1)
            merged = torch.where(used, new, old[:, :rows]).detach()
            updated.append(torch.cat([merged, old[:, rows:]], 1) if old.shape[1] > rows else merged)
        self._states = tuple(updated)

    def run_keeping_state(self, module: torch.nn.Module, inputs: torch.Tensor, mask: torch.Tensor,
                          ) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
        """A stateful run: ``module``'s padded output (batch, steps, width) and final states, both in the
        caller's row order (zeros for all-padding rows), the kept state updated from them."""
        if not self.stateful:
            raise ValueError("run_keeping_state is for a stateful encoder")
        batch_size, steps = mask.shape
        output, final_states, restoration_indices = self.sort_and_run_forward(module, inputs, mask)
        if isinstance(output, PackedSequence):
            output, _ = pad_packed_sequence(output, batch_first=True, total_length=steps)
        missing = batch_size - output.shape[0]
        output = torch.cat([output, output.new_zeros(missing, *output.shape[1:])], 0)
        final_states = tuple(torch.cat([state, state.new_zeros(state.shape[0], missing, state.shape[2])], 1)
                             for state in _as_tuple(final_states))
        self._update_states(final_states, restoration_indices)
        return (output.index_select(0, restoration_indices),
                tuple(state.index_select(1, restoration_indices) for state in final_states))

    def reset_states(self, mask: torch.Tensor | None = None) -> None:
        """Forget the kept state: all of it, or the rows where ``mask`` (batch,) is true (set to zeros)."""
        if mask is None:
            self._states = None
            return
        if self._states is None:
            return
        if mask.shape[0] != self._states[0].shape[1]:
            raise ValueError(f"Mask has size {mask.shape[0]}, but the stored states have a batch of "
                             f"{self._states[0].shape[1]}")
        keep = ~mask.bool().view(1, -1, 1)
        self._states = tuple(state * keep.to(state.dtype) for state in self._states)


__all__ = ["_EncoderBase"]
