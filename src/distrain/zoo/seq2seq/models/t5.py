"""AllenNLP's ``t5`` (Raffel et al. 2020): transformers' ``T5ForConditionalGeneration`` as a summariser.

AllenNLP wrapped its own T5 module (``allennlp.modules.transformer.t5``), the same computation under other
parameter names: :data:`ALLENNLP_NAMES` (its ``_pretrained_mapping`` per module, reversed) loads its archives.
Teacher forcing is T5's: the decoder reads the target shifted right behind the decoder start token (``<pad>``)
and predicts the whole target, its ``</s>`` included, with plain cross-entropy. AllenNLP averaged that loss over
every position of the padded batch, a padded one counting as a prediction of ``<pad>``; here padded positions do
not count (the mean over target tokens, as ``bart``'s), so the loss does not depend on how a global batch is
split among workers. The two agree whenever no target in a batch is padded (every target reaching
``target_max_tokens``, as all of allennlp-models' fixture summaries do at 54 tokens).

``checkpoint_wrapper`` wraps each encoder and decoder block (AllenNLP's ``fairscale`` with ``offload_to_cpu``:
see :mod:`distrain.modules.checkpoint_wrapper`). AllenNLP's ``weights_path`` is not ported: no zoo config names it.
"""

from __future__ import annotations

from typing import Any

import torch

from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.zoo.seq2seq.models.pretrained_seq2seq import PretrainedSeq2Seq
from distrain.models.model import Model
from distrain.modules.beam_search import BeamSearch
from distrain.modules.checkpoint_wrapper import CheckpointWrapper
from distrain.pretrained import PretrainedName, load_model

#: transformers' T5 module class -> {AllenNLP's name of a child: transformers' name}
ALLENNLP_NAMES = {
    "T5Stack": {"token_embeddings": "embed_tokens", "blocks": "block"},
    "T5LayerSelfAttention": {"self_attention": "SelfAttention"},
    "T5LayerCrossAttention": {"enc_dec_attention": "EncDecAttention"},
    "T5LayerFF": {"ff_proj": "DenseReluDense"},
    "T5Attention": {"query": "q", "key": "k", "value": "v", "output": "o"},
}


@Model.register("t5")
class T5(PretrainedSeq2Seq):
    """Decoding starts from the config's ``decoder_start_token_id`` (T5's ``<pad>``) and ends at ``</s>``;
    without ``beam_search``, AllenNLP's default for ``t5``: 3 beams, 50 steps."""

    label_smoothing = 0.0
    log_probabilities_key = "predicted_log_probs"
    default_beam = {"beam_size": 3, "max_steps": 50}
    allennlp_names = {r"t5\.token_embeddings": "t5.shared"}

    def __init__(self, vocab: Vocabulary, model_name: PretrainedName, beam_search: Lazy[BeamSearch] | None = None,
                 checkpoint_wrapper: CheckpointWrapper | None = None) -> None:
        super().__init__(vocab)
        self.t5 = load_model(model_name, "AutoModelForSeq2SeqLM")
        for module in self.t5.modules():  # AllenNLP's names, read by its archive's loading
            names = ALLENNLP_NAMES.get(type(module).__name__)
            if names is not None:
                module.allennlp_names = names
        self.checkpoint_wrapper = checkpoint_wrapper
        config = self.t5.config
        self.setup_decoding(beam_search, config.decoder_start_token_id, config.eos_token_id, config.pad_token_id,
                            model_name)

    @property
    def transformer(self) -> Any:
        return self.t5

    def activation_checkpoint_units(self) -> tuple[list[str], bool]:
        if self.checkpoint_wrapper is None:
            return [], False
        return ["t5.encoder.block.*", "t5.decoder.block.*"], self.checkpoint_wrapper.offload_to_cpu

    def decoder_inputs(self, target_ids: torch.Tensor, target_mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The target shifted right behind the start token; the labels are the target itself (AllenNLP's
        decoder mask is the target's, unshifted: the same for every position that is scored)."""
        start = torch.full_like(target_ids[:, :1], self.decoder_start_id)
        return torch.cat([start, target_ids[:, :-1]], dim=1), target_mask, target_ids, target_mask

    def shard_units(self) -> list[str]:
        return ["t5.encoder.block.*", "t5.decoder.block.*"]
