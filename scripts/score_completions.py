"""Score generated completions against gold ones: the share that match exactly (whitespace stripped).

    python scripts/score_completions.py PREDICTIONS.jsonl GOLD.jsonl [--key completion]

PREDICTIONS is what ``distrain predict`` wrote for GOLD's prompts (one line per record, in order);
GOLD holds the reference under ``--key``. Prints the accuracy, the majority class's share of GOLD
(what always answering the most common completion would score) and a confusion count; the last line
is ``accuracy=<value>``. ``--quick`` scores a built-in pair of three records (a smoke run).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from pathlib import Path

QUICK = ([{"completion": " positive"}, {"completion": " negative "}, {"completion": " positive"}],
         [{"completion": "positive"}, {"completion": "negative"}, {"completion": "neutral"}])


def read(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("predictions", nargs="?")
    parser.add_argument("gold", nargs="?")
    parser.add_argument("--key", default="completion", help="the gold record's key holding the reference")
    parser.add_argument("--quick", action="store_true", help="score a built-in pair of three records: a smoke run")
    args = parser.parse_args()
    if args.quick:
        with tempfile.TemporaryDirectory() as folder:
            for name, records in zip(("predictions", "gold"), QUICK):
                setattr(args, name, str(Path(folder, f"{name}.jsonl")))
                Path(getattr(args, name)).write_text("".join(json.dumps(record) + "\n" for record in records))
            score(args)
        return
    if not (args.predictions and args.gold):
        parser.error("PREDICTIONS and GOLD are required (or --quick)")
    score(args)


def score(args: argparse.Namespace) -> None:
    predicted = [record["completion"].strip() for record in read(args.predictions)]
    gold = [record[args.key].strip() for record in read(args.gold)]
    if len(predicted) != len(gold):
        raise SystemExit(f"{args.predictions} has {len(predicted)} lines, {args.gold} has {len(gold)}")
    accuracy = sum(p == g for p, g in zip(predicted, gold)) / len(gold)
    majority, count = Counter(gold).most_common(1)[0]
    print(f"{len(gold)} records; majority class {majority!r}: {count / len(gold):.4f}")
    for (g, p), n in sorted(Counter(zip(gold, predicted)).items(), key=lambda item: -item[1]):
        print(f"  gold {g!r:12} generated {p!r:14} {n}")
    print(f"accuracy={accuracy:.4f}")


if __name__ == "__main__":
    main()
