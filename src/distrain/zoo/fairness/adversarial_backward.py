"""``adversarial_bias_mitigator_backward``: how ``adversarial_bias_mitigator`` trains its two parts (AllenNLP's
``AdversarialBiasMitigatorBackwardCallback``).

The adversary learns from its own loss. The predictor learns from its loss with two changes to that gradient
``g``, given the adversary loss's gradient ``a`` in the predictor's parameters (``u = a / |a|``, per parameter):
the part that would help the adversary is taken out, then the adversary's gradient is pushed against, weighted by
``adversary_loss_weight``: ``g - sum(g * u * u) - weight * a``. The sum is AllenNLP's as written: one number over
the parameter's elements, taken from each of them (not the vector projection ``(g . u) u``); a parameter whose
``a`` is zero or missing keeps ``g`` (AllenNLP gets NaN or fails there).

Both gradients are of the whole step: the model's loss and the adversary's are backpropagated together, so the
workers' gradients are averaged as any step's, and ``a`` (computed beside them, each worker's share scaled as its
loss is) is averaged over the workers with one all-reduce before the two are separated and combined. So the
update is the same on any number of workers; with gradient accumulation it is made from the step's summed
gradients (AllenNLP made it per micro-batch, clearing the earlier ones)."""

from __future__ import annotations

from typing import Any

import torch

from distrain.config.errors import ConfigError
from distrain.distributed.collectives import all_reduce_sum
from distrain.training.callback import Callback, TrainerView


@Callback.register("adversarial_bias_mitigator_backward")
class AdversarialBiasMitigatorBackward(Callback):
    """Trains a model's ``predictor`` against its ``adversary`` (see the module docstring)."""

    def __init__(self, adversary_loss_weight: float = 1.0) -> None:
        self.adversary_loss_weight = adversary_loss_weight
        self._adversary_gradients: dict[str, torch.Tensor] = {}
        self._step = -1

    def on_start(self, trainer: TrainerView) -> None:
        if not hasattr(trainer.model, "predictor") or not hasattr(trainer.model, "adversary"):
            raise ConfigError("trainer.callbacks: adversarial_bias_mitigator_backward needs a model with a predictor "
                              f"and an adversary (adversarial_bias_mitigator), not {type(trainer.model).__name__}")
        if trainer.world.dp_size != trainer.world.size:
            raise ConfigError("trainer.callbacks: adversarial_bias_mitigator_backward takes only data parallelism "
                              "(a split model's gradients are not whole on any worker)")

    def _predictor_parameters(self, trainer: TrainerView) -> list[tuple[str, torch.nn.Parameter]]:
        return [(name, parameter) for name, parameter in trainer.model.predictor.named_parameters()
                if parameter.requires_grad]

    def backward_loss(self, trainer: TrainerView, outputs: dict[str, Any], scaled: Any, scale: Any) -> Any:
        if "loss_weight" in outputs:
            raise ConfigError("trainer.callbacks: adversarial_bias_mitigator_backward takes a predictor whose loss is "
                              "a plain mean (this one returns a loss_weight)")
        if self._step != trainer.step:  # a new step (a skipped one left its sums behind)
            self._adversary_gradients, self._step = {}, trainer.step
        adversary_loss = outputs["adversary_loss"] * scale
        named = self._predictor_parameters(trainer)
        gradients = torch.autograd.grad(adversary_loss, [parameter for _, parameter in named], retain_graph=True,
                                        allow_unused=True)
        for (name, _), gradient in zip(named, gradients):
            if gradient is not None:
                held = self._adversary_gradients.get(name)
                self._adversary_gradients[name] = gradient if held is None else held + gradient
        return scaled + adversary_loss

    @torch.no_grad()
    def on_averaged_gradients(self, trainer: TrainerView, step: int) -> None:
        named = self._predictor_parameters(trainer)
        held = [self._adversary_gradients.get(name) for name, _ in named]
        flat = torch.cat([(torch.zeros_like(parameter) if gradient is None else gradient).reshape(-1)
                          for (_, parameter), gradient in zip(named, held)])
        flat = all_reduce_sum(flat) / trainer.world.dp_size  # every worker takes part, whatever it held
        offset = 0
        for _, parameter in named:
            adversary = flat[offset:offset + parameter.numel()].view_as(parameter)
            offset += parameter.numel()
            if parameter.grad is None:
                continue
            own = parameter.grad - adversary  # the step's gradient was of both losses together
            norm = torch.linalg.norm(adversary)
            if norm > 0:
                unit = adversary / norm
                own -= (own * unit * unit).sum()
            parameter.grad.copy_(own - self.adversary_loss_weight * adversary)
        self._adversary_gradients = {}
