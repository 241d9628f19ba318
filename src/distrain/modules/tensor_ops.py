"""Masked reductions, index selection and dtype limits: the tensor helpers AllenNLP models call from ``nn.util``.

They follow AllenNLP's semantics (a row with nothing unmasked gives a finite value, never NaN; ``masked_max`` of
such a row is the dtype's lowest value), so a model ported from AllenNLP computes the same numbers. Bad arguments
raise :class:`~distrain.errors.ConfigError` with one line, as AllenNLP raises its ``ConfigurationError``.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch

from distrain.errors import ConfigError


# ------------------------------------------------------------------------------------------- dtype limits
def info_value_of_dtype(dtype: torch.dtype) -> torch.finfo | torch.iinfo:
    if dtype == torch.bool:
        raise TypeError("no limits for the bool dtype")
    return torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)


def min_value_of_dtype(dtype: torch.dtype) -> float | int:
    return info_value_of_dtype(dtype).min


def max_value_of_dtype(dtype: torch.dtype) -> float | int:
    return info_value_of_dtype(dtype).max


def tiny_value_of_dtype(dtype: torch.dtype) -> float:
    """A small value that still counts in ``dtype`` sums: 1e-13 in float32/64, 1e-4 in half precision."""
    if not dtype.is_floating_point:
        raise TypeError("only floating point dtypes have a tiny value")
    if dtype in (torch.float, torch.double):
        return 1e-13
    if dtype in (torch.half, torch.bfloat16):
        return 1e-4
    raise TypeError(f"no tiny value for {dtype}")


# ------------------------------------------------------------------------------------------- devices
def get_device_of(tensor: torch.Tensor) -> int:
    """The CUDA device index of ``tensor``, ``-1`` on the CPU."""
    return tensor.get_device() if tensor.is_cuda else -1


def get_range_vector(size: int, device: int | torch.device) -> torch.Tensor:
    """``arange(size)`` on ``device`` (``-1``: the CPU)."""
    if isinstance(device, int):
        device = torch.device("cpu") if device < 0 else torch.device("cuda", device)
    return torch.arange(size, dtype=torch.long, device=device)


def move_to_device(value: Any, device: int | torch.device) -> Any:
    """``value`` with every tensor inside it (dicts, lists, tuples, named tuples) moved to ``device``."""
    if isinstance(device, int):
        device = torch.device("cpu") if device < 0 else torch.device("cuda", device)
    if isinstance(value, torch.Tensor):
        return value if value.device == device else value.to(device)
    if isinstance(value, dict):
        moved = {key: move_to_device(item, device) for key, item in value.items()}
        return type(value)(moved) if type(value) is not dict else moved
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(move_to_device(item, device) for item in value))
    if isinstance(value, (list, tuple)):
        return type(value)(move_to_device(item, device) for item in value)
    return value


# ------------------------------------------------------------------------------------------- masks and lengths
def get_lengths_from_binary_sequence_mask(mask: torch.Tensor) -> torch.Tensor:
    return mask.long().sum(-1)


def get_mask_from_sequence_lengths(sequence_lengths: torch.Tensor, max_length: int) -> torch.Tensor:
    """``(batch, max_length)``: true where the position is within the sequence's length."""
    positions = torch.arange(max_length, device=sequence_lengths.device)
    return positions.unsqueeze(0) < sequence_lengths.unsqueeze(-1)


def sort_batch_by_length(tensor: torch.Tensor, sequence_lengths: torch.Tensor):
    """The batch sorted by decreasing length: ``(sorted tensor, sorted lengths, restoration indices, permutation)``;
    ``sorted_tensor.index_select(0, restoration_indices)`` gives the batch back in its order."""
    if not isinstance(tensor, torch.Tensor) or not isinstance(sequence_lengths, torch.Tensor):
        raise ConfigError("sort_batch_by_length takes a tensor and a tensor of lengths")
    sorted_lengths, permutation = sequence_lengths.sort(0, descending=True)
    restoration = permutation.sort(0)[1]
    return tensor.index_select(0, permutation), sorted_lengths, restoration, permutation


def replace_masked_values(tensor: torch.Tensor, mask: torch.Tensor, replace_with: float) -> torch.Tensor:
    if tensor.dim() != mask.dim():
        raise ConfigError(f"replace_masked_values: tensor has {tensor.dim()} dimensions, mask {mask.dim()}")
    return tensor.masked_fill(~mask.bool(), replace_with)


