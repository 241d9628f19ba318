"""AllenNLP's ``PytorchSeq2VecWrapper``: a torch recurrent layer the user built (``batch_first=True``) giving its
last layer's final state, as distrain's ``lstm``/``gru`` seq2vec encoder does (zeros for an empty sequence);
``stateful=True`` keeps each row's state for the next batch, as the seq2seq wrapper does."""

from __future__ import annotations

import torch

from distrain.allennlp.modules.encoder_base import _EncoderBase
from distrain.allennlp.modules.seq2seq_encoders.pytorch_seq2seq_wrapper import (refuse_given_state, rnn_widths,
                                                                                 wrapped_rnn)
from distrain.modules.seq2vec_encoders.rnn import _RnnSeq2Vec


class PytorchSeq2VecWrapper(_RnnSeq2Vec, _EncoderBase):
    attribute = "_module"

    def __init__(self, module: torch.nn.Module, stateful: bool = False) -> None:
        torch.nn.Module.__init__(self)
        self._module = wrapped_rnn(self, module, stateful)
        self.input_dim, self.output_dim = rnn_widths(module)

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor | None = None,
                hidden_state: torch.Tensor | None = None) -> torch.Tensor:
        refuse_given_state(self, hidden_state)
        if mask is None:  # AllenNLP's: the module's output at the last step, each direction's own
            return self._module(inputs, hidden_state)[0][:, -1, :]
        if self.stateful:
            _, hidden = self.run_keeping_state(self._module, inputs, mask)
        else:
            lengths = mask.sum(1).clamp(min=1).cpu()
            packed = torch.nn.utils.rnn.pack_padded_sequence(inputs, lengths, batch_first=True, enforce_sorted=False)
            _, hidden = self._module(packed, hidden_state)
        hidden = hidden[0] if isinstance(hidden, tuple) else hidden
        both_ways = getattr(self._module, "bidirectional", False)
        final = torch.cat([hidden[-2], hidden[-1]], dim=-1) if both_ways else hidden[-1]
        return final * mask.any(1, keepdim=True).to(final.dtype)


__all__ = ["PytorchSeq2VecWrapper"]
