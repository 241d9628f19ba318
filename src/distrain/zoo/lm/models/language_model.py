"""AllenNLP's ``language_model`` (allennlp-models v2.10.1): a contextualizer over non-contextual token
embeddings predicts the next token (and, ``bidirectional``, the previous one with the backward half of its
output) through a full softmax or, with ``num_samples``, a sampled one.

The targets are the ``tokens`` indexer's ids (a ``tokens`` embedder may be ``empty``: the model can read
characters only). ``loss`` is the mean negative log-likelihood per target (for a bidirectional model, the mean of
the two directions), and the trainer weights it by ``loss_weight``, the number of targets, so a global batch split
among workers has the one-worker loss. ``perplexity`` is exp of that token-weighted mean over everything seen:
AllenNLP's is exp of the mean of the batches' losses, the same over one batch.
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.models.masked_language_model import TokenPerplexity
from distrain.models.model import Model
from distrain.zoo.lm.modules.sampled_softmax_loss import SampledSoftmaxLoss
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import output_dim
from distrain.zoo.lm.modules.softmax_loss import SoftmaxLoss
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors, get_text_field_mask


@Model.register("language_model")
class LanguageModel(Model):
    """``contextualizer`` must look only backwards (forwards for its second half when ``bidirectional``) and be
    bidirectional exactly when the model is. Outputs: ``loss``, ``forward_loss`` (and ``backward_loss``),
    ``lm_embeddings`` (the contextualizer's output, before ``dropout``: a list of layers where it returns all, as
    for the language model embedders, which then give no targets), ``noncontextual_token_embeddings``, ``mask``.
    ``initializer`` is not supported."""

    #: a buffer AllenNLP keeps only for old archives
    allennlp_unused = (r"(^|\.)_last_average_loss$", r"\._position\.positional_encoding$")
    #: ``bidirectional`` when the config does not say
    always_bidirectional = False

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder,
                 contextualizer: Lazy[Seq2SeqEncoder], dropout: Probability | None = None,
                 num_samples: PositiveInt | None = None, sparse_embeddings: bool = False,
                 bidirectional: bool = False) -> None:
        super().__init__(vocab)
        self.text_field_embedder = text_field_embedder
        width = text_field_embedder.get_output_dim()
        takes_width = "input_dim" in getattr(contextualizer.cls, "runtime_args", ("input_dim",))
        self.contextualizer = contextualizer.construct(**({"input_dim": width} if takes_width else {}))
        if self.contextualizer.is_bidirectional() is not bidirectional:
            raise ValueError(f"the contextualizer is {'' if self.contextualizer.is_bidirectional() else 'not '}"
                             f"bidirectional, the language model {'is' if bidirectional else 'is not'}")
        self.bidirectional = bidirectional
        self.forward_dim = self.contextualizer.get_output_dim() // (2 if bidirectional else 1)
        num_words = vocab.get_vocab_size("tokens")
        if num_samples is not None:
            self.softmax_loss: torch.nn.Module = SampledSoftmaxLoss(num_words, self.forward_dim, num_samples,
                                                                    sparse=sparse_embeddings)
        else:
            self.softmax_loss = SoftmaxLoss(num_words, self.forward_dim)
        self.dropout = torch.nn.Dropout(dropout) if dropout else torch.nn.Identity()
        self.perplexity = TokenPerplexity()

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        problems = super().argument_problems(arguments)
        contextualizer = arguments.get("contextualizer")
        if isinstance(contextualizer, Lazy) and contextualizer.cls is not None:
            from distrain.zoo.lm.modules.bidirectional_lm_transformer import (
                BidirectionalLanguageModelTransformer)
            stated = contextualizer.argument("bidirectional", None)
            if contextualizer.cls is BidirectionalLanguageModelTransformer:
                stated = True
            if stated is not None and bool(stated) is not bool(arguments.get("bidirectional", cls.always_bidirectional)):
                problems.append(Problem("bidirectional", f"must match the contextualizer's bidirectionality ({stated})"))
        if arguments.get("num_samples") is None and arguments.get("sparse_embeddings"):
            problems.append(Problem("sparse_embeddings", "applies only to the sampled softmax (set num_samples)"))
        return problems

    def num_layers(self) -> int:
        """The contextualizer's layers and the non-contextual one (what an embedder mixes)."""
        if not hasattr(self.contextualizer, "num_layers"):
            raise ValueError(f"{type(self.contextualizer).__name__} does not say how many layers it has")
        return self.contextualizer.num_layers + 1

    def delete_softmax(self) -> None:
        """Drop the softmax weights: an embedder computes no loss (AllenNLP saves no softmax beside it)."""
        self.softmax_loss = None

    def forward(self, source: TextFieldTensors, **_: Any) -> dict[str, Any]:
        mask = get_text_field_mask(source)
        embeddings = self.text_field_embedder(source)
        contextual = self.contextualizer(embeddings, mask)
        output: dict[str, Any] = {"lm_embeddings": contextual, "noncontextual_token_embeddings": embeddings,
                                  "mask": mask}
        token_ids = source.get("tokens", {}).get("tokens")
        if token_ids is None:
            return output
        if isinstance(contextual, list) or self.softmax_loss is None:
            raise ValueError("a loss needs the contextualizer's top layer and the softmax (not an embedder's model)")
        forward_targets = torch.zeros_like(token_ids)
        forward_targets[:, :-1] = token_ids[:, 1:]
        directions = self.dropout(contextual)
        if self.bidirectional:
            backward_targets = torch.zeros_like(token_ids)
            backward_targets[:, 1:] = token_ids[:, :-1]
            forward_part, backward_part = directions.chunk(2, -1)
            losses = [self._loss(forward_part, forward_targets), self._loss(backward_part, backward_targets)]
        else:
            losses = [self._loss(directions, forward_targets)]
        num_targets = (forward_targets > 0).sum().float()  # not the activations' dtype: bfloat16 under use_amp
        total = sum(losses) / len(losses)
        count = num_targets.clamp(min=1)
        output.update({"loss": total / count, "forward_loss": losses[0] / count, "loss_weight": num_targets})
        if self.bidirectional:
            output["backward_loss"] = losses[1] / count
        self.perplexity(total.detach() / count, count=num_targets)
        return output

    def _loss(self, embeddings: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The summed loss of the positions with a target (ids less one: the softmax has no padding row)."""
        mask = targets > 0
        return self.softmax_loss(embeddings[mask], targets[mask] - 1)


@Model.register("bidirectional-language-model")
class BidirectionalLanguageModel(LanguageModel):
    """AllenNLP's ``bidirectional-language-model``: ``language_model`` with ``bidirectional`` true."""

    always_bidirectional = True

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder,
                 contextualizer: Lazy[Seq2SeqEncoder], dropout: Probability | None = None,
                 num_samples: PositiveInt | None = None, sparse_embeddings: bool = False) -> None:
        super().__init__(vocab, text_field_embedder, contextualizer, dropout, num_samples, sparse_embeddings,
                         bidirectional=True)
