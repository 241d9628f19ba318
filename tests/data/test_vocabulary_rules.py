"""The vocabulary block's rules, AllenNLP's: which namespaces are padded, what is kept, added, extended."""

from __future__ import annotations

import gzip
from collections import Counter

import pytest

from support.paths import TESTS

from distrain.data.vocabulary import OOV_TOKEN, PADDING_TOKEN, UnknownLabel, Vocabulary, VocabularyConfig

COUNTS = {
    "tokens": Counter({"the": 5, "cat": 3, "sat": 1, "mat": 1}),
    "ner_tags": Counter({"O": 7, "B-PER": 2}),
    "chars": Counter({"a": 4, "b": 1}),
}


def test_padded_namespaces_get_padding_and_oov_and_the_default_non_padded_ones_do_not():
    vocab = Vocabulary.from_counters(COUNTS)
    assert vocab.tokens("tokens")[:2] == [PADDING_TOKEN, OOV_TOKEN]
    assert vocab.tokens("ner_tags") == ["O", "B-PER"]
    assert vocab.tokens("chars") == [PADDING_TOKEN, OOV_TOKEN, "a", "b"]


def test_non_padded_namespaces_names_and_suffixes_replace_the_default():
    config = VocabularyConfig(non_padded_namespaces=["chars"])
    vocab = Vocabulary.from_counters(COUNTS, config)
    assert vocab.tokens("chars") == ["a", "b"]
    assert vocab.tokens("ner_tags")[:2] == [PADDING_TOKEN, OOV_TOKEN]  # *tags is no longer non-padded


def test_min_count_and_max_vocab_size_count_only_real_tokens():
    vocab = Vocabulary.from_counters(COUNTS, VocabularyConfig(min_count={"tokens": 2}))
    assert vocab.tokens("tokens") == [PADDING_TOKEN, OOV_TOKEN, "the", "cat"]
    assert vocab.tokens("chars") == [PADDING_TOKEN, OOV_TOKEN, "a", "b"]  # 1 for the namespaces not named
    capped = Vocabulary.from_counters(COUNTS, VocabularyConfig(max_vocab_size=1))
    assert capped.tokens("tokens") == [PADDING_TOKEN, OOV_TOKEN, "the"]
    assert capped.tokens("ner_tags") == ["O", "B-PER"]  # labels are never trimmed


def test_tokens_to_add_are_kept_whatever_their_count_in_a_namespace_of_their_own_too():
    config = VocabularyConfig(min_count=2, tokens_to_add={"tokens": ["sat", "zebra"], "extra": ["x"]})
    vocab = Vocabulary.from_counters(COUNTS, config)
    assert vocab.tokens("tokens") == [PADDING_TOKEN, OOV_TOKEN, "the", "cat", "sat", "zebra"]
    assert vocab.tokens("extra") == [PADDING_TOKEN, OOV_TOKEN, "x"]


@pytest.mark.parametrize("only_pretrained, expected", [
    (False, ["the", "cat", "mat"]),  # kept by count, or below min_count when the file has it
    (True, ["the"]),  # kept only when the file has it, and by count
])
def test_pretrained_files_keep_their_words(tmp_path, only_pretrained, expected):
    vectors = tmp_path / "vectors.txt.gz"
    with gzip.open(vectors, "wt") as handle:
        handle.write("3 2\nthe 0.1 0.2\nmat 0.3 0.4\ndog 0.5 0.6\n")  # a word2vec header, then vectors
    config = VocabularyConfig(min_count=2, pretrained_files={"tokens": str(vectors)},
                              only_include_pretrained_words=only_pretrained)
    assert Vocabulary.from_counters(COUNTS, config).tokens("tokens")[2:] == expected


def test_an_extended_vocabulary_keeps_every_index_and_appends_what_is_new():
    base = Vocabulary({"tokens": [PADDING_TOKEN, OOV_TOKEN, "mat", "dog"], "labels": ["pos", "neg"]})
    vocab = Vocabulary.from_counters(
        {"tokens": COUNTS["tokens"], "labels": Counter({"neg": 1})}, VocabularyConfig(), base)
    assert vocab.tokens("tokens") == [PADDING_TOKEN, OOV_TOKEN, "mat", "dog", "the", "cat", "sat"]
    assert vocab.tokens("labels") == ["pos", "neg"]


def test_an_unknown_token_is_oov_even_in_a_namespace_no_data_filled_and_an_unknown_label_is_named():
    vocab = Vocabulary.from_counters(COUNTS)
    assert vocab.token_indices(["the", "zebra"]) == [2, 1]
    assert vocab.token_indices(["u.n."], "test_tokens") == [1]  # AllenNLP's: padded namespaces start as PAD, OOV
    with pytest.raises(UnknownLabel, match='label "I-LOC" is not in the vocabulary\'s "ner_tags" namespace'):
        vocab.label_index("I-LOC", "ner_tags")


def test_a_label_the_given_vocabulary_lacks_is_one_line_naming_the_file_and_instance(tmp_path):
    import json
    from pathlib import Path

    from support.cli import run_cli

    golden = TESTS / "allennlp_golden" / "simple_tagger" / "model.tar.gz"
    data = tmp_path / "tags.tsv"
    data.write_text("cats###N\tare###V\tanimals###N\n" "cats###N\tpurr###X\n")
    config = {"dataset_reader": {"type": "sequence_tagging"}, "train_data_path": str(data),
              "validation_data_path": str(data),
              "vocabulary": {"type": "from_files", "directory": str(golden)},  # AllenNLP's: labels N and V only
              "model": {"type": "simple_tagger",
                        "text_field_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 4}}},
                        "encoder": {"type": "lstm", "input_size": 4, "hidden_size": 4}},
              "data_loader": {"batch_size": 2}, "trainer": {"optimizer": "adam", "num_epochs": 1}}
    (tmp_path / "config.json").write_text(json.dumps(config))
    trained = run_cli("train", "config.json", "-s", "runs/x", cwd=tmp_path)
    assert trained.returncode == 2, trained.stderr
    assert "Traceback" not in trained.stderr
    assert f'{data}: instance 2: label "X" is not in the vocabulary\'s "labels" namespace' in trained.stderr
    assert not (tmp_path / "runs" / "x").exists()
