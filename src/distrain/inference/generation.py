"""Continue prompts with a causal language model, one decode step at a time over a key-value cache.

This is transformers' ``generate`` loop reduced to what distrain promises: greedy or sampled
(``temperature``, ``top_p``) continuations of a batch of prompts of different lengths, left-padded
so every prompt's last token sits in the last column, each stopping at an end token or its token
budget. A sampled prompt draws from its own random generator, seeded by the run's ``seed`` and the
prompt's number, so a completion does not depend on the batch it happened to share or on how many
workers split the file. The model is called as transformers models are (``input_ids``,
``attention_mask``, ``position_ids``, ``past_key_values``); a tensor-parallel model works unchanged:
every rank feeds the same tokens and draws the same samples.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
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


@torch.inference_mode()
def generate(
    transformer: torch.nn.Module,
    prompts: Sequence[Sequence[int]],
    settings: GenerationSettings,
    end_ids: set[int],
    pad_id: int,
    context_length: int | None = None,
    prompt_numbers: Sequence[int] | None = None,
) -> list[Continuation]:
    """Continue every prompt (token ids, non-empty); ``context_length`` caps prompt + continuation."""
    from transformers import DynamicCache

    device = next(transformer.parameters()).device
    lengths = [len(prompt) for prompt in prompts]
    width = max(lengths)
    input_ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        input_ids[row, width - len(prompt):] = torch.tensor(prompt, dtype=torch.long)
        attention_mask[row, width - len(prompt):] = 1
    input_ids, attention_mask = input_ids.to(device), attention_mask.to(device)
    position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    budgets = [settings.max_new_tokens if context_length is None else min(settings.max_new_tokens, context_length - n)
               for n in lengths]
    generators = generators_for(settings, prompt_numbers if prompt_numbers is not None else range(len(prompts)))
    cache = DynamicCache(config=getattr(transformer, "config", None))
    parameters = inspect.signature(transformer.forward).parameters
    # transformers 5 renames past_key_values to cache; only the last position's logits are needed
    options = {"cache" if "cache" in parameters else "past_key_values": cache, "use_cache": True,
               **({"logits_to_keep": 1} if "logits_to_keep" in parameters else {})}
    tokens: list[list[int]] = [[] for _ in prompts]
    reasons: list[str | None] = [None] * len(prompts)
    step_ids = input_ids
    for _ in range(max(budgets)):
        logits = transformer(input_ids=step_ids, attention_mask=attention_mask, position_ids=position_ids,
                             **options).logits[:, -1]
        chosen = choose_next(logits, settings, generators).tolist()
        finished_before = [reason is not None for reason in reasons]
        for row, token in enumerate(chosen):
            if finished_before[row]:
                continue
            tokens[row].append(token)
            if token in end_ids:
                reasons[row] = "stop"
            elif len(tokens[row]) >= budgets[row]:
                reasons[row] = "length"
        if all(reason is not None for reason in reasons):
            break
        # finished rows go on with padding (their output is no longer read), as transformers does
        step_ids = torch.tensor([[pad_id if done else token] for token, done in zip(chosen, finished_before)],
                                device=device)
        attention_mask = torch.cat([attention_mask, attention_mask.new_ones((len(prompts), 1))], dim=1)
        position_ids = position_ids[:, -1:] + 1
    return [Continuation(row_tokens, reason or "length") for row_tokens, reason in zip(tokens, reasons)]
