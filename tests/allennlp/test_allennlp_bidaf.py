"""BiDAF and the ``squad`` reader against AllenNLP 2.10.1: the golden archive (allennlp-models' test_fixtures/rc/bidaf,
trained by the oracle) gives AllenNLP's span scores and answers here (its ``evaluate`` metrics are checked with the
other golden cases in test_allennlp_archives.py); allennlp-models' bidaf and bidaf_elmo training configs pass check
and train an epoch on the fixture SQuAD file, GloVe and ELMo at local files; 2 CPU workers end where 1 does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from support.allennlp import CONFIGS, assert_span_answers_match, check_and_train_an_epoch, train_on_one_and_two_workers
from support.allennlp_fixtures import ALLENNLP, ALLENNLP_MODELS, ELMO, needs_fixtures
from support.cli import run_cli
from support.configs import write_config
from support.distributed import final_metrics, max_weight_difference
from support.golden_informative import assert_outputs_vary
from support.paths import TESTS

pytestmark = needs_fixtures

GOLDEN = TESTS / "allennlp_golden" / "bidaf"
MODELS = ALLENNLP_MODELS
SQUAD = MODELS / "test_fixtures" / "rc" / "squad.json"
GLOVE = ALLENNLP / "test_fixtures" / "embeddings" / "glove.6B.100d.sample.txt.gz"


def test_allennlp_bidaf_archive_gives_allennlps_span_scores_and_answers(monkeypatch):
    from distrain.experiment.archive.jobs import load_job

    monkeypatch.chdir(MODELS)
    job = load_job(str(GOLDEN / "model.tar.gz"), "test_fixtures/rc/squad.json", {})
    golden = json.loads((GOLDEN / "outputs.json").read_text())
    assert len(job.dataset) == len(golden) == 5
    assert_outputs_vary("bidaf", golden)  # else spans that ignore the question would match
    assert_span_answers_match(job, golden)


def test_best_span_is_the_best_start_plus_end_with_start_before_end():
    from distrain.zoo.rc.modules.best_span import get_best_span

    start = torch.tensor([[-10.0, 5.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    end = torch.tensor([[9.0, 0.0, 2.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
    # row 0: end 0 is best alone but lies before start 1; row 1: ties go to the first span (0, 0)
    assert get_best_span(start, end).tolist() == [[1, 2], [0, 0]]


def _write_squad(path: Path, paragraphs: list[dict]) -> Path:
    path.write_text(json.dumps({"data": [{"title": "t", "paragraphs": paragraphs}]}))
    return path


def _reader(**arguments):
    from distrain.zoo.rc.readers.squad import SquadReader
    from distrain.data.tokenizers.spacy import SpacyTokenizer

    return SquadReader(tokenizer=SpacyTokenizer("en"), **arguments)


PARAGRAPH = {"context": "the cat sat on the mat today", "qas": [
    {"id": "q1", "question": "who sat\n on it ?", "answers": [{"text": "cat", "answer_start": 4}]},
    {"id": "q2", "question": "where ?", "answers": [{"text": "mat today", "answer_start": 19},
                                                     {"text": "mat", "answer_start": 19},
                                                     {"text": "mat today", "answer_start": 19}]}]}


def test_squad_reader_gives_token_spans_offsets_and_the_most_common_annotation(tmp_path):
    instances = list(_reader().read(_write_squad(tmp_path / "s.json", [PARAGRAPH])))
    first, second = instances
    assert first["span_start"].array.tolist() == [1] and first["span_end"].array.tolist() == [1]
    assert [str(token) for token in first["question"].tokens] == ["who", "sat", "on", "it", "?"]  # newline dropped
    metadata = first["metadata"].value
    assert metadata["token_offsets"][1] == (4, 7) and metadata["answer_texts"] == ["cat"] and metadata["id"] == "q1"
    assert (second["span_start"].array.tolist(), second["span_end"].array.tolist()) == ([5], [6])  # 2 of 3 say so
    served = _reader().record_to_instance({"question": "who sat ?", "passage": "the cat sat"})  # distrain serve
    assert "span_start" not in served and [str(token) for token in served["passage"].tokens] == ["the", "cat", "sat"]


def test_squad_reader_cuts_passages_and_questions_and_skips_what_lost_its_answer(tmp_path):
    path = _write_squad(tmp_path / "s.json", [PARAGRAPH])
    kept = list(_reader(passage_length_limit=4, question_length_limit=2).read(path))
    assert [len(instance["passage"].tokens) for instance in kept] == [4, 4]
    assert [len(instance["question"].tokens) for instance in kept] == [2, 2]
    # q2's answer lies past the cut: it points at the last token, its answer texts kept for EM and F1
    assert kept[1]["span_start"].array.tolist() == [3] and kept[1]["metadata"].value["answer_texts"][0] == "mat today"
    reader = _reader(passage_length_limit=4, skip_impossible_questions=True)
    assert [i["metadata"].value["id"] for i in reader.read(path)] == ["q1"] and reader.num_skipped == 1
    legacy = _reader(passage_length_limit=4, skip_invalid_examples=True)
    assert len(list(legacy.read(path))) == 1


def test_squad_reader_refuses_a_tokenizer_without_character_offsets(tmp_path):
    from distrain.data.reader import DataError
    from distrain.zoo.rc.readers.squad import SquadReader
    from distrain.data.tokenizers.just_spaces import WhitespaceTokenizer

    with pytest.raises(DataError, match="keeps character offsets"):
        list(SquadReader(tokenizer=WhitespaceTokenizer()).read(_write_squad(tmp_path / "s.json", [PARAGRAPH])))


def test_squad2_reader_answers_impossible_questions_with_the_no_answer_token(tmp_path):
    from distrain.zoo.rc.readers.squad import SQUAD2_NO_ANSWER_TOKEN, Squad2Reader
    from distrain.data.reader import DataError
    from distrain.data.tokenizers.spacy import SpacyTokenizer

    impossible = {"context": "a b c", "qas": [{"id": "x", "question": "q ?", "answers": [], "is_impossible": True}]}
    path = _write_squad(tmp_path / "s2.json", [impossible])
    (instance,) = Squad2Reader(tokenizer=SpacyTokenizer("en")).read(path)
    assert str(instance["passage"].tokens[-1]) == SQUAD2_NO_ANSWER_TOKEN
    assert instance["span_start"].array.tolist() == [3] and instance["metadata"].value["answer_texts"] == [
        SQUAD2_NO_ANSWER_TOKEN]
    with pytest.raises(DataError, match="question x is impossible"):
        list(_reader().read(path))


# ------------------------------------------------------------------------------------------- configs and workers
def _short_squad(path: Path) -> Path:
    """The fixture SQuAD paragraphs cut short (characters 0-300 and 400-700 of each), with the fixture questions
    answered in each piece: the full-size configs train in seconds."""
    pieces = []
    for paragraph in json.loads(SQUAD.read_text())["data"][0]["paragraphs"]:
        for begin, end in ((0, 300), (400, 700)):
            questions = []
            for question in paragraph["qas"]:
                answers = [{**answer, "answer_start": answer["answer_start"] - begin} for answer in question["answers"]
                           if begin <= answer["answer_start"] and answer["answer_start"] + len(answer["text"]) <= end]
                if answers:
                    questions.append({**question, "answers": answers})
            if questions:
                pieces.append({"context": paragraph["context"][begin:end], "qas": questions})
    return _write_squad(path, pieces)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """The fixture SQuAD file (whole, and cut short) and the 100-wide GloVe sample at local paths."""
    root = tmp_path_factory.mktemp("bidaf")
    shutil.copy(SQUAD, root / "squad.json")
    _short_squad(root / "short_squad.json")
    shutil.copy(GLOVE, root / "glove.txt.gz")
    return root


def _local(name: str) -> dict:
    from distrain.config.loading import load_config

    config = load_config(CONFIGS / f"{name}.jsonnet")
    config["train_data_path"] = config["validation_data_path"] = "short_squad.json"
    embedders = config["model"]["text_field_embedder"]["token_embedders"]
    embedders["tokens"]["pretrained_file"] = "glove.txt.gz"
    if "elmo" in embedders:
        embedders["elmo"] |= {"options_file": str(ELMO / "options.json"), "weight_file": str(ELMO / "lm_weights.hdf5")}
    return config


def test_bidaf_config_passes_check_and_trains_an_epoch(workdir):
    check_and_train_an_epoch(workdir, _local("bidaf"), "bidaf", metric="validation_em")


def test_bidaf_elmo_config_with_the_fixture_elmo_passes_check_and_trains_an_epoch(workdir):
    """The fixture biLM is 32 wide where the config's is 1024: the phrase layer's stated input is 100 + 32 + 100."""
    config = _local("bidaf_elmo")
    config["model"]["phrase_layer"]["input_size"] = 232
    check_and_train_an_epoch(workdir, config, "bidaf_elmo", metric="validation_em")


def test_a_stated_width_that_disagrees_is_named_before_data_is_read(workdir):
    config = _local("bidaf")
    config["train_data_path"] = "missing.json"  # never read: the widths are wrong first
    config["model"]["span_end_encoder"]["input_size"] = 1000
    config["model"]["matrix_attention"]["tensor_1_dim"] = 100
    checked = run_cli("check", str(write_config(workdir / "bad.json", config)), cwd=workdir)
    assert checked.returncode == 2
    assert "model.span_end_encoder.input_size: is 1000, but 4 × the phrase_layer + 3 × the modeling_layer gives 1400" \
        in checked.stderr
    assert "model.matrix_attention.tensor_1_dim: is 100, but the phrase_layer gives 200" in checked.stderr


def test_a_config_naming_missing_components_is_one_line_per_name(workdir):
    config = _local("bidaf")
    config["train_data_path"] = "missing.json"
    config["model"]["matrix_attention"]["type"] = "no_such_attention"
    config["dataset_reader"]["type"] = "no_such_reader"
    checked = run_cli("check", str(write_config(workdir / "missing.json.config", config)), cwd=workdir)
    assert checked.returncode == 2 and "Traceback" not in checked.stderr
    lines = [line for line in checked.stderr.splitlines() if "no_such" in line]
    assert len(lines) == 2
    assert any(line.lstrip().startswith("dataset_reader.type") for line in lines)
    assert any(line.lstrip().startswith("model.matrix_attention.type") for line in lines)


def _small_bidaf(workers: int) -> dict:
    """The golden fixture's tiny BiDAF (dropout off, plain SGD) on the fixture file, a global batch of 4 questions
    (the loader's batch size is each worker's)."""
    config = json.loads((MODELS / "test_fixtures" / "rc" / "bidaf" / "experiment.json").read_text())
    config["train_data_path"] = config["validation_data_path"] = "squad.json"
    config["model"]["dropout"] = 0.0
    config["data_loader"] = {"batch_size": 4 // workers}
    config["trainer"] = {"num_epochs": 2, "optimizer": {"type": "sgd", "lr": 0.5}}
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers}
    return config


def test_two_workers_end_within_1e_5_of_one_worker(workdir):
    runs = train_on_one_and_two_workers(workdir, _small_bidaf)
    assert max_weight_difference(runs[1], runs[2]) <= 1e-5
    assert final_metrics(runs[1])["validation_em"] == final_metrics(runs[2])["validation_em"]
