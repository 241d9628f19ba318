"""Supervised fine-tuning data for a causal LM: JSON lines ``{"prompt": "...", "completion": "..."}``.

A record becomes one sequence: the tokenizer's BOS (if it has one), the prompt's tokens, the
completion's tokens and its EOS (else SEP), so the model learns to stop after a completion. The
labels are the same ids with every prompt position set to -100: the loss, and the metrics, count
only the completion (the model shifts the labels by one itself). A completion that does not fit in
``sequence_length`` is cut; a prompt that leaves no room for any of it is an error naming the record's
file and line, like a missing or non-text field. Sequences are padded at the end (labels with -100),
which a causal model never attends to from the tokens before them.

``packing``: consecutive records, in file order, share blocks of ``sequence_length`` instead (see
:func:`pack_examples`): a block holds whole examples, as many as fit, the rest of it padding, so
fewer sequences carry the same labelled tokens. Each block also carries ``position_ids`` that restart
at 0 with every example; from them transformers builds a mask that keeps the examples of a block
apart (the packed-sequence detection of its ``create_causal_mask``, taken when no ``attention_mask``
is given and no cache is used; in transformers 5 llama, mistral, qwen2, gpt2 and BERT run causally all
build their masks with it), so an example's loss is what it is alone, to float precision. An
architecture, or an older transformers, that builds its mask otherwise sees the positions but not the
separation: there an example attends to the examples before it in its block, as in torchtune's
``PackedDataset`` without document masking. On CPU the mask is a dense block-diagonal one (no varlen flash-attention kernel
there): packing saves the work spent on padding, while attention still spans each whole block.
The blocks depend only on the file: every reader packs all records and keeps every ``n``-th block,
so the blocks are the same on any world size or number of readers (streamed, each reader tokenizes
every record).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Iterable, Iterator

from annotated_types import Ge

from distrain.data.fields import IGNORED_LABEL, TokenIdsField
from distrain.data.reader import WHOLE, DatasetReader, RecordError
from distrain.pretrained import PretrainedName, load_tokenizer


def prompt_token_ids(tokenizer, prompt: str) -> list[int]:
    """A prompt as the model sees it in training and in generation: the tokenizer's BOS, if it has one,
    then the prompt's tokens (no end: the completion follows)."""
    start = [tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []
    return start + tokenizer(prompt, add_special_tokens=False)["input_ids"]


def pack_examples(examples: Iterable[tuple[list[int], list[int]]], sequence_length: int) -> Iterator[dict[str, list[int]]]:
    """Blocks of at most ``sequence_length`` tokens filled greedily with whole ``(ids, labels)`` examples
    in order (a block is closed when the next example does not fit; none is longer than
    ``sequence_length``), each a dict of ``input_ids``, ``labels`` and ``position_ids`` (0, 1, ... per
    example). An example's first label becomes -100: unpacked it is never a target (the model shifts
    the labels left), packed it would be the target of the example before it."""
    block: dict[str, list[int]] = {"input_ids": [], "labels": [], "position_ids": []}
    for ids, labels in examples:
        if len(ids) > sequence_length:
            raise ValueError(f"an example of {len(ids)} tokens is longer than sequence_length {sequence_length}")
        if len(block["input_ids"]) + len(ids) > sequence_length:
            yield block
            block = {"input_ids": [], "labels": [], "position_ids": []}
        block["input_ids"] += ids
        block["labels"] += [IGNORED_LABEL, *labels[1:]]
        block["position_ids"] += list(range(len(ids)))
    if block["input_ids"]:
        yield block


@DatasetReader.register("prompt_completion_json")
class PromptCompletionJsonReader(DatasetReader):
    """Reads only its share of the lines, skipping the others unparsed (with ``packing``: every line,
    keeping its share of the blocks)."""

    distributed_aware = True

    def __init__(
        self,
        tokenizer_name: PretrainedName,
        sequence_length: Annotated[int, Ge(2)] = 512,
        prompt_key: str = "prompt",
        completion_key: str = "completion",
        packing: bool = False,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.tokenizer_name = tokenizer_name
        self.sequence_length = sequence_length
        self.prompt_key = prompt_key
        self.completion_key = completion_key
        self.packing = packing

    def _read(self, path: Path) -> Iterator[dict]:
        if not self.packing:
            for _, example in self._examples(path):
                yield self._instance(*example)
            return
        blocks = pack_examples((example for _, example in self._examples(path, WHOLE)), self.sequence_length)
        pad = self._pad()
        for position, block in enumerate(blocks):
            if self.shard.owns(position):
                yield {"input_ids": TokenIdsField(block["input_ids"], pad_value=pad),
                       "labels": TokenIdsField(block["labels"], pad_value=IGNORED_LABEL),
                       "position_ids": TokenIdsField(block["position_ids"], pad_value=0)}

    def _examples(self, path: Path, shard=None) -> Iterator[tuple[int, tuple[list[int], list[int]]]]:
        """``(line, (ids, labels))`` for each record of this reader's share (of ``shard``'s when given)."""
        for number, record in self.json_lines(path, shard=shard):
            try:
                prompt = self.require(record, self.prompt_key, str, "a string")
                completion = self.require(record, self.completion_key, str, "a string")
                example = self.example(prompt, completion)
            except RecordError as error:
                self.invalid(path, number, str(error))
                continue
            yield number, example

    def record_to_instance(self, record: dict) -> dict:
        prompt = self.require(record, self.prompt_key, str, "a string")
        completion = self.require(record, self.completion_key, str, "a string")
        return self.text_to_instance(prompt, completion)

    def input_fields(self) -> dict[str, str]:
        return {self.prompt_key: "text", self.completion_key: "text"}

    def text_to_instance(self, prompt: str, completion: str) -> dict:
        return self._instance(*self.example(prompt, completion))

    def example(self, prompt: str, completion: str) -> tuple[list[int], list[int]]:
        """The record's ids (cut at ``sequence_length``) and labels (-100 on the prompt)."""
        tokenizer = load_tokenizer(self.tokenizer_name)
        prompt_ids = prompt_token_ids(tokenizer, prompt)
        if len(prompt_ids) >= self.sequence_length:
            raise RecordError(f"the prompt is {len(prompt_ids)} tokens, which leaves no room for the completion "
                              f"in sequence_length {self.sequence_length}", self.prompt_key)
        end = self._end(tokenizer)
        completion_ids = tokenizer(completion, add_special_tokens=False)["input_ids"] + ([end] if end is not None else [])
        ids = (prompt_ids + completion_ids)[:self.sequence_length]
        return ids, [IGNORED_LABEL] * len(prompt_ids) + ids[len(prompt_ids):]

    @staticmethod
    def _end(tokenizer) -> int | None:
        return tokenizer.eos_token_id if tokenizer.eos_token_id is not None else tokenizer.sep_token_id

    def _pad(self) -> int:
        tokenizer = load_tokenizer(self.tokenizer_name)
        return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (self._end(tokenizer) or 0)

    def _instance(self, ids: list[int], labels: list[int]) -> dict:
        return {"input_ids": TokenIdsField(ids, pad_value=self._pad()),
                "labels": TokenIdsField(labels, pad_value=IGNORED_LABEL)}
