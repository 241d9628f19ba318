"""``lstm_cell``: one LSTM cell step on the last token's embedding, beside (with ``attention``) the encoder's
outputs weighted by how the previous hidden state attends to them; it starts from the encoder's final state."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt
from distrain.modules.attention import Attention
from distrain.modules.masked_softmax import weighted_sum
from distrain.zoo.seq2seq.modules.decoder_nets.decoder_net import DecoderNet
from distrain.zoo.seq2seq.modules.encoder_states import final_encoder_states


@DecoderNet.register("lstm_cell")
class LstmCellDecoderNet(DecoderNet):
    """``decoding_dim`` must be the encoder's output width: the cell's first hidden state is the encoder's."""

    def __init__(self, decoding_dim: PositiveInt, target_embedding_dim: PositiveInt,
                 attention: Attention | None = None, bidirectional_input: bool = False) -> None:
        super().__init__(decoding_dim, target_embedding_dim, decodes_parallel=False)
        self.attention = attention
        self.bidirectional_input = bidirectional_input
        self.decoder_cell = torch.nn.LSTMCell(target_embedding_dim + (decoding_dim if attention else 0), decoding_dim)

    def init_decoder_state(self, encoder_out: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        hidden = final_encoder_states(encoder_out["encoder_outputs"], encoder_out["source_mask"],
                                      self.bidirectional_input)
        return {"decoder_hidden": hidden, "decoder_context": hidden.new_zeros(hidden.shape[0], self.decoding_dim)}

    def forward(self, previous_state: dict[str, torch.Tensor], encoder_outputs: torch.Tensor,
                source_mask: torch.Tensor, previous_steps_predictions: torch.Tensor,
                previous_steps_mask: torch.Tensor | None = None) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        hidden, context = previous_state["decoder_hidden"], previous_state["decoder_context"]
        decoder_input = previous_steps_predictions[:, -1]
        if self.attention is not None:
            weights = self.attention(hidden, encoder_outputs, source_mask)
            decoder_input = torch.cat((weighted_sum(encoder_outputs, weights), decoder_input), -1)
        hidden, context = self.decoder_cell(decoder_input.float(), (hidden.float(), context.float()))
        return {"decoder_hidden": hidden, "decoder_context": context}, hidden
