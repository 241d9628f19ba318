"""The chunked output layer + cross-entropy (distrain.modules.linear_cross_entropy) against
``F.cross_entropy`` over the whole logits: the same sum, the same gradients, the same count of right
tokens, for chunk sizes that do and do not divide the tokens, with ignored tokens, in float32 and bfloat16."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from distrain.modules.linear_cross_entropy import linear_cross_entropy

IGNORE = -100


def case(dtype=torch.float32, tokens=37, width=16, vocabulary=101, seed=0):
    generator = torch.Generator().manual_seed(seed)
    hidden = torch.randn(tokens, width, generator=generator).to(dtype).requires_grad_()
    weight = torch.randn(vocabulary, width, generator=generator).requires_grad_()  # fp32: the master weight
    targets = torch.randint(0, vocabulary, (tokens,), generator=generator)
    with torch.no_grad():  # some tokens right, so the count is tested
        targets[1::3] = (hidden @ weight.to(dtype).t()).argmax(-1)[1::3]
    targets[::5] = IGNORE
    return hidden, weight, targets


def reference(hidden, weight, targets):
    logits = hidden @ weight.to(hidden.dtype).t()
    total = F.cross_entropy(logits.float(), targets, ignore_index=IGNORE, reduction="sum")
    counted = targets.ne(IGNORE)
    chosen = logits.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return total, (counted & (chosen >= logits.amax(-1))).sum()


@pytest.mark.parametrize("chunk_size", [1, 8, 37, 1000])
def test_float32_matches_cross_entropy_over_all_logits_values_and_gradients(chunk_size):
    hidden, weight, targets = case()
    expected, expected_right = reference(hidden, weight, targets)
    (expected * 0.3).backward()
    expected_grads = hidden.grad.clone(), weight.grad.clone()
    hidden.grad = weight.grad = None

    total, right = linear_cross_entropy(hidden, weight, targets, chunk_size)
    (total * 0.3).backward()  # an incoming gradient other than 1 (the trainer scales the loss)
    torch.testing.assert_close(total, expected, rtol=1e-6, atol=1e-5)
    assert right.item() == expected_right.item() and 0 < right.item()
    torch.testing.assert_close(hidden.grad, expected_grads[0], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(weight.grad, expected_grads[1], rtol=1e-5, atol=1e-6)


def test_bfloat16_hidden_matches_the_bfloat16_logits_path_and_keeps_the_master_gradient_float32():
    hidden, weight, targets = case(torch.bfloat16, tokens=64, vocabulary=300)
    expected, expected_right = reference(hidden, weight, targets)
    expected.backward()
    expected_grads = hidden.grad.float(), weight.grad.clone()
    hidden.grad = weight.grad = None

    total, right = linear_cross_entropy(hidden, weight, targets, chunk_size=16)
    total.backward()
    assert total.dtype == torch.float32 and hidden.grad.dtype == torch.bfloat16 and weight.grad.dtype == torch.float32
    torch.testing.assert_close(total, expected, rtol=1e-5, atol=1e-4)
    assert right.item() == expected_right.item()
    # the reference rounds its gradient to bfloat16 on the way back; a bfloat16 ulp is 2^-8 relative
    torch.testing.assert_close(hidden.grad.float(), expected_grads[0], rtol=2e-2, atol=2e-3)
    torch.testing.assert_close(weight.grad, expected_grads[1], rtol=2e-2, atol=2e-3)


def test_under_autocast_the_products_run_in_its_dtype():
    hidden, weight, targets = case(tokens=20, vocabulary=50)
    with torch.autocast("cpu", torch.bfloat16):
        total, _ = linear_cross_entropy(hidden, weight, targets, chunk_size=7)
        expected, _ = reference(hidden.bfloat16(), weight, targets)
    torch.testing.assert_close(total, expected, rtol=1e-5, atol=1e-4)
    total.backward()
    assert hidden.grad.dtype == torch.float32 and weight.grad.dtype == torch.float32


def test_without_gradients_it_computes_none_and_all_ignored_is_zero():
    hidden, weight, targets = case()
    with torch.no_grad():
        total, right = linear_cross_entropy(hidden, weight, targets, chunk_size=8)
    torch.testing.assert_close(total, reference(hidden, weight, targets)[0].detach())
    ignored = torch.full_like(targets, IGNORE)
    total, right = linear_cross_entropy(hidden, weight, ignored, chunk_size=8)
    total.backward()
    assert total.item() == 0 and right.item() == 0
    assert not hidden.grad.any() and not weight.grad.any()


def test_shapes_and_chunk_size_are_checked():
    hidden, weight, targets = case()
    with pytest.raises(ValueError, match="chunk_size"):
        linear_cross_entropy(hidden, weight, targets, 0)
    with pytest.raises(ValueError, match="targets"):
        linear_cross_entropy(hidden, weight, targets[:-1], 8)
