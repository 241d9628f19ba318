"""``adversarial_bias_mitigator``: a predictor trained beside an adversary that tries to recover a protected
variable from the predictor's outputs (AllenNLP's ``AdversarialBiasMitigator``; Zhang, Lemoine & Mitchell 2018,
"Mitigating Unwanted Biases with Adversarial Learning").

The protected variable is made from the input: the mean of the sentence's word embeddings (padding positions
included, as AllenNLP takes it) projected on a bias direction, found once from seed words in the pretrained
embeddings. The adversary reads ``predictor_output_key`` of the predictor's outputs and regresses that variable;
its outputs join the predictor's with an ``adversary_`` prefix. The loss, metrics and readable outputs are the
predictor's. How the two losses train the two parts is the ``adversarial_bias_mitigator_backward`` callback's
business (:mod:`distrain.zoo.fairness.adversarial_backward`).

State names are AllenNLP's (``predictor.``, ``adversary.``); the direction is a buffer here, so an archive carries
it, and found again from the pretrained embeddings for an AllenNLP archive, which does not save it."""

from __future__ import annotations

from typing import Any

import torch

from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model
from distrain.zoo.fairness.models.wrapping_model import WrappingModel
from distrain.pretrained import weights_are_elsewhere
from distrain.zoo.fairness.models.bias_mitigator_applicator import module_name_of, find_embedding_layer, pretrained_embeddings
from distrain.zoo.fairness.modules.bias_direction import BiasDirection


class _ProtectedVariable:
    """Forward hook on the word-embedding layer: keeps each sentence's mean embedding on the direction."""

    def __init__(self, owner: "AdversarialBiasMitigator") -> None:
        self.owner, self.value = owner, None

    def __call__(self, module: torch.nn.Module, inputs: tuple, output: torch.Tensor) -> None:
        with torch.no_grad():
            direction = self.owner.direction.to(output)
            self.value = torch.matmul(output.mean(dim=1), direction).unsqueeze(-1)


@Model.register("adversarial_bias_mitigator")
class AdversarialBiasMitigator(WrappingModel):
    """``predictor`` and ``adversary``; the adversary regresses the protected variable ``bias_direction`` defines
    from ``predictor_output_key`` of the predictor's outputs."""

    wrapped_name = "predictor"

    def __init__(self, vocab: Vocabulary, predictor: Model, adversary: Model, bias_direction: BiasDirection,
                 predictor_output_key: str) -> None:
        super().__init__(predictor.vocab)
        self.predictor, self.adversary, self.bias_direction = predictor, adversary, bias_direction
        self.metrics = predictor.metrics
        self.predictor_output_key = predictor_output_key
        layer = find_embedding_layer(predictor)
        self.embedding_layer_name = module_name_of(predictor, layer)
        weight = layer.weight
        self.register_buffer("direction", torch.zeros(weight.shape[-1], dtype=weight.dtype, device=weight.device))
        if not weight.is_meta and not weights_are_elsewhere():  # else a model built to be loaded: the archive
            with torch.no_grad():
                self.direction.copy_(bias_direction(layer))
        self._protected = _ProtectedVariable(self)
        layer.register_forward_hook(self._protected)

    @property
    def allennlp_unused(self) -> tuple[str, ...]:
        """AllenNLP's saved names distrain does not load: a transformer's position ids and unused pooler."""
        return r"\.position_ids$", r"\.transformer_model\.pooler\."

    def forward(self, **inputs: Any) -> dict[str, torch.Tensor]:
        output = self.predictor(**inputs)
        if self.predictor_output_key not in output:
            raise KeyError(f"model.predictor_output_key: the predictor gives no {self.predictor_output_key!r} "
                           f"(it gives {', '.join(sorted(output))})")
        adversary = self.adversary(input=output[self.predictor_output_key], label=self._protected.value)
        return {**output, **{f"adversary_{key}": value for key, value in adversary.items()}}

    def allennlp_derived(self) -> dict[str, torch.Tensor]:
        """The direction, found again from the pretrained embeddings (AllenNLP's archives do not keep it)."""
        layer = self.predictor.get_submodule(self.embedding_layer_name)
        with torch.no_grad():
            return {"direction": self.bias_direction(pretrained_embeddings(self.predictor, layer))}
