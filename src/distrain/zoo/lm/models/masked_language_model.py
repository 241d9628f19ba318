"""allennlp-models' ``masked_language_model`` (v2.10.1): embed a sentence holding ``[MASK]`` tokens, contextualize it
(optionally), and score the words hidden at ``mask_positions`` with a language-model head.

The loss is the cross-entropy of ``target_ids`` (one per mask), the mean over every mask position of the batch (a
sentence with fewer masks than the batch's most is padded, as in AllenNLP: a padding position counts, as its
padding target), and a batch weighs as its sentences. Written, as AllenNLP's, for demos; distrain's BERT-style pretraining model is
``transformer_masked_language_model``.
"""

from __future__ import annotations

from typing import Any

import torch

from distrain.config.constraints import Probability
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.text_field_embedder import (TextFieldEmbedder, TextFieldTensors,
                                                  get_token_ids_from_text_field_tensors)
from distrain.zoo.lm.models.head_language_model import HeadLanguageModel
from distrain.zoo.lm.modules.language_model_head import LanguageModelHead

#: the best words given per mask (fewer where the vocabulary is smaller)
TOP_K = 5


@Model.register("masked_language_model")
class MaskedLanguageModel(HeadLanguageModel):
    """Outputs ``probabilities`` and ``top_indices`` (batch, masks, 5) of each mask's best words, ``token_ids`` of
    the input and, given ``target_ids``, ``loss``; made readable, ``words`` and
    ``tokens``."""

    default_predictor = "masked_language_model"

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder,
                 language_model_head: LanguageModelHead, contextualizer: Lazy[Seq2SeqEncoder] | None = None,
                 target_namespace: str = "bert", dropout: Probability = 0.0) -> None:
        super().__init__(vocab, text_field_embedder, language_model_head, contextualizer, target_namespace, dropout)

    def forward(self, tokens: TextFieldTensors, mask_positions: torch.Tensor,
                target_ids: TextFieldTensors | None = None, **_: Any) -> dict[str, torch.Tensor]:
        targets = get_token_ids_from_text_field_tensors(target_ids) if target_ids is not None else None
        if mask_positions.dim() == 3:
            mask_positions = mask_positions.squeeze(-1)
        batch_size, num_masks = mask_positions.shape
        if targets is not None and targets.shape != mask_positions.shape:
            raise ValueError(f"Number of targets ({tuple(targets.shape)}) and number of masks "
                             f"({tuple(mask_positions.shape)}) are not equal")
        embeddings, _ = self.contextual_embeddings(tokens)
        rows = torch.arange(batch_size, device=embeddings.device).unsqueeze(1)
        logits = self.language_model_head(self.dropout(embeddings[rows, mask_positions]))
        vocab_size = logits.shape[-1]
        top_probabilities, top_indices = torch.softmax(logits, dim=-1).topk(k=min(vocab_size, TOP_K), dim=-1)
        output = {"probabilities": top_probabilities, "top_indices": top_indices,
                  "token_ids": get_token_ids_from_text_field_tensors(tokens)}
        if targets is not None:
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab_size), targets.reshape(-1))
            self.count_loss(loss, batch_size)
            output["loss"] = loss
        return output

    def make_output_human_readable(self, output: dict[str, Any]) -> dict[str, Any]:
        """AllenNLP's form: the outputs with ``words`` (each mask's best words) and ``tokens`` (the input's words,
        padding included)."""
        readable = dict(output)
        readable["words"] = self.words(output["top_indices"])
        readable["tokens"] = self.words(output["token_ids"])
        return readable
