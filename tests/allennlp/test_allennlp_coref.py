"""Coreference as AllenNLP 2.10.1 did it: its ``coref`` archive (tests/allennlp_golden/coref, trained by
scripts/allennlp_golden.py on allennlp-models' CoNLL-2012 fixture) loaded by distrain gives AllenNLP's kept spans,
antecedent candidates and links, clusters, mention and pair scores and loss; ``conll_coref_scores`` gives scorch's
MUC, B³ and CEAFe (an independent implementation of the CoNLL-2012 scores, the oracle: support/scorch_coref.py) and
AllenNLP's on those predictions; allennlp-models' three ``coref`` configs pass ``distrain check`` and train; 2 CPU
workers end where 1 does; a malformed coreference column is one error naming file:line. (``distrain evaluate`` on
the archive: tests/allennlp/test_allennlp_archives.py, every golden case; the metrics on uneven workers, and each of
MUC, B³ and CEAFe against scorch where none is 0: tests/metrics/test_metrics_distributed.py.)"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
import torch

from support.allennlp import CONFIGS, GOLDEN, check_and_train_an_epoch, golden_job, train_on_one_and_two_workers
from support.allennlp_fixtures import ALLENNLP_MODELS, needs_fixtures
from support.cli import run_cli
from support.configs import write_config
from support.distributed import final_metrics, max_weight_difference

pytestmark = needs_fixtures

MODELS = ALLENNLP_MODELS
FIXTURES = MODELS / "test_fixtures"
COREF = FIXTURES / "coref"


def _predictions(case: str) -> list[tuple]:
    """distrain's outputs of AllenNLP's archive, one document at a time, with its mention scorer's outputs, each beside
    AllenNLP's."""
    previous = os.getcwd()
    os.chdir(MODELS)
    try:
        job, golden = golden_job(case)
        captured = {}
        job.model.mention_scorer.register_forward_hook(
            lambda module, inputs, output: captured.__setitem__("mention_scorer", output.squeeze(-1)))
        pairs = []
        with torch.inference_mode():
            for index, theirs in enumerate(golden):
                batch = job.dataset.batch(np.arange(index, index + 1))
                mine = job.model(**batch)
                readable = job.model.make_output_human_readable(mine)[0]
                pairs.append((mine, readable, dict(captured), batch["metadata"][0], theirs))
    finally:
        os.chdir(previous)
    return pairs


@pytest.fixture(scope="module")
def golden_predictions():
    return _predictions("coref")


@pytest.mark.parametrize("case", ["coref", "coref_coarse_to_fine"])
def test_allennlp_coref_archive_gives_allennlps_spans_links_clusters_and_scores(golden_predictions, case):
    """``coref_coarse_to_fine``: the spanbert config's ``coarse_to_fine`` and ``inference_order: 2`` on the same
    fixture. Candidates are compared where they exist (where one does not, AllenNLP's index is any of a tie)."""
    linked = 0
    for mine, readable, scores, _, theirs in golden_predictions if case == "coref" else _predictions(case):
        assert mine["top_spans"][0].tolist() == theirs["top_spans"]
        assert mine["predicted_antecedents"][0].tolist() == theirs["predicted_antecedents"]
        assert readable["clusters"] == theirs["clusters"]
        np.testing.assert_allclose(scores["mention_scorer"][0].numpy(), theirs["_mention_scorer"][0], atol=1e-5, rtol=0)
        # AllenNLP's scorer output was kept before its in-place ``+=`` of the partial scores (the mention scores, and
        # coarse-to-fine's bilinear one), so what it wrote is the full antecedent score: distrain's
        # coreference_scores past the "none" column, where a candidate exists
        full = mine["coreference_scores"][0, :, 1:]
        exists = (full > torch.finfo(full.dtype).min).numpy()
        assert (mine["antecedent_indices"][0].numpy()[exists] == np.asarray(theirs["antecedent_indices"])[exists]).all()
        np.testing.assert_allclose(full.numpy()[exists], np.asarray(theirs["_antecedent_scorer"][0])[exists], atol=1e-5,
                                   rtol=0)
        assert abs(float(mine["loss"]) - theirs["loss"]) <= 1e-5
        linked += len(theirs["clusters"])
    assert linked > 0  # some links predicted: a telling comparison


