"""Where the official scorers the AllenNLP tests run as oracles are: ``.cache/scorers/`` in the checkout, where
scripts/setup.sh puts them, taken from AllenNLP's wheels (they are other projects' programs, so the repository holds
none). One missing (a clone the set-up has not run in) skips the test that needs it, with one reason naming the file
and the command that fetches it; where nothing may be skipped (``DISTRAIN_TESTS_STRICT``, set by ``.ci/run``, after
the set-up), a missing scorer fails the test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support.paths import ROOT

CACHE = ROOT / ".cache" / "scorers"  # scripts/setup.sh writes here


def scorer(name: str) -> Path:
    """The path of ``name`` (``evalb.c``, ``COLLINS.prm``, ``srl-eval.pl``) in the cache; skips (fails where strict)
    the calling test when it is not there."""
    path = CACHE / name
    if path.is_file():
        return path
    reason = (f"{path.relative_to(ROOT)} is missing (an official scorer, kept out of the repository): "
              "run bash scripts/setup.sh --tests")
    if os.environ.get("DISTRAIN_TESTS_STRICT"):
        pytest.fail(f"{reason} (DISTRAIN_TESTS_STRICT is set: the set-up should have fetched it)", pytrace=False)
    pytest.skip(reason)
