"""The vocabulary's lookups, growth by hand, persistence and counting rules, each compared with the exact indices
(test_vocabulary_rules.py has AllenNLP's rules on whole datasets)."""

from __future__ import annotations

from collections import Counter

import pytest

from distrain.config.errors import Problem
from distrain.data.vocabulary import (OOV_TOKEN, PADDING_TOKEN, UnknownLabel, Vocabulary, VocabularyConfig,
                                      is_padded)

PAD = [PADDING_TOKEN, OOV_TOKEN]


def counted(**counts: dict) -> dict[str, Counter]:
    return {namespace: Counter(values) for namespace, values in counts.items()}


def test_counting_keeps_min_count_and_up_to_max_vocab_size_most_frequent_first_ties_in_first_seen_order():
    counters = counted(tokens={"c": 1, "a": 3, "b": 3, "d": 2}, labels={"y": 1, "x": 2})
    vocab = Vocabulary.from_counters(counters, VocabularyConfig(min_count=2))
    assert vocab.tokens("tokens") == PAD + ["a", "b", "d"]  # c (1 < 2) left out; a and b tie: first counted first
    assert vocab.tokens("labels") == ["x", "y"]  # a non-padded namespace keeps everything, however rare
    vocab = Vocabulary.from_counters(counters, VocabularyConfig(max_vocab_size=2))
    assert vocab.tokens("tokens") == PAD + ["a", "b"]
    vocab = Vocabulary.from_counters(counters, VocabularyConfig(max_size=4))  # the whole namespace: 2 + 2 tokens
    assert vocab.tokens("tokens") == PAD + ["a", "b"]
    vocab = Vocabulary.from_counters(counters, VocabularyConfig(max_size=5, max_vocab_size=1))  # the smaller wins
    assert vocab.tokens("tokens") == PAD + ["a"]
    vocab = Vocabulary.from_counters(counters, VocabularyConfig(max_size=1))  # no room for any token
    assert vocab.tokens("tokens") == PAD


def test_settings_per_namespace_apply_to_their_namespace_only():
    counters = counted(tokens={"a": 3, "b": 1}, chars={"x": 3, "y": 1, "z": 2})
    vocab = Vocabulary.from_counters(counters, VocabularyConfig(min_count={"chars": 2}, max_vocab_size={"tokens": 1}))
    assert vocab.tokens("tokens") == PAD + ["a"]  # min_count 1 by default, at most one token
    assert vocab.tokens("chars") == PAD + ["x", "z"]  # no limit on chars
    vocab = Vocabulary.from_counters(counters, VocabularyConfig(max_size={"chars": 3}))
    assert vocab.tokens("chars") == PAD + ["x"] and vocab.tokens("tokens") == PAD + ["a", "b"]


def test_tokens_to_add_and_a_base_vocabulary_keep_their_indices():
    base = Vocabulary({"tokens": PAD + ["old"], "labels": ["neg"]})
    counters = counted(tokens={"new": 2, "old": 5}, labels={"pos": 1, "neg": 1})
    config = VocabularyConfig(tokens_to_add={"tokens": ["added", "new"], "extra": ["e"], "extra_tags": ["T"]})
    vocab = Vocabulary.from_counters(counters, config, base=base)
    assert vocab.tokens("tokens") == PAD + ["old", "new", "added"]
    assert vocab.tokens("labels") == ["neg", "pos"]
    assert vocab.tokens("extra") == PAD + ["e"] and vocab.tokens("extra_tags") == ["T"]
    assert Vocabulary.from_counters({}) == Vocabulary()


def test_lookups_of_known_and_unknown_tokens_and_labels():
    vocab = Vocabulary({"tokens": PAD + ["a", "b"], "labels": ["neg", "pos"], "pos": PAD + ["NN"]})
    assert vocab.token_indices(["b", "zzz", "a"]) == [3, 1, 2]
    assert vocab.token_indices(["a", "b"], "never_filled") == [1, 1]  # an empty padded namespace: OOV
    assert vocab.token_indices(["pos", "x"], "labels") == [1, 1]  # no OOV entry: index 1 stands in
    assert vocab.get_token_index("b") == 3 and vocab.get_token_index("zzz") == 1
    assert vocab.get_token_index("anything", "never_filled") == 1
    assert vocab.get_token_index("pos", "labels") == 1
    with pytest.raises(UnknownLabel) as unknown:
        vocab.get_token_index("maybe", "labels")
    assert (unknown.value.label, unknown.value.namespace) == ("maybe", "labels")
    assert str(unknown.value) == ('label "maybe" is not in the vocabulary\'s "labels" namespace (it has no OOV entry: '
                                  'labels come from the splits the vocabulary counts, or from its files)')
    with pytest.raises(UnknownLabel):
        vocab.get_token_index("x", "new_labels")  # a non-padded namespace nothing filled
    assert vocab.label_index("pos") == 1 and vocab.label_index("VB", "pos") == 1 and vocab.label_index("NN", "pos") == 2
    assert vocab.token(3) == "b" and vocab.get_token_from_index(0, "labels") == "neg"
    assert vocab.get_token_from_index(2) == "a"
    assert vocab.size() == vocab.get_vocab_size() == 4 and vocab.size("labels") == 2 and vocab.size("none") == 0
    assert vocab.get_vocab_size("pos") == 3
    assert vocab.get_index_to_token_vocabulary("labels") == {0: "neg", 1: "pos"}
    assert vocab.get_index_to_token_vocabulary("none") == {}
    assert vocab.get_token_to_index_vocabulary("labels") == {"neg": 0, "pos": 1}
    assert vocab.get_token_to_index_vocabulary("none") == {}
    assert vocab.namespaces() == ["labels", "pos", "tokens"] and vocab.get_namespaces() == {"labels", "pos", "tokens"}
    assert vocab.is_padded_namespace("tokens") and not vocab.is_padded_namespace("labels")
    assert vocab.is_padded_namespace("never_filled")


