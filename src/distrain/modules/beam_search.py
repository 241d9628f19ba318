"""AllenNLP's ``beam_search``: the most likely sequences under a step function, keeping ``beam_size`` of them.

The step function maps ``(last predictions (group,), state, timestep)`` to ``(log-probabilities (group, classes),
state)``; every state tensor is ``(group, ...)`` and is expanded to the beams after the first step and reordered
by each step's backpointers, so a step sees the state of the beam it extends (an encoder's output, a decoder's
prefix). A state value that is not a tensor reorders itself: transformers' key-value caches do, with
``batch_repeat_interleave(beam_size)`` and ``reorder_cache(rows)``. A finished beam (its last token ``end_index``) can only add ``end_index`` at no cost.

By default the search is deterministic (the top ``per_node_beam_size`` classes per beam, then the top
``beam_size`` beams; ``beam_size: 1`` is greedy decoding), with ``min_steps``, and a sequence scores the sum of its
token log-probabilities. AllenNLP's other parts plug in as it had them: a ``sampler``
(:mod:`distrain.modules.beam_sampler`: ``multinomial``, ``top-k``, ``top-p``, ``gumbel``), a
``final_sequence_scorer`` (:mod:`distrain.modules.sequence_scorer`: ``length-normalized-sequence-log-prob``) and
``constraints`` (:mod:`distrain.modules.beam_constraint`: ``repeated-ngram-blocking``). A step function of AllenNLP's
older form, without the timestep, is called with two arguments.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any, Callable

import torch

from distrain.config.constraints import NonNegativeInt, PositiveInt
from distrain.config.errors import ConfigError
from distrain.modules.beam_constraint import Constraint
from distrain.modules.beam_sampler import Sampler
from distrain.modules.beam_samplers.deterministic import DeterministicSampler
from distrain.modules.sequence_scorer import FinalSequenceScorer
from distrain.registry import Registrable

StepFunction = Callable[[torch.Tensor, dict[str, Any], int], tuple[torch.Tensor, dict[str, Any]]]


class BeamSearch(Registrable):
    """``search`` returns ``(predictions (batch, beam, steps), scores (batch, beam))``, best beam first."""

    default_implementation = "beam_search"
    runtime_args = ("vocab",)

    def __init__(self, end_index: NonNegativeInt | None = None, max_steps: PositiveInt = 50,
                 beam_size: PositiveInt = 10, per_node_beam_size: PositiveInt | None = None,
                 sampler: Sampler | None = None, min_steps: NonNegativeInt | None = None,
                 final_sequence_scorer: FinalSequenceScorer | None = None,
                 constraints: list[Constraint] | None = None, vocab: object | None = None) -> None:
        # a model that knows its end symbol passes end_index when it builds the search (and wins over the config);
        # a config gives it where no model does (allennlp-models' next_token_lm generators)
        if end_index is None:
            raise ValueError("end_index is required: no model gives this beam search its end symbol")
        if min_steps is not None and min_steps > max_steps:
            raise ValueError("min_steps must be less than or equal to max_steps")
        self.end_index = end_index
        self.max_steps = max_steps
        self.beam_size = beam_size
        self.per_node_beam_size = per_node_beam_size or beam_size
        self.min_steps = min_steps or 0
        self.sampler = sampler
        self.final_sequence_scorer = final_sequence_scorer
        self.constraints = list(constraints or [])

    @property
    def _end_index(self) -> int:
        """AllenNLP's name for it."""
        return self.end_index

    @torch.no_grad()
    def search(self, start_predictions: torch.Tensor, start_state: dict[str, Any],
               step: StepFunction) -> tuple[torch.Tensor, torch.Tensor]:
        step = with_timestep(step)
        sampler = self.sampler or _BEST
        batch_size, beams = start_predictions.shape[0], self.beam_size
        log_probabilities, state = step(start_predictions, start_state, 0)
        num_classes = log_probabilities.shape[1]
        if self.per_node_beam_size > num_classes:
            raise ConfigError(f"target vocabulary size ({num_classes}) too small relative to per_node_beam_size "
                              f"({self.per_node_beam_size}): decrease beam_size or per_node_beam_size")
        lowest = torch.finfo(log_probabilities.dtype).min
        sampler_state = sampler.init_state(log_probabilities, batch_size, num_classes)
        constraint_states = [constraint.init_state(batch_size) for constraint in self.constraints]
        for constraint, constraint_state in zip(self.constraints, constraint_states):
            log_probabilities = constraint.apply(constraint_state, log_probabilities.unsqueeze(1)).squeeze(1)
        if self.min_steps >= 1:
            log_probabilities[:, self.end_index] = lowest
        scores, classes, sampler_state = sampler.sample_beams(log_probabilities, beams, sampler_state)
        if beams == 1 and (classes == self.end_index).all():
            warnings.warn("Empty sequences predicted: every first token is the end token", RuntimeWarning)
            return classes.unsqueeze(-1), scores
        constraint_states = [constraint.update_state(constraint_state, classes)
                             for constraint, constraint_state in zip(self.constraints, constraint_states)]
        predictions, backpointers = [classes], []
        after_end = log_probabilities.new_full((batch_size * beams, num_classes), lowest)
        after_end[:, self.end_index] = 0.0
        state = {key: _expand(value, beams) for key, value in state.items()}
        for timestep in range(self.max_steps - 1):
            last = predictions[-1].reshape(batch_size * beams)
            if (last == self.end_index).all():
                break
            log_probabilities, state = step(last, state, timestep + 1)
            for constraint, constraint_state in zip(self.constraints, constraint_states):
                log_probabilities = constraint.apply(constraint_state, log_probabilities.view(batch_size, beams, -1)
                                                     ).view(batch_size * beams, -1)
            if timestep + 2 <= self.min_steps:
                log_probabilities[:, self.end_index] = lowest
            ended = (last == self.end_index).unsqueeze(-1)
            log_probabilities = torch.where(ended, after_end, log_probabilities)
            node_scores, node_classes, sampler_state = sampler.sample_nodes(log_probabilities,
                                                                            self.per_node_beam_size, sampler_state)
            summed = (node_scores.view(batch_size, beams, -1) + scores.unsqueeze(2)).reshape(batch_size, -1)
            scores, chosen, sampler_state = sampler.sample_beams(summed, beams, sampler_state)
            predictions.append(node_classes.reshape(batch_size, -1).gather(1, chosen))
            backpointer = torch.div(chosen, self.per_node_beam_size, rounding_mode="trunc")
            backpointers.append(backpointer)
            state = {key: _reorder(value, backpointer) for key, value in state.items()}
            constraint_states = [constraint.update_state(constraint_state, predictions[-1], backpointer)
                                 for constraint, constraint_state in zip(self.constraints, constraint_states)]
        if not torch.isfinite(scores).all() or (scores == lowest).any():
            warnings.warn("Negligible log probabilities encountered: some final sequences may not make sense "
                          "(the beam is wider than the step function's non-zero choices)", RuntimeWarning)
        sequences = reconstruct(predictions, backpointers)
        if self.final_sequence_scorer is not None:
            scores = self.final_sequence_scorer.score(sequences, scores, self.end_index)
        scores, order = scores.sort(dim=1, descending=True)
        return sequences.gather(1, order.unsqueeze(-1).expand_as(sequences)), scores


