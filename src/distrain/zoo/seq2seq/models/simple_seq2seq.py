"""AllenNLP's ``simple_seq2seq``: an encoder over the source, an LSTM decoder started from the encoder's final
state, optionally attending over the encoder's outputs at each step, decoded by beam search.

Training feeds the gold previous token (teacher forcing), or with probability ``scheduled_sampling_ratio`` a
step's own best guess for the whole batch (Bengio et al. 2015). Evaluation decodes by beam search and scores
the best beam's BLEU against the target; with a target it also reports the teacher-forced loss. The loss is the
mean over sequences of each sequence's token-mean, so the trainer's default per-instance weighting gives the
same update however a batch is split among workers (scheduled sampling draws from each worker's own
generator, so only runs without it are worker-count independent).
"""

from __future__ import annotations

import warnings
from typing import Any, Iterable

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import PADDING_TOKEN, Vocabulary
from distrain.models.model import Model, per_item
from distrain.modules.attention import Attention
from distrain.modules.beam_search import BeamSearch
from distrain.modules.masked_softmax import weighted_sum
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors, get_text_field_mask
from distrain.modules.token_embedders.embedding import Embedding
from distrain.zoo.seq2seq.metrics.bleu import Bleu
from distrain.zoo.seq2seq.modules.decoded_tokens import as_nested_lists, boundary_indices, ids_to_tokens, target_ids
from distrain.zoo.seq2seq.modules.encoder_states import final_encoder_states
from distrain.zoo.seq2seq.modules.sequence_loss import shifted_loss


def beam_search_for(beam_search: Lazy[BeamSearch] | None, end_index: int, vocab: Vocabulary,
                    beam_size: int | None, max_decoding_steps: int | None) -> BeamSearch:
    """The configured beam search; AllenNLP's deprecated model-level ``beam_size`` / ``max_decoding_steps``
    still set it, with AllenNLP's warning."""
    extras = {}
    for old, new, value in (("beam_size", "beam_size", beam_size), ("max_decoding_steps", "max_steps",
                                                                    max_decoding_steps)):
        if value is not None:
            warnings.warn(f"The parameter {old} has been deprecated. Provide this parameter as argument to "
                          "beam_search instead.", DeprecationWarning)
            extras[new] = value
    if beam_search is None:
        return BeamSearch(end_index=end_index, **extras)
    return beam_search.construct(end_index=end_index, vocab=vocab, **extras)


def readable_predictions(output: dict[str, Any], vocab: Vocabulary, namespace: str,
                         end_index: int) -> list[dict[str, Any]]:
    """``predicted_tokens`` beside each item's predictions: every beam's tokens (AllenNLP's form), cut at the
    end symbol, for ``(batch, beam, steps)`` predictions; one sequence's for ``(batch, steps)``."""
    tokens = []
    for item in as_nested_lists(output["predictions"]):
        beams = item if item and isinstance(item[0], list) else [item]
        tokens.append([ids_to_tokens(vocab, beam, namespace, end_index) for beam in beams])
    return per_item({**output, "predicted_tokens": tokens})


