"""The golden files are telling: a golden case whose model answers every input alike, or whose metrics sit at their
bounds, would pass a distrain that ignores its input or computes a metric wrongly. Over tests/allennlp_golden:

* every file says how it was made: the command (a script of this repository) and the versions it ran on, in the
  file (``made_by``) or, for the cases scripts/allennlp_golden.py trains, in ``MADE_BY.json`` (the case's own record,
  or the run-wide one);
* every ``evaluate`` metric of a case (``CASE/metrics.json``) lies strictly inside its bounds: (0, 1), (0, 100) for a
  percentage, a loss or perplexity finite and above 0;
* each case's discrete outputs (``CASE/outputs.json``: predicted labels, tags, spans, heads, answers, decoded
  sequences) are not the same for every instance, a labelling does not give every token one label, and decoded
  sequences do not all have one length (all running to the beam search's last step).

The checks and the cases that are still not telling (``STILL_DEGENERATE``, with what is wrong, exactly as the checks
find it) are in tests/support/golden_informative.py, which the tests comparing a case's outputs use too: a listed case
that has become telling fails here as surely as an unlisted one that is not, so the list only shrinks. Pure data:
reads the golden files, runs no model."""

from __future__ import annotations

import json
import math
import re

import pytest

from support.golden_informative import (ARGMAX, BEST, DISCRETE, GOLDEN, LABEL, SEQUENCES, STILL_DEGENERATE, TREE,
                                        answer, metric_problems, output_problems, problems)
from support.paths import ROOT

MADE_BY = json.loads((GOLDEN / "MADE_BY.json").read_text())
CASES = sorted(path.parent.name for path in GOLDEN.glob("*/outputs.json"))


def test_every_golden_case_is_classified_and_its_fields_exist():
    assert sorted(DISCRETE) == CASES
    assert set(SEQUENCES) <= set(DISCRETE) and set(STILL_DEGENERATE) <= set(DISCRETE)
    for case in CASES:
        outputs = json.loads((GOLDEN / case / "outputs.json").read_text())
        metrics = json.loads((GOLDEN / case / "metrics.json").read_text())
        assert metrics, case
        for field in DISCRETE[case]:
            assert all(field in output for output in outputs), (case, field)
        assert set(DISCRETE[case]) <= set(MADE_BY["cases"][case]["outputs"]), case


@pytest.mark.parametrize("case", CASES)
def test_golden_case_is_telling_or_listed_with_what_is_wrong(case):
    found = problems(case)
    if case in STILL_DEGENERATE:
        assert found, f"{case} is now telling: remove it from STILL_DEGENERATE"
        assert found == STILL_DEGENERATE[case], f"{case}: the checks now find {found!r}"
    else:
        assert not found, f"{case} is not telling: {found}"


def test_the_checks_find_what_they_are_for():
    """The checks themselves: a constant answer, a one-label tagging, one length of decoded sequences and metrics at
    or past their bounds are each found (on made-up values, not golden ones)."""
    assert answer([[0.1, 0.9], [0.8, 0.2]], ARGMAX) == [1, 0]
    assert answer([[3, 4], [5]], BEST) == [3, 4] and answer("(S (NP a) (VP b))", TREE) == ["S", "NP", "VP"]
    # one label for every instance; the same labels in other words; one label for every token; one length
    assert output_problems([{"p": [0.2, 0.8]}, {"p": [0.4, 0.6]}], {"p": ARGMAX}) == ["p: 1 for all 2 instances"]
    assert output_problems([{"p": [0.2, 0.8]}, {"p": [0.6, 0.4]}], {"p": ARGMAX}) == []
    assert output_problems([{"t": ["O", "O"]}, {"t": ["O"]}], {"t": LABEL}) == ['t: every entry "O"']
    assert output_problems([{"t": ["O", "B"]}, {"t": ["O"]}], {"t": LABEL}) == []
    assert output_problems([{"s": (0, 1)}, {"s": (0, 1)}], {"s": LABEL}) == ["s: [0, 1] for all 2 instances"]
    beams = [{"b": [["a", "b"], ["c"]]}, {"b": [["c", "d"], ["a"]]}]
    assert output_problems(beams, {"b": BEST}, "b") == ["b: every sequence 2 long"]
    assert output_problems([*beams, {"b": [["e"]]}], {"b": BEST}, "b") == []
    assert output_problems(beams[:1], {"b": BEST}) == ["1 instance(s)"]
    # a metric at either bound, past it, barely off it (BLEU's smoothing) or not finite; a percentage's bound is 100
    for value in (0.0, 1.0, 1.5, -0.1, 1e-13, 1 - 1e-9, math.nan):
        assert metric_problems("any", {"accuracy": value}) != [], value
    assert metric_problems("any", {"accuracy": 0.5, "BLEU": 0.01, "loss": 3.0, "perplexity": 20.0}) == []
    assert metric_problems("any", {"loss": math.inf}) == ["loss=inf"] and metric_problems("any", {"loss": 0.0})
    assert metric_problems("dialog_qa", {"f1": 2.7}) == [] and metric_problems("any", {"f1": 2.7}) == ["f1=2.7"]


def _script_of(command: str) -> str | None:
    return next((part for part in command.split() if part.endswith(".py")), None)


def _provenance_problem(command, versions) -> str | None:
    if not isinstance(command, str) or not command.strip():
        return "no command"
    script = _script_of(command)
    if script is None or not (ROOT / script).is_file():
        return f"{command!r} names no script of the repository"
    if not versions or not isinstance(versions, dict) or not {"allennlp", "torch"} <= {
            key.lower() for key in versions}:
        return f"versions {versions!r} lack allennlp's or torch's"
    return None


def _one_line_versions(record: str) -> tuple[str, dict]:
    """The older one-line ``made_by``: "command (AllenNLP x, torch y)"."""
    command, _, rest = record.partition(" (")
    versions = dict(re.findall(r"(AllenNLP|torch) ([0-9][^\s,)]*)", rest))
    return command, {key.lower(): value for key, value in versions.items()}


def test_every_golden_file_carries_its_command_and_versions():
    run_wide = (MADE_BY.get("command"), MADE_BY.get("versions"))
    assert _provenance_problem(*run_wide) is None, run_wide
    assert {"allennlp", "allennlp_models", "torch"} <= set(MADE_BY["versions"])
    missing = []
    for path in sorted(GOLDEN.rglob("*")):
        if not path.is_file() or path.name == "MADE_BY.json" or "__pycache__" in path.parts:
            continue
        relative = path.relative_to(GOLDEN)
        if path.parent.parent == GOLDEN and path.name in {"model.tar.gz", "outputs.json", "metrics.json"}:
            record = MADE_BY["cases"].get(path.parent.name)
            if record is None:
                missing.append(f"{relative}: its case is not in MADE_BY.json")
                continue
            found = _provenance_problem(record.get("command", run_wide[0]), record.get("versions", run_wide[1]))
            if not {"repository", "config"} <= set(record):  # (no "overrides": the config unchanged)
                found = found or f"the case's record lacks its repository or config: {sorted(record)}"
        elif path.suffix == ".json":
            record = json.loads(path.read_text()).get("made_by")
            if isinstance(record, str):
                record = dict(zip(("command", "versions"), _one_line_versions(record)))
            found = (_provenance_problem(record.get("command"), record.get("versions")) if isinstance(record, dict)
                     else "no made_by")
        else:
            found = "neither a case's file nor JSON with a made_by"
        if found:
            missing.append(f"{relative}: {found}")
    assert not missing, missing
