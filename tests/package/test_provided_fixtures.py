"""The repository keeps no copy of AllenNLP's fixtures and names their folder once: pytest in a checkout without
them skips each test that reads them with the one reason naming the folder, and stops naming it where ``.ci/run``
requires them; with them, the tests see the provided files and the project's overlay side by side."""

from __future__ import annotations

import os
import subprocess
import sys

from support.allennlp_fixtures import ALLENNLP_MODELS, OVERLAY, SOURCE, needs_fixtures
from support.paths import ROOT

FIXTURE_TEST = "tests/allennlp/test_allennlp_graph_parser.py"  # reads allennlp-models' semantic dependencies


def _pytest(*arguments: str, **environment: str) -> subprocess.CompletedProcess:
    """pytest in a fresh process, with ``environment`` in place of the fixture variables this run has."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("DISTRAIN_ALLENNLP_FIXTURES",
                                                                                   "DISTRAIN_TESTS_STRICT"))}
    env |= environment
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-rs", *arguments],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_without_the_fixtures_their_tests_are_skipped_with_one_reason_naming_the_folder(tmp_path):
    missing = tmp_path / "no-fixtures-here"
    done = _pytest(FIXTURE_TEST, DISTRAIN_ALLENNLP_FIXTURES=str(missing))
    assert done.returncode == 0, done.stdout + done.stderr
    reasons = {line.split(": ", 1)[1] for line in done.stdout.splitlines() if line.startswith("SKIPPED")}
    assert len(reasons) == 1, reasons
    (reason,) = reasons
    assert str(missing) in reason and "DISTRAIN_ALLENNLP_FIXTURES" in reason
    assert " passed" not in done.stdout.splitlines()[-1] and " skipped" in done.stdout.splitlines()[-1]


def test_where_they_are_required_the_run_stops_naming_the_folder(tmp_path):
    missing = tmp_path / "no-fixtures-here"
    done = _pytest(FIXTURE_TEST, "--collect-only", DISTRAIN_ALLENNLP_FIXTURES=str(missing),
                   DISTRAIN_TESTS_STRICT="1")
    assert done.returncode != 0
    assert str(missing) in done.stderr and "required" in done.stderr and "Traceback" not in done.stderr


@needs_fixtures
def test_the_overlay_adds_to_the_provided_fixtures_and_hides_none():
    for made in (path for path in OVERLAY.rglob("*") if path.is_file() and path.name != "README.md"):
        relative = made.relative_to(OVERLAY)
        assert not (SOURCE / relative).exists(), f"{relative} would hide a provided fixture"
        assert (ALLENNLP_MODELS.parent / relative).resolve() == made.resolve()
    assert (ALLENNLP_MODELS / "test_fixtures" / "rc" / "squad.json").resolve() == \
        SOURCE / "allennlp-models" / "test_fixtures" / "rc" / "squad.json"
