"""BERT-style masked language model: pretrain from a config (random init) or continue a pretrained one.

The encoder is any ``transformers`` AutoModel; the head (dense → GELU → LayerNorm → decoder tied to
the input embeddings) is computed only at the masked positions, which saves most of the output
layer's cost (15% of tokens instead of all). The loss is the mean over masked tokens; the model
returns their count as ``loss_weight`` so the trainer weights every token equally across workers.
``perplexity`` is ``exp`` of the token-weighted mean loss over the epoch (all workers).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Mapping

import torch
from annotated_types import Gt, Le

from distrain.config.constraints import Probability
from distrain.config.errors import Problem
from distrain.data.vocabulary import Vocabulary
from distrain.metrics.average import Average
from distrain.metrics.metric import Metric
from distrain.models.model import Model, TransformersModel
from distrain.modules.adapter import Adapter, adapt
from distrain.modules.masking import IGNORE, MaskingScheme, mask_tokens, sample_seed
from distrain.modules.pretrained_transformer import EncoderParallelism, PretrainedTransformerEncoder
from distrain.pretrained import PretrainedName, load_tokenizer


class TokenPerplexity(Average):
    """``exp`` of the token-weighted mean loss (kept unregistered: a model-internal report)."""

    def compute(self, stats: dict[str, torch.Tensor]) -> float:
        count = float(stats.get("count", 0.0))
        return math.exp(min(float(stats.get("sum", 0.0)) / count, 700.0)) if count > 0 else 0.0


@Model.register("transformer_masked_language_model")
class MaskedLanguageModel(EncoderParallelism, Model):
    """Give ``model_name`` (pretrained encoder) or ``config`` (a config.json, its folder, or a
    ``package://`` path: random init), with ``config_overrides`` to shrink it, e.g.
    ``{"num_hidden_layers": 2, "hidden_size": 128}``. ``tokenizer_name`` must be the tokenizer the
    reader used; its vocabulary size and special tokens define the output layer and masking.
    ``masking_seed`` with the reader's ``sample_id`` makes masking reproducible per sample."""

    def __init__(
        self,
        vocab: Vocabulary,
        tokenizer_name: PretrainedName,
        model_name: PretrainedName | None = None,
        config: PretrainedName | None = None,
        config_overrides: dict[str, Any] | None = None,
        mask_probability: Annotated[float, Gt(0), Le(1)] = 0.15,
        mask_fraction: Probability = 0.8,
        random_fraction: Probability = 0.1,
        masking_seed: int = 0,
        metrics: dict[str, Metric] | None = None,
        adapter: Adapter | None = None,
    ) -> None:
        super().__init__(vocab, {"perplexity": TokenPerplexity(), **(metrics or {})})
        tokenizer = load_tokenizer(tokenizer_name)
        self.mask_token_id = tokenizer.mask_token_id
        self.pad_token_id = tokenizer.pad_token_id or 0
        self.special_ids = torch.tensor(sorted(set(tokenizer.all_special_ids)), dtype=torch.long)
        self.vocab_size = len(tokenizer)
        self.scheme = MaskingScheme(mask_probability, mask_fraction, random_fraction)
        self.masking_seed = masking_seed
        if model_name is not None:
            self.encoder = PretrainedTransformerEncoder(model_name)
        else:
            from distrain.pretrained import load_config

            built = load_config(config)
            for key, value in {**(config_overrides or {}), "vocab_size": self.vocab_size}.items():
                setattr(built, key, value)
            self.encoder = PretrainedTransformerEncoder(config=built)
        embeddings = self.encoder.transformer.get_input_embeddings()
        if embeddings.num_embeddings < self.vocab_size:
            raise ValueError(f"the encoder has {embeddings.num_embeddings} embeddings, the tokenizer {self.vocab_size}")
        hidden = self.encoder.output_dim
        self.transform = torch.nn.Sequential(
            torch.nn.Linear(hidden, hidden), torch.nn.GELU(), torch.nn.LayerNorm(hidden, eps=1e-12)
        )
        self.output_bias = torch.nn.Parameter(torch.zeros(embeddings.num_embeddings))
        # Counts training forward passes; every worker makes one per global batch, so it is the same
        # on 1 or N workers. A buffer, so it is saved with the weights and a resumed run goes on.
        self.register_buffer("masking_round", torch.zeros((), dtype=torch.long))
        if adapter is not None:  # the head's transform and bias train; its decoder is the frozen embeddings
            adapt(self, self.encoder.transformer, adapter, model_name)

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        found = []
        if (arguments["model_name"] is None) == (arguments["config"] is None):
            found.append(Problem("", "give exactly one of model_name (pretrained) and config (random init)"))
        if arguments["mask_fraction"] + arguments["random_fraction"] > 1:
            found.append(Problem("random_fraction", "mask_fraction + random_fraction must be at most 1, got "
                                 f"{arguments['mask_fraction']} + {arguments['random_fraction']}"))
        return found

    def to_transformers(self) -> TransformersModel:
        """``AutoModelForMaskedLM`` of the encoder's architecture: its head's weights (a transform, the decoder
        tied to the embeddings, a bias) are this model's, matched by shape."""
        import copy

        from distrain.modules.pretrained_transformer import copy_by_shape, plain_with_base

        config = copy.deepcopy(self.encoder.transformer.config)
        plain, head = plain_with_base("AutoModelForMaskedLM", config, self.encoder.transformer)
        ours = [*self.transform.state_dict().values(), self.output_bias]
        copy_by_shape(head, ours, f"the masked-LM head of {type(plain).__name__}")

        def logits(ids: torch.Tensor) -> torch.Tensor:
            states = self.transform(self.encoder(ids, ids.ne(self.pad_token_id)))
            return torch.nn.functional.linear(states, self.encoder.transformer.get_input_embeddings().weight,
                                              self.output_bias)

        return TransformersModel("AutoModelForMaskedLM", plain.eval(), logits)

    def forward(self, tokens: torch.Tensor, sample_id: torch.Tensor | None = None, **_: Any) -> dict[str, torch.Tensor]:
        padding = tokens.eq(self.pad_token_id)
        maskable = ~padding & ~torch.isin(tokens, self.special_ids.to(tokens.device))
        if self.training:
            round_ = int(self.masking_round)
            self.masking_round += 1
        else:
            round_ = -1  # validation masks depend on the sample alone: comparable across epochs
        seeds = None
        if sample_id is not None:
            seeds = [sample_seed(self.masking_seed, round_, int(i)) for i in sample_id.reshape(-1).tolist()]
        inputs, labels = mask_tokens(tokens, maskable, self.scheme, self.mask_token_id,
                                     (0, self.vocab_size), seeds)
        encoded = self.encoder(inputs, ~padding)
        selected = labels.ne(IGNORE)
        count = selected.sum()
        states = self.transform(encoded[selected])
        weight = self.encoder.transformer.get_input_embeddings().weight
        logits = torch.nn.functional.linear(states, weight, self.output_bias).float()
        if logits.shape[0]:
            loss = torch.nn.functional.cross_entropy(logits, labels[selected])
        else:  # nothing masked: a zero that reaches every parameter (DDP expects them all used)
            loss = logits.sum() * 0.0 + encoded.sum() * 0.0
        self.metrics["perplexity"](loss.detach(), count)
        return {"loss": loss, "loss_weight": count}
