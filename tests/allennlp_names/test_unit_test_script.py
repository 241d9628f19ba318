"""``scripts/allennlp_unit_tests.py`` run as a user runs it, on a made-up clone: a folder of AllenNLP-style test
files (one passes, one fails, one does not import) and its ``test_fixtures/``."""

from __future__ import annotations

import os
import subprocess
import sys

from support.paths import ROOT

PASSING = '''
from allennlp.common.testing import AllenNlpTestCase
from allennlp.nn import util
import torch


class TestPasses(AllenNlpTestCase):
    def test_fixtures_are_the_clones(self):
        assert (self.FIXTURES_ROOT / "marker.txt").read_text() == "clone"
        assert self.TEST_DIR.is_dir()

    def test_a_name(self):
        assert util.logsumexp(torch.zeros(2)).item() > 0

    def test_fails(self):
        assert util.masked_max(torch.ones(2), torch.tensor([True, False]), dim=0).item() == 2
'''


def test_the_script_counts_passes_failures_and_a_file_that_does_not_import(tmp_path):
    clone = tmp_path / "clone"
    (clone / "tests" / "nn").mkdir(parents=True)
    (clone / "test_fixtures").mkdir()
    (clone / "test_fixtures" / "marker.txt").write_text("clone")
    (clone / "tests" / "__init__.py").write_text("")
    (clone / "tests" / "nn" / "__init__.py").write_text("")
    (clone / "tests" / "nn" / "names_test.py").write_text(PASSING)
    (clone / "tests" / "nn" / "missing_test.py").write_text(
        "from allennlp.no_such_module import X\n\ndef test_one():\n    pass\n\ndef test_two():\n    pass\n")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "allennlp_unit_tests.py"), str(clone),
                           "--folders", "nn"], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "tests/nn: passed=2 failed=1 errors=2 skipped=0 files_not_importing=1" in lines
    assert "  does not import: tests.nn.missing_test" in lines
    assert lines[-1] == "allennlp_unit_tests_passed_share=0.4000"


def test_a_folder_that_is_no_clone_is_one_line(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "allennlp_unit_tests.py"), str(tmp_path)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "is not a clone" in done.stderr
