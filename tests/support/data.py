"""Tiny datasets written by the tests: JSON lines, the toy sentiment task, scikit-learn's digits."""

from __future__ import annotations

import json
import random
from pathlib import Path


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


WORDS = {
    "pos": ["good", "great", "fine", "excellent", "happy", "love"],
    "neg": ["bad", "awful", "poor", "terrible", "sad", "hate"],
}


def sentiment_records(count: int, seed: int = 0) -> list[dict]:
    """A learnable toy text task: the label is the word family that dominates the text."""
    rng = random.Random(seed)
    records = []
    for _ in range(count):
        label = rng.choice(["pos", "neg"])
        words = [rng.choice(WORDS[label]) for _ in range(rng.randint(2, 6))]
        words += [rng.choice(["the", "a", "movie", "it", "was"]) for _ in range(rng.randint(0, 4))]
        rng.shuffle(words)
        records.append({"text": " ".join(words), "label": label})
    return records


def digits_records(count: int, seed: int) -> list[dict]:
    """Tiny scikit-learn digits, 8x8 pixels each."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    start = seed * count
    return [{"features": [float(x) for x in digits.data[i]], "label": str(int(digits.target[i]))}
            for i in range(start, start + count)]
