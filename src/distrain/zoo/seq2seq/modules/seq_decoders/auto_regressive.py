"""``auto_regressive_seq_decoder``: a decoder net predicts one target token at a time from the tokens before it.

Training is teacher forcing: a parallel net (self-attention) reads the whole shifted target at once; a stepwise
one, or any net under scheduled sampling, runs step by step, feeding with probability
``scheduled_sampling_ratio`` its own previous guesses for the whole batch instead of the gold prefix. The
loss is AllenNLP's sequence cross entropy (optionally label-smoothed). Evaluation decodes by beam search, the
embedded tokens decoded so far riding in the beam state, and feeds the best beam to ``tensor_based_metric``
(ids) and ``token_based_metric`` (tokens). ``tie_output_embedding`` makes the output projection the target
embedding's matrix.
"""

from __future__ import annotations

from typing import Any

import torch

from distrain.config.constraints import Probability
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.metrics.metric import Metric
from distrain.modules.beam_search import BeamSearch
from distrain.modules.text_field_embedder import get_text_field_mask
from distrain.modules.token_embedders.embedding import Embedding
from distrain.zoo.seq2seq.modules.decoded_tokens import as_nested_lists, boundary_indices, ids_to_tokens, target_ids
from distrain.zoo.seq2seq.modules.decoder_nets.decoder_net import DecoderNet
from distrain.zoo.seq2seq.modules.seq_decoders.seq_decoder import SeqDecoder
from distrain.zoo.seq2seq.modules.sequence_loss import shifted_loss

PREVIOUS = "previous_steps_predictions"


