"""Prompts for a causal LM to continue (``distrain predict``): JSON lines ``{"prompt": "..."}``.

A prompt is tokenized as :mod:`prompt_completion_json` tokenizes one in training (BOS, then its
tokens), so a fine-tuned model sees at generation what it learned to continue. Each instance also
carries its length (batches pad prompts on the right; generation moves them to the left) and its
number, the record's line in the file, which seeds its samples: a sampled completion is the same
however the file is batched or split over workers. A prompt that leaves no room for one new token in
the model's context is an error naming its file and line; other keys of a record are ignored, so the
validation file of a fine-tuning run can be continued as it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Iterator

import numpy as np
from annotated_types import Ge

from distrain.data.fields import TensorField, TokenIdsField
from distrain.data.reader import DatasetReader, RecordError
from distrain.data.readers.prompt_completion_json import prompt_token_ids
from distrain.pretrained import PretrainedName, load_tokenizer


@DatasetReader.register("prompt_json")
class PromptJsonReader(DatasetReader):
    """``context_length``: the model's context; a prompt must be shorter. Reads only its share of the lines."""

    distributed_aware = True

    def __init__(
        self,
        tokenizer_name: PretrainedName,
        context_length: Annotated[int, Ge(2)] = 2048,
        prompt_key: str = "prompt",
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.tokenizer_name = tokenizer_name
        self.context_length = context_length
        self.prompt_key = prompt_key

    def _read(self, path: Path) -> Iterator[dict]:
        for number, record in self.json_lines(path):
            try:
                prompt = self.require(record, self.prompt_key, str, "a string")
                instance = self.text_to_instance(prompt, number)
            except RecordError as error:
                self.invalid(path, number, str(error))
                continue
            yield instance

    def record_to_instance(self, record: dict) -> dict:
        return self.text_to_instance(self.require(record, self.prompt_key, str, "a string"))

    def input_fields(self) -> dict[str, str]:
        return {self.prompt_key: "text"}

    def text_to_instance(self, prompt: str, number: int = 0) -> dict:
        tokenizer = load_tokenizer(self.tokenizer_name)
        ids = prompt_token_ids(tokenizer, prompt)
        if not ids:
            raise RecordError("the prompt is empty and the tokenizer has no BOS to start from", self.prompt_key)
        if len(ids) >= self.context_length:
            raise RecordError(f"the prompt is {len(ids)} tokens, which leaves no room for a new token in the "
                              f"model's context of {self.context_length}", self.prompt_key)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        return {"input_ids": TokenIdsField(ids, pad_value=pad),
                "prompt_length": TensorField(np.int64(len(ids)), dtype=np.int64),
                "prompt_number": TensorField(np.int64(number), dtype=np.int64)}
