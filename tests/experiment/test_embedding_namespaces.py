"""An ``embedding`` takes its size from the namespace of the ids it looks up: its ``vocab_namespace`` when the
config names one, else that of the reader's indexer of the same name (a ``characters`` indexer's
``token_characters``, a ``single_id`` indexer's own ``namespace``); a size that cannot hold the namespace is a
config error with its key path when the model is built. Built in-process from resolved configs, no data read."""

from __future__ import annotations

import pytest

from distrain.config.errors import ConfigError
from distrain.data.vocabulary import Vocabulary
from distrain.experiment.plan import validate_experiment

#: namespaces of three sizes, none of them the words' default ``tokens``
VOCAB = Vocabulary({"tokens": ["@@PADDING@@", "@@UNKNOWN@@", "a"],
                    "words": ["@@PADDING@@", "@@UNKNOWN@@", "a", "b", "c"],
                    "token_characters": ["@@PADDING@@", "@@UNKNOWN@@", *"abcdefg"], "labels": ["pos", "neg"]})


def config(indexers: dict, embedders: dict, validation_indexers: dict | None = None) -> dict:
    reader = {"type": "text_classification_json", "token_indexers": indexers}
    config = {"dataset_reader": reader, "train_data_path": "never-read.jsonl",
              "model": {"type": "basic_classifier", "text_field_embedder": {"token_embedders": embedders},
                        "seq2vec_encoder": {"type": "boe"}}}
    if validation_indexers is not None:
        config["validation_dataset_reader"] = {**reader, "token_indexers": validation_indexers}
    return config


def embedders_of(config: dict):
    return validate_experiment(config)[1].build().model.construct(vocab=VOCAB).text_field_embedder


WORDS = {"type": "single_id", "namespace": "words"}
CHARACTERS = {"type": "character_encoding", "embedding": {"embedding_dim": 2},
              "encoder": {"type": "cnn", "num_filters": 2, "ngram_filter_sizes": [2]}}


def test_each_embedding_is_sized_by_the_namespace_its_indexer_writes():
    embedder = embedders_of(config({"words": WORDS, "chars": {"type": "characters"}},
                                   {"words": {"embedding_dim": 3}, "chars": CHARACTERS}))
    assert embedder.embedder("words").weight.shape == (VOCAB.size("words"), 3)
    assert embedder.embedder("chars").embedding.weight.shape == (VOCAB.size("token_characters"), 2)


def test_a_configured_vocab_namespace_wins_over_the_indexers():
    embedder = embedders_of(config({"words": WORDS}, {"words": {"embedding_dim": 3, "vocab_namespace": "tokens"}}))
    assert embedder.embedder("words").weight.shape == (VOCAB.size("tokens"), 3)


def test_an_indexer_name_with_two_namespaces_in_the_readers_decides_nothing():
    embedder = embedders_of(config({"words": WORDS}, {"words": {"embedding_dim": 3}},
                                   validation_indexers={"words": {"type": "single_id"}}))
    assert embedder.embedder("words").weight.shape == (VOCAB.size("tokens"), 3)  # AllenNLP's default


def test_a_stated_size_must_hold_its_indexers_namespace():
    chars = {**CHARACTERS, "embedding": {"embedding_dim": 2, "num_embeddings": 9}}
    embedder = embedders_of(config({"chars": {"type": "characters"}}, {"chars": chars}))
    assert embedder.embedder("chars").embedding.weight.shape == (9, 2)  # exactly enough
    chars["embedding"]["num_embeddings"] = 8
    with pytest.raises(ConfigError) as raised:
        embedders_of(config({"chars": {"type": "characters"}}, {"chars": chars}))
    assert str(raised.value) == ('model.text_field_embedder.token_embedders.chars.embedding: num_embeddings is 8, but '
                                 'namespace "token_characters" of the vocabulary has 9 entries; leave num_embeddings '
                                 'out to take that size')


def test_a_namespace_the_vocabulary_lacks_is_named_with_the_ones_it_has():
    with pytest.raises(ConfigError) as raised:
        embedders_of(config({"words": WORDS}, {"words": {"embedding_dim": 3, "vocab_namespace": "word"}}))
    assert str(raised.value) == ('model.text_field_embedder.token_embedders.words: the vocabulary has no namespace '
                                 '"word" to size this embedding by (it has: labels, token_characters, tokens, words)')


def test_a_stated_size_without_a_known_namespace_is_left_as_it_is():
    """An embedding not under a text field's embedders (or paired with no indexer) may look up any ids."""
    embedder = embedders_of(config({"words": WORDS}, {"other": {"embedding_dim": 3, "num_embeddings": 2}}))
    assert embedder.embedder("other").weight.shape == (2, 3)
