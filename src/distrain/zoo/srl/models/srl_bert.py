"""AllenNLP's ``srl_bert`` (Shi and Lin 2019, "Simple BERT Models for Relation Extraction and Semantic Role
Labeling"): BERT over the word pieces with the predicate indicator as its token types, and a linear layer to the
tags. Tags are decoded over the word pieces under BIO constraints; each word takes its first piece's tag (the
reader's ``offsets``), as AllenNLP's did.

BERT's pooler feeds nothing here: it is dropped (an unused parameter would stall DDP), and an AllenNLP archive's
pooler weights are left unread.
"""

from __future__ import annotations

from typing import Any

import torch

from distrain.config.constraints import Probability
from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model
from distrain.zoo.srl.models.semantic_role_labeler import SRL_EVAL, RoleTagging
from distrain.modules.text_field_embedder import TextFieldTensors, get_text_field_mask
from distrain.pretrained import PretrainedName


def bert(model: str | dict[str, Any]) -> Any:
    """A pretrained BERT by name, or a random one from a config dict (AllenNLP's form inside its archives)."""
    from distrain.pretrained import load_model, model_from_config

    if isinstance(model, str):
        return load_model(model)
    from transformers import BertConfig

    return model_from_config(BertConfig.from_dict(model))


@Model.register("srl_bert")
class SrlBert(RoleTagging):
    """``bert_model`` (name or config dict) → dropout → a tag per word piece."""

    allennlp_unused = (r"^bert_model\.pooler\.", r"\.position_ids$")

    def __init__(self, vocab: Vocabulary, bert_model: PretrainedName | dict[str, Any],
                 embedding_dropout: Probability = 0.0, label_smoothing: Probability | None = None,
                 ignore_span_metric: bool = False, srl_eval_path: str | None = SRL_EVAL) -> None:
        super().__init__(vocab)
        self.bert_model = bert(bert_model)
        self.bert_model.pooler = None
        self.tag_projection_layer = torch.nn.Linear(self.bert_model.config.hidden_size, vocab.size("labels"))
        self.embedding_dropout = torch.nn.Dropout(embedding_dropout)
        self.setup_tagging(label_smoothing, ignore_span_metric, srl_eval_path)

    def forward(self, tokens: TextFieldTensors, verb_indicator: torch.Tensor, metadata: list[dict],
                tags: torch.Tensor | None = None, **_: Any) -> dict[str, Any]:
        mask = get_text_field_mask(tokens)
        pieces = next(iter(tokens.values()))
        encoded = self.bert_model(input_ids=pieces["token_ids"], token_type_ids=verb_indicator.long(),
                                  attention_mask=mask.long()).last_hidden_state
        logits = self.tag_projection_layer(self.embedding_dropout(encoded))
        return self.tag_outputs(logits, mask, tags, metadata)
