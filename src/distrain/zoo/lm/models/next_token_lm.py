"""allennlp-models' ``next_token_lm`` (v2.10.1): embed a sentence, contextualize it (optionally), and score the word
that follows it with a language-model head; with a ``beam_search_generator``, a sequence of next words.

The hidden state the head reads is, without a contextualizer, the embedder's at the batch's last position (as in
AllenNLP: a shorter sentence of the batch is read at its padding; one sentence at a time, at its last token), with
one, the contextualizer's at each sentence's last token. The loss is the cross-entropy of the first ``target_ids``
token, the mean over the batch. Written, as AllenNLP's, for demos rather than for training a language model.
"""

from __future__ import annotations

from typing import Any

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.tensor_ops import get_final_encoder_states
from distrain.modules.text_field_embedder import (TextFieldEmbedder, TextFieldTensors,
                                                  get_token_ids_from_text_field_tensors)
from distrain.zoo.lm.models.head_language_model import HeadLanguageModel
from distrain.zoo.lm.modules.beam_search_generator import BeamSearchGenerator
from distrain.zoo.lm.modules.language_model_head import LanguageModelHead


@Model.register("next_token_lm")
class NextTokenLM(HeadLanguageModel):
    """Outputs ``probabilities`` (batch, n) of the ``n_best`` next words (or the beams'), ``top_indices`` (batch, n,
    words predicted: 1 without a beam search), ``token_ids`` of the input and, given ``target_ids``, ``loss``;
    made readable, ``top_tokens`` and ``tokens``."""

    default_predictor = "next_token_lm"

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder,
                 language_model_head: LanguageModelHead, contextualizer: Lazy[Seq2SeqEncoder] | None = None,
                 target_namespace: str = "bert", dropout: Probability = 0.0, n_best: PositiveInt = 5,
                 beam_search_generator: BeamSearchGenerator | None = None) -> None:
        super().__init__(vocab, text_field_embedder, language_model_head, contextualizer, target_namespace, dropout)
        self.n_best = n_best
        self.beam_search_generator = beam_search_generator
        if beam_search_generator is not None:
            beam_search_generator.validate_text_field_embedder(text_field_embedder)

    def forward(self, tokens: TextFieldTensors, target_ids: TextFieldTensors | None = None,
                **_: Any) -> dict[str, torch.Tensor]:
        output: dict[str, torch.Tensor] = {"token_ids": get_token_ids_from_text_field_tensors(tokens)}
        logits = self.next_token_scores(tokens)
        if target_ids is not None:
            targets = get_token_ids_from_text_field_tensors(target_ids)
            targets = targets[:, 0] if targets.dim() == 2 else targets  # the first token: the most wanted one
            loss = torch.nn.functional.cross_entropy(logits, targets.reshape(logits.shape[0]))
            self.count_loss(loss, logits.shape[0])
            output["loss"] = loss
        if self.beam_search_generator is not None:
            state = self.beam_search_generator.get_step_state(tokens)
            state["start_target_logits"] = logits  # the first step's scores, computed already
            start = torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device)
            top_indices, log_probabilities = self.beam_search_generator.search(start, state, self.beam_search_step)
            top_probabilities = log_probabilities.exp()
        else:
            probabilities = torch.softmax(logits, dim=-1)
            top_probabilities, top_indices = probabilities.topk(k=min(logits.shape[-1], self.n_best), dim=-1)
            top_indices = top_indices.unsqueeze(-1)
        output["top_indices"] = top_indices
        output["probabilities"] = top_probabilities
        return output

    def next_token_scores(self, tokens: TextFieldTensors) -> torch.Tensor:
        """The head's logits ``(batch, vocabulary)`` for the word after each sentence."""
        embeddings, mask = self.contextual_embeddings(tokens)
        if self.contextualizer is not None:
            final = get_final_encoder_states(embeddings, mask)
        else:
            final = embeddings[:, -1]
        return self.language_model_head(self.dropout(final))

    def beam_search_step(self, predicted: torch.Tensor, state: dict[str, torch.Tensor],
                         step: int) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The beam search's step: the first reuses the forward pass's scores, each later one appends the
        predicted word to the sentence and scores the word after it."""
        if step == 0:
            return torch.log_softmax(state.pop("start_target_logits"), dim=-1), state
        inputs = self.beam_search_generator.prepare_step_input(predicted, state)
        state = self.beam_search_generator.get_step_state(inputs)
        return torch.log_softmax(self.next_token_scores(inputs), dim=-1), state

    def make_output_human_readable(self, output: dict[str, Any]) -> dict[str, Any]:
        """AllenNLP's form: the outputs with ``top_tokens`` (each item's predictions as lists of words) and
        ``tokens`` (its input's words, padding included)."""
        readable = dict(output)
        readable["top_tokens"] = self.words(output["top_indices"])
        readable["tokens"] = self.words(output["token_ids"])
        return readable
