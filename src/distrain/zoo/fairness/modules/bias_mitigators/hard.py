"""``hard``: neutralise every embedding along the bias direction (Bolukbasi et al. 2016, AllenNLP's
``HardBiasMitigator``).

AllenNLP's hook also equalises the pairs of ``equalize_word_pairs_file`` and stacks them under the embeddings, then
slices them off again: they never reach the output, and (their norms under 1, as the method assumes) add nothing to
the gradient. So the file is read and checked, as AllenNLP reads it, and the hook neutralises alone."""

from __future__ import annotations

import torch

from distrain.config.errors import Problem
from distrain.data.tokenizer import Tokenizer
from distrain.zoo.fairness.modules.bias_direction import BiasDirection, read_word_pairs, word_pair_problems
from distrain.zoo.fairness.modules.bias_mitigator import BiasMitigator, remove_component


@BiasMitigator.register("hard")
class HardBiasMitigator(BiasMitigator):
    """Each embedding neutralised along the bias direction.

    ``equalize_word_pairs_file`` is read and checked; its equalized pairs never reach AllenNLP's output either."""

    def __init__(self, bias_direction: BiasDirection, embedding_layer: torch.nn.Module,
                 equalize_word_pairs_file: str, tokenizer: Tokenizer, requires_grad: bool = True) -> None:
        super().__init__(bias_direction, embedding_layer, requires_grad)
        self.equalize_ids = read_word_pairs(equalize_word_pairs_file, tokenizer)

    @classmethod
    def argument_problems(cls, arguments) -> list[Problem]:
        return [Problem("equalize_word_pairs_file", problem.message) for problem in
                word_pair_problems(arguments["equalize_word_pairs_file"])]

    def mitigate(self, embeddings: torch.Tensor, direction: torch.Tensor, module: torch.nn.Module) -> torch.Tensor:
        return remove_component(embeddings, direction / torch.linalg.norm(direction), normalize=True)
