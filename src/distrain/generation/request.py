"""One prompt to continue and the rules every running batch shares: its settings, how a row chooses its next
token (greedy, or sampled from its own generator seeded by the run's ``seed`` and the prompt's number) and
when a row ends, and the part of a running batch that does not depend on how it holds its cache
(:class:`RunningRows`). :mod:`distrain.generation.decoding` (the padded batch, ``generate``) and
:mod:`distrain.generation.slot_batch` both build on it."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Annotated, Callable, Literal, Sequence

import torch
from annotated_types import Ge, Gt, Le

SEED_STRIDE = 1_000_003  # a prime: the seeds of (seed, prompt) pairs do not collide for small values


@dataclass(frozen=True)
class GenerationSettings:
    """``temperature`` 0 is greedy (the most likely token each step); above 0 it samples, from the
    smallest set of tokens whose probabilities reach ``top_p``. ``seed`` fixes the samples."""

    max_new_tokens: Annotated[int, Ge(1)] = 64
    temperature: Annotated[float, Ge(0.0)] = 0.0
    top_p: Annotated[float, Gt(0.0), Le(1.0)] = 1.0
    seed: int = 0


@dataclass(frozen=True)
class Continuation:
    """The new tokens (the end token included when it was generated) and why generation stopped:
    ``stop`` (an end token) or ``length`` (``max_new_tokens`` or the model's context)."""

    tokens: list[int]
    finish_reason: Literal["stop", "length"]


def choose_next(logits: torch.Tensor, settings: GenerationSettings,
                generators: Sequence[torch.Generator] | None) -> torch.Tensor:
    """The next token of every row of ``logits`` (batch x vocabulary)."""
    if settings.temperature == 0.0:
        return logits.argmax(-1)
    probabilities = torch.softmax(logits.float() / settings.temperature, dim=-1)
    if settings.top_p < 1.0:
        sorted_probabilities, order = probabilities.sort(dim=-1, descending=True)
        before = sorted_probabilities.cumsum(-1) - sorted_probabilities  # mass of the tokens ranked above
        sorted_probabilities = sorted_probabilities.masked_fill(before >= settings.top_p, 0.0)
        probabilities = torch.zeros_like(probabilities).scatter(-1, order, sorted_probabilities)
    assert generators is not None and len(generators) == logits.shape[0]
    return torch.cat([torch.multinomial(row, 1, generator=generator)
                      for row, generator in zip(probabilities.cpu(), generators)]).to(logits.device)


def generators_for(settings: GenerationSettings, prompt_numbers: Sequence[int]) -> list[torch.Generator] | None:
    """One random generator per prompt, seeded by ``(seed, prompt number)``; None when greedy."""
    if settings.temperature == 0.0:
        return None
    return [torch.Generator().manual_seed(settings.seed * SEED_STRIDE + number) for number in prompt_numbers]


@dataclass(eq=False)
class Request:
    """One prompt to continue; ``number`` seeds its samples (see :func:`generators_for`). Requests are
    equal only to themselves: two clients may send the same prompt, and cancelling one must not touch
    the other."""

    prompt: list[int]
    settings: GenerationSettings = GenerationSettings()
    number: int = 0
    tokens: list[int] = field(default_factory=list)
    finish_reason: str | None = None

    def __post_init__(self) -> None:
        generators = generators_for(self.settings, [self.number])
        self.generator = generators[0] if generators else None


def take_token(request: Request, token: int, end_ids: set[int], context_length: int | None) -> bool:
    """Append ``token`` to ``request``; whether that ended it (an end token, its budget or the context)."""
    request.tokens.append(token)
    budget = request.settings.max_new_tokens
    if context_length is not None:
        budget = min(budget, context_length - len(request.prompt))
    if token in end_ids:
        request.finish_reason = "stop"
    elif len(request.tokens) >= budget:
        request.finish_reason = "length"
    return request.finish_reason is not None


def choose_tokens(logits: torch.Tensor, requests: Sequence[Request]) -> list[int]:
    """The next token of each of ``requests`` (one a row of ``logits``): greedy rows and sampled rows choose
    apart, each sampled row drawing from its own generator."""
    chosen = logits.argmax(-1).tolist()
    for row, request in enumerate(requests):
        if request.generator is not None:
            chosen[row] = int(choose_next(logits[row:row + 1], request.settings, [request.generator])[0])
    return chosen


class RunningRows:
    """What both running batches share, however they hold the cache: the model (the cache argument its
    ``forward`` names), the rules that end a row (``end_ids``; ``context_length`` caps prompt plus
    continuation), the rows (``len``), a step as the tokens chosen (``_choose``) then ``advance``-d, a
    cancelled row dropped (``_keep``), and the cache's size from each row's positions in it
    (``cached_lengths``)."""

    def __init__(self, transformer: torch.nn.Module, end_ids: set[int], pad_id: int,
                 context_length: int | None = None) -> None:
        self.transformer, self.end_ids, self.pad_id, self.context_length = transformer, end_ids, pad_id, context_length
        self.device = next(transformer.parameters()).device
        parameters = inspect.signature(transformer.forward).parameters
        self._cache_argument = "cache" if "cache" in parameters else "past_key_values"
        self._keeps_logits = "logits_to_keep" in parameters
        self.rows: list[Request] = []
        self.logits: torch.Tensor | None = None  # each row's distribution over its next token, once it has one

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def cached_tokens(self) -> int:
        """Key-value positions held (a padded batch's padding included)."""
        return sum(self.cached_lengths())

    @property
    def cache_width(self) -> int:
        """The longest row's cached positions (what a step's attention reads per row)."""
        return max(self.cached_lengths(), default=0)

    def cached_lengths(self) -> list[int]:
        """The positions each row holds in the cache."""
        raise NotImplementedError

    @torch.inference_mode()
    def step(self, on_taken: Callable[[list[Request]], None] | None = None) -> list[Request]:
        """Every row that has read its prompt takes its next token; returns the rows that finished (and left
        the batch). ``on_taken(finished)`` runs once the tokens are taken, before the pass that feeds them back."""
        if not self.rows:
            return []
        return self.advance(self._choose(), on_taken)

    def cancel(self, request: Request) -> None:
        """Drop a row before it finishes (its client went away)."""
        self._keep([row for row, other in enumerate(self.rows) if other is not request])
