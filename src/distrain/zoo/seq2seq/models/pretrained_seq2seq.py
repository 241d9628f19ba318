"""What AllenNLP's ``bart`` and ``t5`` share: a transformers encoder-decoder trained with teacher forcing and
decoded by AllenNLP's beam search, scored by ROUGE and BLEU on the decoded token ids.

Training: the decoder reads the target but its last token and predicts the target but its first (for BART the
target is ``<s> ... </s>`` and the decoder starts from ``</s>``, as AllenNLP fed it; T5 shifts instead, see
:mod:`.t5`), with label smoothing 0.1 (T5: none), averaged over target tokens; ``loss_weight`` is the token count, so the loss is the global batch's token mean
however it is split among workers. Evaluation decodes: the encoder runs once, each beam step runs the decoder on the last token over transformers'
key-value cache, which the beam search reorders. With targets, evaluation also reports the teacher-forced loss
(AllenNLP's model returned none there, so its validation loss was a constant 0 and ``-loss``, its default
validation metric, kept the first epoch as the best; here ``-loss`` selects by the real loss).
"""

from __future__ import annotations

import inspect
from typing import Any

import torch

from distrain.config.lazy import Lazy
from distrain.zoo.seq2seq.metrics.bleu import Bleu
from distrain.zoo.seq2seq.metrics.rouge import Rouge
from distrain.models.model import Model
from distrain.modules.beam_search import BeamSearch
from distrain.modules.text_field_embedder import TextFieldTensors

LABEL_SMOOTHING = 0.1


