"""The ``drop`` reader and the DROP metric against AllenNLP 2.10.1 (tests/allennlp_golden/drop.json, written by
tests/allennlp_oracle/drop_outputs.py): the reader makes AllenNLP's instances of allennlp-models' drop.json in its
three formats (tokens split at hyphens, the numbers and the ways to each answer: spans, signed pairs, counts), and
the metric scores predictions as AllenNLP's (the official evaluator) does, question by question and summed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from distrain.data.fields import IndexField, LabelField, ListField, MetadataField, TensorField, TextField
from distrain.data.field import ArrayField
from distrain.data.label_fields import SpanField
from distrain.data.reader import DataError
from distrain.metrics.assignment import best_assignment
from distrain.zoo.rc.metrics.drop_em_and_f1 import DropEmAndF1, drop_em_and_f1, answer_strings
from distrain.zoo.rc.readers.drop import DropReader
from support.allennlp_fixtures import ALLENNLP_MODELS, needs_fixtures
from support.paths import TESTS

pytestmark = needs_fixtures

GOLDEN = json.loads((TESTS / "allennlp_golden" / "drop.json").read_text())
DROP = ALLENNLP_MODELS / "test_fixtures" / "rc" / "drop.json"
LIMITS = {"passage_length_limit": 400, "question_length_limit": 50}
READERS = {
    "drop_train": dict(**LIMITS, skip_when_all_empty=["passage_span", "question_span", "addition_subtraction",
                                                      "counting"]),
    "drop_validation": dict(passage_length_limit=1000, question_length_limit=100),
    "drop_counting_only": dict(skip_when_all_empty=["counting"]),
    "squad": dict(instance_format="squad", **LIMITS),
    "squad_skip": dict(instance_format="squad", skip_when_all_empty=["passage_span"]),
    "bert": dict(instance_format="bert", passage_length_limit=200),
}
METADATA = ("original_question", "passage_token_offsets", "question_token_offsets", "token_offsets", "number_tokens",
            "number_indices", "original_numbers", "answer_texts", "answer_info", "passage_id", "question_id",
            "valid_passage_spans", "question_tokens", "passage_tokens")


def value(field, name: str):
    if isinstance(field, TextField):
        return [token.text for token in field.tokens]
    if isinstance(field, SpanField):
        return [field.span_start, field.span_end]
    if isinstance(field, IndexField):
        return field.sequence_index
    if isinstance(field, ArrayField):  # the sign labels, AllenNLP's SequenceLabelField of ints
        return field.values.tolist()
    if isinstance(field, LabelField):
        return field.label
    if isinstance(field, TensorField):  # span_start and span_end, AllenNLP's IndexFields
        return int(field.array[0])
    if isinstance(field, ListField):
        return [value(element, name) for element in field.field_list]
    if isinstance(field, MetadataField):
        return {key: field.metadata[key] for key in METADATA if key in field.metadata}
    raise TypeError(f"{name}: {type(field)}")


@pytest.mark.parametrize("case", sorted(READERS))
def test_drop_reader_makes_allennlps_instances(case):
    mine = [{name: value(field, name) for name, field in instance.items()}
            for instance in DropReader(**READERS[case]).read(DROP)]
    mine = json.loads(json.dumps(mine))  # tuples as lists, as the golden file holds them
    theirs = GOLDEN["readers"][case]
    assert len(mine) == len(theirs)
    for index, (produced, expected) in enumerate(zip(mine, theirs)):
        assert sorted(produced) == sorted(expected), index
        for name in expected:
            assert produced[name] == expected[name], (case, index, name)


def test_the_golden_instances_are_telling():
    """Each kind of way to an answer occurs, and the readers' settings change what they keep."""
    readers = GOLDEN["readers"]
    train, validation = readers["drop_train"], readers["drop_validation"]
    assert len(readers["drop_counting_only"]) < len(validation) == 19 and len(readers["squad_skip"]) < 19
    assert max(len(i["passage"]) for i in readers["bert"]) == 200 < max(len(i["passage"]) for i in validation)
    assert any(s != [[-1, -1]] for s in (i["answer_as_passage_spans"] for i in train))
    assert any(c != [-1] for c in (i["answer_as_counts"] for i in train))
    assert any(len(signs) > 1 for signs in (i["answer_as_add_sub_expressions"] for i in train))
    hyphenated = [t for i in validation for t in i["passage"] if t == "-"]
    assert hyphenated  # "38-yard" is read as 38, -, yard


def test_drop_metric_scores_each_case_as_allennlp():
    for case in GOLDEN["metric_cases"]:
        metric = DropEmAndF1()
        metric(case["prediction"], case["annotations"])
        assert metric.get_metric(reset=True) == {"em": case["em"], "f1": case["f1"]}, case
        for annotation, (exact, f1) in zip(case["annotations"], case["per_annotation"]):
            assert drop_em_and_f1(case["prediction"], answer_strings(annotation)) == (exact, f1), case


def test_drop_metric_summed_over_the_cases_is_allennlps_and_strictly_between_its_extremes():
    metric = DropEmAndF1()
    for case in GOLDEN["metric_cases"]:
        metric(case["prediction"], case["annotations"])
    expected = GOLDEN["metric_stream"]
    values = metric.get_metric()
    assert values["em"] == pytest.approx(expected["em"], abs=1e-12)
    assert values["f1"] == pytest.approx(expected["f1"], abs=1e-12)
    assert 0 < expected["em"] < expected["f1"] < 1  # EM and F1 differ: a partial answer counts for one only
    partial = [case for case in GOLDEN["metric_cases"] if 0 < case["f1"] < 1]
    assert len(partial) >= 5 and len({case["f1"] for case in partial}) >= 4


def test_best_assignment_finds_the_largest_total_whichever_side_is_longer():
    import itertools

    rng = np.random.default_rng(0)
    for rows, columns in [(1, 1), (2, 3), (3, 2), (4, 4), (5, 3)]:
        scores = rng.random((rows, columns)).round(1)  # ties too
        pairs = best_assignment(scores)
        assert len(pairs) == min(rows, columns)
        assert len({r for r, _ in pairs}) == len({c for _, c in pairs}) == len(pairs)
        if rows <= columns:  # every way to give each row its own column
            best = max(sum(scores[r, c] for r, c in zip(range(rows), chosen))
                       for chosen in itertools.permutations(range(columns), rows))
        else:
            best = max(sum(scores[r, c] for r, c in zip(chosen, range(columns)))
                       for chosen in itertools.permutations(range(rows), columns))
        assert sum(scores[r, c] for r, c in pairs) == pytest.approx(best)


def test_a_file_that_is_not_drop_json_is_one_line_naming_it(tmp_path):
    path = tmp_path / "drop.json"
    path.write_text(json.dumps({"p1": {"passage": "Some text.", "qa_pairs": [{"question": "Which?", "answer": {
        "number": "2"}}]}}))
    with pytest.raises(DataError, match=r'drop.json: passage "p1", qa_pairs\[0\]: answer needs "spans", "number" '
                                        r'and "date"'):
        list(DropReader().read(path))
    path.write_text("[1, 2]")
    with pytest.raises(DataError, match="DROP JSON is an object of passages by id, not a list"):
        list(DropReader().read(path))
