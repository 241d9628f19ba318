"""The output layer and the cross-entropy over a large vocabulary, fused and taken a chunk of tokens at a time.

A causal LM's step ends with ``logits = hidden @ weight.T`` (tokens x vocabulary) and a cross-entropy over
them in float32. For 16 x 128 tokens and a 30,522-id vocabulary those logits are 250 MB in float32, written,
read by the softmax, read again by its backward: the step's largest tensor, and mostly memory traffic.
:func:`linear_cross_entropy` never holds them whole: it takes ``chunk_size`` tokens at a time, computes
their logits (in the inputs' dtype, as the output layer would), their log-sum-exp in float32, and, when a
gradient is wanted, their gradients with respect to ``hidden`` and ``weight`` right away (the softmax minus
the one-hot target), so backward only scales what forward left. The peak is one chunk's logits.

It returns the summed loss over the tokens whose target is not ``ignore_index`` and, without a gradient,
the number of those tokens whose target logit is the largest (a tie counts as right): what a model's
accuracy needs, from the same logits. The sum, not the mean: the caller divides by its own count.
"""

from __future__ import annotations

import torch


def linear_cross_entropy(hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, chunk_size: int,
                         ignore_index: int = -100) -> tuple[torch.Tensor, torch.Tensor]:
    """``(sum of cross_entropy(hidden @ weight.T, targets) over the counted tokens, number right)``.
    ``hidden``: [tokens, width]; ``weight``: [vocabulary, width] (the output layer's, no bias), cast to
    ``hidden``'s dtype for the products (its gradient comes back in its own dtype, summed in float32);
    ``targets``: [tokens] class ids or ``ignore_index``."""
    if hidden.dim() != 2 or weight.dim() != 2 or targets.shape != hidden.shape[:1]:
        raise ValueError(f"expected hidden [tokens, width], weight [vocabulary, width], targets [tokens]; got "
                         f"{tuple(hidden.shape)}, {tuple(weight.shape)}, {tuple(targets.shape)}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    device = hidden.device.type
    if torch.is_autocast_enabled(device):  # the products in autocast's dtype, as the output layer would run
        hidden = hidden.to(torch.get_autocast_dtype(device))
    with torch.autocast(device, enabled=False):
        return _LinearCrossEntropy.apply(hidden, weight, targets, chunk_size, ignore_index)


class _LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, master_weight, targets, chunk_size, ignore_index):
        weight = master_weight.to(hidden.dtype)  # once per call, not per chunk
        wants_hidden, wants_weight = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        total = torch.zeros((), dtype=torch.float32, device=hidden.device)
        right = torch.zeros((), dtype=torch.long, device=hidden.device)
        grad_hidden = torch.empty(hidden.shape, dtype=hidden.dtype, device=hidden.device) if wants_hidden else None
        # the weight's gradient is summed over chunks in float32, whatever the compute dtype
        grad_weight = torch.zeros(weight.shape, dtype=torch.float32, device=weight.device) if wants_weight else None
        for start in range(0, hidden.shape[0], chunk_size):
            rows = hidden[start:start + chunk_size]
            target = targets[start:start + chunk_size]
            counted = target.ne(ignore_index)
            safe = target.masked_fill(~counted, 0).unsqueeze(-1)
            logits = rows @ weight.t()
            chosen = logits.gather(-1, safe).squeeze(-1).float()
            peak = logits.amax(-1, keepdim=True).float()
            right += (counted & (chosen >= peak.squeeze(-1))).sum()
            # exp(logits - peak) once, in place (float32 logits are the product itself): the log-sum-exp
            # and the softmax of the gradient both come from it
            exponentials = logits.float().sub_(peak).exp_()
            sums = exponentials.sum(-1, keepdim=True)
            log_norm = (sums.log() + peak).squeeze(-1)
            total += ((log_norm - chosen) * counted).sum()
            if grad_hidden is None and grad_weight is None:
                continue
            # d loss / d logits = softmax - one_hot(target), zero on ignored tokens
            probabilities = exponentials.div_(sums)
            probabilities.scatter_add_(-1, safe, torch.full_like(chosen, -1.0).unsqueeze(-1))
            probabilities.mul_(counted.unsqueeze(-1))
            grad_logits = probabilities.to(hidden.dtype)
            if grad_hidden is not None:
                torch.mm(grad_logits, weight, out=grad_hidden[start:start + chunk_size])
            if grad_weight is not None and rows.dtype == torch.float32:
                grad_weight.addmm_(grad_logits.t(), rows)
            elif grad_weight is not None:
                grad_weight += (grad_logits.t() @ rows).float()
        ctx.save_for_backward(grad_hidden if grad_hidden is not None else torch.empty(0),
                              grad_weight if grad_weight is not None else torch.empty(0))
        ctx.dtypes = hidden.dtype, master_weight.dtype
        ctx.mark_non_differentiable(right)
        return total, right

    @staticmethod
    def backward(ctx, grad_total, _grad_right):
        grad_hidden, grad_weight = ctx.saved_tensors
        wants_hidden, wants_weight = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        hidden_dtype, weight_dtype = ctx.dtypes
        scale = grad_total.float()  # the incoming scale (1 / count, a loss weight) is applied in float32
        return ((grad_hidden.float() * scale).to(hidden_dtype) if wants_hidden else None,
                (grad_weight * scale).to(weight_dtype) if wants_weight else None,
                None, None, None)
