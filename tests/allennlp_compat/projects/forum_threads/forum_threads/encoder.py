import torch

from allennlp.modules.seq2vec_encoders import Seq2VecEncoder
from allennlp.nn import util


@Seq2VecEncoder.register("max_pool")
class MaxPoolEncoder(Seq2VecEncoder):
    """The largest value of each dimension over the unmasked tokens."""

    def __init__(self, embedding_dim: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self._embedding_dim = embedding_dim

    def get_input_dim(self) -> int:
        return self._embedding_dim

    def get_output_dim(self) -> int:
        return self._embedding_dim

    def forward(self, tokens: torch.Tensor, mask: torch.BoolTensor = None) -> torch.Tensor:
        if mask is None:
            return tokens.max(dim=1)[0]
        return util.masked_max(tokens, mask.unsqueeze(-1), dim=1)