BeamSearch.register("beam_search")(BeamSearch)

#: the sampler of a search given none: the best candidates, as beam search always took them
_BEST = DeterministicSampler()


def with_timestep(step: Callable) -> StepFunction:
    """``step`` taking the timestep as its third argument (AllenNLP's older step functions take two)."""
    try:
        parameters = inspect.signature(step).parameters.values()
    except (TypeError, ValueError):
        return step
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) == 2 and not any(p.kind == p.VAR_POSITIONAL for p in parameters):
        return lambda predictions, state, timestep: step(predictions, state)
    return step


def reconstruct(predictions: list[torch.Tensor], backpointers: list[torch.Tensor]) -> torch.Tensor:
    """Each final beam's tokens, followed back through the backpointers: ``(batch, beam, steps)``."""
    columns = [predictions[-1]]
    if backpointers:
        pointer = backpointers[-1]
        for timestep in range(len(predictions) - 2, 0, -1):
            columns.append(predictions[timestep].gather(1, pointer))
            pointer = backpointers[timestep - 1].gather(1, pointer)
        columns.append(predictions[0].gather(1, pointer))
    return torch.stack(list(reversed(columns)), dim=2)


def _expand(value: Any, beam_size: int) -> Any:
    """``(batch, ...)`` → ``(batch × beam, ...)``, each row repeated for its beams."""
    if not isinstance(value, torch.Tensor):
        value.batch_repeat_interleave(beam_size)
        return value
    return value.unsqueeze(1).expand(value.shape[0], beam_size, *value.shape[1:]).reshape(-1, *value.shape[1:])


def _reorder(value: Any, backpointer: torch.Tensor) -> Any:
    """Each beam's row taken from the beam it extends."""
    batch_size, beam_size = backpointer.shape
    if not isinstance(value, torch.Tensor):
        first = torch.arange(batch_size, device=backpointer.device).unsqueeze(1) * beam_size
        value.reorder_cache((first + backpointer).reshape(-1))
        return value
    rest = value.shape[1:]
    index = backpointer.view(batch_size, beam_size, *([1] * len(rest))).expand(batch_size, beam_size, *rest)
    return value.reshape(batch_size, beam_size, *rest).gather(1, index).reshape(-1, *rest)
