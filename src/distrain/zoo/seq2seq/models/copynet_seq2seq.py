"""AllenNLP's ``copynet_seq2seq`` (Gu et al. 2016): at each step the decoder either generates a target-vocabulary
word or copies a source position, one softmax over both.

The LSTM decoder reads the last token's embedding (``@COPY@``'s when it was copied), an attentive read of the
encoder's outputs and a selective read (the outputs of the source positions holding the token just emitted,
weighted by how likely each was copied). Copy scores are ``tanh(W h_source) · h_decoder``. Training maximises
the likelihood of each target token summed over its ways (generated unless it is OOV and in the source,
copied from each position that holds it); the loss is the negative log-likelihood summed over a target's
tokens and averaged over the batch's targets, so the trainer's per-instance weighting keeps it worker-count
independent. Evaluation decodes by beam search over the extended vocabulary (:mod:`..modules.copying`).

AllenNLP added ``copy_token`` to the vocabulary when the model was built (so its archives' vocabularies hold
it); distrain leaves the vocabulary as it is and gives the token the next id when it lacks one, which is the
same id either way.
"""

from __future__ import annotations

from typing import Any

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import OOV_TOKEN, PADDING_TOKEN, Vocabulary
from distrain.metrics.metric import Metric
from distrain.models.model import Model, per_item
from distrain.modules.attention import Attention
from distrain.modules.beam_search import BeamSearch
from distrain.modules.masked_softmax import masked_softmax, weighted_sum
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors, get_text_field_mask
from distrain.modules.token_embedders.embedding import Embedding
from distrain.zoo.seq2seq.metrics.bleu import Bleu
from distrain.zoo.seq2seq.models.simple_seq2seq import beam_search_for
from distrain.zoo.seq2seq.modules.copying import (TINY, extended_gold_tokens, log_of, masked_log_softmax,
                                                  merged_log_probabilities)
from distrain.zoo.seq2seq.modules.decoded_tokens import as_nested_lists, boundary_indices, cut_at_end, target_ids
from distrain.zoo.seq2seq.modules.encoder_states import final_encoder_states


