"""The biaffine dependency parser: archives AllenNLP 2.10.1 trained on allennlp-models' fixture (golden cases
``biaffine_parser``, decoded by MST, and ``biaffine_parser_greedy``) give, in distrain, AllenNLP's heads, labels,
arc and label scores and losses (their ``evaluate`` metrics: test_allennlp_archives.py); allennlp-models'
``dependency_parser.jsonnet`` passes ``check`` and trains an epoch on CoNLL-U data; 2 CPU workers end within 1e-5 of
one; a malformed CoNLL-U line is one error naming file:line, and the reader drops multi-word tokens and empty nodes
as AllenNLP's did."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from support.allennlp import CONFIGS, check_and_train_an_epoch, golden_job, plain_sgd_on, train_on_one_and_two_workers
from support.allennlp_fixtures import ALLENNLP_MODELS, needs_fixtures
from support.cli import run_cli
from support.configs import write_config
from support.distributed import final_metrics, max_weight_difference
from support.tagging_data import write_vectors

pytestmark = needs_fixtures

MODELS = ALLENNLP_MODELS
FIXTURE = MODELS / "test_fixtures" / "structured_prediction"
CONLLU = FIXTURE / "dependencies.conllu"


@pytest.mark.parametrize("case", ["biaffine_parser", "biaffine_parser_greedy"])
def test_allennlp_parser_archive_gives_allennlps_trees_labels_and_scores(case, monkeypatch):
    monkeypatch.chdir(MODELS)
    job, golden = golden_job(case)
    labels = job.model.vocab.tokens("head_tags")
    assert job.model.use_mst_decoding_for_validation == (case == "biaffine_parser")
    with torch.inference_mode():
        for index, theirs in enumerate(golden):
            mine = job.model(**job.dataset.batch(np.arange(index, index + 1)))
            assert mine["heads"][0, 1:].tolist() == theirs["predicted_heads"]
            assert [labels[tag] for tag in mine["head_tags"][0, 1:].tolist()] == theirs["predicted_dependencies"]
            np.testing.assert_allclose(mine["arc_logits"].numpy(), theirs["_arc_attention"], atol=1e-5, rtol=0)
            np.testing.assert_allclose(mine["head_tag_logits"].numpy(), theirs["_tag_bilinear"], atol=1e-5, rtol=0)
            for key in ("arc_loss", "tag_loss", "loss"):
                assert float(mine[key]) == pytest.approx(theirs[key], abs=1e-5), key


def test_the_reader_drops_multiword_tokens_and_empty_nodes_and_reads_language_specific_tags(tmp_path):
    from distrain.zoo.structured_prediction.readers.universal_dependencies import UniversalDependenciesDatasetReader as Reader

    path = tmp_path / "mwt.conllu"
    path.write_text("# text = vámonos al mar\n"
                    "1-2\tvámonos\t_\t_\t_\t_\t_\t_\t_\t_\n"
                    "1\tvamos\tir\tVERB\tVM\t_\t0\troot\t_\t_\n"
                    "2\tnos\tnosotros\tPRON\tPP\t_\t1\tobj\t_\t_\n"
                    "2.1\tvamos\tir\tVERB\tVM\t_\t_\t_\t1:conj\t_\n"
                    "3  mar  mar  NOUN  NC  _  1  obl  _  _\n")  # two or more spaces separate columns too
    instances = list(Reader(use_language_specific_pos=True).read(path))
    assert len(instances) == 1
    assert instances[0]["metadata"].metadata == {"words": ["vamos", "nos", "mar"], "pos": ["VM", "PP", "NC"]}
    assert instances[0]["head_indices"].values.tolist() == [0, 1, 1]
    assert instances[0]["head_tags"].labels == ["root", "obj", "obl"]
    assert [len(list(Reader().read(CONLLU)))] == [4]


@pytest.mark.parametrize("line, problem", [
    ("4\tthe\tthe\tDET\tDT\t_\t3", "expected 10 columns"),
    ("4\tthe\tthe\tDET\tDT\t_\tthree\tdet\t_\t_", "head 'three' is not a word number"),
    ("4\tthe\tthe\tDET\tDT\t_\t9\tdet\t_\t_", "head 9 is outside the sentence of 4 words"),
    ("x4\tthe\tthe\tDET\tDT\t_\t3\tdet\t_\t_", "'x4' is not a word id"),
])
def test_malformed_conllu_is_one_line_naming_file_and_line_exit_2_and_nothing_written(tmp_path, line, problem):
    bad = tmp_path / "bad.conllu"
    good = CONLLU.read_text().split("\n\n")[2]  # a whole sentence, then one with the bad line as its 5th line
    bad.write_text(f"{good}\n\n# c\n1\tA\ta\tDET\tDT\t_\t2\tdet\t_\t_\n2\tb\tb\tNOUN\tNN\t_\t0\troot\t_\t_\n"
                   f"3\tc\tc\tNOUN\tNN\t_\t2\tdep\t_\t_\n{line}\n")
    number = good.count("\n") + 1 + 2 + 4
    config = json.loads((FIXTURE / "biaffine_dependency_parser" / "experiment.json").read_text())
    config["train_data_path"] = config["validation_data_path"] = str(bad)
    result = run_cli("train", str(write_config(tmp_path / "bad.json", config)), "-s", "run", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    errors = [text for text in result.stderr.splitlines() if text.strip()]
    assert len(errors) == 1 and errors[0].startswith(f"error: {bad}:{number}: ") and problem in errors[0], errors
    assert not (tmp_path / "run").exists()


def test_dependency_parser_config_passes_check_and_trains_an_epoch(tmp_path):
    """allennlp-models' config at its own sizes (3-layer highway BiLSTM of 400, GloVe 100 + POS 100, MST
    validation, dense_sparse_adam), on the fixture's shortest sentence; its GloVe file a small local one."""
    (tmp_path / "ud").mkdir()
    for name in ("train", "dev"):
        (tmp_path / "ud" / f"{name}.conllu").write_text(CONLLU.read_text().split("\n\n")[0] + "\n")
    words = sorted({line.split("\t")[1].lower() for line in CONLLU.read_text().splitlines()
                    if line and not line.startswith("#")})
    write_vectors(tmp_path / "ud" / "glove.6B.100d.txt.gz", 100, words)
    shutil.copy(CONFIGS / "dependency_parser.jsonnet", tmp_path)
    from distrain.config.loading import load_config
    run = check_and_train_an_epoch(tmp_path, load_config(tmp_path / "dependency_parser.jsonnet"), "dependency_parser",
                                   metric="best_validation_LAS")
    metrics = json.loads((run / "metrics.json").read_text())
    assert {"validation_UAS", "validation_LAS", "validation_UEM", "validation_LEM"} <= metrics.keys()


def _small_parser(workers: int) -> dict:
    """The golden fixture's tiny parser, 2 epochs of global batches of 2 sentences on the fixture (the loader's
    batch size is each worker's); plain SGD, whose step is linear in the gradient."""
    config = json.loads((FIXTURE / "biaffine_dependency_parser" / "experiment.json").read_text())
    return plain_sgd_on(config, str(CONLLU), workers)


def test_two_workers_end_within_1e_5_of_one_worker(tmp_path):
    runs = train_on_one_and_two_workers(tmp_path, _small_parser)
    assert max_weight_difference(runs[1], runs[2]) <= 1e-5
    one, two = final_metrics(runs[1]), final_metrics(runs[2])
    for key in ("validation_UAS", "validation_LAS", "validation_UEM", "validation_LEM", "validation_loss"):
        assert one[key] == pytest.approx(two[key], abs=1e-6), key
