"""``whitespace`` is AllenNLP's tokenizer (its second name ``just_spaces``): split on whitespace, keep case and
punctuation. An AllenNLP config naming it, trained by distrain on AllenNLP's IMDB fixtures, builds AllenNLP's
vocabulary, namespace by namespace and index by index (the golden file is AllenNLP 2.10.1's, made by
tests/allennlp_oracle/whitespace_vocabulary.py). distrain's lowercasing, punctuation-splitting tokenizer is
``words_and_punctuation``."""

from __future__ import annotations

import json
import tarfile

from distrain.data.tokenizer import Tokenizer
from distrain.data.tokenizers.just_spaces import WhitespaceTokenizer
from distrain.data.tokenizers.words_and_punctuation import WordTokenizer
from distrain.data.vocabulary import Vocabulary
from distrain.plugins import import_builtins
from support.allennlp_fixtures import ALLENNLP
from support.cli import run_cli
from support.configs import write_config
from support.paths import TESTS

GOLDEN = TESTS / "allennlp_golden" / "whitespace_vocabulary.json"


def test_whitespace_and_just_spaces_name_allennlps_tokenizer():
    import_builtins()
    assert Tokenizer.by_name("whitespace") is Tokenizer.by_name("just_spaces") is WhitespaceTokenizer
    assert Tokenizer.name_of(WhitespaceTokenizer) == "whitespace"
    assert [token.text for token in WhitespaceTokenizer().tokenize("It's  GREAT, isn't it?")] == [
        "It's", "GREAT,", "isn't", "it?"]
    assert Tokenizer.by_name("words_and_punctuation") is WordTokenizer
    assert WordTokenizer().tokenize("It's GREAT!") == ["it", "'", "s", "great", "!"]


def test_an_allennlp_whitespace_config_builds_allennlps_vocabulary(tmp_path):
    golden = json.loads(GOLDEN.read_text())
    config = golden["config"] | {"trainer": golden["config"]["trainer"] | {"progress_bar": False}}
    for key in ("train_data_path", "validation_data_path"):
        config[key] = str(ALLENNLP / config[key])
    trained = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", "run", cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    with tarfile.open(tmp_path / "run" / "model.tar.gz") as archive:
        archive.extractall(tmp_path / "archive", filter="data")
    vocabulary = Vocabulary.load(tmp_path / "archive" / "vocabulary")
    assert sorted(vocabulary.get_namespaces()) == sorted(golden["namespaces"])
    for namespace, tokens in golden["namespaces"].items():
        assert vocabulary.tokens(namespace) == tokens, namespace
