"""Dialog QA and the ``quac`` reader against AllenNLP 2.10.1: the golden archive (allennlp-models' test_fixtures/rc/
dialog_qa, trained by the oracle) gives AllenNLP's span scores, loss, answers, yes/no and follow-up predictions here
(its ``evaluate`` metrics are checked with the other golden cases in test_allennlp_archives.py); allennlp-models'
dialog_qa training config passes check and trains an epoch on the fixture QuAC file, ELMo at AllenNLP's fixture
biLM; 2 CPU workers end where 1 does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from support.allennlp import CONFIGS, check_and_train_an_epoch, golden_job, train_on_one_and_two_workers
from support.allennlp_fixtures import ALLENNLP_MODELS, ELMO, needs_fixtures
from support.cli import run_cli
from support.configs import write_config
from support.distributed import final_metrics, max_weight_difference

pytestmark = needs_fixtures

MODELS = ALLENNLP_MODELS
FIXTURE = MODELS / "test_fixtures" / "rc" / "dialog_qa"


def test_allennlp_dialog_qa_archive_gives_allennlps_span_scores_loss_and_answers(monkeypatch):
    monkeypatch.chdir(MODELS)
    job, golden = golden_job("dialog_qa")
    assert len(golden) == 2
    with torch.inference_mode():
        for index, theirs in enumerate(golden):
            mine = job.model(**job.dataset.batch(np.arange(index, index + 1)))
            mine = job.model.make_output_human_readable(mine)
            # AllenNLP's span predictors' outputs (one dialog: no padding, every turn and token scored)
            for key, module in (("span_start_logits", "_span_start_predictor"),
                                ("span_end_logits", "_span_end_predictor")):
                np.testing.assert_allclose(mine[key][0].numpy(), theirs[module], atol=1e-5, rtol=0)
            assert abs(float(mine["loss"]) - theirs["loss"]) <= 1e-5  # the yes/no and follow-up logits too
            for key in ("best_span_str", "qid", "yesno", "followup"):
                assert mine[key][0] == theirs[key], key


def test_best_span_is_allennlps_scan_with_its_length_limit():
    from distrain.zoo.rc.models.dialog_qa import best_span_yesno_followup

    start = torch.tensor([[5.0, 0.0, 5.0, -1.0, 0.0], [0.0, 3.0, 0.0, 0.0, 0.0]])
    end = torch.tensor([[0.0, 1.0, 0.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0, 9.0]])
    yesno = torch.zeros(2, 5, 3)
    yesno[0, 4, 2] = yesno[1, 1, 1] = 1.0
    followup = torch.zeros(2, 5, 3)
    # row 0: the tie at start 0 and 2 keeps the first; (0, 4) scores 7. Row 1: (1, 4) would score 12, but is 3 long
    assert best_span_yesno_followup(start, end, yesno, followup, 30).tolist() == [[0, 4, 2, 0], [1, 4, 0, 0]]
    assert best_span_yesno_followup(start, end, yesno, followup, 2)[1].tolist() == [1, 1, 1, 0]


def _write_quac(path: Path, dialogs: list[dict]) -> Path:
    path.write_text(json.dumps({"data": [{"title": "t", "paragraphs": dialogs}]}))
    return path


DIALOG = {"context": "the cat sat on the mat today CANNOTANSWER", "qas": [
    {"id": "q0", "question": "who sat ?", "yesno": "x", "followup": "y",
     "answers": [{"text": "cat", "answer_start": 4}]},
    {"id": "q1", "question": "where ?", "yesno": "x", "followup": "m",
     "answers": [{"text": "CANNOTANSWER", "answer_start": 29}, {"text": "the mat", "answer_start": 15},
                 {"text": "the mat", "answer_start": 15}]},
    {"id": "q2", "question": "really ?", "yesno": "y", "followup": "n",
     "answers": [{"text": "CANNOTANSWER", "answer_start": 29}, {"text": "CANNOTANSWER", "answer_start": 29},
                 {"text": "today", "answer_start": 23}]}]}


def test_quac_reader_gives_a_dialog_its_last_annotators_spans_and_the_previous_answers_marked(tmp_path):
    from distrain.zoo.rc.readers.quac import QuacReader
    from distrain.data.tokenizers.spacy import SpacyTokenizer

    (instance,) = QuacReader(tokenizer=SpacyTokenizer("en"), num_context_answers=2).read(
        _write_quac(tmp_path / "q.json", [DIALOG]))
    assert [field.sequence_index for field in instance["span_start"].field_list] == [1, 4, 6]  # the last answer's
    assert [field.sequence_index for field in instance["span_end"].field_list] == [1, 5, 6]
    p1 = [field.labels for field in instance["p1_answer_marker"].field_list]
    p2 = [field.labels for field in instance["p2_answer_marker"].field_list]
    assert p1[0] == ["O"] * 8 and p1[1][1] == "<1_>" and p1[2][4:6] == ["<1_start>", "<1_end>"]
    assert p2[0] == p2[1] == ["O"] * 8 and p2[2][1] == "<2_>" and set(p2[2]) == {"O", "<2_>"}
    metadata = instance["metadata"].value
    # CANNOTANSWER at least half the references: the answer; else dropped
    assert metadata["answer_texts_list"] == [["cat"], ["the mat", "the mat"], ["CANNOTANSWER"]]
    assert metadata["instance_id"] == ["q0", "q1", "q2"] and metadata["question"][0] == "who sat ?"


def test_a_list_field_pads_missing_turns_with_the_elements_empty_value():
    from distrain.data.dataset import IndexedDataset
    from distrain.data.fields import IndexField, LabelField, ListField, SequenceLabelField, TextField
    from distrain.data.token_indexers.characters import TokenCharactersIndexer
    from distrain.data.vocabulary import Vocabulary

    indexers = {"chars": TokenCharactersIndexer(min_padding_length=3)}
    dialogs = []
    for questions in (["a b", "c"], ["dd"]):
        passage = TextField("x y z".split(), indexers)
        dialogs.append({"question": ListField([TextField(q.split(), indexers) for q in questions]),
                        "start": ListField([IndexField(2, passage) for _ in questions]),
                        "label": ListField([LabelField("yes", "yesno_labels") for _ in questions]),
                        "tags": ListField([SequenceLabelField(["O", "B", "O"], passage, "answer_tags")
                                           for _ in questions])})
    vocab = Vocabulary.from_instances(dialogs)
    batch = IndexedDataset.from_instances(dialogs, vocab).batch(np.arange(2))
    assert batch["question"]["chars"]["token_characters"].shape == (2, 2, 2, 3)  # dialogs, turns, tokens, chars
    assert batch["question"]["chars"]["token_characters"][1, 1].eq(0).all()
    assert batch["start"].tolist() == [[2, 2], [2, -1]] and batch["label"].tolist() == [[0, 0], [0, -1]]
    assert batch["tags"].shape == (2, 2, 3) and batch["tags"][1, 1].eq(0).all()


# ------------------------------------------------------------------------------------------- configs and workers
def _short_quac(path: Path, cut: int = 450, turns: tuple[int, ...] = (6, 6)) -> Path:
    """The fixture QuAC dialogs on their passage's first ``cut`` characters (then QuAC's CANNOTANSWER), each with
    its first ``turns``: a turn keeps its answers there, else is answered CANNOTANSWER. The full-size config trains
    in seconds."""
    dialogs = []
    articles = json.loads((FIXTURE / "quac_sample.json").read_text())["data"]
    paragraphs = [paragraph for article in articles for paragraph in article["paragraphs"]]
    for dialog, count in zip(paragraphs, turns):
        dialog = {**dialog, "qas": dialog["qas"][:count]}
        context = dialog["context"][:cut] + " CANNOTANSWER"
        cannot = [{"text": "CANNOTANSWER", "answer_start": cut + 1}]
        turns = [{**turn, "answers": [answer for answer in turn["answers"]
                                      if answer["answer_start"] + len(answer["text"]) <= cut] or cannot}
                 for turn in dialog["qas"]]
        dialogs.append({"context": context, "qas": turns})
    return _write_quac(path, dialogs)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """The fixture QuAC file cut short, at a local path."""
    root = tmp_path_factory.mktemp("dialog_qa")
    _short_quac(root / "quac.json")
    _short_quac(root / "uneven.json", turns=(6, 3))  # the shorter dialog's turns are padding where they meet
    return root


def _local() -> dict:
    """allennlp-models' dialog_qa config on the fixture QuAC file with the fixture ELMo: that biLM is 32 wide where
    the config's is 1024, so the phrase layer's stated input is 32 + 100 + 2 × 10 (the config says 1144)."""
    from distrain.config.loading import load_config

    config = load_config(CONFIGS / "dialog_qa.jsonnet")
    config["train_data_path"] = config["validation_data_path"] = "quac.json"
    config["model"]["text_field_embedder"]["token_embedders"]["elmo"] |= {
        "options_file": str(ELMO / "options.json"), "weight_file": str(ELMO / "lm_weights.hdf5")}
    config["model"]["phrase_layer"]["input_size"] = 152
    return config


def test_dialog_qa_config_with_the_fixture_elmo_passes_check_and_trains_an_epoch(workdir):
    # and QuAC's F1 (a percentage, as AllenNLP's) as distrain evaluate gives it
    check_and_train_an_epoch(workdir, _local(), "dialog_qa", metric="validation_yesno", also=("validation_f1",))


def test_a_config_naming_missing_components_or_wrong_widths_is_one_line_each_before_data_is_read(workdir):
    config = _local()
    config["train_data_path"] = "missing.json"  # never read
    config["trainer"]["optimizer"]["type"] = "no_such_optimizer"
    config["dataset_reader"]["type"] = "no_such_reader"
    config["model"]["residual_encoder"]["input_size"] = 100
    config["model"]["phrase_layer"]["input_size"] = 1144  # the config's, for the 1024-wide ELMo
    checked = run_cli("check", str(write_config(workdir / "bad.json", config)), cwd=workdir)
    assert checked.returncode == 2 and "Traceback" not in checked.stderr
    lines = [line.strip() for line in checked.stderr.splitlines() if "no_such" in line]
    assert len(lines) == 2
    assert any(line.startswith("dataset_reader.type") for line in lines)
    assert any(line.startswith("trainer.optimizer.type") for line in lines)
    assert "model.phrase_layer.input_size: is 1144, but the text_field_embedder + num_context_answers × " \
           "marker_embedding_dim gives 152" in checked.stderr
    assert "model.residual_encoder.input_size: is 100, but the phrase_layer gives 200" in checked.stderr


def _small_dialog_qa(workers: int) -> dict:
    """The golden fixture's tiny model (dropout off, plain SGD) on dialogs of 6 and 3 turns, a global batch of both
    (the loader's batch size is each worker's): one process pads the shorter, two do not; the loss is a mean over
    turns, which the model's ``loss_weight`` keeps exact."""
    from distrain.config.loading import load_config

    config = load_config(FIXTURE / "experiment.json")  # AllenNLP's JSON: trailing commas
    config["train_data_path"] = config["validation_data_path"] = "uneven.json"
    config["model"]["dropout"] = 0.0
    config["data_loader"] = {"batch_size": 2 // workers}
    config["trainer"] = {"num_epochs": 2, "optimizer": {"type": "sgd", "lr": 0.5}, "validation_metric": "+f1"}
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers}
    return config


def test_two_workers_end_within_1e_5_of_one_worker(workdir):
    runs = train_on_one_and_two_workers(workdir, _small_dialog_qa)
    difference = max_weight_difference(runs[1], runs[2])
    print(f"max |weight difference|, 1 vs 2 workers: {difference:.3g}")
    assert difference <= 1e-5
    one, two = final_metrics(runs[1]), final_metrics(runs[2])
    for name in ("validation_f1", "validation_yesno", "validation_followup", "validation_span_acc"):
        assert one[name] == pytest.approx(two[name], abs=1e-9), name
