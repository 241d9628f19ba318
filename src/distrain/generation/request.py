"""One prompt to continue and the rules every running batch shares: its settings, how a row chooses its next
token (greedy, or sampled from its own generator seeded by the run's ``seed`` and the prompt's number) and
when a row ends. :mod:`distrain.generation.decoding` (the padded batch, ``generate``) and
:mod:`distrain.generation.slot_batch` both build on it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal, Sequence

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
