"""Bias mitigators: a forward hook on a model's word-embedding layer that takes a bias direction out of every
embedding it gives (AllenNLP's ``allennlp.fairness`` bias mitigator wrappers), in training and at test time.

The direction is found once, when the mitigator is built, from the embeddings as they are then (the pretrained
ones, before fine-tuning moves them), and kept as a buffer: an archive carries it, so a loaded model mitigates
with the direction it was trained with. AllenNLP does not save it; it finds it again from the pretrained
embeddings whenever it builds the model, which :meth:`BiasMitigator.direction_from` lets an AllenNLP archive do."""

from __future__ import annotations

import torch

from distrain.zoo.fairness.modules.bias_direction import BiasDirection
from distrain.pretrained import weights_are_elsewhere
from distrain.registry import Registrable


class BiasMitigator(torch.nn.Module, Registrable):
    """Called as ``embedding_layer``'s forward hook: its output, bias removed along the last axis.

    With ``requires_grad`` false the hook runs without autograd while training (AllenNLP's switch); in eval
    it always does."""

    runtime_args = ("embedding_layer",)

    def __init__(self, bias_direction: BiasDirection, embedding_layer: torch.nn.Module,
                 requires_grad: bool = True) -> None:
        super().__init__()
        self.bias_direction = bias_direction
        self.requires_grad = requires_grad
        weight = embedding_layer.weight
        self.register_buffer("direction", torch.zeros(weight.shape[-1], dtype=weight.dtype, device=weight.device))
        if not weight.is_meta and not weights_are_elsewhere():  # else a model built to be loaded: the archive
            self.direction.copy_(self.direction_from(embedding_layer).detach())

    def direction_from(self, embedding_layer: torch.nn.Module) -> torch.Tensor:
        """The bias direction in ``embedding_layer``'s space as it is now."""
        return self.bias_direction(embedding_layer)

    def forward(self, module: torch.nn.Module, inputs: tuple, output: torch.Tensor) -> torch.Tensor:
        with torch.set_grad_enabled(torch.is_grad_enabled() and self.training and self.requires_grad):
            flat = output.flatten(end_dim=-2)
            return self.mitigate(flat, self.direction, module).reshape(output.shape)

    def mitigate(self, embeddings: torch.Tensor, direction: torch.Tensor,
                 module: torch.nn.Module) -> torch.Tensor:  # pragma: no cover - abstract
        """(n, dim) embeddings with the bias taken out along the unit ``direction``."""
        raise NotImplementedError


def remove_component(embeddings: torch.Tensor, direction: torch.Tensor, normalize: bool = False) -> torch.Tensor:
    """``embeddings`` less their projection on ``direction`` (divided by its squared norm with ``normalize``)."""
    projection = torch.matmul(embeddings, direction.reshape(-1, 1)) * direction
    return embeddings - (projection / torch.dot(direction, direction) if normalize else projection)
