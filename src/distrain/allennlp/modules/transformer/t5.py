"""``allennlp.modules.transformer.t5``: T5 (Raffel et al., 2020), an encoder-decoder with a language-model head.

Trained with ``labels`` (teacher forcing: the decoder reads the labels shifted right by one, ``loss`` is the
cross entropy of its predictions); in eval mode it also decodes by beam search, the decoder caching each block's
keys and values between steps. ``T5.from_pretrained_module("t5-small")`` loads Hugging Face's weights; the token
embeddings are one module shared by the encoder, the decoder and (with ``tie_word_embeddings``) the output layer.
The blocks and stacks are in :mod:`~distrain.allennlp.modules.transformer.t5_layers` and
:mod:`~distrain.allennlp.modules.transformer.t5_stack`, all importable from here as from AllenNLP's module.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn

from distrain.allennlp.common.from_params import FromParams
from distrain.allennlp.modules.transformer.attention_module import T5Attention
from distrain.allennlp.modules.transformer.t5_layers import (KeyValueStates, T5Block, T5BlockOutput,
                                                             T5DenseGatedGeluDense, T5DenseReluDense,
                                                             T5FeedForwardProjection, T5LayerCrossAttention,
                                                             T5LayerCrossAttentionOutput, T5LayerFF, T5LayerNorm,
                                                             T5LayerSelfAttention, T5LayerSelfAttentionOutput)
from distrain.allennlp.modules.transformer.t5_stack import (T5DecoderStack, T5EncoderStack, T5Stack, T5StackOutput,
                                                            lazy, resized_rows)
from distrain.allennlp.modules.transformer.transformer_module import TransformerModule
from distrain.allennlp.modules.transformer.util import BoolT, FloatT, IntT
from distrain.config.lazy import Lazy
from distrain.modules.beam_search import BeamSearch


def _tied(config: Any) -> bool:
    """Whether the config's model ties (and scales) its output layer: T5 v1.1's configs say not. transformers 5
    always ties and keeps the config's word as ``scale_decoder_outputs``."""
    return getattr(config, "scale_decoder_outputs", config.tie_word_embeddings)


class T5Output(NamedTuple):
    """The encoder's states (all of them with ``output_all_hidden_states``); with ``labels``, the decoder's, the
    logits and the loss; in eval mode the beam search's ``predictions`` ``(batch, beam, steps)`` and their
    ``predicted_log_probs`` ``(batch, beam)``; attentions with ``output_attentions``."""

    encoder_last_hidden_state: FloatT
    encoder_all_hidden_states: Optional[List[FloatT]] = None
    decoder_last_hidden_state: Optional[FloatT] = None
    decoder_all_hidden_states: Optional[List[FloatT]] = None
    encoder_attentions: Optional[List[FloatT]] = None
    decoder_attentions: Optional[List[FloatT]] = None
    cross_attentions: Optional[List[FloatT]] = None
    loss: Optional[FloatT] = None
    logits: Optional[FloatT] = None
    predictions: Optional[IntT] = None
    predicted_log_probs: Optional[FloatT] = None


