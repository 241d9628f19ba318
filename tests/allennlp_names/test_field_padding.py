"""AllenNLP's field-by-field padding on the ``allennlp`` fields, instances and ``Batch``, by hand-worked cases, and
the same instances through distrain's own loader (the form its models receive must not change)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from distrain.allennlp.data import Batch, Instance, Token, Vocabulary
from distrain.allennlp.data.fields import (AdjacencyField, ArrayField, IndexField, LabelField, ListField,
                                           MetadataField, SequenceLabelField, TensorField, TextField)
from distrain.allennlp.data.token_indexers import SingleIdTokenIndexer, TokenCharactersIndexer
from distrain.config.errors import ConfigError
from distrain.data.dataset import IndexedDataset


def vocabulary() -> Vocabulary:
    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(["this", "is", "a", "sentence"], "words")  # 2..5
    vocab.add_tokens_to_namespace(["s", "e", "n"], "characters")  # 2..4
    vocab.add_tokens_to_namespace(["B", "O"], "labels")  # 0, 1
    return vocab


def words(*texts: str) -> TextField:
    return TextField([Token(text) for text in texts], {"words": SingleIdTokenIndexer("words")})


def test_a_text_field_pads_each_indexer_to_the_lengths_given():
    field = TextField([Token("sense"), Token("is")], {"words": SingleIdTokenIndexer("words"),
                                                      "chars": TokenCharactersIndexer("characters")})
    with pytest.raises(ConfigError):
        field.get_padding_lengths()  # not indexed yet
    field.index(vocabulary())
    assert field._indexed_tokens["words"]["tokens"] == [1, 3]  # "sense" is OOV
    lengths = field.get_padding_lengths()
    assert lengths == {"words___tokens": 2, "chars___token_characters": 2, "chars___num_token_characters": 5}
    tensors = field.as_tensor({**lengths, "words___tokens": 4, "chars___token_characters": 3})
    assert tensors["words"]["tokens"].tolist() == [1, 3, 0, 0]
    assert tensors["chars"]["token_characters"].tolist() == [[2, 3, 4, 2, 3], [1, 2, 0, 0, 0], [0, 0, 0, 0, 0]]
    empty = field.empty_field()
    assert len(empty) == 0 and empty.get_padding_lengths()["words___tokens"] == 0


def test_a_list_field_fills_up_with_its_first_elements_empty_field():
    vocab = vocabulary()
    texts = ListField([words("this", "is"), words("a", "sentence", "is")])
    texts.index(vocab)
    assert texts.get_padding_lengths() == {"num_fields": 2, "list_words___tokens": 3}
    padded = texts.as_tensor({"num_fields": 3, "list_words___tokens": 3})
    assert padded["words"]["tokens"].tolist() == [[2, 3, 0], [4, 5, 3], [0, 0, 0]]
    labels = ListField([LabelField("O"), LabelField("B")])
    labels.index(vocab)
    assert labels.as_tensor({"num_fields": 3}).tolist() == [1, 0, -1]
    spans = ListField([IndexField(1, words("this", "is")), IndexField(0, words("this", "is"))])
    assert spans.as_tensor({"num_fields": 3}).tolist() == [[1], [0], [-1]]


def test_sequence_labels_tensors_adjacency_and_metadata():
    vocab = vocabulary()
    text = words("this", "is", "a")
    tags = SequenceLabelField(["B", "O", "O"], text)
    tags.index(vocab)
    assert tags._indexed_labels == [0, 1, 1] and tags.as_tensor({"num_tokens": 5}).tolist() == [0, 1, 1, 0, 0]
    assert SequenceLabelField([2, 0, 1], text).as_tensor({"num_tokens": 3}).tolist() == [2, 0, 1]  # ids as given
    with pytest.raises(ConfigError):
        SequenceLabelField(["B"], text)
    array = TensorField(np.ones((2, 3), dtype=np.float32), padding_value=-1)
    assert array.get_padding_lengths() == {"dimension_0": 2, "dimension_1": 3}
    padded = array.as_tensor({"dimension_0": 3, "dimension_1": 4})
    assert padded.dtype == torch.float32 and padded[2].tolist() == [-1.0] * 4 and padded[0].tolist() == [1, 1, 1, -1]
    assert ArrayField(np.asarray(7)).as_tensor({}).item() == 7 and len(ArrayField(np.asarray(7))) == 1
    assert TensorField(np.asarray([1, 2])) == TensorField(np.asarray([1, 2]))
    assert TensorField(np.asarray([1, 2])) != TensorField(np.asarray([[1, 2]]))
    arcs = AdjacencyField([(0, 2)], text, ["B"])
    arcs.index(vocab)
    assert arcs.as_tensor({"num_tokens": 3}).tolist() == [[-1, -1, 0], [-1, -1, -1], [-1, -1, -1]]
    with pytest.raises(ConfigError):
        AdjacencyField([(0, 3)], text)
    metadata = MetadataField({"id": 3})
    assert metadata["id"] == 3 and list(metadata) == ["id"] and bool(MetadataField(0))
    with pytest.raises(TypeError):
        len(MetadataField(0))


def instances() -> list[Instance]:
    return [Instance({"text": words("this", "is", "a"), "label": LabelField("B")}),
            Instance({"text": words("sentence"), "label": LabelField("O")})]


def test_a_batch_pads_to_its_longest_and_to_lengths_given():
    batch = Batch(instances())
    batch.index_instances(vocabulary())
    assert batch.get_padding_lengths() == {"text": {"words___tokens": 3}, "label": {}}
    tensors = batch.as_tensor_dict({"text": {"words___tokens": 4}})
    assert tensors["text"]["words"]["tokens"].tolist() == [[2, 3, 4, 0], [5, 0, 0, 0]]
    assert tensors["label"].tolist() == [0, 1]
    with pytest.raises(ConfigError):
        Batch([instances()[0], Instance({"other": LabelField("B")})])


def test_distrains_loader_gives_the_same_nested_text_tensors():
    vocab = vocabulary()
    padded = Batch(instances())
    padded.index_instances(vocab)
    ours = IndexedDataset.from_instances(instances(), vocab).batch(np.arange(2))
    theirs = padded.as_tensor_dict()
    assert set(ours["text"]) == {"words"} and set(ours["text"]["words"]) == {"tokens"}
    assert torch.as_tensor(ours["text"]["words"]["tokens"]).tolist() == theirs["text"]["words"]["tokens"].tolist()
    assert torch.as_tensor(ours["label"]).tolist() == theirs["label"].tolist()


def test_an_instance_counts_indexes_and_tensorises_itself():
    instance = instances()[0]
    counter: dict = {}
    instance.count_vocab_items(counter)
    assert dict(counter["words"]) == {"this": 1, "is": 1, "a": 1} and dict(counter["labels"]) == {"B": 1}
    instance.index_fields(vocabulary())
    assert instance.get_padding_lengths() == {"text": {"words___tokens": 3}, "label": {}}
    assert instance.as_tensor_dict()["text"]["words"]["tokens"].tolist() == [2, 3, 4]
    assert instance.human_readable_dict() == {"text": ["this", "is", "a"], "label": "B"}
    assert instance.duplicate() == instance


def test_indexers_pad_their_own_output():
    indexer = SingleIdTokenIndexer("words", token_min_padding_length=4)
    indexed = indexer.tokens_to_indices([Token("is")], vocabulary())
    assert indexed == {"tokens": [3]} and indexer.get_padding_lengths(indexed) == {"tokens": 4}
    assert indexer.as_padded_tensor_dict({"tokens": [1, 2]}, {"tokens": 3})["tokens"].tolist() == [1, 2, 0]
    assert indexer.get_empty_token_list() == {"tokens": []}