@SeqDecoder.register("auto_regressive_seq_decoder")
class AutoRegressiveSeqDecoder(SeqDecoder):
    """A decoder net predicting one target token at a time: teacher forcing or scheduled sampling in training,
    beam search in prediction."""

    def __init__(self, vocab: Vocabulary, decoder_net: DecoderNet, target_embedder: Embedding,
                 target_namespace: str = "tokens", beam_search: Lazy[BeamSearch] | None = None,
                 tie_output_embedding: bool = False, scheduled_sampling_ratio: Probability = 0.0,
                 label_smoothing_ratio: Probability | None = None, tensor_based_metric: Metric | None = None,
                 token_based_metric: Metric | None = None, beam_size: int | None = None,
                 max_decoding_steps: int | None = None) -> None:
        from distrain.zoo.seq2seq.models.simple_seq2seq import beam_search_for

        super().__init__(target_embedder)
        self.vocab, self.decoder_net, self.target_namespace = vocab, decoder_net, target_namespace
        self.label_smoothing_ratio = label_smoothing_ratio
        self.scheduled_sampling_ratio = scheduled_sampling_ratio
        self.start_index, self.end_index = boundary_indices(vocab, target_namespace)
        self.beam_search = beam_search_for(beam_search, self.end_index, vocab, beam_size, max_decoding_steps)
        if target_embedder.get_output_dim() != decoder_net.target_embedding_dim:
            raise ValueError(f"the target_embedder's width {target_embedder.get_output_dim()} is not the "
                             f"decoder_net's target_embedding_dim {decoder_net.target_embedding_dim}")
        self.output_projection_layer = torch.nn.Linear(decoder_net.get_output_dim(),
                                                       vocab.get_vocab_size(target_namespace))
        if tie_output_embedding:
            if self.output_projection_layer.weight.shape != target_embedder.weight.shape:
                raise ValueError("tie_output_embedding: the output projection's shape "
                                 f"{tuple(self.output_projection_layer.weight.shape)} is not the target embedding's "
                                 f"{tuple(target_embedder.weight.shape)}")
            self.output_projection_layer.weight = target_embedder.weight
        self.tensor_based_metric = tensor_based_metric
        self.token_based_metric = token_based_metric

    def get_output_dim(self) -> int:
        return self.decoder_net.get_output_dim()

    def metrics(self) -> dict[str, Metric]:
        return {name: metric for name, metric in (("tensor_based_metric", self.tensor_based_metric),
                                                  ("token_based_metric", self.token_based_metric)) if metric}

    def forward(self, encoder_out: dict[str, torch.Tensor],
                target_tokens: dict[str, dict[str, torch.Tensor]] | None = None) -> dict[str, Any]:
        state = {**encoder_out, **self.decoder_net.init_decoder_state(encoder_out)}
        output: dict[str, Any] = self.forward_loss(dict(state), target_tokens) if target_tokens is not None else {}
        if self.training:
            return output
        batch = state["source_mask"].shape[0]
        start = state["source_mask"].new_full((batch,), self.start_index, dtype=torch.long)
        predictions, log_probabilities = self.beam_search.search(start, state, self.take_step)
        output.update(class_log_probabilities=log_probabilities, predictions=predictions)
        if target_tokens is not None:
            targets = target_ids(target_tokens)
            if self.tensor_based_metric is not None:
                self.tensor_based_metric(predictions[:, 0, :], targets)
            if self.token_based_metric is not None:
                self.token_based_metric(self.indices_to_tokens(predictions), self.indices_to_tokens(targets[:, 1:]))
        return output

    def forward_loss(self, state: dict[str, torch.Tensor],
                     target_tokens: dict[str, dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
        targets = target_ids(target_tokens)
        target_mask = get_text_field_mask(target_tokens)
        embedded = self.target_embedder(targets)
        if self.scheduled_sampling_ratio == 0 and self.decoder_net.decodes_parallel:
            _, decoded = self.decoder_net(previous_state=state, previous_steps_predictions=embedded[:, :-1, :],
                                          encoder_outputs=state["encoder_outputs"], source_mask=state["source_mask"],
                                          previous_steps_mask=target_mask[:, :-1])
            logits = self.output_projection_layer(decoded)
        else:
            logits = self.stepwise_logits(state, targets, embedded)
        return {"loss": shifted_loss(logits, targets, target_mask, self.label_smoothing_ratio)}

    def stepwise_logits(self, state: dict[str, torch.Tensor], targets: torch.Tensor,
                        embedded: torch.Tensor) -> torch.Tensor:
        last = targets.new_full((targets.shape[0],), self.start_index)
        own: torch.Tensor | None = None  # the embeddings of the guesses so far
        logits = []
        for timestep in range(targets.shape[1] - 1):
            if self.training and torch.rand(1).item() < self.scheduled_sampling_ratio:
                state[PREVIOUS], fed = own, last
            else:
                state[PREVIOUS], fed = (embedded[:, :timestep] if timestep else None), targets[:, timestep]
            if state[PREVIOUS] is None:
                del state[PREVIOUS]
            projections, state = self.output_projections(fed, state)
            logits.append(projections.unsqueeze(1))
            last = projections.argmax(1)
            guess = self.target_embedder(last).unsqueeze(1)
            own = guess if own is None else torch.cat([own, guess], 1)
        return torch.cat(logits, 1)

    def output_projections(self, last_predictions: torch.Tensor,
                           state: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        latest = self.target_embedder(last_predictions).unsqueeze(1)
        previous = state.get(PREVIOUS)
        steps = latest if previous is None or previous.shape[-1] == 0 else torch.cat([previous, latest], 1)
        new_state, decoded = self.decoder_net(previous_state=state, encoder_outputs=state["encoder_outputs"],
                                              source_mask=state["source_mask"], previous_steps_predictions=steps)
        if self.decoder_net.decodes_parallel:
            decoded = decoded[:, -1, :]
        return self.output_projection_layer(decoded), {**state, PREVIOUS: steps, **new_state}

    def take_step(self, last_predictions: torch.Tensor, state: dict[str, torch.Tensor],
                  step: int) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        projections, state = self.output_projections(last_predictions, state)
        return torch.log_softmax(projections, dim=-1), state

    def get_metrics(self, reset: bool = False) -> dict[str, float]:
        if self.training:
            return {}
        found: dict[str, float] = {}
        for metric in self.metrics().values():
            value = metric.get_metric(reset)
            found.update(value if isinstance(value, dict) else {type(metric).__name__: value})
        return found

    def indices_to_tokens(self, batch: Any) -> list[list[str]]:
        """Each row's tokens (a row of beams: the best one's), cut at the end symbol."""
        rows = []
        for row in as_nested_lists(batch):
            ids = row[0] if row and isinstance(row[0], list) else row
            rows.append(ids_to_tokens(self.vocab, ids, self.target_namespace, self.end_index))
        return rows

    def post_process(self, output: dict[str, Any]) -> dict[str, Any]:
        return {**output, "predicted_tokens": self.indices_to_tokens(output["predictions"])}