class PretrainedSeq2Seq(Model):
    """Subclasses load ``self.transformer`` (an ``AutoModelForSeq2SeqLM``) and call :meth:`setup_decoding`."""

    default_predictor = "seq2seq"

    #: the training loss's label smoothing (AllenNLP's ``bart`` smoothed, its ``t5`` did not)
    label_smoothing = LABEL_SMOOTHING
    #: the output key of the best beam's summed log-probability (AllenNLP's name for the model)
    log_probabilities_key = "log_probabilities"
    #: the beam search without a ``beam_search`` key (BeamSearch's defaults where empty)
    default_beam: dict[str, int] = {}

    def setup_decoding(self, beam_search: Lazy[BeamSearch] | None, start_id: int, end_id: int, pad_id: int,
                       model_name: str) -> None:
        self.model_name = model_name
        self.decoder_start_id = start_id
        self.end_id = end_id
        self.pad_id = pad_id
        self.beam_search = (beam_search.construct(end_index=end_id, vocab=self.vocab) if beam_search is not None
                            else BeamSearch(end_index=end_id, **self.default_beam))
        bos_id = getattr(self.transformer.config, "bos_token_id", None)  # T5 has none
        excluded = {index for index in (bos_id, start_id, pad_id, end_id) if index is not None}
        self.rouge = Rouge(exclude_indices=excluded)
        self.bleu = Bleu(exclude_indices=excluded)

    def forward(self, source_tokens: TextFieldTensors, target_tokens: TextFieldTensors | None = None,
                **_: Any) -> dict[str, Any]:
        source = source_tokens["tokens"]
        input_ids, input_mask = source["token_ids"], source["mask"]
        if target_tokens is not None:
            target_ids, target_mask = target_tokens["tokens"]["token_ids"], target_tokens["tokens"]["mask"]
        else:  # AllenNLP's default target: the source shifted by one
            target_ids, target_mask = input_ids[:, 1:], input_mask[:, 1:]
        if self.training:
            return self.teacher_forced(input_ids, input_mask, target_ids, target_mask)
        output = self.teacher_forced(input_ids, input_mask, target_ids, target_mask) if target_tokens is not None else {}
        return {**output, **self.decode(input_ids, input_mask, target_ids)}

    def decoder_inputs(self, target_ids: torch.Tensor, target_mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``(decoder input ids, their mask, labels, label mask)`` for teacher forcing."""
        return target_ids[:, :-1], target_mask[:, :-1], target_ids[:, 1:], target_mask[:, 1:]

    def teacher_forced(self, input_ids: torch.Tensor, input_mask: torch.Tensor, target_ids: torch.Tensor,
                       target_mask: torch.Tensor) -> dict[str, Any]:
        decoder_ids, decoder_mask, labels, label_mask = self.decoder_inputs(target_ids, target_mask)
        logits = self.transformer(input_ids=input_ids, attention_mask=input_mask, decoder_input_ids=decoder_ids,
                                  decoder_attention_mask=decoder_mask, use_cache=False, return_dict=True).logits
        losses = torch.nn.functional.cross_entropy(logits.float().transpose(1, 2), labels, reduction="none",
                                                   label_smoothing=self.label_smoothing)
        counted = label_mask.to(losses.dtype)
        tokens = counted.sum()
        return {"decoder_logits": logits, "loss": (losses * counted).sum() / tokens.clamp(min=1), "loss_weight": tokens}

    def decode(self, input_ids: torch.Tensor, input_mask: torch.Tensor, target_ids: torch.Tensor) -> dict[str, Any]:
        from transformers.modeling_outputs import BaseModelOutput

        encoded = self.transformer.get_encoder()(input_ids=input_ids, attention_mask=input_mask,
                                                 return_dict=True).last_hidden_state

        cache_key = "cache" if "cache" in inspect.signature(self.transformer.forward).parameters else "past_key_values"

        def step(last: torch.Tensor, state: dict[str, Any], _: int) -> tuple[torch.Tensor, dict[str, Any]]:
            cache = {cache_key: state["cache"].cache} if "cache" in state else {}
            output = self.transformer(attention_mask=state["input_mask"], decoder_input_ids=last.unsqueeze(1),
                                      encoder_outputs=BaseModelOutput(last_hidden_state=state["encoded"]),
                                      use_cache=True, return_dict=True, **cache)
            cache = output["cache"] if "cache" in output else output.get("past_key_values")  # renamed in 5.x
            return torch.log_softmax(output.logits[:, -1].float(), dim=-1), {**state, "cache": BeamCache(cache)}

        start = torch.full((input_ids.shape[0],), self.decoder_start_id, dtype=input_ids.dtype, device=input_ids.device)
        state = {"input_mask": input_mask, "encoded": encoded}
        sequences, scores = self.beam_search.search(start, state, step)
        predictions, log_probabilities = sequences[:, 0], scores[:, 0]  # the best beam: search sorts them
        self.rouge(predictions, target_ids)
        self.bleu(predictions, target_ids)
        return {"predictions": predictions, self.log_probabilities_key: log_probabilities,
                **self.readable(predictions)}

    def readable(self, predictions: torch.Tensor) -> dict[str, list]:
        """Each prediction's pieces (every id, the end tokens included) and its text without special tokens."""
        from distrain.pretrained import load_tokenizer

        tokenizer = load_tokenizer(self.model_name)
        rows = predictions.tolist()
        return {"predicted_tokens": [tokenizer.convert_ids_to_tokens(row) for row in rows],
                "predicted_text": tokenizer.batch_decode(rows, skip_special_tokens=True)}

    def make_output_human_readable(self, output: dict[str, Any]) -> list[dict[str, Any]]:
        keys = ("predicted_text", "predicted_tokens", "predictions", self.log_probabilities_key)
        return [dict(zip(keys, values)) for values in zip(*(_listed(output[key]) for key in keys))]

    def get_metrics(self, reset: bool = False) -> dict[str, float]:
        """AllenNLP's names (``ROUGE-1_R`` ... ``ROUGE-L``, ``BLEU``), reported for decoded batches only."""
        if self.training:
            return {}
        return {**self.rouge.get_metric(reset), **self.bleu.get_metric(reset)}


class BeamCache:
    """transformers' encoder-decoder cache as the beam search reorders it: only the self-attention part moves,
    since a source's cross-attention keys and values are the same for all its beams (copying them each step
    took a sixth of the decoding time)."""

    def __init__(self, cache: Any) -> None:
        self.cache = cache

    def batch_repeat_interleave(self, repeats: int) -> None:
        self.cache.batch_repeat_interleave(repeats)

    def reorder_cache(self, rows: torch.Tensor) -> None:
        getattr(self.cache, "self_attention_cache", self.cache).reorder_cache(rows)


def _listed(value: Any) -> list:
    return value.tolist() if isinstance(value, torch.Tensor) else list(value)
