"""AllenNLP's ``SampledSoftmaxLoss``: in training, the target's logit against ``num_samples`` distinct words
drawn from a log-uniform (Zipfian) distribution, each logit corrected by the log of its expected count (TensorFlow's
``log_uniform_candidate_sampler``); in evaluation the full softmax. The sum over targets is returned.

AllenNLP draws from numpy's global generator, so each worker would draw its own words and two workers would not
train as one. Here the draw of the ``k``-th training call is a pure function of ``(seed, k)``: ``seed`` is taken
from torch's generator when the module is built (the same on every worker, as the initial weights are), and
every worker makes the same calls per step (one per micro-batch, whatever its share, even an empty one), so all
use the same words and the summed loss is the one-worker loss. The seed and the call count travel in the state
dict (the buffer ``draws``, written when the state dict is taken), so a run resumed from a checkpoint draws the
words the uninterrupted run draws; a state dict without them (an archive from before) leaves them as built.
"""

from __future__ import annotations

import math

import numpy as np
import torch


def log_uniform_choice(rng: np.random.Generator, num_words: int, num_samples: int) -> tuple[np.ndarray, int]:
    """``num_samples`` distinct ids from ``[0, num_words)``, P(i) ∝ log((i + 2) / (i + 1)), drawn as AllenNLP's
    ``_choice`` does (buffers of ``num_samples`` draws until enough distinct ones), and how many draws it took."""
    draws = np.empty(0, dtype=np.int64)
    while True:
        buffer = np.exp(rng.random(num_samples) * math.log(num_words + 1)).astype("int64") - 1
        draws = np.concatenate([draws, np.clip(buffer, 0, num_words - 1)])
        _, first = np.unique(draws, return_index=True)
        if len(first) >= num_samples:
            chosen = np.sort(first)[:num_samples]
            return draws[chosen], int(chosen[-1]) + 1


class SampledSoftmaxLoss(torch.nn.Module):
    """``softmax_w`` is ``(num_words, embedding_dim)`` (AllenNLP's layout for this loss); ``sparse`` keeps both
    as sparse-gradient embeddings, as AllenNLP does."""

    def __init__(self, num_words: int, embedding_dim: int, num_samples: int, sparse: bool = False) -> None:
        super().__init__()
        if num_samples >= num_words:
            raise ValueError(f"num_samples ({num_samples}) must be below the vocabulary size ({num_words})")
        self.sparse = sparse
        if sparse:
            self.softmax_w = torch.nn.Embedding(num_words, embedding_dim, sparse=True)
            self.softmax_b = torch.nn.Embedding(num_words, 1, sparse=True)
            if not self.softmax_w.weight.is_meta:
                torch.nn.init.normal_(self.softmax_w.weight, 0.0, 1.0 / math.sqrt(embedding_dim))
                torch.nn.init.zeros_(self.softmax_b.weight)
        else:
            self.softmax_w = torch.nn.Parameter(torch.randn(num_words, embedding_dim) / math.sqrt(embedding_dim))
            self.softmax_b = torch.nn.Parameter(torch.zeros(num_words))
        self.num_words, self.num_samples = num_words, num_samples
        self.seed = int(torch.randint(0, 2**62, ()).item())
        self.calls = 0
        # the live values are the Python ints above (reading a buffer each call would wait on a GPU); the
        # buffer carries them into and out of state dicts (checkpoints, archives)
        self.register_buffer("draws", self.draw_state(), persistent=True)
        self.register_state_dict_pre_hook(_write_draws)
        self._register_load_state_dict_pre_hook(_default_draws, with_module=True)
        self.register_load_state_dict_post_hook(_read_draws)

    def draw_state(self) -> torch.Tensor:
        """``[seed, calls]``: what the ``draws`` buffer carries."""
        return torch.tensor([self.seed, self.calls])

    def allennlp_derived(self) -> dict[str, torch.Tensor]:
        """An AllenNLP archive holds no draw state (AllenNLP draws from numpy's global generator): this module's own."""
        return {"draws": self.draw_state()}

    def weights(self) -> tuple[torch.Tensor, torch.Tensor]:
        if self.sparse:
            return self.softmax_w.weight, self.softmax_b.weight.squeeze(1)
        return self.softmax_w, self.softmax_b

    def forward(self, embeddings: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        if not self.training:
            weight, bias = self.weights()
            log_probs = torch.log_softmax(embeddings @ weight.t() + bias, dim=-1)
            return torch.nn.functional.nll_loss(log_probs, targets.long(), reduction="sum")
        rng = np.random.default_rng([self.seed, self.calls])
        self.calls += 1  # counted even when this worker has no targets, so every worker stays in step
        if embeddings.shape[0] == 0:
            return embeddings.sum() * 0.0
        return self._sampled(embeddings, targets.long(), *log_uniform_choice(rng, self.num_words, self.num_samples))

    def _sampled(self, embeddings: torch.Tensor, targets: torch.Tensor, sampled: np.ndarray, tries: int) -> torch.Tensor:
        sampled_ids = torch.from_numpy(sampled).to(targets.device)
        all_ids = torch.cat([targets, sampled_ids])
        if self.sparse:
            all_w, all_b = self.softmax_w(all_ids), self.softmax_b(all_ids).squeeze(1)
        else:
            all_w = torch.nn.functional.embedding(all_ids, self.softmax_w)
            all_b = torch.nn.functional.embedding(all_ids, self.softmax_b.unsqueeze(1)).squeeze(1)
        count = targets.size(0)
        true_logits = (all_w[:count] * embeddings).sum(1) + all_b[:count] - torch.log(self._expected(targets, tries) + 1e-13)
        sampled_logits = (embeddings @ all_w[count:].t() + all_b[count:]
                          - torch.log(self._expected(sampled_ids, tries) + 1e-13))
        sampled_logits = sampled_logits.masked_fill(sampled_ids == targets.unsqueeze(1), -10000.0)
        logits = torch.cat([true_logits.unsqueeze(1), sampled_logits], dim=1)
        return -torch.log_softmax(logits, dim=1)[:, 0].sum()

    def _expected(self, ids: torch.Tensor, tries: int) -> torch.Tensor:
        """How often ``tries`` draws would pick each id: ``1 - (1 - p) ** tries``."""
        probability = torch.log((ids.float() + 2.0) / (ids.float() + 1.0)) / math.log(self.num_words + 1)
        return -(torch.exp(tries * torch.log1p(-probability)) - 1.0)


def _write_draws(module: SampledSoftmaxLoss, prefix: str, keep_vars: bool) -> None:
    module.draws.copy_(module.draw_state())


def _default_draws(module: SampledSoftmaxLoss, state_dict: dict, prefix: str, *_) -> None:
    state_dict.setdefault(prefix + "draws", module.draw_state())


def _read_draws(module: SampledSoftmaxLoss, incompatible_keys) -> None:
    module.seed, module.calls = (int(value) for value in module.draws.tolist())