def test_conll_coref_scores_equal_scorchs_and_allennlps_on_the_archives_predictions(golden_predictions):
    """distrain's metric fed the archive's documents gives the MUC, B³ and CEAFe precision, recall and F1 that scorch
    gives on the same gold and predicted clusters (within 1e-9 relative: ratios, not the reference scorer's totals),
    and AllenNLP's ``evaluate`` of the archive (its ``coref_*``, within 1e-6). The fixture's gold has two one-mention
    entities (OntoNotes has none): AllenNLP's B³ leaves them out, so the default B³ is compared with scorch's on the
    key without them; with ``score_singletons`` it is scorch's on the whole key (13 mentions, not 11)."""
    from distrain.zoo.coref.metrics.conll_coref_scores import ConllCorefScores
    from support.scorch_coref import scorch_scores

    metric, whole_key = ConllCorefScores(), ConllCorefScores(score_singletons=True)
    for mine, readable, _, meta, _ in golden_predictions:
        for scores in (metric, whole_key):
            scores(mine["top_spans"], mine["antecedent_indices"], mine["predicted_antecedents"], [meta])
    gold = [meta["clusters"] for *_, meta, _ in golden_predictions]
    predicted = [readable["clusters"] for _, readable, *_ in golden_predictions]
    assert any(len(cluster) == 1 for clusters in gold for cluster in clusters)
    theirs = scorch_scores(gold, predicted)
    theirs["b_cubed_without_singletons"] = scorch_scores(
        [[cluster for cluster in clusters if len(cluster) > 1] for clusters in gold], predicted)["b_cubed"]
    assert sum(len(cluster) for clusters in gold for cluster in clusters) == 13
    assert whole_key.state()["counts"].tolist()[7] == 13  # B³'s recall denominator: every gold mention
    mine, with_singletons = metric.scores(metric.state()), whole_key.scores(whole_key.state())
    assert with_singletons["b_cubed"] == pytest.approx(theirs["b_cubed"], rel=1e-9)
    for name, expected in (("muc", "muc"), ("b_cubed", "b_cubed_without_singletons"), ("ceafe", "ceafe")):
        assert mine[name] == pytest.approx(theirs[expected], rel=1e-9), (name, mine[name], theirs[expected])
    assert mine["b_cubed"] != pytest.approx(with_singletons["b_cubed"], rel=1e-6)  # the singletons tell
    assert 0 < metric.get_metric()["coref_f1"] < 1  # some links right, some wrong: a telling comparison
    allennlps = json.loads((GOLDEN / "coref" / "metrics.json").read_text())
    for key, value in metric.get_metric().items():
        assert abs(value - allennlps[key]) <= 1e-6, (key, value, allennlps[key])


@pytest.fixture
def coref_data(tmp_path):
    """A work folder with allennlp-models' coreference fixture as ``coref/{train,dev,test}.gold_conll`` and the GloVe
    sample where the config looks for GloVe."""
    (tmp_path / "coref").mkdir()
    for split in ("train", "dev", "test"):
        shutil.copy(COREF / "coref.gold_conll", tmp_path / "coref" / f"{split}.gold_conll")
    shutil.copy(FIXTURES / "glove.6B.300d.sample.txt.gz", tmp_path / "coref" / "glove.6B.300d.txt.gz")
    return tmp_path


def _shortest_document(folder) -> None:
    """Each split cut to the fixture's shortest document (one sentence of 28 words): the full-size configs'
    models train an epoch on it in a fraction of the time."""
    text = (COREF / "coref.gold_conll").read_text()
    documents = ["#begin document" + part for part in text.split("#begin document")[1:]]
    shortest = min(documents, key=lambda document: document.count("\n"))
    for split in ("train", "dev", "test"):
        (folder / "coref" / f"{split}.gold_conll").write_text(shortest)


def _config(name: str) -> dict:
    from distrain.config.loading import load_config

    return load_config(CONFIGS / f"{name}.jsonnet")


def test_coref_config_passes_check_and_trains_an_epoch(coref_data):
    _shortest_document(coref_data)
    check_and_train_an_epoch(coref_data, _config("coref"), "coref", metric="best_validation_coref_f1")



