"""What both kinds of encoder share: AllenNLP's ``stateful`` flag of its recurrent encoders, and the widths.

Kept as ``self.stateful`` so an encoder written against AllenNLP's base classes (``super().__init__(stateful=False)``)
builds; distrain's encoders carry no state from one batch to the next.
"""

from __future__ import annotations

import torch

from distrain.modules.sizes import Widths


class EncoderBase(torch.nn.Module, Widths):
    def __init__(self, stateful: bool = False) -> None:
        super().__init__()
        self.stateful = stateful
