"""A sparse embedding (``sparse: true``, as allennlp-models' fine-grained-ner): ``trainer.grad_norm`` counts a
sparse gradient by its values, and clipping gives what clipping the dense gradients gives; the ``sgd`` optimizer
(``implementation: auto``, which picks torch's fused kernel before any gradient is seen) takes sparse gradients
and makes the dense updates."""

from __future__ import annotations

import pytest
import torch

from distrain.distributed.applied import clip_sparse_grad_norm
from distrain.errors import UsageError
from distrain.optim.optimizers import Optimizer


def gradients(sparse: bool) -> list[torch.nn.Parameter]:
    torch.manual_seed(0)
    embedding = torch.nn.Embedding(10, 4, sparse=sparse)
    linear = torch.nn.Linear(4, 2)
    linear(embedding(torch.tensor([1, 3, 3, 7]))).pow(2).sum().backward()
    return [embedding.weight, *linear.parameters()]


def test_sparse_gradients_clip_as_their_dense_equivalents():
    dense = gradients(sparse=False)
    dense_norm = torch.nn.utils.clip_grad_norm_(dense, 0.5)
    sparse = gradients(sparse=True)
    sparse_norm = clip_sparse_grad_norm(sparse, 0.5)
    assert torch.allclose(sparse_norm, dense_norm)
    for ours, theirs in zip(sparse, dense):
        grad = ours.grad.to_dense() if ours.grad.is_sparse else ours.grad
        assert torch.allclose(grad, theirs.grad, atol=1e-7)


def sgd_steps(sparse: bool, **options) -> list[torch.Tensor]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(10, 4, sparse=sparse), torch.nn.Linear(4, 2))
    optimizer = Optimizer.by_name("sgd")(list(model.named_parameters()), lr=0.1, **options)
    for ids in ([1, 3, 3, 7], [2, 3, 9], [1, 1]):
        optimizer.zero_grad()
        model(torch.tensor(ids)).pow(2).sum().backward()
        optimizer.step()
    return [parameter.detach() for parameter in model.parameters()]


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_sgd_takes_sparse_gradients_and_makes_the_dense_updates(momentum):
    for ours, theirs in zip(sgd_steps(True, momentum=momentum), sgd_steps(False, momentum=momentum)):
        assert torch.allclose(ours, theirs, atol=1e-6)


def test_fused_sgd_asked_for_refuses_sparse_gradients_in_one_line():
    with pytest.raises(UsageError, match="trainer.optimizer.implementation: 'fused' SGD does not take sparse"):
        sgd_steps(True, implementation="fused")
