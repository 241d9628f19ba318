"""``allennlp.data.dataset_readers.dataset_utils.span_utils``: spans from tags, by hand-worked cases."""

from __future__ import annotations

import pytest

from distrain.allennlp.data.dataset_readers.dataset_utils import span_utils
from distrain.errors import ConfigError


def test_bio_spans_include_ill_formed_ones_and_skip_ignored_labels():
    tags = ["B-A", "I-A", "O", "I-B", "B-A", "I-B"]
    assert sorted(span_utils.bio_tags_to_spans(tags)) == [("A", (0, 1)), ("A", (4, 4)), ("B", (3, 3)),
                                                           ("B", (5, 5))]
    assert sorted(span_utils.bio_tags_to_spans(tags, ["A"])) == [("B", (3, 3)), ("B", (5, 5))]
    with pytest.raises(span_utils.InvalidTagSequence):
        span_utils.bio_tags_to_spans(["B-A", "U-A"])


def test_iob1_an_inside_tag_after_outside_opens_a_span():
    assert sorted(span_utils.iob1_tags_to_spans(["I-A", "I-A", "B-A", "O", "I-B"])) == [
        ("A", (0, 1)), ("A", (2, 2)), ("B", (4, 4))]


def test_bioul_requires_a_closed_span():
    assert span_utils.bioul_tags_to_spans(["U-A", "B-B", "I-B", "L-B"]) == [("A", (0, 0)), ("B", (1, 3))]
    with pytest.raises(span_utils.InvalidTagSequence):
        span_utils.bioul_tags_to_spans(["B-A", "O"])


def test_bmes_and_the_conversion_to_bioul():
    assert sorted(span_utils.bmes_tags_to_spans(["B-A", "E-A", "M-A", "S-B"])) == [
        ("A", (0, 1)), ("A", (2, 2)), ("B", (3, 3))]
    assert span_utils.to_bioul(["I-A", "I-A", "B-A", "O"], encoding="IOB1") == ["B-A", "L-A", "U-A", "O"]
    with pytest.raises(span_utils.InvalidTagSequence):
        span_utils.to_bioul(["O", "I-A"], encoding="BIO")


def test_enumerate_spans_by_width_with_offset_and_filter():
    words = ["a", "b", "c"]
    assert span_utils.enumerate_spans(words) == [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]
    assert span_utils.enumerate_spans(words, offset=10, min_span_width=2) == [(10, 11), (10, 12), (11, 12)]
    assert span_utils.enumerate_spans(words, filter_function=lambda span: "b" not in span) == [(0, 0), (2, 2)]


def test_multilabel_span_and_flag_fields_count_and_index():
    from distrain.allennlp.data import Instance, Vocabulary
    from distrain.allennlp.data.fields import FlagField, ListField, MultiLabelField, SpanField, TextField

    text = TextField(["a", "b", "c"])
    instances = [Instance({"labels": MultiLabelField(["x", "z"]), "span": SpanField(0, 2, text)}),
                 Instance({"labels": MultiLabelField(["y"])})]
    vocabulary = Vocabulary.from_instances(instances)
    # ties in count keep the order the labels were first counted (AllenNLP's stable sort)
    assert vocabulary.get_token_to_index_vocabulary("labels") == {"x": 0, "z": 1, "y": 2}
    assert instances[0]["labels"].index(vocabulary).tolist() == [1, 1, 0]
    assert instances[0]["labels"].as_tensor({}).tolist() == [1, 1, 0]
    assert MultiLabelField([2], skip_indexing=True, num_labels=4).as_tensor({}).tolist() == [0, 0, 1, 0]
    with pytest.raises(ConfigError):
        MultiLabelField([1, 2])  # ints are ids only with skip_indexing
    assert instances[0]["span"].index(vocabulary).tolist() == [0, 2]
    with pytest.raises(ValueError):
        SpanField(1, 3, text)
    assert SpanField(0, 2, text) == (0, 2) == instances[0]["span"].human_readable_repr()
    assert ListField([SpanField(1, 1, text)]).field_list[0].empty_value == -1
    assert FlagField("train").batch_tensors(["train", "train"]) == "train"
    with pytest.raises(ValueError):
        FlagField("train").batch_tensors(["train", "test"])


def test_label_and_index_fields_answer_allennlps_field_calls():
    from distrain.allennlp.data import Vocabulary
    from distrain.allennlp.data.fields import IndexField, LabelField, TextField

    vocabulary = Vocabulary()
    vocabulary.add_tokens_to_namespace(["neg", "pos"], "labels")
    label = LabelField("pos")
    assert label.index(vocabulary) == 1 and label.as_tensor(label.get_padding_lengths()).item() == 1
    assert LabelField(3, skip_indexing=True).as_tensor({}).item() == 3
    assert label.empty_field().label == -1 and label.human_readable_repr() == "pos"
    with pytest.raises(ConfigError):
        LabelField("pos", skip_indexing=True)
    text = TextField(["a", "b", "c"])
    index = IndexField(2, text)
    assert index == 2 and index == IndexField(2, text) and index != IndexField(2, TextField(["a", "b", "c"]))
    assert index.as_tensor({}).tolist() == [2] and index.empty_field().sequence_index == -1
    with pytest.raises(ConfigError):
        IndexField("2", text)
