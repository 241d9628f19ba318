"""``cnn``: convolutions of several widths over the tokens, max-pooled over time, concatenated and
(AllenNLP's ``output_dim``) projected, as AllenNLP's ``cnn``: each filter pools only over the windows that lie
inside the text (none of its padding), and a filter with no such window (a text shorter than it) gives 0. A batch
shorter than the widest filter is padded up to it, so no ``min_padding_length`` is needed."""

from __future__ import annotations

from typing import Annotated, Literal

import torch
from annotated_types import MinLen

from distrain.config.constraints import PositiveInt
from distrain.config.lazy import Lazy
from distrain.modules.feedforward import ACTIVATIONS
from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.modules.sizes import resolve_input_dim


@Seq2VecEncoder.register("cnn")
class CnnEncoder(Seq2VecEncoder):
    """Convolutions of several widths, max-pooled over the windows inside the text, concatenated (and projected)."""

    #: AllenNLP's names for the parts named otherwise here (see :mod:`distrain.experiment.archive.allennlp`)
    allennlp_names = {r"conv_layer_(\d+)": r"convolutions.\1", "projection_layer": "projection"}

    input_size_key = "embedding_dim"

    def __init__(
        self, input_dim: int | None = None, num_filters: PositiveInt = 64,
        ngram_filter_sizes: Annotated[list[PositiveInt], MinLen(1)] = [2, 3, 4, 5],  # noqa: B006
        embedding_dim: PositiveInt | None = None,
        conv_layer_activation: Literal[tuple(ACTIVATIONS)] = "relu",  # type: ignore[valid-type]
        output_dim: PositiveInt | None = None,
    ) -> None:
        super().__init__()
        self.input_dim = resolve_input_dim(embedding_dim, input_dim, "embedding_dim")
        self.convolutions = torch.nn.ModuleList(
            torch.nn.Conv1d(self.input_dim, num_filters, size) for size in ngram_filter_sizes
        )
        self.activation = ACTIVATIONS[conv_layer_activation]()
        pooled = num_filters * len(ngram_filter_sizes)
        self.projection = torch.nn.Linear(pooled, output_dim) if output_dim else None
        self.output_dim = output_dim or pooled

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return encoder.argument("output_dim") or encoder.argument("num_filters") * len(encoder.argument("ngram_filter_sizes"))

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        if mask is None:  # AllenNLP's encoders take a sequence without padding so
            mask = torch.ones(inputs.shape[:2], dtype=torch.bool, device=inputs.device)
        inputs = (inputs * mask.unsqueeze(-1).to(inputs.dtype)).transpose(1, 2)
        widest = max(conv.kernel_size[0] for conv in self.convolutions)
        if inputs.shape[2] < widest:  # padding is masked below, so it only lets the convolution run
            inputs = torch.nn.functional.pad(inputs, (0, widest - inputs.shape[2]))
        lengths = mask.sum(dim=1, keepdim=True)
        pooled = []
        for conv in self.convolutions:
            activations = self.activation(conv(inputs))  # (batch, filters, windows)
            starts = torch.arange(activations.shape[2], device=inputs.device)[None, :]
            inside = (starts + conv.kernel_size[0] <= lengths)[:, None, :]  # the window's last token is text
            best = activations.masked_fill(~inside, float("-inf")).max(dim=2).values
            pooled.append(torch.where(inside.any(dim=2), best, torch.zeros_like(best)))
        pooled = torch.cat(pooled, dim=1)
        return self.projection(pooled) if self.projection is not None else pooled
