"""Constituency parsing as AllenNLP 2.10.1 did it: its ``constituency_parser`` archive (tests/allennlp_golden/
constituency_parser, trained by scripts/allennlp_golden.py on allennlp-models' PTB fixture) loaded by distrain gives
AllenNLP's span logits, label probabilities and trees; the ``evalb`` metric equals EVALB itself (its C source compiled
with gcc once here, COLLINS.prm) on those predictions; the ``ptb_trees`` reader gives AllenNLP's span labels;
allennlp-models' ``constituency_parser`` configs pass ``distrain check`` and train; 2 CPU workers end where 1 does; a
malformed tree is one error naming file:line. (``distrain evaluate`` on the archive: tests/allennlp/
test_allennlp_archives.py, every golden case; evalb on 1-3 uneven workers: tests/metrics/test_metrics_distributed.py.)
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

from support.allennlp import CONFIGS, check_and_train_an_epoch, golden_job, plain_sgd_on, train_on_one_and_two_workers
from support.allennlp_fixtures import ALLENNLP_MODELS, ELMO, needs_fixtures
from support.cli import run_cli
from support.configs import write_config
from support.distributed import final_metrics, max_weight_difference

pytestmark = needs_fixtures

MODELS = ALLENNLP_MODELS
FIXTURE = MODELS / "test_fixtures" / "structured_prediction"
TREES = FIXTURE / "example_ptb.trees"


@pytest.fixture(scope="module")
def golden_predictions():
    """distrain's outputs of AllenNLP's archive, one sentence at a time, each beside AllenNLP's."""
    import os

    previous = os.getcwd()
    os.chdir(MODELS)
    try:
        job, golden = golden_job("constituency_parser")
        pairs = []
        with torch.inference_mode():
            for index, theirs in enumerate(golden):
                batch = job.dataset.batch(np.arange(index, index + 1))
                mine = job.model(**batch)
                pairs.append((mine, job.model.make_output_human_readable(mine)[0], batch["metadata"][0], theirs))
    finally:
        os.chdir(previous)
    return job.model, pairs


def test_allennlp_constituency_parser_archive_gives_allennlps_span_logits_and_trees(golden_predictions):
    _, pairs = golden_predictions
    for mine, readable, _, theirs in pairs:
        np.testing.assert_allclose(mine["logits"][0].numpy(), np.asarray(theirs["_tag_projection_layer"])[0],
                                   atol=1e-5, rtol=0)
        np.testing.assert_allclose(mine["class_probabilities"][0].numpy(), theirs["class_probabilities"], atol=1e-5,
                                   rtol=0)
        assert readable["spans"] == theirs["spans"] and int(mine["num_spans"][0]) == theirs["num_spans"]
        assert readable["trees"] == theirs["trees"]
    # the golden case's model (16-wide, trained to EVALB F1 0.52 on the fixture) labels inner constituents: the trees
    # compared are telling, not the root alone
    assert all(re.search(r"\((NP|VP) ", theirs["trees"]) for *_, theirs in pairs)


@pytest.fixture(scope="module")
def evalb_scored(golden_predictions):
    """The archive's predicted trees (given the gold POS tags, as the model scores them) and the gold trees, with
    EVALB's lines for them (its one run in this module)."""
    from support.evalb import official_lines

    model, pairs = golden_predictions
    gold = [meta["gold_tree"] for _, _, meta, _ in pairs]
    predicted = [model.trees(mine, [[tag for _, tag in tree.pos()]])[0] for (mine, _, _, _), tree in zip(pairs, gold)]
    return gold, predicted, official_lines(gold, predicted)


def test_evalb_equals_evalb_itself_on_the_archives_predictions(evalb_scored):
    from distrain.zoo.structured_prediction.metrics.evalb import EvalbBracketingScorer, sentence_counts

    gold, predicted, lines = evalb_scored
    assert [sentence_counts(g, p) for g, p in zip(gold, predicted)] == lines
    # EVALB's (matched, gold, predicted) brackets per sentence: some right, some wrong, a telling comparison
    assert all(0 < matched < min(gold_count, test_count) for matched, gold_count, test_count in lines), lines
    metric = EvalbBracketingScorer()
    metric(predicted, gold)
    matched, gold_count, test_count = (sum(column) for column in zip(*lines))
    recall = matched / gold_count
    precision = matched / test_count if test_count else 0.0
    expected = {"evalb_recall": recall, "evalb_precision": precision,
                "evalb_f1_measure": 2 * precision * recall / (precision + recall) if precision + recall else 0.0}
    assert metric.get_metric() == pytest.approx(expected, abs=1e-12)

def test_the_reader_gives_allennlps_span_labels_and_strips_function_tags(tmp_path):
    from distrain.zoo.structured_prediction.readers.ptb_trees import PennTreeBankConstituencySpanDatasetReader as Reader

    instances = list(Reader().read(TREES))
    labels = [label for label in instances[1]["span_labels"].labels if label != "NO-LABEL"]
    # AllenNLP 2.10.1's reader on the same tree gave these, in this order (and the same tree, function tags cut)
    assert labels == ["NP", "S", "VP", "VP", "NP", "NP", "S-VP", "VP", "VP", "NP", "ADVP", "VP", "NP"]
    assert str(instances[1]["metadata"].metadata["gold_tree"]).startswith("(S (NP (DT That)) (VP (MD could)")
    words = len(instances[0]["metadata"].metadata["tokens"])
    assert words == 38 and len(instances[0]["spans"].arrays) == words * (words + 1) // 2
    path = tmp_path / "small.trees"
    path.write_text("( (S (NP-SBJ=1 (-LRB- -LRB-) (NN a))\n    (VP|X (VB b) (X) (NN c d))))\n")
    instance = next(Reader(convert_parentheses=True, max_span_width=1).read(path))
    assert instance["metadata"].metadata["tokens"] == ["(", "a", "b", "X", "c"]
    assert instance["metadata"].metadata["pos_tags"] == ["-LRB-", "NN", "VB", "X", "NN"]
    assert [tuple(span) for span in instance["spans"].arrays] == [(0, 0), (0, 4), (1, 1), (2, 2), (3, 3), (4, 4)]
    assert instance["span_labels"].labels == ["NO-LABEL", "S"] + ["NO-LABEL"] * 4


