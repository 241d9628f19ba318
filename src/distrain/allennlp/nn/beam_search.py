"""``allennlp.nn.beam_search``: the beam search, its samplers, final scorers and constraints."""

from typing import Any, Callable

import torch

from distrain.modules.beam_constraint import Constraint, ConstraintStateType
from distrain.modules.beam_constraints.repeated_ngram_blocking import RepeatedNGramBlockingConstraint
from distrain.modules.beam_sampler import Sampler, StateType
from distrain.modules.beam_samplers.deterministic import DeterministicSampler
from distrain.modules.beam_samplers.gumbel import GumbelSampler
from distrain.modules.beam_samplers.multinomial import MultinomialSampler
from distrain.modules.beam_samplers.top_k import TopKSampler
from distrain.modules.beam_samplers.top_p import TopPSampler
from distrain.modules.beam_search import BeamSearch
from distrain.modules.sequence_scorer import FinalSequenceScorer
from distrain.modules.sequence_scorers.length_normalized import LengthNormalizedSequenceLogProbabilityScorer
from distrain.modules.sequence_scorers.sequence_log_prob import SequenceLogProbabilityScorer

#: AllenNLP's types of a step function: with the timestep as third argument, and its older form without
StepFunctionTypeWithTimestep = Callable[[torch.Tensor, StateType, int], tuple[torch.Tensor, StateType]]
StepFunctionTypeNoTimestep = Callable[[torch.Tensor, StateType], tuple[torch.Tensor, StateType]]
StepFunctionType = Any

__all__ = [
    "BeamSearch", "Constraint", "ConstraintStateType", "DeterministicSampler", "FinalSequenceScorer",
    "GumbelSampler", "LengthNormalizedSequenceLogProbabilityScorer", "MultinomialSampler",
    "RepeatedNGramBlockingConstraint", "Sampler", "SequenceLogProbabilityScorer", "StateType", "StepFunctionType",
    "StepFunctionTypeNoTimestep", "StepFunctionTypeWithTimestep", "TopKSampler", "TopPSampler",
]
