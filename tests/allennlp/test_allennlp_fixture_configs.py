"""Every experiment config of AllenNLP's own test fixtures (allennlp @80fb606 ``test_fixtures/`` with their data, read
where tests/support/allennlp_fixtures.py finds them, laid out as in that repository) runs as it is: ``distrain check`` and
``distrain train`` succeed from the repository's folder with no file edited. Where the real AllenNLP 2.10.1 trained
the same config (tests/allennlp_golden), distrain's vocabulary holds the same entries in every namespace.
(``simple_tagger_with_elmo`` waits for ELMo, issue 39.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from support.allennlp_fixtures import ALLENNLP, copy_repository, needs_fixtures
from support.cli import run_cli
from support.paths import TESTS

pytestmark = needs_fixtures

REPOSITORY = ALLENNLP
GOLDEN = TESTS / "allennlp_golden"

#: config -> the golden case AllenNLP trained from it
CONFIGS = {
    "test_fixtures/basic_classifier/experiment_seq2seq.jsonnet": "basic_classifier_seq2seq",
    "test_fixtures/basic_classifier/experiment_seq2vec.jsonnet": "basic_classifier_seq2vec",
    "test_fixtures/basic_classifier/experiment_from_archive.jsonnet": "basic_classifier_from_archive",
    "test_fixtures/simple_tagger/experiment.json": "simple_tagger",
    "test_fixtures/simple_tagger/experiment_with_regularization.json": None,
    "test_fixtures/simple_tagger_with_span_f1/experiment.json": "simple_tagger_span_f1",
}


@pytest.fixture(scope="module")
def repository(tmp_path_factory) -> Path:
    return copy_repository("allennlp", tmp_path_factory.mktemp("allennlp") / "allennlp")


def _entries(vocabulary: Path, allennlp: bool) -> dict[str, set[str]]:
    """Each namespace's entries in a run's (JSON lines) or AllenNLP's (plain lines) vocabulary folder."""
    found = {}
    for path in vocabulary.glob("*.txt"):
        if path.name == "non_padded_namespaces.txt":
            continue
        lines = path.read_text("utf-8").splitlines()
        found[path.stem] = {line if allennlp else json.loads(line) for line in lines} - {"@@PADDING@@"}
    return found


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_allennlp_fixture_config_checks_and_trains_as_it_is(config, repository, tmp_path):
    checked = run_cli("check", config, cwd=repository)
    assert checked.returncode == 0, checked.stderr
    run = tmp_path / "run"
    trained = run_cli("train", config, "-s", str(run), cwd=repository)
    assert trained.returncode == 0, trained.stderr
    assert (run / "model.tar.gz").is_file()
    case = CONFIGS[config]
    if case is None:
        return
    mine, golden = tmp_path / "mine", tmp_path / "golden"
    shutil.unpack_archive(run / "model.tar.gz", mine)
    shutil.unpack_archive(GOLDEN / case / "model.tar.gz", golden)
    theirs = _entries(golden / "vocabulary", allennlp=True)
    if "from_archive" in config:  # AllenNLP saved the data's vocabulary; its model used the archive's, extended by it
        base = tmp_path / "base"
        shutil.unpack_archive(REPOSITORY / "test_fixtures/basic_classifier/serialization/model.tar.gz", base)
        for namespace, entries in _entries(base / "vocabulary", allennlp=True).items():
            theirs[namespace] = theirs.get(namespace, set()) | entries
    assert _entries(mine / "vocabulary", allennlp=False) == theirs
