"""``paired_pca``: the first principal component (uncentred) of the pairs' difference vectors (Bolukbasi et al.
2016, AllenNLP's ``PairedPCABiasDirection``).

AllenNLP finds it with ``torch.pca_lowrank``, a randomised approximation; the exact SVD is taken here, so that every
worker finds the same vector (the approximation keeps all but one of the ranks it could, so both agree closely).
Its sign is arbitrary, and neither mitigator depends on it."""

from __future__ import annotations

import torch

from distrain.zoo.fairness.modules.bias_direction import BiasDirection


@BiasDirection.register("paired_pca")
class PairedPcaBiasDirection(BiasDirection):
    """The first principal component (uncentred) of the pairs' differences, by exact SVD."""

    def direction(self, first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
        return torch.linalg.svd(first - second, full_matrices=False).Vh[0]