def test_overlapping_spans_are_resolved_and_nested_as_allennlp_does():
    from distrain.zoo.structured_prediction.models.span_trees import ScoredSpan, resolve_overlaps, tree_from_spans

    spans = [ScoredSpan(0, 3, 0.9, 0.1, 1), ScoredSpan(1, 4, 0.6, 0.3, 2), ScoredSpan(2, 4, 0.8, 0.1, 1)]
    assert resolve_overlaps(spans) == [spans[0]]  # (0,3) beats (1,4); then (0,3) beats (2,4)
    tree = tree_from_spans({(0, 4): "S", (0, 2): "NP", (3, 4): "VP-X"}, ["a", "b", "c", "d"], ["D", "N", "V", "P"])
    assert str(tree) == "(S (NP (D a) (N b)) (V c) (VP (X (P d))))"
    assert str(tree_from_spans({(0, 2): "NO-LABEL", (1, 2): "NP"}, ["a", "b"])) == "(NO (LABEL (XX a) (NP b)))"


def _config(name: str) -> dict:
    from distrain.config.loading import load_config

    return load_config(CONFIGS / f"{name}.jsonnet")


@pytest.fixture
def ptb(tmp_path):
    """A work folder with the fixture trees where the configs look for PTB's splits."""
    (tmp_path / "ptb").mkdir()
    for split in ("train", "dev", "test"):
        (tmp_path / "ptb" / f"{split}.trees").write_text(TREES.read_text())
    return tmp_path


def test_constituency_parser_configs_pass_check_and_train_an_epoch(ptb):
    """allennlp-models' config at its own sizes; then its ELMo variant with the fixture biLM (32 wide where the
    config's is 1024: the encoder's input_size 1074 = 1024 + 50 becomes 32 + 50, nothing else changes)."""
    run = check_and_train_an_epoch(ptb, _config("constituency_parser"), "constituency_parser",
                                   metric="best_validation_evalb_f1_measure")
    assert "validation_tag_accuracy" in json.loads((run / "metrics.json").read_text())
    config = _config("constituency_parser_elmo")
    config["model"]["text_field_embedder"]["token_embedders"]["elmo"] |= {
        "options_file": str(ELMO / "options.json"), "weight_file": str(ELMO / "lm_weights.hdf5")}
    assert config["model"]["encoder"]["input_size"] == 1024 + 50
    config["model"]["encoder"]["input_size"] = 32 + 50
    check_and_train_an_epoch(ptb, config, "constituency_parser_elmo", metric="best_validation_evalb_f1_measure")


def _small_parser(workers: int) -> dict:
    """The golden fixture's tiny parser, 2 epochs of one global batch of the fixture's 2 trees; plain SGD."""
    config = json.loads((FIXTURE / "constituency_parser" / "experiment.json").read_text())
    return plain_sgd_on(config, str(TREES), workers)


def test_two_workers_end_within_1e_5_of_one_worker(tmp_path):
    runs = train_on_one_and_two_workers(tmp_path, _small_parser)
    assert max_weight_difference(runs[1], runs[2]) <= 1e-5
    one, two = final_metrics(runs[1]), final_metrics(runs[2])
    for key in ("validation_evalb_f1_measure", "validation_evalb_precision", "validation_evalb_recall",
                "validation_tag_accuracy"):
        assert one[key] == two[key], key
    assert abs(one["validation_loss"] - two["validation_loss"]) <= 1e-5


@pytest.mark.parametrize(("tree", "problem"), [
    ("(S (NP (DT the) (NN dog))\n  (VP (VBD ran))", "1 bracket(s) left open"),
    ("(S (NP (DT the) (NN dog)))\n  (VP (VBD ran)))", "a second tree starts after the first ended"),
    ("(S (NP (DT the) (NN dog)))\n  ran)", "word 'ran' outside any bracket"),
])
def test_a_malformed_tree_is_one_line_naming_file_and_line(tmp_path, tree, problem):
    from distrain.data.reader import DataError
    from distrain.zoo.structured_prediction.readers.ptb_trees import PennTreeBankConstituencySpanDatasetReader as Reader

    bad = tmp_path / "bad.trees"
    bad.write_text(TREES.read_text() + tree + "\n")
    with pytest.raises(DataError) as error:
        list(Reader().read(bad))
    assert str(error.value).startswith(f"{bad}:4: ") and problem in str(error.value), str(error.value)
    assert "\n" not in str(error.value)


def test_distrain_train_on_a_malformed_tree_exits_2_with_one_line_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.trees"
    bad.write_text(TREES.read_text() + "(S (NP (DT the) (NN dog))\n  (VP (VBD ran))\n")
    config = _small_parser(1)
    config["train_data_path"] = config["validation_data_path"] = str(bad)
    trained = run_cli("train", str(write_config(tmp_path / "bad.json", config)), "-s", "run", cwd=tmp_path)
    assert trained.returncode == 2, trained.stderr
    errors = [line for line in trained.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith(f"error: {bad}:4: ") and "left open" in errors[0], errors
    assert "Traceback" not in trained.stderr and not (tmp_path / "run").exists()
