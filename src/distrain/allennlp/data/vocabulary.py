"""``allennlp.data.vocabulary``: the vocabulary and its reserved tokens."""

from distrain.data.vocabulary import (Vocabulary, OOV_TOKEN as DEFAULT_OOV_TOKEN, PADDING_TOKEN as
                                      DEFAULT_PADDING_TOKEN)

__all__ = [
    "DEFAULT_OOV_TOKEN", "DEFAULT_PADDING_TOKEN", "Vocabulary",
]
