"""BiMPM's matching layer (AllenNLP's ``BiMpmMatching``, Wang et al. 2017): every word of each text compared with the
other text under ``num_perspectives`` learned weightings of the cosine.

Four matchings, each optional: *full* (with the other text's last word, or its first when the encoder ran backward),
*max-pool* (max and mean over all the other's words), *attentive* and *max-attentive* (with a cosine-weighted mix of
the other's words). Two unweighted cosines (max and mean) always come first. The arithmetic, quirks included (the
attentive mix is a softmax over the hidden dimension, as AllenNLP's), is AllenNLP's, so its archives give its outputs.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from distrain.config.constraints import PositiveInt
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.modules.masked_softmax import TINY, masked_softmax
from distrain.registry import Registrable


class BiMpmMatching(torch.nn.Module, Registrable):
    """Match two encoded texts of width ``hidden_dim`` in one direction: a list of (batch, words, 1 or
    ``num_perspectives``) matching vectors for each text."""

    default_implementation = "bimpm_matching"
    input_size_key = "hidden_dim"

    def __init__(self, hidden_dim: PositiveInt = 100, num_perspectives: PositiveInt = 20,
                 share_weights_between_directions: bool = True, is_forward: bool | None = None,
                 with_full_match: bool = True, with_maxpool_match: bool = True, with_attentive_match: bool = True,
                 with_max_attentive_match: bool = True) -> None:
        super().__init__()
        problem = self._choice_problem(is_forward, with_full_match, with_maxpool_match, with_attentive_match,
                                       with_max_attentive_match)
        if problem:
            raise ValueError(problem)
        self.hidden_dim, self.num_perspectives, self.is_forward = hidden_dim, num_perspectives, is_forward
        self.with_full_match, self.with_maxpool_match = with_full_match, with_maxpool_match
        self.with_attentive_match, self.with_max_attentive_match = with_attentive_match, with_max_attentive_match

        def weights() -> torch.nn.Parameter:
            return torch.nn.Parameter(torch.nn.init.kaiming_normal_(torch.zeros(num_perspectives, hidden_dim)))

        def reversed_(forward: torch.nn.Parameter) -> torch.nn.Parameter:
            # shared: one parameter under both names (AllenNLP's state dict holds both keys)
            return forward if share_weights_between_directions else weights()

        if with_full_match:
            self.full_match_weights = weights()
            self.full_match_weights_reversed = reversed_(self.full_match_weights)
        if with_maxpool_match:
            self.maxpool_match_weights = weights()
        if with_attentive_match:
            self.attentive_match_weights = weights()
            self.attentive_match_weights_reversed = reversed_(self.attentive_match_weights)
        if with_max_attentive_match:
            self.max_attentive_match_weights = weights()
            self.max_attentive_match_weights_reversed = reversed_(self.max_attentive_match_weights)
        self.output_dim = self.width(num_perspectives, with_full_match, with_maxpool_match, with_attentive_match,
                                     with_max_attentive_match)

    @staticmethod
    def width(perspectives: int, full: bool, maxpool: bool, attentive: bool, max_attentive: bool) -> int:
        """2 cosines, then ``perspectives`` + 1 per full, attentive and max-attentive match, 2 × for max-pool."""
        return 2 + (perspectives + 1) * (full + attentive + max_attentive) + 2 * perspectives * maxpool

    @staticmethod
    def _choice_problem(is_forward: bool | None, full: bool, *others: bool) -> str | None:
        if not (full or any(others)):
            return "at least one of the matching methods must be enabled"
        if full and is_forward is None:
            return "is_forward is needed for the full match (which end of the other text to compare with)"
        return None

    @classmethod
    def argument_problems(cls, arguments: dict[str, Any]) -> list[Problem]:
        problem = cls._choice_problem(arguments["is_forward"], arguments["with_full_match"],
                                      arguments["with_maxpool_match"], arguments["with_attentive_match"],
                                      arguments["with_max_attentive_match"])
        return [Problem("", problem)] if problem else []

    @classmethod
    def configured_output_dim(cls, recipe: Lazy, input_dim: int | None) -> int | None:
        return cls.width(*(recipe.argument(name) for name in (
            "num_perspectives", "with_full_match", "with_maxpool_match", "with_attentive_match",
            "with_max_attentive_match")))

    def get_output_dim(self) -> int:
        return self.output_dim

    def forward(self, context_1: torch.Tensor, mask_1: torch.Tensor, context_2: torch.Tensor,
                mask_2: torch.Tensor) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        mask_1, mask_2 = mask_1.bool(), mask_2.bool()
        context_1 = context_1 * mask_1.unsqueeze(-1)
        context_2 = context_2 * mask_2.unsqueeze(-1)
        # (batch, words_1, words_2): every word of one text against every word of the other
        cosine = F.cosine_similarity(context_1.unsqueeze(-2), context_2.unsqueeze(-3), dim=3)
        cosine_t = cosine.permute(0, 2, 1)
        over_2, over_1 = mask_2.unsqueeze(-2), mask_1.unsqueeze(-2)
        matching_1 = [_masked_max(cosine, over_2, 2, True), _masked_mean(cosine, over_2, 2, True)]
        matching_2 = [_masked_max(cosine_t, over_1, 2, True), _masked_mean(cosine_t, over_1, 2, True)]

        if self.with_full_match:
            last_1, last_2 = self._end(context_1, mask_1), self._end(context_2, mask_2)
            matching_1 += _match(context_1, last_2, self.full_match_weights)
            matching_2 += _match(context_2, last_1, self.full_match_weights_reversed)

        if self.with_maxpool_match:
            pairwise = _match_pairwise(context_1, context_2, self.maxpool_match_weights)
            pairwise_t = pairwise.permute(0, 2, 1, 3)
            matching_1 += [_masked_max(pairwise, over_2.unsqueeze(-1), 2),
                           _masked_mean(pairwise, over_2.unsqueeze(-1), 2)]
            matching_2 += [_masked_max(pairwise_t, over_1.unsqueeze(-1), 2),
                           _masked_mean(pairwise_t, over_1.unsqueeze(-1), 2)]

        # (batch, words_1, words_2, hidden): each text's words weighted by their cosine with the other's
        attended_2 = context_2.unsqueeze(-3) * cosine.unsqueeze(-1)
        attended_1 = context_1.unsqueeze(-2) * cosine.unsqueeze(-1)
        if self.with_attentive_match:
            mean_2 = masked_softmax(attended_2.sum(dim=2), mask_1.unsqueeze(-1))
            mean_1 = masked_softmax(attended_1.sum(dim=1), mask_2.unsqueeze(-1))
            matching_1 += _match(context_1, mean_2, self.attentive_match_weights)
            matching_2 += _match(context_2, mean_1, self.attentive_match_weights_reversed)
        if self.with_max_attentive_match:
            max_2 = _masked_max(attended_2, over_2.unsqueeze(-1), 2)
            max_1 = _masked_max(attended_1.permute(0, 2, 1, 3), over_1.unsqueeze(-1), 2)
            matching_1 += _match(context_1, max_2, self.max_attentive_match_weights)
            matching_2 += _match(context_2, max_1, self.max_attentive_match_weights_reversed)
        return matching_1, matching_2

    def _end(self, context: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(batch, 1, hidden): the last unpadded word when the encoder ran forward, else the first."""
        if not self.is_forward:
            return context[:, 0:1, :]
        last = (mask.sum(-1) - 1).clamp(min=0).view(-1, 1, 1).expand(-1, 1, self.hidden_dim)
        return context.gather(1, last)


