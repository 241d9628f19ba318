"""What allennlp-models' ``next_token_lm`` and ``masked_language_model`` share: token embeddings, an optional
contextualizer, a language-model head scoring the words to predict, ``perplexity``, and the readable outputs' word
lookup in ``target_namespace``."""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.models.masked_language_model import TokenPerplexity
from distrain.models.model import Model
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import chain_problems
from distrain.modules.token_embedders.pretrained_transformer import PretrainedTransformerEmbedder
from distrain.pretrained import load_tokenizer
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors, get_text_field_mask
from distrain.zoo.lm.modules.language_model_head import LanguageModelHead


class HeadLanguageModel(Model):
    """``perplexity`` is exp of the instance-weighted mean loss (AllenNLP's: of the batches' mean loss, the same
    over batches of one size). ``dropout`` applies to the hidden states the head reads."""

    #: what AllenNLP's archive of a transformer embedder holds beside the weights used here (the position ids
    #: transformers computes, the pooler no output reads)
    allennlp_unused = (r"\.position_ids$", r"\.pooler\.")

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder,
                 language_model_head: LanguageModelHead, contextualizer: Lazy[Seq2SeqEncoder] | None = None,
                 target_namespace: str = "bert", dropout: Probability = 0.0) -> None:
        super().__init__(vocab, {"perplexity": TokenPerplexity()})
        self.text_field_embedder = text_field_embedder
        width = text_field_embedder.get_output_dim()
        self.contextualizer = contextualizer.construct(input_dim=width) if contextualizer else None
        self.language_model_head = language_model_head
        self.target_namespace = target_namespace
        self.dropout = torch.nn.Dropout(dropout)

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        problems = super().argument_problems(arguments)
        embedder, contextualizer = arguments.get("text_field_embedder"), arguments.get("contextualizer")
        if isinstance(embedder, Lazy) and embedder.cls is not None and contextualizer is not None:
            width = embedder.cls.configured_output_dim(embedder)
            problems += chain_problems([("contextualizer", contextualizer)], width, "the text_field_embedder")[0]
        return problems

    def contextual_embeddings(self, tokens: TextFieldTensors) -> tuple[torch.Tensor, torch.Tensor]:
        """``(embeddings (batch, length, width), mask)``: the embedder's, contextualized where a contextualizer is
        configured."""
        mask = get_text_field_mask(tokens)
        embeddings = self.text_field_embedder(tokens)
        if self.contextualizer is not None:
            embeddings = self.contextualizer(embeddings, mask)
        return embeddings, mask

    def count_loss(self, loss: torch.Tensor, count: int) -> None:
        self.metrics["perplexity"](loss.detach(), count=count)

    def words(self, ids: Any) -> list:
        """Nested lists of ids as the words of ``target_namespace``. Where the vocabulary lacks that namespace and
        the embedder is one pretrained transformer, its tokenizer's word pieces (AllenNLP's transformer indexer
        copies them into its namespace, ``tags``, as it indexes; distrain does not); an id neither knows stays its
        number, as a string (AllenNLP failed there)."""
        if self.target_namespace in self.vocab.namespaces():
            known: list[str] | None = self.vocab.tokens(self.target_namespace)
        else:
            known = self._word_pieces()
        return _looked_up(ids.tolist() if isinstance(ids, torch.Tensor) else ids, known)

    def _word_pieces(self) -> list[str] | None:
        """The word pieces of the embedder's transformer by id, if it is a single pretrained transformer."""
        names = getattr(self.text_field_embedder, "names", [])
        embedder = self.text_field_embedder.embedder(names[0]) if len(names) == 1 else None
        if not isinstance(embedder, PretrainedTransformerEmbedder):
            return None
        tokenizer = load_tokenizer(embedder.model_name)
        return tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))


def _looked_up(ids: Any, known: list[str] | None) -> Any:
    """Each id of nested lists as its entry of ``known``, or as its number where there is none."""
    if isinstance(ids, list):
        return [_looked_up(item, known) for item in ids]
    index = int(ids)
    return known[index] if known is not None and 0 <= index < len(known) else str(index)