def get_final_encoder_states(encoder_outputs: torch.Tensor, mask: torch.Tensor,
                             bidirectional: bool = False) -> torch.Tensor:
    """Each sequence's output at its last unmasked step; bidirectional: the forward half there, the backward
    half at step 0."""
    last = (mask.long().sum(1) - 1).clamp(min=0)
    rows = torch.arange(encoder_outputs.shape[0], device=encoder_outputs.device)
    final = encoder_outputs[rows, last]
    if bidirectional:
        half = encoder_outputs.shape[-1] // 2
        final = torch.cat([final[:, :half], encoder_outputs[:, 0, half:]], dim=-1)
    return final


def get_dropout_mask(dropout_probability: float, tensor_for_masking: torch.Tensor) -> torch.Tensor:
    """A dropout mask shaped like ``tensor_for_masking``: 0, or ``1 / (1 - p)`` where kept."""
    kept = torch.rand(tensor_for_masking.size(), device=tensor_for_masking.device) > dropout_probability
    return kept.float().div(1.0 - dropout_probability)


# ------------------------------------------------------------------------------------------- masked reductions
def _widened(mask: torch.Tensor, vector: torch.Tensor) -> torch.Tensor:
    while mask.dim() < vector.dim():
        mask = mask.unsqueeze(1)
    return mask


def masked_log_softmax(vector: torch.Tensor, mask: torch.Tensor | None, dim: int = -1) -> torch.Tensor:
    """Log-softmax over the unmasked entries (masked ones get a very low, finite log-probability)."""
    if mask is not None:
        mask = _widened(mask, vector)
        vector = vector + (mask + tiny_value_of_dtype(vector.dtype)).log()
    return torch.nn.functional.log_softmax(vector, dim=dim)


