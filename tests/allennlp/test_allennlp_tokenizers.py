"""The tokenizers under AllenNLP's names give what AllenNLP 2.10.1's own give (``spacy``, ``letters_digits``,
``character``, ``just_spaces``), called directly; ``spacy`` without its model package tokenizes with spaCy's blank
pipeline (said once in the log) and refuses, as one config line naming the package, the analyses that need it;
spaCy is imported only when a text is tokenized."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest

from support.cli import cli_environment, run_cli
from support.configs import text_config, write_config
from support.paths import ROOT
from distrain.config.errors import ConfigError
from distrain.data.fields import TokenIdsField
from distrain.data.tokenizer import Tokenizer
from distrain.data.tokenizers import spacy as spacy_tokenizer
from distrain.data.tokenizers.character import CharacterTokenizer
from distrain.data.tokenizers.just_spaces import WhitespaceTokenizer
from distrain.data.tokenizers.letters_digits import LettersDigitsTokenizer
from distrain.data.tokenizers.spacy import SpacyTokenizer

SENTENCES = [
    "AllenNLP's default tokenizer splits don't, U.S.A. and 3.5kg!",
    "Hello  world,\tit's Mr. Smith's (e-mail: a@b.com).",
    "Ünïcödé naïve café, 2024-05-06: über 1,000 résumés?",
]

# AllenNLP's outputs, printed by `/work/oracle/bin/python tests/allennlp_oracle/tokenizer_outputs.py` (AllenNLP
# 2.10.1 and spaCy 3.3.3, built by ../shared/allennlp-oracle/setup.sh; its SpacyTokenizer ran on spacy.blank("en"))
SPACY = [[('AllenNLP', 0, 8), ("'s", 8, 10), ('default', 11, 18), ('tokenizer', 19, 28), ('splits', 29, 35),
          ('do', 36, 38), ("n't", 38, 41), (',', 41, 42), ('U.S.A.', 43, 49), ('and', 50, 53), ('3.5', 54, 57),
          ('kg', 57, 59), ('!', 59, 60)],
         [('Hello', 0, 5), ('world', 7, 12), (',', 12, 13), ('it', 14, 16), ("'s", 16, 18), ('Mr.', 19, 22),
          ('Smith', 23, 28), ("'s", 28, 30), ('(', 31, 32), ('e', 32, 33), ('-', 33, 34), ('mail', 34, 38),
          (':', 38, 39), ('a@b.com', 40, 47), (')', 47, 48), ('.', 48, 49)],
         [('Ünïcödé', 0, 7), ('naïve', 8, 13), ('café', 14, 18), (',', 18, 19), ('2024', 20, 24), ('-', 24, 25),
          ('05', 25, 27), ('-', 27, 28), ('06', 28, 30), (':', 30, 31), ('über', 32, 36), ('1,000', 37, 42),
          ('résumés', 43, 50), ('?', 50, 51)]]
SPACY_ANALYSES = [('', '', '', '', '')]
SPACY_BOUNDED = [('@start@', 0, None), ('<s>', 0, None), ('AllenNLP', 0, 8), ("'s", 8, 10), ('default', 11, 18),
                 ('tokenizer', 19, 28), ('splits', 29, 35), ('do', 36, 38), ("n't", 38, 41), (',', 41, 42),
                 ('U.S.A.', 43, 49), ('and', 50, 53), ('3.5', 54, 57), ('kg', 57, 59), ('!', 59, 60),
                 ('@end@', -1, None)]
SPACY_SPLIT_ON_SPACES = [("AllenNLP's", 0, 10), ('default', 11, 18), ('tokenizer', 19, 28), ('splits', 29, 35),
                         ("don't,", 36, 42), ('U.S.A.', 43, 49), ('and', 50, 53), ('3.5kg!', 54, 60)]
LETTERS_DIGITS = [[('AllenNLP', 0), ("'", 8), ('s', 9), ('default', 11), ('tokenizer', 19), ('splits', 29),
                   ('don', 36), ("'", 39), ('t', 40), (',', 41), ('U', 43), ('.', 44), ('S', 45), ('.', 46),
                   ('A', 47), ('.', 48), ('and', 50), ('3', 54), ('.', 55), ('5', 56), ('kg', 57), ('!', 59)],
                  [('Hello', 0), ('world', 7), (',', 12), ('it', 14), ("'", 16), ('s', 17), ('Mr', 19), ('.', 21),
                   ('Smith', 23), ("'", 28), ('s', 29), ('(', 31), ('e', 32), ('-', 33), ('mail', 34), (':', 38),
                   ('a', 40), ('@', 41), ('b', 42), ('.', 43), ('com', 44), (')', 47), ('.', 48)],
                  [('Ünïcödé', 0), ('naïve', 8), ('café', 14), (',', 18), ('2024', 20), ('-', 24), ('05', 25),
                   ('-', 27), ('06', 28), (':', 30), ('über', 32), ('1', 37), (',', 38), ('000', 39),
                   ('résumés', 43), ('?', 50)]]
CHARACTERS = [('<w>', 0), ('ü', None), ('n', None), ('ï', None), ('c', None), ('ö', None), ('d', None),
              ('é', None), (' ', None), ('n', None), ('a', None), ('ï', None), ('v', None), ('e', None),
              (' ', None), ('c', None), ('a', None), ('f', None), ('é', None), (',', None), (' ', None),
              ('2', None), ('0', None), ('2', None), ('4', None), ('-', None), ('0', None), ('5', None),
              ('-', None), ('0', None), ('6', None), (':', None), (' ', None), ('ü', None), ('b', None),
              ('e', None), ('r', None), (' ', None), ('1', None), (',', None), ('0', None), ('0', None),
              ('0', None), (' ', None), ('r', None), ('é', None), ('s', None), ('u', None), ('m', None),
              ('é', None), ('s', None), ('?', None), ('</w>', 0)]
BYTE_IDS = [(None, 0, 259), (None, None, 196), (None, None, 157), (None, None, 111), (None, None, 196),
            (None, None, 176), (None, None, 100), (None, None, 196), (None, None, 183), (None, None, 101),
            (None, None, 196), (None, None, 170), (None, None, 33), (None, None, 111), (None, None, 98),
            (None, None, 196), (None, None, 176), (None, None, 119), (None, None, 102), (None, None, 33),
            (None, None, 100), (None, None, 98), (None, None, 103), (None, None, 196), (None, None, 170),
            (None, None, 45), (None, None, 33), (None, None, 51), (None, None, 49), (None, None, 51),
            (None, None, 53), (None, None, 46), (None, None, 49), (None, None, 54), (None, None, 46),
            (None, None, 49), (None, None, 55), (None, None, 59), (None, None, 33), (None, None, 196),
            (None, None, 189), (None, None, 99), (None, None, 102), (None, None, 115), (None, None, 33),
            (None, None, 50), (None, None, 45), (None, None, 49), (None, None, 49), (None, None, 49),
            (None, None, 33), (None, None, 115), (None, None, 196), (None, None, 170), (None, None, 116),
            (None, None, 118), (None, None, 110), (None, None, 196), (None, None, 170), (None, None, 116),
            (None, None, 64), (None, 0, 260)]
WHITESPACE = [["AllenNLP's", 'default', 'tokenizer', 'splits', "don't,", 'U.S.A.', 'and', '3.5kg!'],
              ['Hello', 'world,', "it's", 'Mr.', "Smith's", '(e-mail:', 'a@b.com).'],
              ['Ünïcödé', 'naïve', 'café,', '2024-05-06:', 'über', '1,000', 'résumés?']]


def spans(tokens) -> list[tuple]:
    return [(token.text, token.idx, token.idx_end) for token in tokens]


def test_spacy_gives_allennlps_tokens_offsets_and_empty_analyses_on_the_blank_pipeline():
    tokens = [SpacyTokenizer().tokenize(sentence) for sentence in SENTENCES]
    assert [spans(each) for each in tokens] == SPACY
    found = {(t.lemma_, t.pos_, t.tag_, t.dep_, t.ent_type_) for each in tokens for t in each}
    assert sorted(found, key=str) == SPACY_ANALYSES


def test_spacy_start_and_end_tokens_are_allennlps():
    tokenizer = SpacyTokenizer(pos_tags=False, start_tokens=["@start@", "<s>"], end_tokens=["@end@"])
    assert spans(tokenizer.tokenize(SENTENCES[0])) == SPACY_BOUNDED


def test_spacy_split_on_spaces_is_allennlps_and_keeps_offsets_across_runs_of_spaces():
    tokenizer = SpacyTokenizer(split_on_spaces=True)
    assert spans(tokenizer.tokenize(SENTENCES[0])) == SPACY_SPLIT_ON_SPACES
    # AllenNLP raised on a run of spaces (spaCy refuses the empty word it split off); here it separates words
    assert spans(tokenizer.tokenize("  Don't  split\tthis   U.S.A. ")) == [
        ("Don't", 2, 7), ("split\tthis", 9, 19), ("U.S.A.", 22, 28)]


def test_spacy_batches_tokenize_as_single_texts_and_spacy_tokens_are_kept_when_asked():
    tokenizer = SpacyTokenizer()
    assert [spans(tokens) for tokens in tokenizer.batch_tokenize(SENTENCES)] == SPACY
    kept = SpacyTokenizer(keep_spacy_tokens=True).tokenize(SENTENCES[1])
    assert type(kept[0]).__module__.startswith("spacy")  # spaCy's tokens have no idx_end
    assert [(t.text, t.idx) for t in kept] == [(text, idx) for text, idx, _ in SPACY[1]]


def test_spacy_without_its_model_package_tokenizes_with_the_blank_pipeline_and_says_so_once(caplog):
    spacy_tokenizer.pipeline.cache_clear()
    with caplog.at_level(logging.INFO, logger=spacy_tokenizer.__name__):
        for sentence in SENTENCES:  # two tokenizers of one config, as a reader's train and validation ones
            SpacyTokenizer().tokenize(sentence)
            SpacyTokenizer().tokenize(sentence)
    assert [record.getMessage() for record in caplog.records] == [
        "spaCy model package en_core_web_sm is not installed: tokenizing with spacy.blank('en'), the same rules "
        "without lemmas, tags, parses or entities"]


@pytest.mark.parametrize("asked, path, wanted", [
    ({"pos_tags": True}, "pos_tags", "part-of-speech tags need"),
    ({"parse": True, "ner": True}, "parse", "dependency parses and named entities need"),
])
def test_analyses_without_the_model_package_are_one_line_naming_the_package(asked, path, wanted):
    with pytest.raises(ConfigError) as raised:
        SpacyTokenizer(**asked)
    assert str(raised.value) == (f"{path}: {wanted} the spaCy model package en_core_web_sm, which is not installed "
                                 "(python -m spacy download en_core_web_sm); without it only tokens are made")


def test_a_language_spacy_has_no_rules_for_is_named_and_a_bare_code_is_its_blank_pipeline():
    with pytest.raises(ConfigError, match=r'^language: "zz_news_sm" is neither an installed spaCy model package '
                                          r"nor a language spaCy has rules for \(no spacy.lang.zz\)$"):
        SpacyTokenizer(language="zz_news_sm")
    assert [t.text for t in SpacyTokenizer(language="de").tokenize("Das ist z.B. ein Haus.")] == [
        "Das", "ist", "z.B.", "ein", "Haus", "."]


def test_letters_digits_is_allennlps_with_start_and_end_tokens_where_its_word_tokenizer_put_them():
    assert [[(t.text, t.idx) for t in LettersDigitsTokenizer().tokenize(s)] for s in SENTENCES] == LETTERS_DIGITS
    bounded = LettersDigitsTokenizer(start_tokens=["@start@"], end_tokens=["@end@"]).tokenize("ab12")
    assert [(t.text, t.idx) for t in bounded] == [("@start@", 0), ("ab", 0), ("12", 2), ("@end@", -1)]


def test_character_tokens_and_byte_ids_are_allennlps():
    characters = CharacterTokenizer(lowercase_characters=True, start_tokens=["<w>"], end_tokens=["</w>"])
    assert [(t.text, t.idx) for t in characters.tokenize(SENTENCES[2])] == CHARACTERS
    byte_ids = CharacterTokenizer(byte_encoding="utf-8", start_tokens=[259], end_tokens=[260])
    assert [(t.text, t.idx, t.text_id) for t in byte_ids.tokenize(SENTENCES[2])] == BYTE_IDS
    field = byte_ids.to_field(SENTENCES[2])  # ids that bypass the vocabulary, 0 left for padding
    assert isinstance(field, TokenIdsField) and field.ids.tolist() == [row[2] for row in BYTE_IDS]


def test_character_settings_that_cannot_work_are_named_by_key():
    def problems(**arguments):
        settings = {"byte_encoding": None, "lowercase_characters": False, "start_tokens": None, "end_tokens": None}
        return [str(p) for p in CharacterTokenizer.argument_problems(settings | arguments)]

    assert problems(byte_encoding="utf-9") == ['byte_encoding: "utf-9" is not an encoding Python knows (e.g. "utf-8")']
    assert problems(byte_encoding="utf-8", start_tokens=[259, "<w>"]) == [
        "start_tokens[1]: must be an integer id (byte_encoding is set), got '<w>'"]
    assert problems(end_tokens=[260]) == ["end_tokens[0]: must be a string, got 260"]


def test_just_spaces_is_allennlps_whitespace():
    assert [[t.text for t in WhitespaceTokenizer().tokenize(s)] for s in SENTENCES] == WHITESPACE


def test_every_tokenizer_is_registered_under_allennlps_name():
    for name, cls in (("spacy", SpacyTokenizer), ("letters_digits", LettersDigitsTokenizer),
                      ("character", CharacterTokenizer), ("just_spaces", WhitespaceTokenizer),
                      ("whitespace", WhitespaceTokenizer)):
        assert Tokenizer.by_name(name) is cls


NO_SPACY_IMPORT = """
import json, sys
from distrain.plugins import import_builtins
from distrain.experiment.plan import validate_experiment
import_builtins()
validate_experiment(json.loads(sys.argv[1]))
print(json.dumps(sorted(name for name in sys.modules if name.split(".")[0] in ("spacy", "thinc"))))
"""


def spacy_config(text_data) -> dict:
    config = text_config(text_data)
    config["dataset_reader"]["tokenizer"] = {"type": "spacy"}
    return config


def test_validating_a_config_that_uses_spacy_does_not_import_spacy(text_data):
    result = subprocess.run([sys.executable, "-c", NO_SPACY_IMPORT, json.dumps(spacy_config(text_data))],
                            env=cli_environment(), capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout) == []


def test_text_classification_with_the_spacy_tokenizer_passes_check_and_tags_without_the_model_are_one_line(
        tmp_path, text_data):
    config = spacy_config(text_data)
    checked = run_cli("check", str(write_config(tmp_path / "spacy.json", config)))
    assert checked.returncode == 0, checked.stderr
    assert "config OK" in checked.stdout
    config["dataset_reader"]["tokenizer"]["ner"] = True
    refused = run_cli("check", str(write_config(tmp_path / "spacy_ner.json", config)))
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "error: dataset_reader.tokenizer.ner: named entities need the spaCy model package en_core_web_sm, which is "
        "not installed (python -m spacy download en_core_web_sm); without it only tokens are made")
