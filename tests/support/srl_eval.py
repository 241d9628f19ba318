"""The official CoNLL-2005 scorer (srl-eval.pl as allennlp-models 2.10.1 ships it, in the scorers' cache:
support/scorers.py) as an oracle: predicates written in its two files as AllenNLP's ``SrlEvalScorer`` wrote them, its
table read back as counts."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

from support.scorers import scorer


def _write(path: Path, words: Sequence[Sequence[str]], tags: Sequence[Sequence[str]],
           verbs: Sequence[int | None]) -> None:
    from distrain.zoo.srl.metrics.srl_eval import conll_brackets

    lines = []
    for sentence, sequence, verb in zip(words, tags, verbs):
        column = ["-"] * len(sentence)
        if verb is not None:
            column[verb] = sentence[verb]
        lines += [word.ljust(15) + bracket.rjust(15) for word, bracket in zip(column, conll_brackets(sequence))]
        lines.append("")
    path.write_text("\n".join(lines) + "\n")


def official_table(words, predicted, gold, verbs) -> dict[str, list[str]]:
    """The script's table: ``label -> [correct, excess, missed, prec., rec., F1]`` as printed (``Overall`` and
    ``V`` included; percentages with two decimals). Skips the test where the script is missing."""
    script = scorer("srl-eval.pl")
    with tempfile.TemporaryDirectory() as scratch:
        gold_path, predicted_path = Path(scratch, "gold.txt"), Path(scratch, "predicted.txt")
        _write(gold_path, words, gold, verbs)
        _write(predicted_path, words, predicted, verbs)
        done = subprocess.run(["perl", str(script), str(gold_path), str(predicted_path)], capture_output=True,
                              text=True, check=True)
    return {fields[0]: fields[1:] for fields in map(str.split, done.stdout.splitlines()) if len(fields) == 7}


def official_counts(words, predicted, gold, verbs) -> dict[str, tuple[int, int, int]]:
    """``label -> (correct, excess, missed)`` as srl-eval.pl prints them (``Overall`` and ``V`` included)."""
    return {label: tuple(int(value) for value in row[:3])  # type: ignore[misc]
            for label, row in official_table(words, predicted, gold, verbs).items()}


def official_scores(words, predicted, gold, verbs) -> dict[str, float]:
    """AllenNLP's reading of the script's table: per label but ``V`` and overall, from the counts it printed."""
    result = {}
    for label, (ok, op, ms) in official_counts(words, predicted, gold, verbs).items():
        if label == "V":
            continue
        name = "overall" if label == "Overall" else label
        precision = ok / (ok + op) if ok + op else 0.0  # the script's precrecf1, as fractions
        recall = ok / (ok + ms) if ok + ms else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        result.update({f"precision-{name}": precision, f"recall-{name}": recall, f"f1-measure-{name}": f1})
    return result


def official_reference(data) -> dict[str, float]:
    """The script's scores of a metric case's data (tests/support/metric_cases.py), words made up."""
    words = [[f"w{i}" for i in range(len(tags))] for tags in data["gold_tags"]]
    return official_scores(words, list(data["predicted_tags"]), list(data["gold_tags"]), list(data["verb_indices"]))
