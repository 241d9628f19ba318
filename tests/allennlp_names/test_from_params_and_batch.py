"""AllenNLP's ``from_params`` on distrain's classes, ``FromParams`` for a user's own, ``Batch``, and two helpers
AllenNLP's tests import (``assert_allclose``, ``cycle_iterator_function``)."""

from __future__ import annotations

import itertools

import pytest
import torch

import distrain.allennlp  # noqa: F401 - the layer that gives the registrable classes from_params
from distrain.allennlp.common import FromParams, Params
from distrain.allennlp.common.testing import assert_allclose
from distrain.allennlp.common.util import cycle_iterator_function
from distrain.allennlp.data import Batch, Instance, Vocabulary
from distrain.config.errors import ConfigError
from distrain.data.fields import LabelField, TextField
from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.modules.token_embedders.embedding import Embedding


def vocabulary() -> Vocabulary:
    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(["a", "b", "c"], "tokens")
    return vocab


def test_from_params_builds_a_registered_kind_by_type_with_the_extras():
    encoder = Seq2VecEncoder.from_params(Params({"type": "cnn", "embedding_dim": 4, "num_filters": 3,
                                                 "ngram_filter_sizes": [2]}))
    assert type(encoder).__name__ == "CnnEncoder" and encoder.get_output_dim() == 3
    embedding = Embedding.from_params(vocab=vocabulary(), params=Params({"embedding_dim": 6}))
    assert embedding.weight.shape == (5, 6)  # padding, OOV and the three tokens: the vocabulary's size, an extra


def test_from_params_reports_the_blocks_problems_with_their_keys():
    with pytest.raises(ConfigError) as raised:
        Embedding.from_params(vocab=vocabulary(), params=Params({"embedding_dimm": 6}))
    message = str(raised.value)
    assert 'embedding_dimm: unknown key; did you mean "embedding_dim"?' in message
    assert "embedding_dim: missing required key" in message
    with pytest.raises(ConfigError, match='type: unknown'):
        Seq2VecEncoder.from_params(Params({"type": "no_such_encoder"}))


def test_a_users_from_params_class_and_the_vocabulary_block():
    class Scaled(FromParams):
        def __init__(self, factor: int, offset: float = 0.5) -> None:
            self.factor, self.offset = factor, offset

    built = Scaled.from_params(Params({"factor": 3}))
    assert (built.factor, built.offset) == (3, 0.5)
    instances = [Instance({"text": TextField(["a", "b", "a"]), "label": LabelField("x")})]
    vocab = Vocabulary.from_params(Params({"min_count": {"tokens": 2}}), instances=instances)
    assert vocab.get_token_to_index_vocabulary("tokens") == {"@@PADDING@@": 0, "@@UNKNOWN@@": 1, "a": 2}


def test_batch_pads_its_instances_into_the_models_tensors():
    instances = [Instance({"text": TextField(["a", "b"], {"tokens": _indexer()}), "label": LabelField("x")}),
                 Instance({"text": TextField(["c"], {"tokens": _indexer()}), "label": LabelField("y")})]
    vocab = Vocabulary.from_instances(instances)
    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    ids = [vocab.get_token_index(token) for token in "abc"]
    assert tensors["text"]["tokens"]["tokens"].tolist() == [[ids[0], ids[1]], [ids[2], 0]]
    assert tensors["label"].tolist() == [vocab.get_token_index("x", "labels"), vocab.get_token_index("y", "labels")]
    assert len(batch) == 2 and list(batch) == instances


def test_the_helpers_allennlps_tests_import():
    assert list(itertools.islice(cycle_iterator_function(lambda: iter([1, 2])), 5)) == [1, 2, 1, 2, 1]
    assert_allclose(torch.tensor([1.0, 2.0]), [1.0, 2.0 + 1e-7])
    with pytest.raises(AssertionError):
        assert_allclose([1.0, 2.0], [1.0, 2.1])


def _indexer():
    from distrain.data.token_indexers.single_id import SingleIdTokenIndexer

    return SingleIdTokenIndexer()
