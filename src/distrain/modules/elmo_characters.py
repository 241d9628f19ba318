"""ELMo's character encoding: the 50 ids per token its pretrained character CNN reads.

A word is its UTF-8 bytes (0-255) cut to 48, framed by begin-of-word (258) and end-of-word (259) and
padded with 260; ``<S>`` and ``</S>`` are the single characters 256 and 257 so framed. Every id is
shifted by one so that 0 is left for padding tokens: a padded token is 50 zeros, which is how the
encoder tells real tokens from padding. The ``elmo_characters`` indexer writes these ids; the encoder
adds the sentence boundaries itself. (Here, in ``modules``, because ``modules`` may not import ``data``.)
"""

from __future__ import annotations

MAX_WORD_LENGTH = 50
BEGIN_SENTENCE, END_SENTENCE = 256, 257
BEGIN_WORD, END_WORD, PADDING = 258, 259, 260
BOS_TOKEN, EOS_TOKEN = "<S>", "</S>"


def _framed(characters: list[int]) -> list[int]:
    """``characters`` between begin- and end-of-word, padded to 50, each id shifted by one."""
    ids = [BEGIN_WORD, *characters, END_WORD] + [PADDING] * (MAX_WORD_LENGTH - len(characters) - 2)
    return [i + 1 for i in ids]


#: the ids of the sentence boundaries the ELMo encoder adds around each sentence
BEGIN_SENTENCE_IDS = _framed([BEGIN_SENTENCE])
END_SENTENCE_IDS = _framed([END_SENTENCE])


def elmo_character_ids(word: str, tokens_to_add: dict[str, int] | None = None) -> list[int]:
    """The 50 ids of ``word`` (AllenNLP's ``ELMoCharacterMapper.convert_word_to_char_ids``)."""
    if tokens_to_add and word in tokens_to_add:
        return _framed([tokens_to_add[word]])
    if word == BOS_TOKEN:
        return list(BEGIN_SENTENCE_IDS)
    if word == EOS_TOKEN:
        return list(END_SENTENCE_IDS)
    return _framed(list(word.encode("utf-8", "ignore")[: MAX_WORD_LENGTH - 2]))
