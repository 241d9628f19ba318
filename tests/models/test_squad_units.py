"""Pure parts of extractive QA: the SQuAD metric against torchmetrics' SQuAD (the v1.1 formula), AllenNLP's
windows, answer characters to tokens, the best legal span, and where a tokenizer puts its special tokens."""

from __future__ import annotations

import random

import pytest
import torch

from support.squad import squad_v1_scores
from distrain.zoo.rc.readers.transformer_squad import PairLayout, char_span_to_tokens, window_starts
from distrain.zoo.rc.metrics.squad_em_and_f1 import SquadEmAndF1, exact_match, normalize_answer, token_f1
from distrain.zoo.rc.models.transformer_qa import best_spans

WORDS = ["the", "a", "an", "Oslo", "oslo", "city", "The", "of", "Norway", ",", ".", "!", "An", "capital", "old"]
EMPTY_WHEN_NORMALISED = {"the", "a", "an", "The", "An", ",", ".", "!"}


def random_text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 5))).replace(" ,", ",")


def random_gold_answer(rng: random.Random) -> str:
    """Random text with a word left after normalisation, as every SQuAD v1.1 answer has (a span of its context)."""
    while not set((text := random_text(rng)).replace(",", " ,").split()) - EMPTY_WHEN_NORMALISED:
        pass
    return text


def test_squad_metric_equals_torchmetrics_squad_on_random_answers():
    rng = random.Random(0)
    gold = {f"q{i}": [random_gold_answer(rng) for _ in range(rng.randint(1, 3))] for i in range(300)}
    predictions = {qid: random_text(rng) for qid in gold}
    metric = SquadEmAndF1()
    ids = list(gold)
    for first in range(0, len(ids), 7):  # batches of 7 questions
        batch = ids[first: first + 7]
        metric([predictions[q] for q in batch], [gold[q] for q in batch])
    reference = squad_v1_scores(gold, predictions)
    value = metric.get_metric()
    assert 0 < value["em"] < 1 and 0 < value["f1"] < 1
    assert value["em"] * 100 == pytest.approx(reference["exact_match"], abs=1e-9)
    assert value["f1"] * 100 == pytest.approx(reference["f1"], abs=1e-9)


def test_an_answer_and_a_prediction_both_empty_when_normalised_score_f1_zero_as_in_v1_1():
    """evaluate-v1.1.py's rule (no common token: 0), where v2.0 and torchmetrics score 1; the random gold answers
    above never normalise to nothing, so this is the test of it."""
    assert token_f1("The ,", "a") == 0.0 and token_f1("", "") == 0.0
    assert exact_match("The ,", "a") == 1.0


def test_normalisation_drops_case_punctuation_articles_and_extra_spaces():
    assert normalize_answer("  The  Capital, of AN   old city!") == "capital of old city"
    assert normalize_answer("theatre") == "theatre"  # "the" only as a word


def test_windows_overlap_by_stride_and_cover_the_context():
    assert window_starts(10, 4, 1) == [0, 3, 6]
    assert window_starts(4, 4, 2) == [0]
    assert window_starts(0, 4, 2) == [0]
    for length, space, stride in [(37, 8, 3), (100, 17, 16), (5, 2, 0)]:
        starts = window_starts(length, space, stride)
        assert starts[-1] + space >= length
        assert all(b - a == space - min(stride, space - 1) for a, b in zip(starts, starts[1:]))


def test_answer_characters_map_to_the_tokens_that_overlap_them():
    offsets = [(0, 4), (5, 9), (9, 10), (11, 15)]  # "Anna live s Oslo"
    assert char_span_to_tokens(offsets, 11, 15) == (3, 3)
    assert char_span_to_tokens(offsets, 5, 10) == (1, 2)
    assert char_span_to_tokens(offsets, 6, 12) == (1, 3)  # a span inside words takes the whole words
    assert char_span_to_tokens(offsets, 20, 25) is None


def test_best_span_is_legal_and_chosen_across_a_questions_windows():
    start = torch.full((3, 6), -5.0)
    end = torch.full((3, 6), -5.0)
    context = torch.tensor([[0, 0, 1, 1, 1, 0]] * 3).bool()
    start[0, 0], end[0, 0] = 50.0, 50.0  # [CLS]: outside the context, never chosen
    start[0, 4], end[0, 2] = 9.0, 9.0  # end before start: illegal
    start[1, 2], end[1, 3] = 3.0, 3.0  # question 0's best: window 1, tokens 2..3
    start[2, 2], end[2, 4] = 4.0, 4.0  # question 1 (one window): 2..4, unless max_span_length cuts it
    assert best_spans(start, end, context, [2, 1], max_span_length=5) == [(1, 2, 3), (0, 2, 4)]
    assert best_spans(start, end, context, [2, 1], max_span_length=2)[1] != (0, 2, 4)


