"""The one input both language-model predictors read: a sentence, as a string."""

from __future__ import annotations

from typing import Any

from distrain.data.fields import Instance
from distrain.data.reader import DatasetReader, RecordError


def sentence_instance(reader: DatasetReader, sentence: Any) -> Instance:
    """The reader's instance of ``sentence`` (no target); an input the reader refuses (not a string, a masked
    sentence without ``[MASK]``) is a :class:`RecordError` naming the key."""
    if not isinstance(sentence, str):
        raise RecordError(f'"sentence" must be a string, got {type(sentence).__name__}', "sentence")
    try:
        return reader.text_to_instance(sentence=sentence)
    except ValueError as error:
        raise RecordError(f'"sentence": {error}', "sentence") from None
