"""AllenNLP's ``bert`` language-model head: the masked-LM head of a pretrained BERT (``BertForMaskedLM``'s ``cls``:
a dense layer, GELU and layer norm, then the decoder onto the word pieces), loaded from ``model_name``."""

from __future__ import annotations

import torch

from distrain.pretrained import PretrainedName, load_config, load_model
from distrain.zoo.lm.modules.language_model_head import LanguageModelHead


@LanguageModelHead.register("bert")
class BertLanguageModelHead(LanguageModelHead):
    """Logits over the model's word pieces from hidden states as wide as its ``hidden_size``. The whole masked LM
    is loaded and its head kept, as AllenNLP does (its encoder is the text field embedder's business)."""

    def __init__(self, model_name: PretrainedName) -> None:
        super().__init__()
        config = load_config(model_name)
        self.input_dim = config.hidden_size
        self.output_dim = config.vocab_size
        self.bert_lm_head = load_model(model_name, "AutoModelForMaskedLM").cls

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.bert_lm_head(hidden_states)
