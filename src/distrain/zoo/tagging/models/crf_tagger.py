"""A tagger whose tags are decoded together by a linear-chain CRF (AllenNLP's ``crf_tagger``), so with
``constrain_crf_decoding`` the predicted tags always form legal spans of ``label_encoding``.

The loss is the negative log-likelihood averaged over sentences (AllenNLP summed it, which ties the
step size to the batch size); each worker's sentences count once however the batch is split.
"""

from __future__ import annotations

from typing import Any, Literal, Mapping

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model
from distrain.models.tagging import TaggerOutputs, tagger_metrics
from distrain.zoo.tagging.modules.conditional_random_field import ConditionalRandomField, allowed_transitions
from distrain.modules.feedforward import FeedForward
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import chain_problems, output_dim
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors, get_text_field_mask


@Model.register("crf_tagger")
class CrfTagger(TaggerOutputs, Model):
    """``text_field_embedder`` → dropout → ``encoder`` → dropout → optional ``feedforward`` → tag scores → CRF."""

    default_predictor = "sentence_tagger"

    #: AllenNLP saves the CRF's constraint mask; distrain derives it from the label encoding
    allennlp_unused = (r"^crf\._constraint_mask$",)

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder, encoder: Lazy[Seq2SeqEncoder],
                 label_namespace: str = "labels", feedforward: Lazy[FeedForward] | None = None,
                 label_encoding: Literal["BIO", "IOB1", "BIOUL", "BMES"] | None = None,
                 include_start_end_transitions: bool = True, constrain_crf_decoding: bool | None = None,
                 calculate_span_f1: bool | None = None, dropout: Probability | None = None,
                 verbose_metrics: bool = False, top_k: PositiveInt = 1) -> None:
        super().__init__(vocab, tagger_metrics(calculate_span_f1, label_encoding))
        self.build_encoding(text_field_embedder, encoder, label_namespace, verbose_metrics)
        width = self.encoder.get_output_dim()
        self.feedforward = feedforward.construct(input_dim=width) if feedforward else None
        width = self.feedforward.get_output_dim() if self.feedforward else width
        self.dropout = torch.nn.Dropout(dropout) if dropout else torch.nn.Identity()
        labels = vocab.tokens(label_namespace)
        self.tag_projection_layer = torch.nn.Linear(width, len(labels))
        if constrain_crf_decoding is None:
            constrain_crf_decoding = label_encoding is not None
        constraints = allowed_transitions(label_encoding, labels) if constrain_crf_decoding else None
        self.crf = ConditionalRandomField(len(labels), constraints, include_start_end_transitions)

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """Constrained decoding and span F1 need the encoding; k-best decoding is not built; stated widths agree."""
        problems = []
        encoding = arguments.get("label_encoding")
        for key in ("constrain_crf_decoding", "calculate_span_f1"):
            if arguments.get(key) and encoding is None:
                problems.append(Problem(key, "needs label_encoding (BIO, IOB1, BIOUL or BMES)"))
        if (arguments.get("top_k") or 1) != 1:
            problems.append(Problem("top_k", "only 1 is supported: the Viterbi decoder keeps the single best path"))
        embedder = arguments.get("text_field_embedder")
        if embedder is not None:
            stages = [("encoder", arguments.get("encoder")), ("feedforward", arguments.get("feedforward"))]
            problems += chain_problems(stages, output_dim(embedder), "the text_field_embedder")[0]
        return problems

    def forward(self, tokens: TextFieldTensors, tags: torch.Tensor | None = None, metadata: list | None = None,
                **_: Any) -> dict[str, Any]:
        mask = get_text_field_mask(tokens)
        encoded = self.dropout(self.encoder(self.dropout(self.text_field_embedder(tokens)), mask))
        if self.feedforward is not None:
            encoded = self.feedforward(encoded)
        logits = self.tag_projection_layer(encoded)
        paths = self.crf.viterbi_tags(logits, mask)
        predicted = torch.zeros(mask.shape, dtype=torch.long, device=logits.device)
        for row, (path, _) in enumerate(paths):
            predicted[row, : len(path)] = torch.tensor(path, device=logits.device)
        output: dict[str, Any] = {"logits": logits, "mask": mask, "tag_ids": predicted, "metadata": metadata}
        if tags is not None:
            output["loss"] = -self.crf(logits, tags, mask).mean()
            # every metric reads the decoded path, as AllenNLP's: the accuracies its one-hot scores (so accuracy3
            # counts the path's tag and the first other tags torch.topk picks among the zeros), span F1 its ids
            one_hot = torch.nn.functional.one_hot(predicted, logits.shape[-1]).to(logits.dtype)
            for name, metric in self.metrics.items():
                metric(one_hot if name.startswith("accuracy") else predicted, tags, mask)
        return output