def _match(vector_1: torch.Tensor, vector_2: torch.Tensor, weight: torch.Tensor) -> list[torch.Tensor]:
    """Each word of ``vector_1`` (batch, words, hidden) against its counterpart in ``vector_2`` (batch, words or 1,
    hidden): the plain cosine (batch, words, 1) and one per perspective (batch, words, perspectives)."""
    single = F.cosine_similarity(vector_1, vector_2, 2).unsqueeze(2)
    weight = weight.unsqueeze(0).unsqueeze(0)
    multi = F.cosine_similarity(weight * vector_1.unsqueeze(2), weight * vector_2.unsqueeze(2), dim=3)
    return [single, multi]


def _match_pairwise(vector_1: torch.Tensor, vector_2: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """(batch, words_1, words_2, perspectives): every word pair's cosine under each perspective."""
    perspectives = weight.size(0)
    weight = weight.unsqueeze(0).unsqueeze(2)
    vector_1 = weight * vector_1.unsqueeze(1).expand(-1, perspectives, -1, -1)
    vector_2 = weight * vector_2.unsqueeze(1).expand(-1, perspectives, -1, -1)
    norm = vector_1.norm(p=2, dim=3, keepdim=True) * vector_2.norm(p=2, dim=3, keepdim=True).transpose(2, 3)
    return (torch.matmul(vector_1, vector_2.transpose(2, 3)) / norm.clamp(min=TINY)).permute(0, 2, 3, 1)


def _masked_max(vector: torch.Tensor, mask: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return vector.masked_fill(~mask, torch.finfo(vector.dtype).min).max(dim=dim, keepdim=keepdim).values


def _masked_mean(vector: torch.Tensor, mask: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    total = vector.masked_fill(~mask, 0.0).sum(dim=dim, keepdim=keepdim)
    return total / mask.sum(dim=dim, keepdim=keepdim).float().clamp(min=TINY)


BiMpmMatching.register("bimpm_matching")(BiMpmMatching)
