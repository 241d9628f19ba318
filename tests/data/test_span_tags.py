"""distrain.data.span_tags word for word: spans of BIO, IOB1, BIOUL and BMES sequences (hyphenated labels, ignored
classes, spans of three and more), the conversion to BIOUL, and what a bad sequence raises."""

from __future__ import annotations

import pytest

from distrain.data.span_tags import (InvalidTagSequence, bio_tags_to_spans, bioul_tags_to_spans, bmes_tags_to_spans,
                                     iob1_tags_to_spans, iob1_to_bioul, to_bioul)


def raised(function, *args, **kwargs) -> InvalidTagSequence:
    with pytest.raises(InvalidTagSequence) as error:
        function(*args, **kwargs)
    return error.value


def test_bio_spans_of_three_a_b_after_b_and_ignored_classes():
    tags = ["B-A", "I-A", "I-A", "B-A", "B-A", "O", "B-C-ARG1", "I-C-ARG1"]
    assert bio_tags_to_spans(tags) == [("A", (0, 2)), ("A", (3, 3)), ("A", (4, 4)), ("C-ARG1", (6, 7))]
    assert bio_tags_to_spans(tags, ["A"]) == [("C-ARG1", (6, 7))]
    assert bio_tags_to_spans(["B-A", "I-A", "I-B"]) == [("A", (0, 1)), ("B", (2, 2))]


def test_iob1_spans_a_label_change_opens_and_ignored_classes():
    assert iob1_tags_to_spans(["I-A", "I-B", "I-B", "B-B"]) == [("A", (0, 0)), ("B", (1, 2)), ("B", (3, 3))]
    assert iob1_tags_to_spans(["I-A", "I-B", "O", "I-B"], ["B"]) == [("A", (0, 0))]


def test_a_tag_outside_the_scheme_raises_naming_the_sequence():
    error = raised(bio_tags_to_spans, ["B-A", "U-A"])
    assert str(error) == "B-A U-A" and error.tag_sequence == ["B-A", "U-A"]
    assert str(raised(iob1_tags_to_spans, ["O", "X-A"])) == "O X-A"
    assert str(raised(bio_tags_to_spans, ["BI-A"])) == "BI-A"
    assert str(InvalidTagSequence()) == "" and InvalidTagSequence().tag_sequence is None


def test_bioul_spans_with_hyphenated_labels_and_ignored_classes():
    tags = ["B-A", "I-A", "I-A", "L-A", "U-R-ARG0", "O", "B-C-ARG1", "L-C-ARG1"]
    assert bioul_tags_to_spans(tags) == [("A", (0, 3)), ("R-ARG0", (4, 4)), ("C-ARG1", (6, 7))]
    assert bioul_tags_to_spans(tags, ["A", "R-ARG0"]) == [("C-ARG1", (6, 7))]
    assert bioul_tags_to_spans(["B-A", "L-A", "B-B", "L-B"]) == [("A", (0, 1)), ("B", (2, 3))]


@pytest.mark.parametrize("tags", [["B-A", "I-A"], ["B-A"], ["B-A", "X-A", "L-A"], ["B-A", "O", "L-A"], ["Z-A"],
                                  ["O", "I-A"]])
def test_an_unclosed_or_unknown_bioul_span_raises_naming_the_sequence(tags):
    assert str(raised(bioul_tags_to_spans, tags)) == " ".join(tags)


def test_bmes_an_end_after_a_middle_goes_on_and_a_single_after_a_begin_opens():
    assert bmes_tags_to_spans(["B-A", "M-A", "M-A", "E-A", "S-A", "B-B", "E-B"]) == [
        ("A", (0, 3)), ("A", (4, 4)), ("B", (5, 6))]
    assert bmes_tags_to_spans(["B-A", "E-B", "M-A"], ["B"]) == [("A", (0, 0)), ("A", (2, 2))]


def test_to_bioul_from_iob1_by_default_and_from_bio():
    assert to_bioul(["I-A", "I-A", "I-A", "B-A", "I-B", "O"]) == ["B-A", "I-A", "L-A", "U-A", "U-B", "O"]
    assert iob1_to_bioul(["I-A", "B-A", "I-A"]) == ["U-A", "B-A", "L-A"]
    assert to_bioul(["B-A", "B-B", "I-B", "I-B", "O", "B-C"], encoding="BIO") == ["U-A", "B-B", "I-B", "L-B", "O",
                                                                                   "U-C"]
    assert to_bioul(["B", "I", "O", "B"], encoding="BIO") == ["B", "L", "O", "U"]  # tags without a label


@pytest.mark.parametrize("tags", [["I-A"], ["O", "I-A"], ["B-A", "I-B"], ["I"], ["O", "I"], ["B-A", "X-A"]])
def test_a_bio_inside_tag_that_continues_nothing_raises(tags):
    assert str(raised(to_bioul, tags, encoding="BIO")) == " ".join(tags)


def test_to_bioul_converts_only_iob1_and_bio():
    with pytest.raises(ValueError, match="^to_bioul converts IOB1 or BIO, not 'BIOUL'$"):
        to_bioul(["U-A"], encoding="BIOUL")
