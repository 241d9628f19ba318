"""AllenNLP's ``spacy`` tokenizer (its default): spaCy's rules for the language, and, from an installed spaCy
model package, lemmas, part-of-speech tags, dependency labels and entity types on each token.

spaCy (the ``spacy`` extra) is imported at the first text tokenized, never at validation. Without the model
package (``language``, e.g. ``en_core_web_sm``; none installs from PyPI) tokens come from
``spacy.blank(<its language code>)``, whose tokenizer follows the same rules, and the log says so once.
``pos_tags`` left unset is AllenNLP's default: tagged when the model is installed, else tokens only. Asking for
``pos_tags``, ``parse`` or ``ner`` without the model is a config error naming the package, before data is read.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import re
from pathlib import Path
from typing import Any, Mapping

from distrain.config.errors import ConfigError, Problem
from distrain.data.tokenizer import Token, Tokenizer, with_boundary_tokens

logger = logging.getLogger(__name__)

ANALYSES = {"pos_tags": "part-of-speech tags", "parse": "dependency parses", "ner": "named entities"}


@Tokenizer.register("spacy")
class SpacyTokenizer(Tokenizer):
    """``keep_spacy_tokens`` returns spaCy's own tokens; ``split_on_spaces`` takes the text as already
    tokenized (one token per space-separated word) and only tags it."""

    def __init__(self, language: str = "en_core_web_sm", pos_tags: bool | None = None, parse: bool = False,
                 ner: bool = False, keep_spacy_tokens: bool = False, split_on_spaces: bool = False,
                 start_tokens: list[str] | None = None, end_tokens: list[str] | None = None) -> None:
        problems = spacy_problems(language, pos_tags, parse, ner)
        if problems:  # validation said so already; this is for tokenizers built in Python
            raise ConfigError(problems)
        self.language = language
        self.pos_tags = model_installed(language) if pos_tags is None else pos_tags
        self.parse, self.ner = parse, ner
        self.keep_spacy_tokens = keep_spacy_tokens
        self.split_on_spaces = split_on_spaces
        self.start_tokens, self.end_tokens = start_tokens, end_tokens

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        return spacy_problems(arguments["language"], arguments["pos_tags"], arguments["parse"], arguments["ner"])

    @property
    def nlp(self) -> Any:
        return pipeline(self.language, self.pos_tags, self.parse, self.ner)

    def tokenize(self, text: str) -> list[Any]:  # type: ignore[override]
        return self._tokens(self.nlp(self._words(text) if self.split_on_spaces else text))

    def batch_tokenize(self, texts: list[str]) -> list[list[Any]]:
        inputs = [self._words(text) for text in texts] if self.split_on_spaces else texts
        return [self._tokens(doc) for doc in self.nlp.pipe(inputs)]

    def _words(self, text: str) -> Any:
        """``text`` as a spaCy document of its space-separated words, with each word's offset kept: a run of
        spaces past the first is a whitespace token, dropped later (AllenNLP failed on such runs)."""
        from spacy.tokens import Doc

        words: list[str] = []
        spaces: list[bool] = []
        for piece in re.findall(r"[^ ]+| +", text):
            if piece[0] == " " and words:  # the first space after a word is the word's, as spaCy writes documents
                spaces[-1], piece = True, piece[1:]
            if piece:
                words.append(piece)
                spaces.append(False)
        return Doc(self.nlp.vocab, words=words, spaces=spaces)

    def _tokens(self, doc: Any) -> list[Any]:
        kept = [token for token in doc if not token.is_space]
        if not self.keep_spacy_tokens:
            kept = [Token(token.text, token.idx, token.idx + len(token.text), token.lemma_, token.pos_, token.tag_,
                          token.dep_, token.ent_type_) for token in kept]
        return with_boundary_tokens(kept, self.start_tokens, self.end_tokens)


def model_installed(language: str) -> bool:
    """Whether ``language`` names an installed spaCy model package (or a model folder)."""
    if language.isidentifier():
        return importlib.util.find_spec(language) is not None
    return Path(language).is_dir()


def language_code(language: str) -> str:
    """The language a model name starts with: ``en`` of ``en_core_web_sm`` (a bare code is itself)."""
    return language.split("_", 1)[0]


def spacy_problems(language: str, pos_tags: bool | None, parse: bool, ner: bool) -> list[Problem]:
    """What stops this tokenizer from working here, found without importing spaCy."""
    spacy = importlib.util.find_spec("spacy")
    if spacy is None:
        return [Problem("", "the spacy tokenizer needs spaCy: pip install 'distrain[spacy]'")]
    if model_installed(language):
        return []
    asked = [key for key, value in (("pos_tags", pos_tags), ("parse", parse), ("ner", ner)) if value]
    if asked:
        wanted = " and ".join(ANALYSES[key] for key in asked)
        return [Problem(asked[0], f"{wanted} need the spaCy model package {language}, which is not installed "
                                  f"(python -m spacy download {language}); without it only tokens are made")]
    code = language_code(language)
    if not any((Path(folder) / "lang" / code / "__init__.py").is_file() for folder in spacy.submodule_search_locations):
        return [Problem("language", f'"{language}" is neither an installed spaCy model package nor a language spaCy '
                                    f'has rules for (no spacy.lang.{code})')]
    return []


@functools.cache
def pipeline(language: str, pos_tags: bool, parse: bool, ner: bool) -> Any:
    """The spaCy pipeline for these options, loaded once per process."""
    import spacy

    if not model_installed(language):
        code = language_code(language)
        if code != language:  # a bare language code asks for spaCy's rules alone
            logger.info("spaCy model package %s is not installed: tokenizing with spacy.blank(%r), the same rules "
                        "without lemmas, tags, parses or entities", language, code)
        return spacy.blank(code)
    unused = ["tagger"] * (not pos_tags) + ["parser"] * (not parse) + ["ner"] * (not ner)
    return spacy.load(language, disable=["vectors", "textcat", *unused])
