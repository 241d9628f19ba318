"""Sequence classifier over any pretrained transformer encoder: pool the token vectors, then a linear layer."""

from __future__ import annotations

from typing import Any, Literal

import torch

from distrain.config.constraints import NonNegativeInt, Probability
from distrain.data.vocabulary import Vocabulary
from distrain.metrics.categorical_accuracy import CategoricalAccuracy
from distrain.metrics.metric import Metric
from distrain.models.classification import ClassifierOutputs
from distrain.models.model import Model, TransformersModel
from distrain.modules.adapter import Adapter, adapt
from distrain.modules.pretrained_transformer import EncoderParallelism, PretrainedTransformerEncoder
from distrain.pretrained import PretrainedName


#: the scale that makes a tanh pooler linear in an exported classifier (see ``to_transformers``)
EPSILON = 1e-4


@Model.register("transformer_classifier")
class TransformerClassifier(ClassifierOutputs, EncoderParallelism, Model):
    """``pooling``: ``cls`` takes the first token's vector, ``mean`` averages the unpadded tokens.

    ``adapter`` (e.g. ``{"type": "lora"}``) trains an adapter and the output layer, the encoder frozen.

    The token field must come from the ``pretrained_transformer`` tokenizer of the same model;
    ``pad_token_id`` marks padding (0 for BERT-style vocabularies)."""

    def __init__(
        self,
        vocab: Vocabulary,
        model_name: PretrainedName,
        pooling: Literal["cls", "mean"] = "cls",
        dropout: Probability = 0.1,
        pad_token_id: NonNegativeInt = 0,
        label_namespace: str = "labels",
        gradient_checkpointing: bool = False,
        metrics: dict[str, Metric] | None = None,
        adapter: Adapter | None = None,
    ) -> None:
        super().__init__(vocab, metrics if metrics is not None else {"accuracy": CategoricalAccuracy()})
        self.label_namespace = label_namespace
        self.pooling = pooling
        self.pad_token_id = pad_token_id
        self.encoder = PretrainedTransformerEncoder(model_name, gradient_checkpointing=gradient_checkpointing)
        self.dropout = torch.nn.Dropout(dropout) if dropout > 0 else torch.nn.Identity()
        self.output = torch.nn.Linear(self.encoder.output_dim, vocab.size(label_namespace))
        if adapter is not None:
            adapt(self, self.encoder.transformer, adapter, model_name)

    def pipeline_units(self) -> list[str]:
        """The encoder's embeddings, each of its layers, then the pooling and output layer."""
        layers = getattr(getattr(self.encoder.transformer, "encoder", None), "layer", None)
        if layers is None or not hasattr(self.encoder.transformer, "embeddings"):
            return []
        return (["encoder.transformer.embeddings"]
                + [f"encoder.transformer.encoder.layer.{index}" for index in range(len(layers))] + ["output"])

    def pipeline_inputs(self, tokens: torch.Tensor, **_: Any) -> tuple[torch.Tensor, ...]:
        return (tokens,)

    def pipeline_unit(self, name: str, *carried: torch.Tensor) -> tuple[torch.Tensor, ...] | torch.Tensor:
        """Carried between units: (token vectors, the padding mask as integers: no gradient)."""
        if name == "encoder.transformer.embeddings":
            tokens = carried[0]
            return self.encoder.transformer.embeddings(input_ids=tokens), tokens.ne(self.pad_token_id).long()
        hidden, mask = carried
        if name == "output":
            return self._head(hidden, mask.bool())
        from transformers.masking_utils import create_bidirectional_mask

        attention = create_bidirectional_mask(config=self.encoder.transformer.config, inputs_embeds=hidden,
                                              attention_mask=mask)
        return self.get_submodule(name)(hidden, attention), mask

    def pipeline_loss(self, outputs: tuple[torch.Tensor, ...], label: torch.Tensor) -> torch.Tensor:
        return self.classify(outputs[0].float(), label)["loss"]

    def _head(self, encoded: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if self.pooling == "cls":
            pooled = encoded[:, 0]
        else:
            weights = mask.unsqueeze(-1).to(encoded.dtype)
            pooled = (encoded * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        return self.output(self.dropout(pooled))

    def to_transformers(self) -> TransformersModel:
        """``AutoModelForSequenceClassification`` of the encoder's architecture, labels named. Its head reads
        the first token like ``pooling: cls``: a single linear layer takes this model's output layer; a linear
        layer and tanh before it (BERT's pooler, RoBERTa's head) are made linear to float precision: the first
        scaled to ``EPSILON * I`` (tanh(εx)/ε = x (1 - (εx)²/3)), the output layer scaled by ``1/EPSILON``.
        ``distrain export`` checks the logits agree."""
        import copy

        from distrain.errors import NotExportable
        from distrain.modules.pretrained_transformer import plain_with_base

        if self.pooling != "cls":
            raise NotExportable(f"pooling {self.pooling!r}: transformers' sequence-classification heads read the "
                                "first token (pooling cls) or the last, none averages the tokens")
        labels = self.vocab.tokens(self.label_namespace)
        config = copy.deepcopy(self.encoder.transformer.config)
        config.num_labels = len(labels)
        config.id2label = dict(enumerate(labels))
        config.label2id = {label: index for index, label in enumerate(labels)}
        plain, head = plain_with_base("AutoModelForSequenceClassification", config, self.encoder.transformer)
        weight, bias = self.output.weight.detach(), self.output.bias.detach()
        shapes = [tuple(parameter.shape) for _, parameter in head]
        hidden, classes = weight.shape[1], weight.shape[0]
        with torch.no_grad():
            if shapes == [(classes, hidden), (classes,)]:
                head[0][1].copy_(weight)
                head[1][1].copy_(bias)
            elif shapes == [(hidden, hidden), (hidden,), (classes, hidden), (classes,)]:
                head[0][1].copy_(torch.eye(hidden) * EPSILON)
                head[1][1].zero_()
                head[2][1].copy_(weight / EPSILON)
                head[3][1].copy_(bias)
            else:
                raise NotExportable(f"{type(plain).__name__}'s head ({', '.join(name for name, _ in head)}) is not "
                                    "a linear layer on the first token, nor one after a linear layer and tanh")
        return TransformersModel("AutoModelForSequenceClassification", plain.eval(),
                                 lambda ids: self(tokens=ids)["logits"])

    def forward(self, tokens: torch.Tensor, label: torch.Tensor | None = None, **_: Any) -> dict[str, torch.Tensor]:
        mask = tokens.ne(self.pad_token_id)
        logits = self._head(self.encoder(tokens, mask), mask)
        return self.classify(logits.float(), label)
