"""Every golden file says how it was made: the oracle command (an existing script of the repository) and the
versions it ran on, in the file itself (``made_by``) or, for the cases ``scripts/allennlp_golden.py`` trains, in
``MADE_BY.json`` beside them."""

from __future__ import annotations

import json

from support.paths import ROOT, TESTS

GOLDEN = TESTS / "allennlp_golden"


def script_of(command: str) -> str:
    return next(part for part in command.split() if part.endswith(".py"))


def test_every_golden_file_names_the_command_and_versions_that_made_it():
    made_by = json.loads((GOLDEN / "MADE_BY.json").read_text())
    assert (ROOT / script_of(made_by["command"])).is_file()
    assert {"allennlp", "allennlp_models", "torch"} <= set(made_by["versions"])
    unexplained = []
    for path in sorted(GOLDEN.rglob("*")):
        if not path.is_file() or path.name == "MADE_BY.json" or "__pycache__" in path.parts:
            continue
        folder = path.relative_to(GOLDEN).parts[0]
        if folder in made_by["cases"] and path.parent == GOLDEN / folder:
            continue  # a case of scripts/allennlp_golden.py, described in MADE_BY.json
        record = json.loads(path.read_text()).get("made_by") if path.suffix == ".json" else None
        if isinstance(record, dict):
            command, versions = record["command"], record["versions"]
        elif isinstance(record, str):  # the older one-line form: "command (AllenNLP x, torch y)"
            command, _, versions = record.partition(" (")
            versions = {"allennlp": versions} if "AllenNLP" in versions and "torch" in versions else {}
        else:
            unexplained.append(f"{path.relative_to(GOLDEN)}: no made_by")
            continue
        if not (ROOT / script_of(command)).is_file():
            unexplained.append(f"{path.relative_to(GOLDEN)}: {command} names no script of the repository")
        if not versions:
            unexplained.append(f"{path.relative_to(GOLDEN)}: no versions")
    assert not unexplained, unexplained
