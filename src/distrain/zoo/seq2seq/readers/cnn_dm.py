"""CNN/DailyMail summarisation (AllenNLP's ``cnn_dm``): a url list names the stories, each a ``*.story`` file whose
name is the SHA-1 of its url, in ``cnn_stories/`` or ``dm_stories/`` beside the list's folder.

A story's lines before the first ``@highlight`` are the article, the lines after are the summary's bullet points;
a line not ending like a sentence gets a full stop, CNN's leading ``(CNN)`` is cut, and both are joined with
spaces, as AllenNLP did. Stories with an empty article or summary, or an article shorter than its summary, are
skipped. AllenNLP also ran ``ftfy.fix_encoding`` over each line (it repairs mis-decoded UTF-8); distrain has no
ftfy dependency, so text is read as it is (on allennlp-models' fixture stories ftfy changes no line).

Tokens: AllenNLP's ``pretrained_transformer`` tokenizer cut nothing unless told, and ``source_max_tokens`` /
``target_max_tokens`` were the only limits (BART's source is 1022 pieces, beyond distrain's tokenizer default of
512): a pretrained tokenizer here therefore tokenizes the whole text, special tokens included, and the reader
keeps the first ``*_max_tokens`` pieces.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Iterator

from distrain.config.constraints import PositiveInt
from distrain.data.fields import TextField
from distrain.data.reader import DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Tokenizer
from distrain.data.tokenizers.pretrained_transformer import PretrainedTransformerTokenizer
from distrain.data.tokenizers.spacy import SpacyTokenizer
from distrain.zoo.seq2seq.readers.source_target_records import SourceTargetRecords

SENTENCE_ENDINGS = (".", "!", "?", "...", "'", "`", '"', ")", "\u2019", "\u201d")
STORY_FOLDERS = ("cnn_stories", "dm_stories")


def read_story(path: Path) -> tuple[str, str]:
    """A story file's article and summary, each one line of text."""
    article: list[str] = []
    summary: list[str] = []
    highlight = False
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("(CNN)"):
            line = line[len("(CNN)"):]
        if not line:
            continue
        if line == "@highlight":
            highlight = True
            continue
        if not line.endswith(SENTENCE_ENDINGS):  # highlights are bullet points without a full stop
            line += "."
        (summary if highlight else article).append(line)
    return " ".join(article), " ".join(summary)


def story_name(url: str) -> str:
    return hashlib.sha1(url.encode("utf-8")).hexdigest()


@DatasetReader.register("cnn_dm")
class CnnDailyMailReader(SourceTargetRecords, DatasetReader):
    """Instances ``source_tokens`` and (with a summary) ``target_tokens``; ``source_prefix`` goes before each
    article (T5's ``"summarize: "``). Reads only its share of the url list; a url whose story is in neither
    folder is reported by list file:line."""

    distributed_aware = True

    def __init__(self, source_tokenizer: Tokenizer | None = None, target_tokenizer: Tokenizer | None = None,
                 source_token_indexers: dict[str, TokenIndexer] | None = None,
                 target_token_indexers: dict[str, TokenIndexer] | None = None,
                 source_max_tokens: PositiveInt | None = None, target_max_tokens: PositiveInt | None = None,
                 source_prefix: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source_tokenizer = source_tokenizer or SpacyTokenizer()
        self.target_tokenizer = target_tokenizer or self.source_tokenizer
        self.source_token_indexers = source_token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.target_token_indexers = target_token_indexers or self.source_token_indexers
        self.source_max_tokens = source_max_tokens
        self.target_max_tokens = target_max_tokens
        self.source_prefix = source_prefix

    @classmethod
    def declared_fields(cls, arguments):
        return {"source_tokens": True, "target_tokens": False}

    def _read(self, path: Path) -> Iterator[dict]:
        data = path.parent.parent
        stories = {name: {story.stem for story in (data / name).glob("*.story")} for name in STORY_FOLDERS}
        for number, line in self.owned_lines(path):
            url = line.strip()
            name = story_name(url)
            folder = next((folder for folder in STORY_FOLDERS if name in stories[folder]), None)
            if folder is None:
                self.invalid(path, number, f"no story {name}.story (the SHA-1 of url {url!r}) in "
                                           f"{' or '.join(str(data / f) for f in STORY_FOLDERS)}")
                continue
            self.num_parsed += 1
            article, summary = read_story(data / folder / f"{name}.story")
            if not article or not summary or len(article) < len(summary):
                continue
            yield self.text_to_instance(article, summary)

    def text_to_instance(self, source_sequence: str, target_sequence: str | None = None) -> dict:
        source = whole_tokens(self.source_tokenizer, (self.source_prefix or "") + source_sequence)
        instance = {"source_tokens": TextField(source[: self.source_max_tokens], self.source_token_indexers)}
        if target_sequence is not None:
            target = whole_tokens(self.target_tokenizer, target_sequence)
            instance["target_tokens"] = TextField(target[: self.target_max_tokens], self.target_token_indexers)
        return instance


def whole_tokens(tokenizer: Tokenizer, text: str) -> list[Any]:
    """``text``'s tokens, a pretrained tokenizer's untruncated (as AllenNLP's, which cut nothing by default)."""
    if isinstance(tokenizer, PretrainedTransformerTokenizer):
        return PretrainedTransformerTokenizer(tokenizer.model_name, max_length=None,
                                              add_special_tokens=tokenizer.adds_special_tokens).tokens(text)
    return tokenizer.tokens(text)
