"""EVALB (evalb.c and COLLINS.prm as AllenNLP 2.10.1 ships them, in the scorers' cache: support/scorers.py) as an
oracle: compiled with gcc once per process, given trees written as AllenNLP's ``evalb`` metric wrote them (one
bracketed tree a line), its per-sentence lines read back as AllenNLP read them (the 12-field lines: matched, gold and
test brackets summed)."""

from __future__ import annotations

import atexit
import functools
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

from support.scorers import scorer

HEADER = ["ID", "Len.", "Stat.", "Recal", "Prec.", "Bracket", "gold", "test", "Bracket", "Words", "Tags", "Accracy"]


@functools.lru_cache(maxsize=1)
def program() -> Path:
    """The compiled EVALB (in a folder removed when the process ends); skips the test where its source is missing."""
    source = scorer("evalb.c")
    folder = Path(tempfile.mkdtemp(prefix="evalb-"))
    atexit.register(shutil.rmtree, folder, True)
    subprocess.run(["gcc", "-w", "-o", str(folder / "evalb"), str(source)], check=True)
    return folder / "evalb"


def official_lines(gold: Sequence, predicted: Sequence) -> list[tuple[int, int, int]]:
    """``(matched, gold, test)`` brackets of each sentence as EVALB printed them."""
    evalb, parameters = program(), scorer("COLLINS.prm")
    with tempfile.TemporaryDirectory() as scratch:
        gold_path, predicted_path = Path(scratch, "gold.txt"), Path(scratch, "predicted.txt")
        gold_path.write_text("".join(f"{tree}\n" for tree in gold))
        predicted_path.write_text("".join(f"{tree}\n" for tree in predicted))
        done = subprocess.run([str(evalb), "-p", str(parameters), "-e", str(len(gold) + 10),
                               str(gold_path), str(predicted_path)], capture_output=True, text=True, check=True)
    rows = [line.split() for line in done.stdout.splitlines()]
    return [(int(row[5]), int(row[6]), int(row[7])) for row in rows if len(row) == 12 and row != HEADER]


def official_scores(gold: Sequence, predicted: Sequence) -> dict[str, float]:
    """AllenNLP's ``evalb`` metric from EVALB's lines: bracket recall, precision and F1 over the summed counts."""
    matched, gold_count, test_count = (sum(column) for column in zip(*official_lines(gold, predicted)))
    recall = matched / gold_count if gold_count > 0 else 0.0
    precision = matched / test_count if gold_count > 0 and test_count > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"evalb_recall": recall, "evalb_precision": precision, "evalb_f1_measure": f1}


def official_reference(data) -> dict[str, float]:
    """EVALB's scores of a metric case's trees (tests/support/metric_cases.py)."""
    return official_scores(list(data["gold_trees"]), list(data["predicted_trees"]))
