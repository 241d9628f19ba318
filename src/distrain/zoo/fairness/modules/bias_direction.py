"""Bias directions: the one direction of an embedding space that a binary concept (gender, say) spans, found
from seed words (AllenNLP's ``allennlp.fairness`` bias direction wrappers). A word's embedding is the mean of its
word pieces' rows, [CLS] and [SEP] included, as AllenNLP embeds them; each seed word counts in lower, title and
upper case."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from distrain.config.errors import Problem
from distrain.data.tokenizer import Tokenizer
from distrain.registry import Registrable


def word_pieces(words: list[str], tokenizer: Tokenizer) -> list[torch.Tensor]:
    """Each word's piece ids, in its three cases (AllenNLP's ``load_word_pairs`` calls the transformer's own
    tokenizer with its special tokens, whatever the ``tokenizer`` block says about them)."""
    hf_tokenizer = tokenizer.tokenizer
    return [torch.tensor(hf_tokenizer(case)["input_ids"])
            for word in words for case in (word.lower(), word.title(), word.upper())]


def read_word_pairs(path: str, tokenizer: Tokenizer) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """The piece ids of a JSON list of word pairs: the first words', the second words'."""
    pairs = json.loads(Path(path).read_text(encoding="utf-8"))
    return word_pieces([first for first, _ in pairs], tokenizer), word_pieces([second for _, second in pairs], tokenizer)


def word_pair_problems(path: str) -> list[Problem]:
    """What is wrong with a word-pairs file, before any data is read."""
    try:
        pairs = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return [Problem("", f"{path} is not a readable JSON file ({error.__class__.__name__})")]
    if not isinstance(pairs, list) or not all(
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(word, str) for word in pair) for pair in pairs):
        return [Problem("", f"{path} is not a JSON list of word pairs")]
    return []


def embed_words(embedding: torch.nn.Module, words: list[torch.Tensor]) -> torch.Tensor:
    """(words, dim): each word's mean piece embedding. ``forward`` is called directly, so the bias mitigator's
    hook on ``embedding`` does not run on its own seed words."""
    device = next(embedding.parameters()).device
    return torch.cat([embedding.forward(ids.to(device)).mean(dim=0, keepdim=True) for ids in words])


class BiasDirection(torch.nn.Module, Registrable):
    """A unit vector from two groups of seed words (``seed_word_pairs_file``, pieces from ``tokenizer``).

    ``noise`` (AllenNLP's 1e-10) is added to the seed embeddings so that uniformly initialised ones do not make
    the direction 0/0; it is drawn from a generator of its own, so every worker, and every load, draws the same."""

    def __init__(self, seed_word_pairs_file: str, tokenizer: Tokenizer, requires_grad: bool = False,
                 noise: float = 1e-10) -> None:
        super().__init__()
        self.ids1, self.ids2 = read_word_pairs(seed_word_pairs_file, tokenizer)
        self.requires_grad = requires_grad
        self.noise = noise

    @classmethod
    def argument_problems(cls, arguments) -> list[Problem]:
        return [Problem("seed_word_pairs_file", problem.message) for problem in
                word_pair_problems(arguments["seed_word_pairs_file"])]

    def forward(self, embedding: torch.nn.Module) -> torch.Tensor:
        """The direction in ``embedding``'s space now."""
        with torch.set_grad_enabled(self.requires_grad):
            generator = torch.Generator().manual_seed(0)
            first, second = embed_words(embedding, self.ids1), embed_words(embedding, self.ids2)
            first = first + self.noise * torch.randn(first.shape, generator=generator).to(first)
            second = second + self.noise * torch.randn(second.shape, generator=generator).to(second)
            direction = self.direction(first, second)
            return direction / torch.linalg.norm(direction)

    def direction(self, first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        """The (unnormalised) direction from the two groups' embeddings, (words, dim) each."""
        raise NotImplementedError
