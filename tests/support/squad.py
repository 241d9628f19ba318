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


def squad_v1_scores(gold: dict[str, list[str]], predictions: dict[str, str]) -> dict[str, float]:
    """``{"exact_match", "f1"}`` in percent, by torchmetrics' SQuAD metric (a package's implementation of the
    official evaluate-v1.1.py: its normalisation, token F1, best over the gold answers, mean over questions), run
    in float64 (torchmetrics sums in the default float dtype).

    torchmetrics scores a prediction and a gold answer that both normalise to nothing F1 1 (SQuAD v2.0's rule),
    where v1.1 scores 0; so every gold answer here must keep a word after normalisation, as SQuAD v1.1's answers
    (spans of their context) do, and that is checked with torchmetrics itself."""
    import torch
    from torchmetrics.functional.text import squad

    def question(qid: str, answers: list[str]) -> dict:
        return {"id": qid, "answers": {"text": answers, "answer_start": [0] * len(answers)}}

    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        for answers in gold.values():
            for answer in answers:  # "" scores F1 0 against an answer with a word, 1 against one without
                empty = squad({"id": "q", "prediction_text": ""}, question("q", [answer]))["f1"]
                assert empty == 0, f"gold answer {answer!r} normalises to nothing: v1.1 and torchmetrics differ there"
        result = squad([{"id": qid, "prediction_text": predictions[qid]} for qid in gold if qid in predictions],
                       [question(qid, answers) for qid, answers in gold.items()])
    finally:
        torch.set_default_dtype(default)
    return {name: float(value) for name, value in result.items()}


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