def test_a_wrong_mention_feedforward_width_in_the_coref_config_is_one_line_before_data_is_read(coref_data):
    config = _config("coref")
    config["model"]["mention_feedforward"]["input_dim"] = 1000  # the span vector is 2 x 400 + 20 + 400 wide
    checked = run_cli("check", str(write_config(coref_data / "coref.json", config)), cwd=coref_data)
    assert checked.returncode == 2 and "Traceback" not in checked.stderr
    errors = [line for line in checked.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1 and "model.mention_feedforward.input_dim" in errors[0] and "1220" in errors[0], checked.stderr

@pytest.mark.parametrize(("name", "model"), [("coref_bert_lstm", "bert-base-uncased"),
                                             ("coref_spanbert_large", "SpanBERT/spanbert-large-cased")])
def test_coref_transformer_configs_with_a_tiny_local_bert_check_and_train_an_epoch(coref_data, name, model):
    """The pretrained name is the folder of that name where the run starts: allennlp-models' tiny BERT (20 wide,
    the width the configs now state)."""
    shutil.copytree(FIXTURES / "bert-xsmall-dummy", coref_data / model)
    _shortest_document(coref_data)
    check_and_train_an_epoch(coref_data, _config(name), name, metric="best_validation_coref_f1")


def _small_coref(workers: int) -> dict:
    """The golden fixture's model (no lexical dropout) on the fixture's 4 documents, a global batch of 2 (two steps),
    plain SGD."""
    config = json.loads((COREF / "experiment.json").read_text())
    config["train_data_path"] = config["validation_data_path"] = "coref/train.gold_conll"
    config["model"] |= {"lexical_dropout": 0.0, "spans_per_word": 1.0}  # as the golden case: some links
    config["data_loader"] = {"batch_size": 2 // workers}
    config["trainer"] = {"num_epochs": 1, "optimizer": {"type": "sgd", "lr": 0.05}, "validation_metric": "+coref_f1"}
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers}
    return config


def test_two_workers_end_within_1e_5_of_one_worker(coref_data):
    runs = train_on_one_and_two_workers(coref_data, _small_coref)
    assert max_weight_difference(runs[1], runs[2]) <= 1e-5
    one, two = final_metrics(runs[1]), final_metrics(runs[2])
    for key in ("training_coref_f1", "training_coref_precision", "training_coref_recall", "validation_coref_f1",
                "validation_mention_recall"):
        assert abs(one[key] - two[key]) <= 1e-9, key
    assert one["training_coref_f1"] > 0  # the workers' documents' links scored together, some right
    assert abs(one["validation_loss"] - two["validation_loss"]) <= 1e-5


GOOD = "bc/cctv/00/cctv_0001 0 {i} {word} NN * - - - - * {coref}"


@pytest.mark.parametrize(("line", "problem"), [
    ("bc/cctv/00/cctv_0001 0 2 ran VBD * - - - - * 3)", "entity 3 closes with none open"),
    ("bc/cctv/00/cctv_0001 0 2 ran VBD * - - - - * (1|x", "is not -, or (N, N) and (N) joined by |"),
    ("bc/cctv/00/cctv_0001 0 2 ran VBD * - - - - * (4", "entity 4 opens here and is still open"),
])
def test_malformed_coreference_columns_are_one_line_naming_file_and_line(tmp_path, line, problem):
    from distrain.data.reader import DataError
    from distrain.zoo.coref.readers.coref import ConllCorefReader

    path = tmp_path / "example.gold_conll"
    rows = [GOOD.format(i=0, word="Dogs", coref="(1)"), GOOD.format(i=1, word="dogs", coref="(2)"), line]
    path.write_text("#begin document (bc/cctv/00/cctv_0001); part 000\n" + "\n".join(rows) + "\n\n#end document\n")
    with pytest.raises(DataError) as error:
        list(ConllCorefReader(max_span_width=3).read(path))
    message = str(error.value)
    assert message.startswith(f"{path}:4: ") and problem in message and "\n" not in message, message


def test_distrain_train_on_a_malformed_coreference_column_exits_2_with_one_line_and_writes_nothing(coref_data):
    bad = coref_data / "coref" / "train.gold_conll"
    lines = bad.read_text().splitlines()
    number = next(i for i, text in enumerate(lines, start=1) if text.rstrip().endswith("(23"))
    lines[number - 1] = lines[number - 1].rstrip()[:-3] + "23)"
    bad.write_text("\n".join(lines) + "\n")
    path = write_config(coref_data / "small.json", _small_coref(1))
    trained = run_cli("train", str(path), "-s", "run", cwd=coref_data)
    assert trained.returncode == 2, trained.stderr
    errors = [line for line in trained.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1 and f"coref/train.gold_conll:{number}:" in errors[0], trained.stderr
    assert "Traceback" not in trained.stderr and not (coref_data / "run").exists()
