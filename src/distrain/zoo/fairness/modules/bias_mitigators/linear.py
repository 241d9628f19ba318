"""``linear``: remove each embedding's component along the bias direction (Dev & Phillips 2019, AllenNLP's
``LinearBiasMitigator``)."""

from __future__ import annotations

import torch

from distrain.zoo.fairness.modules.bias_mitigator import BiasMitigator, remove_component


@BiasMitigator.register("linear")
class LinearBiasMitigator(BiasMitigator):
    """Each embedding less its component along the bias direction."""

    def mitigate(self, embeddings: torch.Tensor, direction: torch.Tensor, module: torch.nn.Module) -> torch.Tensor:
        return remove_component(embeddings, direction / torch.linalg.norm(direction))
