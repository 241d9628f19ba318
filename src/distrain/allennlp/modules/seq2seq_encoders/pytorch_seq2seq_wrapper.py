"""AllenNLP's ``PytorchSeq2SeqWrapper``: a torch recurrent layer the user built (``batch_first=True``) run as
distrain's ``lstm``/``gru`` seq2seq encoder runs its own (each sequence's unpadded part, zeros at padding);
``stateful=True`` starts each batch row from the state that row ended the last batch with (:class:`_EncoderBase`)."""

from __future__ import annotations

import torch

from distrain.allennlp.modules.encoder_base import _EncoderBase
from distrain.errors import ConfigError
from distrain.modules.seq2seq_encoders.rnn import _RnnSeq2Seq


def wrapped_rnn(wrapper: _EncoderBase, module: torch.nn.Module, stateful: bool) -> torch.nn.Module:
    """``module`` if it can be wrapped (batch first), with the wrapper's state set up."""
    if not getattr(module, "batch_first", True):
        raise ConfigError(f"{type(wrapper).__name__}: the wrapped module must be built with batch_first=True")
    wrapper.stateful, wrapper._states = stateful, None
    return module


def refuse_given_state(wrapper: _EncoderBase, hidden_state: object) -> None:
    """A stateful wrapper starts from the state it kept; one given as well is a mistake."""
    if wrapper.stateful and hidden_state is not None:
        raise ValueError(f"{type(wrapper).__name__} is stateful: it cannot also be given a hidden state")


def rnn_widths(module: torch.nn.Module) -> tuple[int, int]:
    """A torch RNN's input width and what comes out of it (both directions' states side by side); a module
    without ``bidirectional`` (AllenNLP's ``StackedAlternatingLstm``) reads one way."""
    return module.input_size, module.hidden_size * (2 if getattr(module, "bidirectional", False) else 1)


class PytorchSeq2SeqWrapper(_RnnSeq2Seq, _EncoderBase):
    def __init__(self, module: torch.nn.Module, stateful: bool = False) -> None:
        torch.nn.Module.__init__(self)
        self.rnn = wrapped_rnn(self, module, stateful)
        self.input_dim, self.output_dim = rnn_widths(module)

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor | None = None,
                hidden_state: torch.Tensor | tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
        refuse_given_state(self, hidden_state)
        if mask is None:
            return self.rnn(inputs, hidden_state)[0]
        if self.stateful:
            output, _ = self.run_keeping_state(self.rnn, inputs, mask)
            return output * mask.unsqueeze(-1).to(output.dtype)
        lengths = mask.sum(1).clamp(min=1).cpu()
        packed = torch.nn.utils.rnn.pack_padded_sequence(inputs, lengths, batch_first=True, enforce_sorted=False)
        output, _ = self.rnn(packed, hidden_state)
        output, _ = torch.nn.utils.rnn.pad_packed_sequence(output, batch_first=True, total_length=inputs.shape[1])
        return output * mask.unsqueeze(-1).to(output.dtype)


__all__ = ["PytorchSeq2SeqWrapper"]
