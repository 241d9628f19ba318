"""``trainer.grad_norm`` with a sparse embedding (``sparse: true``, as allennlp-models' fine-grained-ner): the
norm counts a sparse gradient by its values, and clipping gives what clipping the dense gradients gives."""

from __future__ import annotations

import torch

from distrain.distributed.parallel_model import clip_sparse_grad_norm


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
