"""``bias_mitigator_applicator``: any model, its word embeddings passed through a bias mitigator (AllenNLP's
``BiasMitigatorApplicator``; Dev et al. 2020, "On Measuring and Mitigating Biased Inferences of Word Embeddings").

The mitigator is a forward hook on the base model's word-embedding layer, kept at test time too; everything
else (outputs, loss, metrics, readable outputs) is the base model's. Its state names are AllenNLP's: the base
model's under ``base_model.``, so AllenNLP's archives load."""

from __future__ import annotations

import sys
from typing import Any

import torch

from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model
from distrain.zoo.fairness.models.wrapping_model import WrappingModel
from distrain.zoo.fairness.modules.bias_mitigator import BiasMitigator


def find_embedding_layer(model: torch.nn.Module) -> torch.nn.Module:
    """The layer that turns token ids into vectors: a transformer's input embeddings (AllenNLP names BERT's,
    RoBERTa's, ALBERT's and GPT-2's; ``get_input_embeddings`` is each of them), else the first embedding."""
    transformers = sys.modules.get("transformers")
    for module in model.modules():
        if transformers is not None and isinstance(module, transformers.PreTrainedModel):
            return module.get_input_embeddings()
    for module in model.modules():
        if isinstance(module, torch.nn.Embedding):
            return module
    raise ValueError(f"{type(model).__name__} has no embedding layer to mitigate bias in")


@Model.register("bias_mitigator_applicator")
class BiasMitigatorApplicator(WrappingModel):
    """``base_model`` (often from an archive: ``{"_pretrained": {"archive_file": ..., "module_path": ""}}``) with
    ``bias_mitigator`` hooked on its word embeddings."""

    wrapped_name = "base_model"

    def __init__(self, vocab: Vocabulary, base_model: Model, bias_mitigator: Lazy[BiasMitigator]) -> None:
        super().__init__(base_model.vocab)
        self.base_model = base_model
        self.metrics = base_model.metrics
        self.embedding_layer_name = module_name_of(base_model, find_embedding_layer(base_model))
        layer = self.base_model.get_submodule(self.embedding_layer_name)
        self.bias_mitigator = bias_mitigator.construct(embedding_layer=layer)
        layer.register_forward_hook(self.bias_mitigator)

    @property
    def allennlp_unused(self) -> tuple[str, ...]:
        """AllenNLP's saved names distrain does not load: a transformer's position ids and pooler (AllenNLP's
        embedder keeps one it never runs), and the base model's own."""
        own = getattr(self.base_model, "allennlp_unused", ())
        return (r"\.position_ids$", r"\.transformer_model\.pooler\.", *(rf"^base_model\.{pattern[1:]}" if pattern.startswith("^") else pattern
                                      for pattern in own))

    def forward(self, **inputs: Any) -> dict[str, torch.Tensor]:
        return self.base_model(**inputs)

    def allennlp_derived(self) -> dict[str, torch.Tensor]:
        """What AllenNLP's archives do not hold because AllenNLP finds it again whenever it builds the model: the
        bias direction, from the pretrained transformer's embeddings (read from the name it was built from)."""
        layer = self.base_model.get_submodule(self.embedding_layer_name)
        return {"bias_mitigator.direction": self.bias_mitigator.direction_from(pretrained_embeddings(self.base_model,
                                                                                                     layer))}


def pretrained_embeddings(model: torch.nn.Module, layer: torch.nn.Module) -> torch.nn.Module:
    """``layer`` (a pretrained transformer's input embeddings inside ``model``) as the pretrained model has it,
    loaded again from the name it was built from: where AllenNLP finds a bias direction its archives do not keep."""
    from distrain.pretrained import load_model

    owners = [module for module in model.modules()
              if hasattr(module, "get_input_embeddings") and module.get_input_embeddings() is layer]
    if not owners:
        raise ValueError("AllenNLP found the bias direction in embeddings its archive does not keep (not a "
                         "pretrained transformer's): it cannot be found again")
    return load_model(owners[0].config._name_or_path).get_input_embeddings()


def module_name_of(model: torch.nn.Module, layer: torch.nn.Module) -> str:
    return next(name for name, module in model.named_modules() if module is layer)