class T5(TransformerModule, FromParams):
    """AllenNLP registers T5 as a component of its own kind; here it is a plain class (no distrain config names it,
    and the toolkit loads only when a user imports it)."""

    _pretrained_mapping = {"shared": "token_embeddings"}
    # Hugging Face's checkpoints carry a relative bias for the first cross-attention that T5 never uses
    _pretrained_ignore = [r"^decoder\.block\.0\.layer\.1\.EncDecAttention\.relative_attention_bias\.weight$"]

    def __init__(self, token_embeddings: Optional[nn.Embedding] = None,
                 encoder: Lazy[T5EncoderStack] = Lazy(T5EncoderStack.basic_encoder),
                 decoder: Lazy[T5DecoderStack] = Lazy(T5DecoderStack.basic_decoder), decoder_start_token_id: int = 0,
                 pad_token_id: int = 0, eos_token_id: int = 1, vocab_size: int = 32128, model_dim: int = 512,
                 output_attentions: bool = False, output_all_hidden_states: bool = False,
                 beam_search: Lazy[BeamSearch] = lazy(BeamSearch, beam_size=3, max_steps=100),
                 ddp_accelerator: Any = None, checkpoint_wrapper: Any = None, tie_word_embeddings: bool = True):
        super().__init__()
        self._tie_word_embeddings = tie_word_embeddings
        self.model_dim = model_dim
        self.token_embeddings = token_embeddings or nn.Embedding(vocab_size, model_dim)
        if token_embeddings is None:
            self.token_embeddings.weight.data.normal_(mean=0.0, std=1.0)
        wrappers = {"ddp_accelerator": ddp_accelerator, "checkpoint_wrapper": checkpoint_wrapper}
        self.encoder: T5EncoderStack = encoder.construct(token_embeddings=self.token_embeddings, **wrappers)
        self.decoder: T5DecoderStack = decoder.construct(token_embeddings=self.token_embeddings, **wrappers)
        self.lm_head = nn.Linear(self.decoder.hidden_size, self.token_embeddings.num_embeddings, bias=False)
        if tie_word_embeddings:
            self.lm_head.weight = self.token_embeddings.weight
        self.loss_fct = nn.CrossEntropyLoss(ignore_index=-100)
        self.decoder_start_token_id = decoder_start_token_id
        self.pad_token_id = pad_token_id
        self.eos_token_id = eos_token_id
        self.output_attentions = output_attentions
        self.output_all_hidden_states = output_all_hidden_states
        self.beam_search = beam_search.construct(end_index=eos_token_id)

    def resize_token_embeddings(self, new_size: int, *, init_fn: Callable = torch.nn.init.normal_) -> None:
        """``new_size`` token embeddings for the encoder, the decoder and the output layer (old rows kept, new ones
        initialised in place by ``init_fn``); a tied output layer stays tied."""
        self.encoder.resize_token_embeddings(new_size, init_fn=init_fn)
        self.decoder.token_embeddings = self.encoder.token_embeddings
        self.token_embeddings = self.encoder.token_embeddings
        if self.lm_head.out_features == new_size:
            return
        head = nn.Linear(self.lm_head.in_features, new_size, bias=False, device=self.lm_head.weight.device,
                         dtype=self.lm_head.weight.dtype)
        head.weight = (self.token_embeddings.weight if self._tie_word_embeddings
                       else nn.Parameter(resized_rows(self.lm_head.weight.data, new_size, init_fn)))
        self.lm_head = head

    def _post_load_state_dict(self, missing_keys: List[str],
                              unexpected_keys: List[str]) -> Tuple[List[str], List[str]]:
        """The stacks' embeddings (and a tied output layer) are the shared embeddings, loaded under that name."""
        shared = {"encoder.token_embeddings.weight", "decoder.token_embeddings.weight"}
        if self._tie_word_embeddings:
            shared.add("lm_head.weight")
        return [key for key in missing_keys if key not in shared], unexpected_keys

    @classmethod
    def _from_config(cls, config: Any, **kwargs: Any) -> "T5":
        attention = {"hidden_size": config.d_model, "key_value_proj_dim": config.d_kv, "num_heads": config.num_heads,
                     "relative_attention_num_buckets": config.relative_attention_num_buckets,
                     "dropout": config.dropout_rate}
        norm = {"hidden_size": config.d_model, "eps": config.layer_norm_epsilon}
        projection = T5FeedForwardProjection.by_name(config.feed_forward_proj)

        def block_ff() -> T5LayerFF:
            return T5LayerFF(ff_proj=projection(hidden_size=config.d_model, ff_size=config.d_ff,
                                                dropout=config.dropout_rate),
                             layer_norm=T5LayerNorm(**norm), dropout=config.dropout_rate)

        def stack(build: Callable, num_blocks: int, attentions: Tuple[str, ...]) -> Lazy:
            return lazy(build, num_blocks=num_blocks, final_layer_norm=T5LayerNorm(**norm), block_ff=Lazy(block_ff),
                        dropout=config.dropout_rate, **{name: lazy(T5Attention, **attention) for name in attentions})

        return cls(encoder=stack(T5EncoderStack.basic_encoder, config.num_layers, ("block_self_attention",)),
                   decoder=stack(T5DecoderStack.basic_decoder, config.num_decoder_layers,
                                 ("block_self_attention", "block_cross_attention")),
                   decoder_start_token_id=config.decoder_start_token_id, pad_token_id=config.pad_token_id,
                   eos_token_id=config.eos_token_id, vocab_size=config.vocab_size, model_dim=config.d_model,
                   tie_word_embeddings=kwargs.pop("tie_word_embeddings", _tied(config)), **kwargs)

    @staticmethod
    def _shift_right(input_ids: torch.Tensor, start_value: int) -> torch.Tensor:
        """The decoder's inputs for teacher forcing: ``start_value``, then the labels but the last."""
        shifted = input_ids.new_zeros(input_ids.shape)
        shifted[..., 1:] = input_ids[..., :-1].clone()
        shifted[..., 0] = start_value
        return shifted

    def _get_lm_logits(self, decoder_last_hidden_state: FloatT) -> FloatT:
        # an output layer tied to the embeddings sees the states scaled by 1/sqrt(width), as Mesh TensorFlow's T5
        # (and Hugging Face's) do; an untied one (T5 v1.1's) was trained on them unscaled
        if self._tie_word_embeddings:
            decoder_last_hidden_state = decoder_last_hidden_state * self.model_dim ** -0.5
        return self.lm_head(decoder_last_hidden_state)

    def forward(self, input_ids: IntT, attention_mask: Optional[BoolT] = None, labels: Optional[IntT] = None,
                decoder_attention_mask: Optional[BoolT] = None) -> T5Output:
        """Masks default to the tokens that are not padding; training needs ``labels``."""
        if attention_mask is None:
            attention_mask = input_ids != self.pad_token_id
        encoded: T5StackOutput = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                                              output_attentions=self.output_attentions,
                                              output_all_hidden_states=self.output_all_hidden_states)
        decoded: Optional[T5StackOutput] = None
        logits = loss = predictions = predicted_log_probs = None
        if labels is not None:
            if decoder_attention_mask is None:
                decoder_attention_mask = labels != self.pad_token_id
            decoder_input_ids = self._shift_right(labels, self.decoder_start_token_id)
            decoder_input_ids.masked_fill_(decoder_input_ids == -100, self.pad_token_id)
            decoded = self.decoder(input_ids=decoder_input_ids, attention_mask=decoder_attention_mask,
                                   encoder_hidden_states=encoded.last_hidden_state,
                                   encoder_attention_mask=attention_mask, output_attentions=self.output_attentions,
                                   output_all_hidden_states=self.output_all_hidden_states)
            logits = self._get_lm_logits(decoded.last_hidden_state)
            loss = self.loss_fct(logits.view(-1, logits.size(-1)), labels.to(torch.long).view(-1))
        elif self.training:
            raise ValueError("'labels' required during training")
        if not self.training:
            start = torch.full((input_ids.shape[0], 1), self.decoder_start_token_id, dtype=input_ids.dtype,
                               device=input_ids.device)
            state = {"input_ids": input_ids, "encoder_hidden_states": encoded.last_hidden_state,
                     "encoder_attention_mask": attention_mask}
            predictions, predicted_log_probs = self.beam_search.search(start, state, self.take_search_step)
        return T5Output(encoded.last_hidden_state, encoded.all_hidden_states,
                        None if decoded is None else decoded.last_hidden_state,
                        None if decoded is None else decoded.all_hidden_states, encoded.attentions,
                        None if decoded is None else decoded.attentions,
                        None if decoded is None else decoded.cross_attentions,
                        loss, logits, predictions, predicted_log_probs)

    def take_search_step(self, last_predictions: torch.Tensor, state: Dict[str, torch.Tensor],
                         step: int) -> Tuple[torch.Tensor, Dict[str, torch.Tensor]]:
        """One decoding step for the beam search: the next token's log probabilities, the decoder's cache carried
        in ``state`` (as flat tensors, which the search reorders with the beams)."""
        cached = {key: value.contiguous() for key, value in state.items() if key.startswith("decoder_cache_")}
        if last_predictions.dim() == 1:
            last_predictions = last_predictions.unsqueeze(-1)
        decoded = self.decoder(input_ids=last_predictions,
                               past_key_values=self._dict_to_decoder_cache(cached) if cached else None,
                               encoder_hidden_states=state["encoder_hidden_states"],
                               encoder_attention_mask=state["encoder_attention_mask"], use_cache=True)
        log_probabilities = F.log_softmax(self._get_lm_logits(decoded.last_hidden_state)[:, -1, :], dim=-1)
        state.update(self._decoder_cache_to_dict(decoded.past_key_values))
        return log_probabilities, state

    @staticmethod
    def _decoder_cache_to_dict(decoder_cache: List[KeyValueStates]) -> Dict[str, torch.Tensor]:
        cache = {}
        for block, tensors in enumerate(decoder_cache):
            assert len(tensors) == 4, "a decoder block caches self- and cross-attention's keys and values"
            cache.update({f"decoder_cache_{block}_{index}": tensor for index, tensor in enumerate(tensors)})
        return cache

    def _dict_to_decoder_cache(self, cache_dict: Dict[str, torch.Tensor]) -> List[KeyValueStates]:
        return [tuple(cache_dict[f"decoder_cache_{block}_{index}"].contiguous() for index in range(4))
                for block in range(self.decoder.num_blocks)]


__all__ = [
    "KeyValueStates", "T5", "T5Block", "T5BlockOutput", "T5DecoderStack", "T5DenseGatedGeluDense", "T5DenseReluDense",
    "T5EncoderStack", "T5FeedForwardProjection", "T5LayerCrossAttention", "T5LayerCrossAttentionOutput", "T5LayerFF",
    "T5LayerNorm", "T5LayerSelfAttention", "T5LayerSelfAttentionOutput", "T5Output", "T5Stack", "T5StackOutput",
]
