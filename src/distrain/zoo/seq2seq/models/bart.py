"""AllenNLP's ``bart`` (Lewis et al. 2020): transformers' ``BartForConditionalGeneration`` as a summariser.

Its weights keep transformers' names under ``bart``, as AllenNLP's archives hold them. AllenNLP's optional
``encoder`` (a seq2seq encoder in place of BART's) is not ported: the zoo's configs do not name it, and the
config check refuses the key.
"""

from __future__ import annotations

from typing import Any

from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.zoo.seq2seq.models.pretrained_seq2seq import PretrainedSeq2Seq
from distrain.models.model import Model
from distrain.modules.beam_search import BeamSearch
from distrain.pretrained import PretrainedName, load_model


@Model.register("bart")
class Bart(PretrainedSeq2Seq):
    """Decoding starts from the config's ``decoder_start_token_id`` (BART's ``</s>``) and ends at ``</s>``."""

    def __init__(self, vocab: Vocabulary, model_name: PretrainedName, beam_search: Lazy[BeamSearch] | None = None) -> None:
        super().__init__(vocab)
        self.bart = load_model(model_name, "AutoModelForSeq2SeqLM")
        config = self.bart.config
        start = config.decoder_start_token_id if config.decoder_start_token_id is not None else config.bos_token_id
        self.setup_decoding(beam_search, start, config.eos_token_id, config.pad_token_id, model_name)

    @property
    def transformer(self) -> Any:
        return self.bart
