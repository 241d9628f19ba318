"""``AllenNlpTestCase``: the base of AllenNLP-style test classes, a scratch folder per test and the fixtures' place.

AllenNLP's tests read their data under ``FIXTURES_ROOT`` (a clone's ``test_fixtures/``). Where that folder is,
in order: ``DISTRAIN_ALLENNLP_TEST_FIXTURES`` (the folder itself, as ``scripts/allennlp_unit_tests.py`` sets it
to a clone's), ``DISTRAIN_ALLENNLP_FIXTURES`` (a folder holding ``allennlp/test_fixtures``, the suite's own
convention, see tests/support/allennlp_fixtures.py), else ``../shared/allennlp-fixtures`` beside a checkout.
"""

from __future__ import annotations

import logging
import os
import pathlib
import shutil
import tempfile

_CHECKOUT = pathlib.Path(__file__).resolve().parents[5]  # src/distrain/allennlp/common/testing -> the checkout


def fixtures_root() -> pathlib.Path:
    """The ``test_fixtures`` folder AllenNLP's tests read, by the order the module docstring gives."""
    direct = os.environ.get("DISTRAIN_ALLENNLP_TEST_FIXTURES")
    if direct:
        return pathlib.Path(direct).resolve()
    provided = os.environ.get("DISTRAIN_ALLENNLP_FIXTURES") or _CHECKOUT.parent / "shared" / "allennlp-fixtures"
    return (pathlib.Path(provided) / "allennlp" / "test_fixtures").resolve()


class AllenNlpTestCase:
    """Give each test ``self.TEST_DIR``, a fresh folder removed after it, and quieten the chattiest loggers."""

    FIXTURES_ROOT = fixtures_root()
    PROJECT_ROOT = FIXTURES_ROOT.parent
    TESTS_ROOT = PROJECT_ROOT / "tests"

    def setup_method(self) -> None:
        logging.getLogger("distrain.config").setLevel(logging.WARNING)
        logging.getLogger("urllib3.connectionpool").disabled = True
        self.TEST_DIR = pathlib.Path(tempfile.mkdtemp(prefix="allennlp_tests"))

    def teardown_method(self) -> None:
        shutil.rmtree(self.TEST_DIR, ignore_errors=True)
