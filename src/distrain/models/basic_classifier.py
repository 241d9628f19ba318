"""Text classifier: embed tokens → (optional seq2seq) → encode to a vector → optional feed-forward → logits.

Two forms: AllenNLP's (``text_field_embedder``, ``seq2seq_encoder``, ``seq2vec_encoder``) and distrain's
short one (``embedding_dim`` and ``encoder``), which is sugar for one ``embedding`` token embedder and a
seq2vec encoder. Sizes stated in the config are checked along the chain before any data is read.
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.metrics.categorical_accuracy import CategoricalAccuracy
from distrain.metrics.metric import Metric
from distrain.models.classification import ClassifierOutputs
from distrain.models.model import Model
from distrain.modules.feedforward import FeedForward
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.modules.sizes import chain_problems
from distrain.modules.text_field_embedder import (TextFieldEmbedder, TextFieldTensors, get_text_field_mask,
                                                  get_token_ids_from_text_field_tensors)

DEFAULT_EMBEDDING_DIM = 100


@Model.register("basic_classifier")
class BasicClassifier(ClassifierOutputs, Model):
    """Embed tokens, encode them to one vector, optional feed-forward, then label logits.

    Give ``text_field_embedder`` and ``seq2vec_encoder`` (AllenNLP), or ``embedding_dim`` (100 when neither
    it nor ``text_field_embedder`` is given) and ``encoder`` (distrain's short form), not both of a pair.
    """

    #: AllenNLP's names for the parts named otherwise here (see :mod:`distrain.experiment.archive.allennlp`)
    allennlp_names = {"_seq2vec_encoder": "encoder", "_classification_layer": "output"}
    #: the predictor an archive of this model answers with when none is named (AllenNLP's)
    default_predictor = "text_classifier"

    def __init__(
        self,
        vocab: Vocabulary,
        encoder: Lazy[Seq2VecEncoder] | None = None,
        embedding_dim: PositiveInt | None = None,
        feedforward: Lazy[FeedForward] | None = None,
        dropout: Probability = 0.0,
        namespace: str = "tokens",
        label_namespace: str = "labels",
        metrics: dict[str, Metric] | None = None,
        text_field_embedder: TextFieldEmbedder | None = None,
        seq2vec_encoder: Lazy[Seq2VecEncoder] | None = None,
        seq2seq_encoder: Lazy[Seq2SeqEncoder] | None = None,
        num_labels: PositiveInt | None = None,
    ) -> None:
        super().__init__(vocab, metrics if metrics is not None else {"accuracy": CategoricalAccuracy()})
        self.label_namespace, self.namespace = label_namespace, namespace
        self.use_label_names(label_namespace)
        if text_field_embedder is not None:
            self.text_field_embedder = text_field_embedder
            width = self.text_field_embedder.get_output_dim()
        else:
            width = embedding_dim or DEFAULT_EMBEDDING_DIM
            self.embedding = torch.nn.Embedding(vocab.size(namespace), width, padding_idx=0)
            if not self.embedding.weight.is_meta:  # AllenNLP's embedding init, so both forms start alike
                with torch.no_grad():
                    torch.nn.init.xavier_uniform_(self.embedding.weight)
                    self.embedding.weight[0].zero_()
        self.seq2seq_encoder = seq2seq_encoder.construct(input_dim=width) if seq2seq_encoder else None
        width = self.seq2seq_encoder.get_output_dim() if self.seq2seq_encoder else width
        self.encoder = (seq2vec_encoder or encoder).construct(input_dim=width)
        width = self.encoder.get_output_dim()
        self.feedforward = feedforward.construct(input_dim=width) if feedforward else None
        width = self.feedforward.get_output_dim() if self.feedforward else width
        self.dropout = torch.nn.Dropout(dropout) if dropout else torch.nn.Identity()
        self.output = torch.nn.Linear(width, num_labels or vocab.size(label_namespace))

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """Exactly one encoder form, and the stated widths along the chain (a subclass may take fewer keys)."""
        embedder, encoder = arguments.get("text_field_embedder"), arguments.get("seq2vec_encoder")
        problems = []
        if embedder is not None and arguments.get("embedding_dim") is not None:
            problems.append(Problem("embedding_dim", "give embedding_dim or text_field_embedder, not both"))
        if encoder is not None and arguments.get("encoder") is not None:
            problems.append(Problem("seq2vec_encoder", "give seq2vec_encoder or encoder, not both"))
        if encoder is None and arguments.get("encoder") is None:
            problems.append(Problem("seq2vec_encoder", "missing required key (or its short form, encoder)"))
        if problems:
            return problems
        if embedder is None:
            return cls._short_form_problems(arguments)
        width, source = embedder.cls.configured_output_dim(embedder), "the text_field_embedder"
        stages = [("seq2seq_encoder", arguments.get("seq2seq_encoder")), ("seq2vec_encoder", encoder),
                  ("feedforward", arguments.get("feedforward"))]
        return chain_problems(stages, width, source)[0]

    @classmethod
    def _short_form_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        encoder, width = arguments.get("seq2vec_encoder") or arguments.get("encoder"), arguments.get("embedding_dim")
        width = width or DEFAULT_EMBEDDING_DIM
        name = "seq2vec_encoder" if arguments.get("seq2vec_encoder") is not None else "encoder"
        if arguments.get("seq2seq_encoder") is None and isinstance(encoder, Lazy) and encoder.cls.input_size_key is None:
            problem = encoder.cls.input_dim_problem(encoder, width)
            if problem:  # distrain's own encoders: the short form's size is the one to change
                return [Problem("embedding_dim", f"{problem}, got {width}")]
        stages = [("seq2seq_encoder", arguments.get("seq2seq_encoder")), (name, encoder),
                  ("feedforward", arguments.get("feedforward"))]
        return chain_problems(stages, width, "the model's embedding_dim")[0]

    def forward(self, tokens: TextFieldTensors | torch.Tensor, label: torch.Tensor | None = None,
                **_: Any) -> dict[str, torch.Tensor]:
        mask = get_text_field_mask(tokens)
        if hasattr(self, "text_field_embedder"):
            embedded = self.text_field_embedder(tokens)
        else:  # the short form: one id tensor (an indexed field's only tensor, if the reader indexes)
            ids = tokens if isinstance(tokens, torch.Tensor) else _only_tensor(tokens)
            embedded = self.embedding(ids)
        if self.seq2seq_encoder is not None:
            embedded = self.seq2seq_encoder(embedded, mask)
        encoded = self.encoder(embedded, mask)
        if self.feedforward is not None:
            encoded = self.feedforward(encoded)
        logits = self.output(self.dropout(encoded))
        output = self.classify(logits, label)
        output["probs"] = torch.softmax(logits, dim=-1)
        try:
            output["token_ids"] = get_token_ids_from_text_field_tensors(tokens)
        except ValueError:  # no indexer gives ids (ELMo's characters alone): AllenNLP's output without them
            pass
        return output

    def make_output_human_readable(self, output: dict[str, Any]) -> dict[str, Any]:
        """AllenNLP's form: the forward pass's outputs with each item's ``label`` and its ``tokens`` (its ids
        looked up in ``namespace``, padding included; left out where the vocabulary has no such namespace, as
        for a pretrained transformer's own ids, which distrain does not copy into the vocabulary)."""
        labels = self.vocab.tokens(self.label_namespace)
        readable = dict(output)
        readable["label"] = [labels[int(index)] for index in output["probs"].argmax(dim=-1)]
        if "token_ids" in output and self.namespace in self.vocab.namespaces():
            words = self.vocab.tokens(self.namespace)
            readable["tokens"] = [[words[int(index)] if int(index) < len(words) else str(int(index)) for index in row]
                                  for row in output["token_ids"]]
        return readable


def _only_tensor(tokens: TextFieldTensors) -> torch.Tensor:
    tensors = [tensor for indexed in tokens.values() for tensor in indexed.values()]
    if len(tensors) != 1:
        raise ValueError("embedding_dim embeds one id tensor; this text field has several: use text_field_embedder")
    return tensors[0]
