"""SQuAD's JSON file (``{"data": [{"paragraphs": [{"context": ..., "qas": [...]}]}]}``), opened and walked for the
readers of it (``squad``, ``transformer_squad``, and ``quac``, whose files have SQuAD's layout): a file that is not
SQuAD JSON, or a malformed article or paragraph, is one :class:`~distrain.data.reader.DataError` naming the file and
the position."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from distrain.data.reader import DataError


def squad_articles(path: Path) -> list:
    """The file's ``data`` (its articles)."""
    try:
        with open(path, encoding="utf-8") as file:
            return json.load(file)["data"]
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise DataError(f"{path}: not SQuAD JSON ({error})") from None


def squad_paragraphs(articles: Any, path: Path) -> Iterator[tuple[str, dict]]:
    """Every paragraph, in file order, and where it is (``data[a].paragraphs[p]``), checked to have a ``context``
    string and a ``qas`` list."""
    if not isinstance(articles, list):
        raise DataError(f'{path}: "data" must be a list of articles')
    for a, article in enumerate(articles):
        paragraphs = article.get("paragraphs") if isinstance(article, dict) else None
        if not isinstance(paragraphs, list):
            raise DataError(f'{path}: data[{a}] needs "paragraphs", a list')
        for p, paragraph in enumerate(paragraphs):
            where = f"data[{a}].paragraphs[{p}]"
            if not isinstance(paragraph, dict) or not isinstance(paragraph.get("context"), str):
                raise DataError(f'{path}: {where} needs "context", a string')
            if not isinstance(paragraph.get("qas"), list):
                raise DataError(f'{path}: {where} needs "qas", a list of questions')
            yield where, paragraph


def squad_questions(articles: Any, path: Path) -> Iterator[tuple[str, dict, Any]]:
    """Every question with its paragraph, in file order, and where the question is (``data[a].paragraphs[p].qas[q]``;
    the question itself is the reader's to check)."""
    for where, paragraph in squad_paragraphs(articles, path):
        for q, question in enumerate(paragraph["qas"]):
            yield f"{where}.qas[{q}]", paragraph, question
