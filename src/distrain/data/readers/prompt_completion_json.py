"""Supervised fine-tuning data for a causal LM: JSON lines ``{"prompt": "...", "completion": "..."}``.

A record becomes one sequence: the tokenizer's BOS (if it has one), the prompt's tokens, the
completion's tokens and its EOS (else SEP), so the model learns to stop after a completion. The
labels are the same ids with every prompt position set to -100: the loss, and the metrics, count
only the completion (the model shifts the labels by one itself). A completion that does not fit in
``sequence_length`` is cut; a prompt that leaves no room for any of it is an error naming the record's
file and line, like a missing or non-text field. Sequences are padded at the end (labels with -100),
which a causal model never attends to from the tokens before them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Iterator

from annotated_types import Ge

from distrain.data.fields import IGNORED_LABEL, TokenIdsField
from distrain.data.reader import DatasetReader, RecordError
from distrain.pretrained import PretrainedName, load_tokenizer


def prompt_token_ids(tokenizer, prompt: str) -> list[int]:
    """A prompt as the model sees it in training and in generation: the tokenizer's BOS, if it has one,
    then the prompt's tokens (no end: the completion follows)."""
    start = [tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []
    return start + tokenizer(prompt, add_special_tokens=False)["input_ids"]


@DatasetReader.register("prompt_completion_json")
class PromptCompletionJsonReader(DatasetReader):
    """Reads only its share of the lines, skipping the others unparsed."""

    distributed_aware = True

    def __init__(
        self,
        tokenizer_name: PretrainedName,
        sequence_length: Annotated[int, Ge(2)] = 512,
        prompt_key: str = "prompt",
        completion_key: str = "completion",
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.tokenizer_name = tokenizer_name
        self.sequence_length = sequence_length
        self.prompt_key = prompt_key
        self.completion_key = completion_key

    def _read(self, path: Path) -> Iterator[dict]:
        for number, record in self.json_lines(path):
            try:
                instance = self.record_to_instance(record)
            except RecordError as error:
                self.invalid(path, number, str(error))
                continue
            yield instance

    def record_to_instance(self, record: dict) -> dict:
        prompt = self.require(record, self.prompt_key, str, "a string")
        completion = self.require(record, self.completion_key, str, "a string")
        return self.text_to_instance(prompt, completion)

    def input_fields(self) -> dict[str, str]:
        return {self.prompt_key: "text", self.completion_key: "text"}

    def text_to_instance(self, prompt: str, completion: str) -> dict:
        tokenizer = load_tokenizer(self.tokenizer_name)
        prompt_ids = prompt_token_ids(tokenizer, prompt)
        if len(prompt_ids) >= self.sequence_length:
            raise RecordError(f"the prompt is {len(prompt_ids)} tokens, which leaves no room for the completion "
                              f"in sequence_length {self.sequence_length}", self.prompt_key)
        end = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else tokenizer.sep_token_id
        completion_ids = tokenizer(completion, add_special_tokens=False)["input_ids"] + ([end] if end is not None else [])
        ids = (prompt_ids + completion_ids)[:self.sequence_length]
        labels = [IGNORED_LABEL] * len(prompt_ids) + ids[len(prompt_ids):]
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (end or 0)
        return {"input_ids": TokenIdsField(ids, pad_value=pad), "labels": TokenIdsField(labels, pad_value=IGNORED_LABEL)}