@Model.register("copynet_seq2seq")
class CopyNetSeq2Seq(Model):
    """An LSTM decoder that at each step generates a target word or copies a source position, one softmax over
    both."""

    default_predictor = "seq2seq"

    #: a pretrained source embedder's buffers and pooler AllenNLP's archives hold (older transformers saved them)
    allennlp_unused = (r"\.position_ids$", r"\.pooler\.")

    def __init__(self, vocab: Vocabulary, source_embedder: TextFieldEmbedder, encoder: Seq2SeqEncoder,
                 attention: Attention, label_smoothing: Probability | None = None,
                 beam_search: Lazy[BeamSearch] | None = None, target_embedding_dim: PositiveInt = 30,
                 scheduled_sampling_ratio: Probability = 0.0, copy_token: str = "@COPY@",
                 target_namespace: str = "target_tokens", tensor_based_metric: Metric | None = None,
                 token_based_metric: Metric | None = None, beam_size: PositiveInt | None = None,
                 max_decoding_steps: PositiveInt | None = None) -> None:
        super().__init__(vocab)
        self.target_namespace = target_namespace
        self.scheduled_sampling_ratio = scheduled_sampling_ratio
        self.label_smoothing = label_smoothing
        self.start_index, self.end_index = boundary_indices(vocab, target_namespace)
        self.oov_index = vocab.get_token_index(OOV_TOKEN, target_namespace)
        pad_index = vocab.get_token_index(PADDING_TOKEN, target_namespace)
        known = vocab.get_token_to_index_vocabulary(target_namespace)
        self.copy_token = copy_token
        self.copy_index = known.get(copy_token, vocab.get_vocab_size(target_namespace))
        self.target_vocab_size = max(vocab.get_vocab_size(target_namespace), self.copy_index + 1)
        self.tensor_based_metric = tensor_based_metric or Bleu(
            exclude_indices={pad_index, self.end_index, self.start_index})
        self.token_based_metric = token_based_metric
        self.source_embedder = source_embedder
        self.encoder = encoder
        self.encoder_output_dim = self.decoder_output_dim = self.decoder_input_dim = encoder.get_output_dim()
        self.target_embedder = Embedding(embedding_dim=target_embedding_dim, num_embeddings=self.target_vocab_size)
        self.attention = attention
        self.input_projection_layer = torch.nn.Linear(target_embedding_dim + 2 * self.encoder_output_dim,
                                                      self.decoder_input_dim)
        self.decoder_cell = torch.nn.LSTMCell(self.decoder_input_dim, self.decoder_output_dim)
        self.output_generation_layer = torch.nn.Linear(self.decoder_output_dim, self.target_vocab_size)
        self.output_copying_layer = torch.nn.Linear(self.encoder_output_dim, self.decoder_output_dim)
        self.beam_search = beam_search_for(beam_search, self.end_index, vocab, beam_size, max_decoding_steps)

    # ------------------------------------------------------------------------------ the forward pass
    def forward(self, source_tokens: TextFieldTensors, source_token_ids: torch.Tensor,
                source_to_target: torch.Tensor, metadata: list[dict[str, Any]],
                target_tokens: TextFieldTensors | None = None, target_token_ids: torch.Tensor | None = None,
                weight: torch.Tensor | None = None, **_: Any) -> dict[str, Any]:
        mask = get_text_field_mask(source_tokens)
        encoded = self.encoder(self.source_embedder(source_tokens), mask)
        state = {"source_mask": mask, "encoder_outputs": encoded, "source_token_ids": source_token_ids,
                 "source_to_target": source_to_target}
        hidden = final_encoder_states(encoded, mask, self.encoder.is_bidirectional())
        state.update(decoder_hidden=hidden, decoder_context=encoded.new_zeros(hidden.shape[0], self.decoder_output_dim))
        output: dict[str, Any] = {}
        if target_tokens is not None:
            output["loss"] = self.forward_loss(target_ids(target_tokens), get_text_field_mask(target_tokens),
                                               target_token_ids, dict(state), weight)
        output["metadata"] = metadata
        if self.training:
            return output
        batch, positions = mask.shape
        state["copy_log_probs"] = (hidden.new_zeros((batch, positions)) + TINY).log()
        start = mask.new_full((batch,), self.start_index, dtype=torch.long)
        predictions, log_probabilities = self.beam_search.search(start, state, self.take_search_step)
        output.update(predicted_log_probs=log_probabilities, predictions=predictions)
        if target_tokens is not None:
            if self.tensor_based_metric is not None:
                gold = extended_gold_tokens(target_ids(target_tokens), source_token_ids, target_token_ids,
                                            self.oov_index, self.target_vocab_size)
                self.tensor_based_metric(predictions[:, 0, :], gold)
            if self.token_based_metric is not None:
                self.token_based_metric(self.predicted_tokens(predictions, metadata, n_best=1),
                                        [item["target_tokens"] for item in metadata])
        return output

    def decoder_step(self, last_predictions: torch.Tensor, selective_weights: torch.Tensor,
                     state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        outputs = state["encoder_outputs"]
        attentive = weighted_sum(outputs, self.attention(state["decoder_hidden"], outputs, state["source_mask"]))
        selective = weighted_sum(outputs, selective_weights)
        decoder_input = self.input_projection_layer(
            torch.cat((self.target_embedder(last_predictions), attentive, selective), -1))
        hidden, context = self.decoder_cell(decoder_input.float(), (state["decoder_hidden"].float(),
                                                                    state["decoder_context"].float()))
        return {**state, "decoder_hidden": hidden, "decoder_context": context}

    def scores(self, state: dict[str, torch.Tensor]) -> torch.Tensor:
        """``(group, vocab + positions)``: generation scores, then each source position's copy score."""
        copy = torch.tanh(self.output_copying_layer(state["encoder_outputs"]))
        copy = copy.bmm(state["decoder_hidden"].unsqueeze(-1)).squeeze(-1)
        return torch.cat((self.output_generation_layer(state["decoder_hidden"]), copy), dim=-1)

    def step_log_likelihood(self, scores: torch.Tensor, step_targets: torch.Tensor, target_to_source: torch.Tensor,
                            source_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The log-likelihood of each row's target token (all its ways), the next selective read's weights and
        the step's log-probabilities."""
        size = self.target_vocab_size
        mask = torch.cat((torch.ones_like(scores[:, :size], dtype=torch.bool), source_mask.bool()), dim=-1)
        log_probs = masked_log_softmax(scores, mask)
        copy_log_probs = log_probs[:, size:] + (target_to_source.to(log_probs.dtype) + TINY).log()
        selective_weights = masked_softmax(log_probs[:, size:], target_to_source)
        generated = (step_targets != self.oov_index) | (target_to_source.sum(-1) == 0)
        if self.label_smoothing:
            share = self.label_smoothing / size
            smoothed = torch.full_like(log_probs, share).scatter_(1, step_targets.unsqueeze(1),
                                                                  1.0 - self.label_smoothing + share)
            generation = (log_probs * smoothed).sum(-1, keepdim=True)
        else:
            generation = log_probs.gather(1, step_targets.unsqueeze(1))
        generation = generation + log_of(generated, log_probs).unsqueeze(-1)
        return torch.logsumexp(torch.cat((generation, copy_log_probs), dim=-1), dim=-1), selective_weights, log_probs

    def forward_loss(self, targets: torch.Tensor, target_mask: torch.Tensor, target_token_ids: torch.Tensor,
                     state: dict[str, torch.Tensor], weight: torch.Tensor | None) -> torch.Tensor:
        batch = targets.shape[0]
        source_mask = state["source_mask"]
        copy_choices = source_mask.new_full((batch,), self.copy_index, dtype=torch.long)
        selective_weights = state["decoder_hidden"].new_zeros(source_mask.shape)
        target_to_source = state["source_token_ids"].new_zeros(source_mask.shape).bool()
        last = source_mask.new_full((batch,), self.start_index, dtype=torch.long)
        likelihoods = []
        for timestep in range(targets.shape[1] - 1):
            if self.training and self.scheduled_sampling_ratio > 0.0 and \
                    torch.rand(1).item() < self.scheduled_sampling_ratio:
                choices, copied = last, (last >= self.target_vocab_size).long()
            else:
                choices = targets[:, timestep]
                copied = ((choices == self.oov_index) & (target_to_source.sum(-1) > 0)).long()
            choices = choices * (1 - copied) + copy_choices * copied
            target_to_source = state["source_token_ids"] == target_token_ids[:, timestep + 1].unsqueeze(-1)
            state = self.decoder_step(choices, selective_weights, state)
            likelihood, selective_weights, log_probs = self.step_log_likelihood(
                self.scores(state), targets[:, timestep + 1], target_to_source, source_mask)
            likelihoods.append(likelihood.unsqueeze(1))
            last = log_probs.argmax(1)
        log_likelihood = (torch.cat(likelihoods, 1) * target_mask[:, 1:]).sum(dim=-1)
        if weight is not None:
            log_likelihood = weight.reshape(-1) * log_likelihood
        return -log_likelihood.sum() / batch

    # ------------------------------------------------------------------------------ beam search
    def selective_input(self, last_predictions: torch.Tensor,
                        state: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """The token to embed (``@COPY@`` for a copied position) and the selective read's weights: the
        previous step's copy probabilities of the positions holding the word just emitted."""
        group, positions = state["source_to_target"].shape
        copied = last_predictions >= self.target_vocab_size
        choices = last_predictions * ~copied + last_predictions.new_full((group,), self.copy_index) * copied
        generated_here = state["source_to_target"] == last_predictions.unsqueeze(-1).expand(group, positions)
        position = (last_predictions - self.target_vocab_size) * copied
        ids = state["source_token_ids"]
        copied_here = (ids == ids.gather(-1, position.unsqueeze(-1))) & copied.unsqueeze(-1)
        return choices, masked_softmax(state["copy_log_probs"], copied_here | generated_here)

    def take_search_step(self, last_predictions: torch.Tensor, state: dict[str, torch.Tensor],
                         step: int) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        positions = state["source_to_target"].shape[1]
        choices, selective_weights = self.selective_input(last_predictions, state)
        state = self.decoder_step(choices, selective_weights, state)
        scores = self.scores(state)
        mask = torch.cat((torch.ones_like(scores[:, :self.target_vocab_size], dtype=torch.bool),
                          state["source_mask"].bool()), dim=-1)
        generation, copy = masked_log_softmax(scores, mask).split([self.target_vocab_size, positions], dim=-1)
        state = {**state, "copy_log_probs": copy}
        return merged_log_probabilities(generation, copy, state["source_to_target"], state["source_token_ids"],
                                        self.oov_index), state

    # ------------------------------------------------------------------------------ outputs
    def token(self, index: int, source_words: list[str]) -> str:
        if index >= self.target_vocab_size:
            return source_words[index - self.target_vocab_size]
        if index == self.copy_index and index >= self.vocab.get_vocab_size(self.target_namespace):
            return self.copy_token
        return self.vocab.get_token_from_index(index, self.target_namespace)

    def predicted_tokens(self, predictions: Any, metadata: list[dict[str, Any]],
                         n_best: int | None = None) -> list:
        """Each item's beams as words (a copied position as its source word), cut at the end symbol; with
        ``n_best=1`` the best beam's words alone."""
        found = []
        for beams, item in zip(as_nested_lists(predictions), metadata):
            words = [[self.token(index, item["source_tokens"]) for index in cut_at_end(beam, self.end_index)]
                     for beam in beams[:n_best]]
            found.append(words[0] if n_best == 1 else words)
        return found

    def make_output_human_readable(self, output: dict[str, Any]) -> list[dict[str, Any]]:
        tokens = self.predicted_tokens(output["predictions"], output["metadata"])
        return per_item({**output, "predicted_tokens": tokens})

    def get_metrics(self, reset: bool = False) -> dict[str, float]:
        """``BLEU`` (or the configured metrics), for decoded (evaluation) batches only."""
        if self.training:
            return {}
        found: dict[str, float] = {}
        for metric in (self.tensor_based_metric, self.token_based_metric):
            if metric is not None:
                value = metric.get_metric(reset)
                found.update(value if isinstance(value, dict) else {type(metric).__name__: value})
        return found
