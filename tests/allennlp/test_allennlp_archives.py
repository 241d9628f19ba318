"""Archives the real AllenNLP 2.10.1 trained (tests/allennlp_golden, made by scripts/allennlp_golden.py with the
oracle), loaded by distrain: the same outputs on the fixture data (one instance at a time, within 1e-5) and the
same ``evaluate`` metrics (within 1e-6), through ``distrain evaluate`` and distrain's archive loading."""

from __future__ import annotations

import json
import math
import shutil
import tarfile
from pathlib import Path

import numpy as np
import pytest
import torch

from support.allennlp import GOLDEN, archive_config, golden_job
from support.allennlp_fixtures import ALLENNLP, copy_repository, needs_fixtures, repository
from support.cli import run_cli

pytestmark = needs_fixtures

CASES = json.loads((GOLDEN / "MADE_BY.json").read_text())["cases"]


@pytest.fixture
def in_repository(monkeypatch):
    """Run a case from its repository's folder, as AllenNLP's relative data paths expect."""
    def enter(case: str) -> Path:
        folder = repository(CASES[case]["repository"])
        monkeypatch.chdir(folder)
        return folder
    return enter


def _outputs(case: str) -> tuple[list[dict], list[dict]]:
    """distrain's outputs of the AllenNLP archive on each validation instance, and AllenNLP's."""
    job, golden = golden_job(case)
    produced = []
    with torch.inference_mode():
        for index in range(len(golden)):
            produced.append(job.model(**job.dataset.batch(np.arange(index, index + 1))))
    return produced, golden


@pytest.mark.parametrize("case", ["basic_classifier_seq2seq", "basic_classifier_seq2vec"])
def test_allennlp_basic_classifier_archive_gives_allennlps_logits_and_probabilities(case, in_repository):
    in_repository(case)
    produced, golden = _outputs(case)
    for mine, theirs in zip(produced, golden):
        np.testing.assert_allclose(mine["logits"][0].numpy(), theirs["logits"], atol=1e-5)
        np.testing.assert_allclose(torch.softmax(mine["logits"][0], -1).numpy(), theirs["probs"], atol=1e-5)


@pytest.mark.parametrize("case", ["simple_tagger", "simple_tagger_span_f1", "crf_tagger"])
def test_allennlp_tagger_archive_gives_allennlps_tag_logits(case, in_repository):
    in_repository(case)
    produced, golden = _outputs(case)
    from distrain.data.vocabulary_files import read_vocabulary_directory
    labels = read_vocabulary_directory(GOLDEN / case / "model.tar.gz").tokens("labels")
    for mine, theirs in zip(produced, golden):
        np.testing.assert_allclose(mine["logits"][0].numpy(), theirs["logits"], atol=1e-5)
        if "class_probabilities" in theirs:
            np.testing.assert_allclose(torch.softmax(mine["logits"][0], -1).numpy(), theirs["class_probabilities"],
                                       atol=1e-5)
        if "tags" in theirs:  # the CRF's Viterbi path under AllenNLP's constraints
            assert [labels[index] for index in mine["tag_ids"][0].tolist()] == theirs["tags"]


@pytest.mark.parametrize("case", ["decomposable_attention", "esim", "bimpm"])
def test_allennlp_pair_classifier_archive_gives_allennlps_label_logits_and_attentions(case, in_repository):
    in_repository(case)
    produced, golden = _outputs(case)
    for mine, theirs in zip(produced, golden):
        for key in CASES[case]["outputs"]:  # label_logits (bimpm: logits), label_probs (and DA's attentions)
            np.testing.assert_allclose(mine[key][0].numpy(), theirs[key], atol=1e-5, err_msg=key)


def test_allennlp_transformer_qa_archive_gives_allennlps_span_scores(in_repository):
    in_repository("transformer_qa")
    produced, golden = _outputs("transformer_qa")
    for mine, theirs in zip(produced, golden):
        start = np.asarray(theirs["span_start_logits"])
        scored = start > -1e30  # AllenNLP scores [CLS] and the context; everything else is masked
        length = len(start)
        my_start = mine["span_start_logits"][0, :length].numpy()
        my_end = mine["span_end_logits"][0, :length].numpy()
        np.testing.assert_allclose(my_start[scored], start[scored], atol=1e-5)
        np.testing.assert_allclose(my_end[scored], np.asarray(theirs["span_end_logits"])[scored], atol=1e-5)
        assert mine["best_span_str"][0] == theirs["best_span_str"]
        pairs = np.add.outer(np.where(scored, my_start, -np.inf), np.where(scored, my_end, -np.inf))
        best = np.triu(pairs).max(initial=-np.inf, where=np.triu(np.ones_like(pairs, dtype=bool)))
        assert math.isclose(best, theirs["best_span_scores"], abs_tol=1e-5)