def test_adding_by_hand_starts_a_namespace_with_or_without_padding_by_its_name():
    vocab = Vocabulary()
    assert vocab.add_token_to_namespace("a") == 2 and vocab.add_token_to_namespace("a") == 2
    assert vocab.add_tokens_to_namespace(["b", "a", "c"]) == [3, 2, 4]
    assert vocab.add_token_to_namespace("x", "ner_tags") == 0 and vocab.add_token_to_namespace("y", "ner_tags") == 1
    assert vocab.add_tokens_to_namespace(["p"], "labels") == [0]
    assert vocab.tokens("tokens") == PAD + ["a", "b", "c"] and vocab.tokens("ner_tags") == ["x", "y"]
    assert vocab.get_token_index("c") == 4 and vocab.get_token_index("y", "ner_tags") == 1
    with pytest.raises(ValueError, match=r"^vocabulary tokens are strings, not int \(7\)$"):
        vocab.add_token_to_namespace(7)


def test_extending_keeps_every_index_and_appends_the_others_new_tokens_in_their_order():
    mine = Vocabulary({"tokens": PAD + ["a", "b"], "labels": ["x"]})
    other = Vocabulary({"tokens": PAD + ["c", "b", "d"], "chars": PAD + ["q"]})
    extended = mine.extended_with(other)
    assert extended.tokens("tokens") == PAD + ["a", "b", "c", "d"]
    assert extended.tokens("labels") == ["x"] and extended.tokens("chars") == PAD + ["q"]
    assert extended.get_token_index("d") == 5 and mine.tokens("tokens") == PAD + ["a", "b"]


def test_saved_and_loaded_it_is_the_same_vocabulary_and_equality_is_by_tokens(tmp_path):
    vocab = Vocabulary({"tokens": PAD + ["a", "line\nbreak", "é"], "labels": ["neg", "pos"]})
    vocab.save(tmp_path / "vocab" / "nested")
    assert (tmp_path / "vocab" / "nested" / "labels.txt").read_text("utf-8") == '"neg"\n"pos"\n'
    loaded = Vocabulary.load(tmp_path / "vocab" / "nested")
    assert loaded == vocab and loaded.get_token_index("line\nbreak") == 3 and loaded.token(4) == "é"
    assert vocab != Vocabulary({"tokens": PAD + ["a"]}) and vocab != vocab._tokens
    assert repr(vocab) == "Vocabulary(labels: 2, tokens: 5)" and repr(Vocabulary()) == "Vocabulary()"


def test_padded_namespaces_are_those_no_pattern_names():
    assert is_padded("tokens") and not is_padded("ner_tags") and not is_padded("labels")
    assert is_padded("tags_of_mine") and is_padded("labels", ["*tags"]) and not is_padded("labels", ["labels"])
    assert not is_padded("my_labels") and is_padded("mylabel")
    assert VocabularyConfig(non_padded_namespaces=["chars"]).is_padded("ner_tags")
    assert not VocabularyConfig(non_padded_namespaces=["chars"]).is_padded("chars")


@pytest.mark.parametrize("arguments,expected", [
    ({"type": "from_instances", "directory": None}, []),
    ({"type": "empty", "directory": None}, []),
    ({"type": "from_instances", "directory": "d"}, [("directory", "is read only with type from_files or extend")]),
    ({"type": "from_files", "directory": None}, [("directory", "missing: from_files needs the vocabulary directory")]),
    ({"type": "extend", "directory": None}, [("directory", "missing: extend needs the vocabulary directory")]),
    ({"type": "extend", "directory": "d"}, []),
    ({"type": "from_files", "directory": "d"}, []),
])
def test_the_directory_goes_with_from_files_and_extend_only(arguments, expected):
    problems = VocabularyConfig.argument_problems(arguments)
    assert all(isinstance(problem, Problem) for problem in problems)
    assert [(problem.path, problem.message) for problem in problems] == expected
