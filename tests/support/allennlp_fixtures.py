"""Where AllenNLP's and allennlp-models' test fixtures are read: the one place that names the folder.

The project keeps no copy of them. They are provided beside the checkout, in ``../shared/allennlp-fixtures``
(``allennlp/test_fixtures`` and ``allennlp-models/test_fixtures``, unchanged, laid out as in the two repositories),
or wherever ``DISTRAIN_ALLENNLP_FIXTURES`` points: a folder holding ``allennlp/`` and ``allennlp-models/``, such as
the parent of a user's own clones of the two repositories.

AllenNLP's configs name their data relative to the repository's root (``test_fixtures/rc/squad.json``), so a test
runs from the repository's folder. A few files the project made stand where those configs expect them (the tiny
random BART and T5 for hub models that cannot be downloaded here, an archive trained by the real AllenNLP):
they live in ``tests/allennlp_overlay/``, laid out the same way. :data:`ALLENNLP` and :data:`ALLENNLP_MODELS` are
folders of links that show both, built once per process in a scratch folder; links, so the fixtures are read
where they are. Nothing is written through them: tests copy what they change.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from support.paths import ROOT, TESTS

VARIABLE = "DISTRAIN_ALLENNLP_FIXTURES"
SOURCE = Path(os.environ.get(VARIABLE) or ROOT.parent / "shared" / "allennlp-fixtures").resolve()
OVERLAY = TESTS / "allennlp_overlay"
REPOSITORIES = ("allennlp", "allennlp-models")

MISSING = (f"AllenNLP's test fixtures are not at {SOURCE}: provide allennlp/test_fixtures and "
           f"allennlp-models/test_fixtures there (../shared/allennlp-fixtures beside the checkout), or point "
           f"{VARIABLE} at a folder holding them")


def available() -> bool:
    """Whether both repositories' ``test_fixtures`` folders are there."""
    return all((SOURCE / name / "test_fixtures").is_dir() for name in REPOSITORIES)


#: the mark of every test that reads the fixtures: skipped, with the one reason, where they are not provided
needs_fixtures = pytest.mark.skipif(not available(), reason=MISSING)


def _link_tree(source: Path | None, overlay: Path | None, target: Path) -> None:
    """``target`` as a real folder of links: each entry of ``source``, then each of ``overlay`` (an overlay file
    takes a source file's place; folders present in both are merged one level further down)."""
    target.mkdir()
    names = {entry.name for folder in (source, overlay) if folder and folder.is_dir() for entry in folder.iterdir()}
    for name in sorted(names):
        mine = overlay / name if overlay and (overlay / name).exists() else None
        theirs = source / name if source and (source / name).exists() else None
        if mine and theirs and mine.is_dir() and theirs.is_dir():
            _link_tree(theirs, mine, target / name)
        else:
            (target / name).symlink_to(mine or theirs)


def _build() -> Path:
    """The scratch folder with one merged folder per repository (removed by the process that made it)."""
    scratch = Path(tempfile.mkdtemp(prefix="allennlp-fixtures-"))
    owner = os.getpid()
    atexit.register(lambda: os.getpid() == owner and shutil.rmtree(scratch, ignore_errors=True))
    for name in REPOSITORIES:
        _link_tree(SOURCE / name, OVERLAY / name, scratch / name)
    return scratch


_ROOT = _build() if available() else SOURCE
#: AllenNLP's repository folder (its ``test_fixtures/`` and the project's overlay on it)
ALLENNLP = _ROOT / "allennlp"
#: allennlp-models' repository folder
ALLENNLP_MODELS = _ROOT / "allennlp-models"
#: AllenNLP's tiny pretrained ELMo biLM and the outputs its tests expect
ELMO = ALLENNLP / "test_fixtures" / "elmo"


def repository(name: str) -> Path:
    """A repository's folder by name (``allennlp`` or ``allennlp-models``), as the golden cases record it."""
    return {"allennlp": ALLENNLP, "allennlp-models": ALLENNLP_MODELS}[name]


def copy_repository(name: str, target: Path) -> Path:
    """A real copy of a repository's fixtures with the project's files laid over them, as they are now on disk (the
    oracle's scripts/allennlp_golden.py writes some of those files before a later case reads them)."""
    shutil.copytree(SOURCE / name, target, ignore=shutil.ignore_patterns(".git"))
    if (OVERLAY / name).is_dir():
        shutil.copytree(OVERLAY / name, target, dirs_exist_ok=True)
    return target