@pytest.mark.parametrize("case", sorted(CASES))
def test_distrain_evaluate_on_an_allennlp_archive_gives_allennlps_metrics(case, tmp_path):
    folder = tmp_path / CASES[case]["repository"]
    copy_repository(CASES[case]["repository"], folder)
    data = archive_config(case)["validation_data_path"]
    evaluated = run_cli("evaluate", str(GOLDEN / case / "model.tar.gz"), data, "--output-file", "metrics.json",
                        "--batch-size", str(CASES[case]["evaluate_batch_size"]), cwd=folder)
    assert evaluated.returncode == 0, evaluated.stderr
    mine = json.loads((folder / "metrics.json").read_text())
    theirs = json.loads((GOLDEN / case / "metrics.json").read_text())
    for name, value in theirs.items():
        if name == "loss" and case == "transformer_qa":
            continue  # distrain's loss averages a question's windows (see TransformerQA); AllenNLP's each window
        if name == "loss" and archive_config(case)["model"]["type"] == "crf_tagger":  # AllenNLP's is the batch's sum
            # over sentences, distrain's
            assert CASES[case]["instances"] <= CASES[case]["evaluate_batch_size"]  # the mean: one batch here
            value /= CASES[case]["instances"]
        assert name in mine, f"{case}: distrain reports no {name} ({sorted(mine)})"
        if name == "loss" and case.startswith("coref"):  # a document's summed loss (~150): float32's step there is
            assert math.isclose(mine[name], value, rel_tol=1e-7), (case, name, mine[name], value)  # 1.5e-5
            continue
        assert math.isclose(mine[name], value, abs_tol=1e-6), (case, name, mine[name], value)


def test_distrain_serve_answers_with_an_allennlp_archives_probabilities(tmp_path):
    import httpx

    from support.serving import ServerProcess

    case = "basic_classifier_seq2seq"
    golden = json.loads((GOLDEN / case / "outputs.json").read_text())
    data = repository(CASES[case]["repository"]) / archive_config(case)["validation_data_path"]
    records = [json.loads(line) for line in data.read_text().splitlines() if line.strip()]
    with ServerProcess(GOLDEN / case / "model.tar.gz", tmp_path / "server") as server:
        for record, theirs in zip(records, golden):
            answer = httpx.post(server.url + "/predict", json=record, timeout=60)
            assert answer.status_code == 200, answer.text
            np.testing.assert_allclose(answer.json()["probs"], theirs["probs"], atol=1e-5)


def _repacked(case: str, folder: Path, change) -> Path:
    """The golden archive of ``case`` with ``change(extracted folder)`` applied, packed again."""
    extracted = folder / "extracted"
    shutil.unpack_archive(GOLDEN / case / "model.tar.gz", extracted)
    change(extracted)
    target = folder / "model.tar.gz"
    with tarfile.open(target, "w:gz") as archive:
        for member in sorted(extracted.iterdir()):
            archive.add(member, arcname=member.name)
    return target


def test_an_allennlp_archive_of_a_model_distrain_lacks_is_one_line_naming_it(tmp_path):
    def rename_model(folder: Path) -> None:
        config = json.loads((folder / "config.json").read_text())
        config["model"]["type"] = "a_model_distrain_lacks"
        (folder / "config.json").write_text(json.dumps(config))

    archive = _repacked("simple_tagger", tmp_path, rename_model)
    data = ALLENNLP / "test_fixtures" / "data" / "sequence_tagging.tsv"
    evaluated = run_cli("evaluate", str(archive), str(data), "--output-file", str(tmp_path / "m.json"))
    assert evaluated.returncode == 2
    assert evaluated.stderr.strip().splitlines()[-1].startswith("error: ")
    assert 'model.type: unknown Model type "a_model_distrain_lacks"' in evaluated.stderr and "Traceback" not in evaluated.stderr


def test_allennlp_weights_that_are_not_plain_tensors_are_refused_without_running_them(tmp_path):
    import pickle

    class Payload:
        def __reduce__(self):
            return (print, ("this must never run",))

    def poison(folder: Path) -> None:
        (folder / "weights.th").write_bytes(pickle.dumps({"tag_projection_layer._module.weight": Payload()}))

    archive = _repacked("simple_tagger", tmp_path, poison)
    data = ALLENNLP / "test_fixtures" / "data" / "sequence_tagging.tsv"
    evaluated = run_cli("evaluate", str(archive), str(data), "--output-file", str(tmp_path / "m.json"))
    assert evaluated.returncode == 2, evaluated.stderr
    assert "weights.th is not a tensors-only torch file" in evaluated.stderr
    assert "this must never run" not in evaluated.stdout + evaluated.stderr
