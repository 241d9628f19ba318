"""Multiple choice over a transformers encoder (AllenNLP's ``transformer_mc`` keys): one score per choice.

Each (start, choice) pair is encoded on its own; the transformer's pretrained pooler (dense + tanh over [CLS],
as AllenNLP's ``BertPooler`` copies it), dropout and a linear layer give the choice's logit; the choices of a
question compete in a softmax.
"""

from __future__ import annotations

from typing import Any

import torch

from distrain.config.constraints import Probability
from distrain.data.vocabulary import Vocabulary
from distrain.metrics.categorical_accuracy import CategoricalAccuracy
from distrain.models.model import Model
from distrain.modules.pretrained_transformer import PretrainedTransformerEncoder
from distrain.pretrained import PretrainedName

#: the logit of a choice a question lacks (padding when questions with fewer choices share a batch)
ABSENT = -1e7


@Model.register("transformer_mc")
class TransformerMC(Model):
    """``logits`` ``(questions, choices)`` and ``best_alternative``; the loss is the mean cross-entropy over
    questions; metric ``acc`` (AllenNLP's name). ``dropout`` is the pooler's (AllenNLP fixed it at 0.1)."""

    default_predictor = "transformer_mc"

    #: AllenNLP's names: its embedder holds the transformer (whose own pooler goes unused: ``_pooler`` is a copy),
    #: whose position ids (a constant) distrain does not keep
    allennlp_names = {r"_text_field_embedder\.token_embedder_tokens\.transformer_model": "encoder.transformer",
                      r"_pooler\.pooler": "pooler", "_linear_layer": "linear"}
    allennlp_unused = (r"^_text_field_embedder\..*\.pooler\.", r"\.position_ids$")

    def __init__(self, vocab: Vocabulary, transformer_model: PretrainedName = "roberta-large",
                 dropout: Probability = 0.1) -> None:
        super().__init__(vocab, {"acc": CategoricalAccuracy()})
        self.encoder = PretrainedTransformerEncoder(transformer_model, keep_pooler=True)
        if self.encoder.pooler is None:
            raise ValueError(f"model.transformer_model: {transformer_model} has no pooler, which transformer_mc "
                             "scores choices with (as AllenNLP's BertPooler)")
        self.pooler = self.encoder.pooler
        self.dropout = torch.nn.Dropout(dropout)
        self.linear = torch.nn.Linear(self.encoder.output_dim, 1)
        self.linear.weight.data.normal_(mean=0.0, std=0.02)
        self.linear.bias.data.zero_()

    def shard_units(self) -> list[str]:
        return self.encoder.layer_patterns("encoder")

    def forward(self, alternatives: torch.Tensor, alternative_type_ids: torch.Tensor,
                alternative_mask: torch.Tensor, correct_alternative: torch.Tensor | None = None,
                qid: list[str] | None = None, **_: Any) -> dict[str, Any]:
        present = alternative_mask[:, :, 0] > 0  # (questions, choices): which choices exist
        hidden = self.encoder.transformer(input_ids=alternatives[present], attention_mask=alternative_mask[present],
                                          token_type_ids=alternative_type_ids[present]).last_hidden_state
        scores = self.linear(self.dropout(self.pooler(hidden))).squeeze(-1).float()
        logits = scores.new_full(present.shape, ABSENT)
        logits[present] = scores
        output: dict[str, Any] = {"logits": logits, "best_alternative": logits.argmax(1)}
        if correct_alternative is not None:
            output["loss"] = torch.nn.functional.cross_entropy(logits, correct_alternative)
            self.metrics["acc"](logits.detach(), correct_alternative)
        if qid is not None:
            output["qid"] = qid
        return output

    def make_output_human_readable(self, output: dict[str, Any]) -> dict[str, Any]:
        """AllenNLP's outputs: each choice's logit and the best one (the question's id is the input's own)."""
        return {key: output[key] for key in ("logits", "best_alternative") if key in output}


@Model.register("transformer_mc_tt")
class TransformerMCTransformerToolkit(TransformerMC):
    """AllenNLP's ``transformer_mc_tt``: the same model over the same fields (AllenNLP built it from its own
    transformer modules; distrain reads ``piqa_tt``'s pairs with the transformer as ``transformer_mc`` does).
    AllenNLP's archives of it are not translated (its module names are not mapped)."""

    allennlp_names: dict[str, str] = {}
    allennlp_unused = ()
