"""Small SQuAD v1.1-format data for tests (not a benchmark: no SQuAD-format data ships in an installed package
here). Each context states where one person lives, after ``filler`` sentences that never say "lives in"."""

from __future__ import annotations

import json
import random
from pathlib import Path

PEOPLE = ["Anna", "Boris", "Clara", "David", "Emma", "Felix", "Greta", "Hugo", "Ines", "Jonas", "Karin", "Lukas"]
CITIES = ["Oslo", "Paris", "Madrid", "Berlin", "Vienna", "Lisbon", "Dublin", "Prague", "Warsaw", "Athens"]
FILLER = ["The weather was mild that spring.", "Many trains leave early.", "A bakery sells fresh bread.",
          "The river is wide and calm.", "Some museums open late on Fridays.", "Old bridges cross the water."]


def squad_questions(count: int, seed: int, filler: int = 0, start: int = 0) -> list[dict]:
    """``count`` SQuAD paragraphs of one question each; gold answers: the city, and "in <city>"."""
    rng = random.Random(seed)
    paragraphs = []
    for number in range(start, start + count):
        person, city = rng.choice(PEOPLE), rng.choice(CITIES)
        fact = f"{person} lives in {city}, near the old square."
        context = " ".join(rng.choice(FILLER) for _ in range(filler)) + (" " if filler else "") + fact
        at = context.index(f"in {city}")
        answers = [{"text": city, "answer_start": at + 3}, {"text": f"in {city}", "answer_start": at}]
        paragraphs.append({"context": context, "qas": [
            {"id": f"q{number}", "question": f"Where does {person} live?", "answers": answers}]})
    return paragraphs


def write_squad(path: Path, paragraphs: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": "1.1", "data": [{"title": "people", "paragraphs": paragraphs}]}))
    return path


def gold_answers(path: Path) -> dict[str, list[str]]:
    data = json.loads(path.read_text())["data"]
    return {qa["id"]: [a["text"] for a in qa["answers"]]
            for article in data for paragraph in article["paragraphs"] for qa in paragraph["qas"]}


def contexts(path: Path) -> dict[str, str]:
    data = json.loads(path.read_text())["data"]
    return {qa["id"]: paragraph["context"] for article in data for paragraph in article["paragraphs"]
            for qa in paragraph["qas"]}


# --- the official SQuAD v1.1 evaluation (evaluate-v1.1.py), written out here as the tests' oracle -----------
def official_normalize_answer(s: str) -> str:
    import re
    import string

    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def official_f1_score(prediction: str, ground_truth: str) -> float:
    from collections import Counter

    prediction_tokens = official_normalize_answer(prediction).split()
    ground_truth_tokens = official_normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def official_exact_match_score(prediction: str, ground_truth: str) -> bool:
    return official_normalize_answer(prediction) == official_normalize_answer(ground_truth)


def official_evaluate(gold: dict[str, list[str]], predictions: dict[str, str]) -> dict[str, float]:
    """``{"exact_match", "f1"}`` in percent, as the official script prints them."""
    f1 = exact_match = total = 0
    for qid, ground_truths in gold.items():
        total += 1
        if qid not in predictions:
            continue
        prediction = predictions[qid]
        exact_match += max(official_exact_match_score(prediction, truth) for truth in ground_truths)
        f1 += max(official_f1_score(prediction, truth) for truth in ground_truths)
    return {"exact_match": 100.0 * exact_match / total, "f1": 100.0 * f1 / total}


def write_tiny_pretrained_bert(folder: Path) -> Path:
    """support/transformer_fixtures.py's tiny BERT shrunk to hidden 16, with seeded random weights saved beside it."""
    import torch
    from transformers import AutoConfig, AutoModel

    from support.transformer_fixtures import write_tiny_bert

    write_tiny_bert(folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "hidden_size": 16, "intermediate_size": 32,
                                                    "num_attention_heads": 2}))
    torch.manual_seed(0)
    AutoModel.from_config(AutoConfig.from_pretrained(folder)).save_pretrained(folder)
    return folder