def masked_max(vector: torch.Tensor, mask: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return vector.masked_fill(~mask.bool(), min_value_of_dtype(vector.dtype)).max(dim=dim, keepdim=keepdim)[0]


def masked_mean(vector: torch.Tensor, mask: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    """The mean over ``dim`` of the unmasked entries (0 where there are none)."""
    mask = mask.bool()
    total = vector.masked_fill(~mask, 0.0).sum(dim=dim, keepdim=keepdim)
    count = mask.sum(dim=dim, keepdim=keepdim)
    return total / count.float().clamp(min=tiny_value_of_dtype(torch.float))


def masked_flip(padded_sequence: torch.Tensor, sequence_lengths: Sequence[int]) -> torch.Tensor:
    """Each sequence reversed within its own length, padding kept at the end."""
    if padded_sequence.size(0) != len(sequence_lengths):
        raise ConfigError(f"masked_flip: {len(sequence_lengths)} lengths for a batch of {padded_sequence.size(0)}")
    flipped = [padded_sequence[row, :length].flip([0]) for row, length in enumerate(sequence_lengths)]
    return torch.nn.utils.rnn.pad_sequence(flipped, batch_first=True)


def logsumexp(tensor: torch.Tensor, dim: int = -1, keepdim: bool = False) -> torch.Tensor:
    """``log(sum(exp(tensor)))`` over ``dim``, stable for large values and for a row all ``-inf`` (gives -inf)."""
    peak, _ = tensor.max(dim, keepdim=True)
    finite_peak = peak.masked_fill(torch.isinf(peak), 0.0)
    total = (tensor - finite_peak).exp().sum(dim, keepdim=True).log() + finite_peak
    return total if keepdim else total.squeeze(dim)


def masked_topk(input_: torch.Tensor, mask: torch.Tensor, k: int | torch.Tensor, dim: int = -1):
    """The top ``k`` unmasked items along ``dim``, kept in their original order: ``(values, mask, indices)``;
    ``k`` one number or one per row (the returned mask marks the slots a row's smaller ``k`` leaves empty)."""
    if input_.size() != mask.size():
        raise ValueError("masked_topk: input and mask have different shapes")
    dim = dim % input_.dim()
    mask = mask.bool()
    moved = dim != input_.dim() - 1
    if moved:
        input_, mask = input_.movedim(dim, -1), mask.movedim(dim, -1)
    shape = input_.shape
    scores, keep = input_.reshape(-1, shape[-1]), mask.reshape(-1, shape[-1])
    if isinstance(k, int):
        counts = torch.full((scores.shape[0],), k, dtype=torch.long, device=scores.device)
    else:
        counts = k.reshape(-1).long()  # one per row: the input's shape without ``dim``, in order
    largest = int(counts.max())
    lowered = scores.masked_fill(~keep, min_value_of_dtype(scores.dtype))
    _, top = lowered.topk(largest, dim=1)
    slot_kept = torch.arange(largest, device=scores.device).unsqueeze(0) < counts.unsqueeze(1)
    # empty slots repeat the row's largest chosen index, so sorting keeps the chosen ones first, in input order
    filler = top.max(1, keepdim=True)[0].expand_as(top)
    indices = torch.where(slot_kept, top, filler).sort(1)[0]
    values = lowered.gather(1, indices)
    chosen_mask = slot_kept & keep.gather(1, indices)
    out_shape = (*shape[:-1], largest)
    values, chosen_mask, indices = (t.reshape(out_shape) for t in (values, chosen_mask, indices))
    if moved:
        values, chosen_mask, indices = (t.movedim(-1, dim) for t in (values, chosen_mask, indices))
    return values, chosen_mask, indices


# ------------------------------------------------------------------------------------------- index selection
def flatten_and_batch_shift_indices(indices: torch.Tensor, sequence_length: int) -> torch.Tensor:
    """``indices`` (batch, ...) into dimension 1 of a (batch, sequence_length, ...) tensor, as indices into its
    batch-flattened form (each row shifted by ``row * sequence_length``), flattened."""
    if int(indices.max()) >= sequence_length or int(indices.min()) < 0:
        raise ConfigError(f"indices must lie in [0, {sequence_length - 1}]")
    offsets = torch.arange(indices.size(0), device=indices.device) * sequence_length
    offsets = offsets.view(-1, *[1] * (indices.dim() - 1))
    return (indices + offsets).view(-1)


def batched_index_select(target: torch.Tensor, indices: torch.Tensor,
                         flattened_indices: torch.Tensor | None = None) -> torch.Tensor:
    """``target`` (batch, length, ...) rows picked per batch item by ``indices`` (batch, d1, ..., dn)."""
    if flattened_indices is None:
        flattened_indices = flatten_and_batch_shift_indices(indices, target.size(1))
    flat = target.reshape(-1, *target.shape[2:])
    return flat.index_select(0, flattened_indices).view(*indices.shape, *target.shape[2:])


def flattened_index_select(target: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """``target`` (batch, length, d) at the same 2-d ``indices`` (a, b) for every batch item: (batch, a, b, d)."""
    if indices.dim() != 2:
        raise ConfigError(f"flattened_index_select takes 2-d indices, not {indices.dim()}-d")
    picked = target.index_select(1, indices.reshape(-1))
    return picked.view(target.size(0), *indices.shape, target.size(-1))


def masked_index_fill(target: torch.Tensor, indices: torch.Tensor, mask: torch.Tensor,
                      fill_value: int = 1) -> torch.Tensor:
    """``target`` (batch, length) with ``fill_value`` written at each unmasked index of ``indices`` (batch, n)."""
    mask = mask.bool()
    previous = target.shape
    flat = flatten_and_batch_shift_indices(indices * mask, target.size(1))[mask.reshape(-1)]
    filled = target.reshape(-1).index_fill(0, flat, fill_value)
    return filled.reshape(previous)


def masked_index_replace(target: torch.Tensor, indices: torch.Tensor, mask: torch.Tensor,
                         replace: torch.Tensor) -> torch.Tensor:
    """``target`` (batch, length, d) with rows of ``replace`` (batch, n, d) written at the unmasked ``indices``."""
    mask = mask.bool()
    flat = flatten_and_batch_shift_indices(indices * mask, target.size(1))[mask.reshape(-1)]
    rows = target.reshape(-1, target.size(-1)).index_copy(0, flat, replace.reshape(-1, replace.size(-1))[
        mask.reshape(-1)])
    return rows.reshape(target.shape)


def batched_span_select(target: torch.Tensor, spans: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows of each inclusive span (start, end) of ``spans`` (batch, n, 2): ``(rows (batch, n, width, d),
    mask (batch, n, width))``, ``width`` the widest span; a span's rows run from its start."""
    starts, ends = spans.split(1, dim=-1)
    widths = ends - starts
    width = int(widths.max()) + 1
    offsets = torch.arange(width, device=spans.device).view(1, 1, -1)
    mask = (offsets <= widths) & (starts + offsets >= 0)
    positions = (starts + offsets).clamp(min=0) * mask
    positions = positions.clamp(max=target.size(1) - 1)
    return batched_index_select(target, positions), mask


def combine_initial_dims(tensor: torch.Tensor) -> torch.Tensor:
    """(d1, ..., dn, length) as (d1 * ... * dn, length): 2-d or less is kept."""
    return tensor if tensor.dim() <= 2 else tensor.view(-1, tensor.size(-1))


def uncombine_initial_dims(tensor: torch.Tensor, original_size: torch.Size) -> torch.Tensor:
    """The inverse of :func:`combine_initial_dims` for its output with a new last dimension."""
    if len(original_size) <= 2:
        return tensor
    return tensor.view(*original_size, tensor.size(-1))


def clamp_tensor(tensor: torch.Tensor, minimum: float, maximum: float) -> torch.Tensor:
    """``clamp`` that also takes a sparse tensor (its stored values clamped)."""
    if tensor.is_sparse:
        coalesced = tensor.coalesce()
        values = coalesced._values().clamp(minimum, maximum)
        return torch.sparse_coo_tensor(coalesced._indices(), values, coalesced.size())
    return tensor.clamp(minimum, maximum)


def tensors_equal(first: Any, second: Any, tolerance: float = 1e-12) -> bool:
    """Whether two (nested structures of) tensors are equal to ``tolerance``."""
    if isinstance(first, (list, tuple)):
        return (isinstance(second, (list, tuple)) and len(first) == len(second)
                and all(tensors_equal(a, b, tolerance) for a, b in zip(first, second)))
    if isinstance(first, dict):
        return (isinstance(second, dict) and first.keys() == second.keys()
                and all(tensors_equal(first[key], second[key], tolerance) for key in first))
    if isinstance(first, torch.Tensor):
        if not isinstance(second, torch.Tensor) or first.size() != second.size():
            return False
        if first.dtype == torch.bool or second.dtype == torch.bool:
            return bool((first == second).all())
        return bool(((first - second).abs() <= tolerance).all())
    try:
        return bool(first == second)
    except Exception:  # noqa: BLE001 - values without a truth value are unequal
        return False


# ------------------------------------------------------------------------------------------- sequence loss
def sequence_cross_entropy_with_logits(logits: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor,
                                       average: str | None = "batch", label_smoothing: float | None = None,
                                       gamma: float | None = None, alpha: Any = None) -> torch.Tensor:
    """Token-level cross entropy weighted by ``weights`` (a mask, or per-token weights). ``average``: ``"batch"``
    (per sequence, then over the non-empty sequences), ``"token"`` (over all weighted tokens) or ``None`` (one
    loss per sequence). ``label_smoothing`` spreads that much of the target's mass evenly over the classes;
    ``gamma`` is the focal loss's exponent; ``alpha`` weights the classes (one number: the weight of class 1,
    class 0 getting ``1 - alpha``; or one per class)."""
    if average not in (None, "token", "batch"):
        raise ValueError(f"average is None, 'token' or 'batch', not {average!r}")
    weights = weights.to(logits.dtype)
    other_dims = tuple(range(1, weights.dim()))
    weights_per_sequence = weights.sum(dim=other_dims)
    log_probs = torch.nn.functional.log_softmax(logits.reshape(-1, logits.size(-1)), dim=-1)
    flat_targets = targets.reshape(-1, 1).long().clamp(min=0)  # padding distrain labels -100 carries weight 0
    if gamma:
        target_probs = log_probs.exp().gather(1, flat_targets)
        weights = weights * ((1.0 - target_probs) ** gamma).view(*targets.size())
    if alpha is not None:
        if isinstance(alpha, (float, int)):
            per_class = torch.tensor([1.0 - float(alpha), float(alpha)], dtype=weights.dtype, device=weights.device)
        elif isinstance(alpha, (list, tuple, torch.Tensor)) or hasattr(alpha, "__array__"):
            per_class = torch.as_tensor(alpha, dtype=weights.dtype, device=weights.device)
            if per_class.dim() == 0:
                per_class = torch.stack([1 - per_class, per_class])
        else:
            raise TypeError(f"alpha is a number or one weight per class, not {type(alpha).__name__}")
        weights = weights * per_class.gather(0, flat_targets.view(-1)).view(*targets.size())
    if label_smoothing is not None and label_smoothing > 0.0:
        spread = label_smoothing / logits.size(-1)
        soft = torch.full_like(log_probs, spread).scatter_(-1, flat_targets, 1.0 - label_smoothing + spread)
        token_losses = -(log_probs * soft).sum(-1, keepdim=True)
    else:
        token_losses = -log_probs.gather(1, flat_targets)
    token_losses = token_losses.view(*targets.size()) * weights
    tiny = tiny_value_of_dtype(token_losses.dtype)
    if average == "token":
        return token_losses.sum() / (weights_per_sequence.sum() + tiny)
    per_sequence = token_losses.sum(other_dims) / (weights_per_sequence + tiny)
    if average == "batch":
        return per_sequence.sum() / ((weights_per_sequence > 0).sum() + tiny)
    return per_sequence