def test_pair_layout_places_question_and_context_like_the_tokenizer(tiny_bert_tokenizer):
    tokenizer = tiny_bert_tokenizer
    layout = PairLayout.of(tokenizer)
    question = tokenizer("the cat sat", add_special_tokens=False)["input_ids"]
    context = tokenizer("on the mat", add_special_tokens=False)["input_ids"]
    ids, types, begin = layout.pair(question, context)
    expected = tokenizer("the cat sat", "on the mat", return_token_type_ids=True)
    assert ids == expected["input_ids"] and types == expected["token_type_ids"]
    assert ids[begin: begin + len(context)] == context and layout.cls_index == 0


@pytest.fixture(scope="module")
def tiny_bert_tokenizer(tmp_path_factory):
    from support.transformer_fixtures import write_tiny_bert
    from distrain.pretrained import load_tokenizer

    return load_tokenizer(str(write_tiny_bert(tmp_path_factory.mktemp("bert"))))


def test_readers_of_a_job_share_the_questions_between_them(tmp_path, tiny_bert_tokenizer):
    """Reader i of n keeps questions i, i+n, ...: together the shares are every question once."""
    from support.squad import squad_questions, write_squad
    from support.transformer_fixtures import write_tiny_bert
    from distrain.data.reader import ReaderShard
    from distrain.zoo.rc.readers.transformer_squad import TransformerSquadReader

    path = write_squad(tmp_path / "train.json", squad_questions(7, seed=1, filler=2))
    reader = TransformerSquadReader(str(write_tiny_bert(tmp_path / "bert")), length_limit=24, stride=4)
    whole = [instance["metadata"]["id"] for instance in reader.read(path)]
    shares = []
    for index in range(2):
        reader.set_shard(ReaderShard(rank=index, world_size=2))
        shares.append([instance["metadata"]["id"] for instance in reader.read(path)])
    assert shares == [whole[0::2], whole[1::2]] and len(whole) == 7


def test_skip_impossible_questions_leaves_answerless_windows_out_and_skips_unanswerable_questions(tmp_path):
    from support.squad import squad_questions, write_squad
    from support.transformer_fixtures import write_tiny_bert
    from distrain.data.fields import IGNORED_LABEL
    from distrain.zoo.rc.readers.transformer_squad import TransformerSquadReader

    paragraphs = squad_questions(3, seed=1, filler=4)
    paragraphs[1]["qas"][0].update(answers=[], is_impossible=True)  # SQuAD 2.0's unanswerable form
    path = write_squad(tmp_path / "train.json", paragraphs)
    bert = str(write_tiny_bert(tmp_path / "bert"))
    kept = TransformerSquadReader(bert, length_limit=20, stride=4)
    targets = {i["metadata"]["id"]: list(i["span_start"].values) for i in kept.read(path)}
    assert targets["q1"] == [0] * len(targets["q1"])  # no answer: every window points at [CLS]
    assert targets["q0"][0] == 0 and max(targets["q0"]) > 0
    skipping = TransformerSquadReader(bert, length_limit=20, stride=4, skip_impossible_questions=True)
    instances = {i["metadata"]["id"]: list(i["span_start"].values) for i in skipping.read(path)}
    assert sorted(instances) == ["q0", "q2"] and skipping.num_skipped == 1
    assert instances["q0"] == [IGNORED_LABEL if t == 0 else t for t in targets["q0"]]


def test_a_served_record_is_a_question_and_its_context(tmp_path):
    from support.transformer_fixtures import write_tiny_bert
    from distrain.data.reader import RecordError
    from distrain.zoo.rc.readers.transformer_squad import TransformerSquadReader

    reader = TransformerSquadReader(str(write_tiny_bert(tmp_path / "bert")), length_limit=20, stride=4)
    instance = reader.record_to_instance({"question": "where is the cat ?", "context": "the cat sat on the mat ."})
    assert instance["metadata"]["context"] == "the cat sat on the mat ." and instance["metadata"]["answers"] == []
    with pytest.raises(RecordError, match="context"):
        reader.record_to_instance({"question": "where is the cat ?"})


def test_an_empty_context_has_no_span_and_answers_the_empty_string():
    from distrain.zoo.rc.models.transformer_qa import answers

    start = end = torch.zeros(1, 4)
    [span] = best_spans(start, end, torch.zeros(1, 4, dtype=torch.bool), [1], max_span_length=3)
    assert span is None
    assert answers([span], [{"id": "q", "offsets": [[]], "context": "", "context_start": 3}]) == {
        "best_span_str": [""], "best_span": [[0, 0]], "id": ["q"]}


def test_a_malformed_squad_file_is_named_by_the_position_of_what_is_wrong(tmp_path):
    import json

    from support.transformer_fixtures import write_tiny_bert
    from distrain.data.reader import DataError
    from distrain.zoo.rc.readers.transformer_squad import TransformerSquadReader

    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"data": [{"paragraphs": [{"context": "x", "qas": []}, {"qas": []}]}]}))
    reader = TransformerSquadReader(str(write_tiny_bert(tmp_path / "bert")))
    with pytest.raises(DataError, match=r'bad.json: data\[0\].paragraphs\[1\] needs "context"'):
        list(reader.read(path))