@Model.register("simple_seq2seq")
class SimpleSeq2Seq(Model):
    """Parameter names are AllenNLP's without the leading underscore (``decoder_cell``,
    ``output_projection_layer``, ``target_embedder``), so its archives load."""

    default_predictor = "seq2seq"

    def __init__(self, vocab: Vocabulary, source_embedder: TextFieldEmbedder, encoder: Seq2SeqEncoder,
                 beam_search: Lazy[BeamSearch] | None = None, attention: Attention | None = None,
                 target_namespace: str = "tokens", target_embedding_dim: PositiveInt | None = None,
                 scheduled_sampling_ratio: Probability = 0.0, use_bleu: bool = True,
                 bleu_ngram_weights: Iterable[float] = (0.25, 0.25, 0.25, 0.25),
                 target_pretrain_file: str | None = None, target_decoder_layers: PositiveInt = 1,
                 beam_size: PositiveInt | None = None, max_decoding_steps: PositiveInt | None = None) -> None:
        super().__init__(vocab)
        self.target_namespace = target_namespace
        self.target_decoder_layers = target_decoder_layers
        self.scheduled_sampling_ratio = scheduled_sampling_ratio
        self.start_index, self.end_index = boundary_indices(vocab, target_namespace)
        if use_bleu:
            pad_index = vocab.get_token_index(PADDING_TOKEN, target_namespace)
            self.bleu = Bleu(bleu_ngram_weights, exclude_indices={pad_index, self.end_index, self.start_index})
        else:
            self.bleu = None
        self.beam_search = beam_search_for(beam_search, self.end_index, vocab, beam_size, max_decoding_steps)
        self.source_embedder = source_embedder
        self.encoder = encoder
        self.attention = attention
        classes = vocab.get_vocab_size(target_namespace)
        target_embedding_dim = target_embedding_dim or source_embedder.get_output_dim()
        if target_pretrain_file:
            self.target_embedder = Embedding(embedding_dim=target_embedding_dim, pretrained_file=target_pretrain_file,
                                             vocab_namespace=target_namespace, vocab=vocab)
        else:
            self.target_embedder = Embedding(embedding_dim=target_embedding_dim, num_embeddings=classes)
        self.decoder_output_dim = encoder.get_output_dim()  # the decoder starts from the encoder's final state
        decoder_input_dim = target_embedding_dim + (self.decoder_output_dim if attention is not None else 0)
        if target_decoder_layers > 1:
            self.decoder_cell = torch.nn.LSTM(decoder_input_dim, self.decoder_output_dim, target_decoder_layers)
        else:
            self.decoder_cell = torch.nn.LSTMCell(decoder_input_dim, self.decoder_output_dim)
        self.output_projection_layer = torch.nn.Linear(self.decoder_output_dim, classes)

    def forward(self, source_tokens: TextFieldTensors, target_tokens: TextFieldTensors | None = None,
                **_: Any) -> dict[str, Any]:
        state = self.encode(source_tokens)
        output: dict[str, Any] = {}
        if target_tokens is not None:
            output = self.forward_loop(self.init_decoder_state(dict(state)), target_tokens)
        if not self.training:
            sequences, log_probabilities = self.beam_search.search(
                state["source_mask"].new_full((state["source_mask"].shape[0],), self.start_index, dtype=torch.long),
                self.init_decoder_state(dict(state)), self.take_step)
            output.update(predictions=sequences, class_log_probabilities=log_probabilities)
            if target_tokens is not None and self.bleu is not None:
                self.bleu(sequences[:, 0, :], target_ids(target_tokens))
        return output

    def encode(self, source_tokens: TextFieldTensors) -> dict[str, torch.Tensor]:
        mask = get_text_field_mask(source_tokens)
        return {"source_mask": mask, "encoder_outputs": self.encoder(self.source_embedder(source_tokens), mask)}

    def init_decoder_state(self, state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        hidden = final_encoder_states(state["encoder_outputs"], state["source_mask"], self.encoder.is_bidirectional())
        context = state["encoder_outputs"].new_zeros(hidden.shape[0], self.decoder_output_dim)
        if self.target_decoder_layers > 1:  # batch first, (batch, layers, width), as the beam search reorders states
            hidden = hidden.unsqueeze(1).repeat(1, self.target_decoder_layers, 1)
            context = context.unsqueeze(1).repeat(1, self.target_decoder_layers, 1)
        return {**state, "decoder_hidden": hidden, "decoder_context": context}

    def forward_loop(self, state: dict[str, torch.Tensor], target_tokens: TextFieldTensors) -> dict[str, Any]:
        """Teacher forcing (with scheduled sampling while training): the loss, and each step's best guess."""
        targets = target_ids(target_tokens)
        last = targets.new_full((targets.shape[0],), self.start_index)
        logits, guesses = [], []
        for timestep in range(targets.shape[1] - 1):
            sampled = (self.training and self.scheduled_sampling_ratio > 0.0
                       and torch.rand(1).item() < self.scheduled_sampling_ratio)
            projections, state = self.output_projections(last if sampled else targets[:, timestep], state)
            logits.append(projections.unsqueeze(1))
            last = projections.argmax(-1)
            guesses.append(last.unsqueeze(1))
        loss = shifted_loss(torch.cat(logits, 1), targets, get_text_field_mask(target_tokens))
        return {"loss": loss, "predictions": torch.cat(guesses, 1)}

    def take_step(self, last_predictions: torch.Tensor, state: dict[str, torch.Tensor],
                  step: int) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The beam search's step: each group row's log-probabilities of the next token."""
        projections, state = self.output_projections(last_predictions, state)
        return torch.log_softmax(projections, dim=-1), state

    def output_projections(self, last_predictions: torch.Tensor,
                           state: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        hidden, context = state["decoder_hidden"], state["decoder_context"]
        layered = self.target_decoder_layers > 1
        if layered:  # torch's LSTM takes (layers, batch, width)
            hidden, context = hidden.transpose(0, 1).contiguous(), context.transpose(0, 1).contiguous()
        decoder_input = self.target_embedder(last_predictions)
        if self.attention is not None:
            query = hidden[0] if layered else hidden
            weights = self.attention(query, state["encoder_outputs"], state["source_mask"])
            decoder_input = torch.cat((weighted_sum(state["encoder_outputs"], weights), decoder_input), -1)
        if layered:
            _, (hidden, context) = self.decoder_cell(decoder_input.float().unsqueeze(0),
                                                     (hidden.float(), context.float()))
            top = hidden[-1]
            hidden, context = hidden.transpose(0, 1), context.transpose(0, 1)
        else:
            hidden, context = self.decoder_cell(decoder_input.float(), (hidden.float(), context.float()))
            top = hidden
        return self.output_projection_layer(top), {**state, "decoder_hidden": hidden, "decoder_context": context}

    def make_output_human_readable(self, output: dict[str, Any]) -> list[dict[str, Any]]:
        return readable_predictions(output, self.vocab, self.target_namespace, self.end_index)

    def get_metrics(self, reset: bool = False) -> dict[str, float]:
        """AllenNLP's ``BLEU``, for decoded (evaluation) batches only."""
        if self.bleu is None or self.training:
            return {}
        return self.bleu.get_metric(reset)
