"""AllenNLP's predictors under their names, on archives the real AllenNLP 2.10.1 trained: distrain's answer to
each JSON input equals AllenNLP's own predictor's (tests/allennlp_golden/predictors.json, made by
tests/allennlp_oracle/predictor_outputs.py): the same keys, numbers within 1e-5, strings equal. Through
``Predictor.from_path`` in Python and through ``distrain predict --predictor``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.allennlp import GOLDEN
from support.allennlp_fixtures import needs_fixtures, repository
from support.cli import run_cli
from distrain import plugins
from distrain.allennlp import Predictor

pytestmark = needs_fixtures

PREDICTORS = json.loads((GOLDEN / "predictors.json").read_text())
CASES = {case["case"]: case for case in PREDICTORS["cases"]}


def differences(mine, theirs, path: str = "") -> list[str]:
    """Where two JSON values differ: keys, lengths, strings, or numbers by more than 1e-5."""
    if isinstance(theirs, dict):
        if not isinstance(mine, dict) or sorted(mine) != sorted(theirs):
            return [f"{path}: keys {sorted(mine) if isinstance(mine, dict) else mine!r} against {sorted(theirs)}"]
        return [found for key in theirs for found in differences(mine[key], theirs[key], f"{path}.{key}")]
    if isinstance(theirs, list):
        if not isinstance(mine, list) or len(mine) != len(theirs):
            return [f"{path}: {mine!r} against {theirs!r}"]
        return [found for i, (a, b) in enumerate(zip(mine, theirs)) for found in differences(a, b, f"{path}[{i}]")]
    if isinstance(theirs, float) or isinstance(theirs, int) and not isinstance(theirs, bool):
        ok = isinstance(mine, (int, float)) and not isinstance(mine, bool) and abs(mine - theirs) <= 1e-5
        return [] if ok else [f"{path}: {mine!r} against {theirs!r}"]
    return [] if mine == theirs else [f"{path}: {mine!r} against {theirs!r}"]


def informative(case: dict) -> None:
    """The golden answers differ from input to input (else a predictor ignoring its input would pass)."""
    answers = [json.dumps(output, sort_keys=True) for output in case["outputs"]]
    assert len(set(answers)) == len(answers), f"{case['case']}: AllenNLP answered two inputs alike"


@pytest.fixture(scope="module")
def imported():
    plugins.import_plugins()


def same_spacy(case: dict, monkeypatch) -> None:
    """The spaCy pipeline the oracle used for the case: ``spacy.blank``, or the verb-tagging stand-in for a model
    package (tests/support/spacy_verbs.py)."""
    if case.get("spacy") == "verb_tagging_pipeline":
        from support.spacy_verbs import verb_tagging_pipeline

        import distrain.data.tokenizers.spacy as spacy_tokenizer

        monkeypatch.setattr(spacy_tokenizer, "pipeline", lambda language, *options: verb_tagging_pipeline(language))


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_predictor_answers_each_input_as_allennlps_does(name, imported, monkeypatch):
    case = CASES[name]
    informative(case)
    same_spacy(case, monkeypatch)
    monkeypatch.chdir(repository(case["repository"]))
    predictor = Predictor.from_path(str(GOLDEN / name / "model.tar.gz"), case["predictor"])
    for item, theirs in zip(case["inputs"], case["outputs"]):
        mine = json.loads(json.dumps(predictor.predict_json(item)))
        assert not differences(mine, theirs), (item, differences(mine, theirs)[:5])


@pytest.mark.parametrize("name", ["basic_classifier_seq2vec", "esim", "bidaf", "copynet_seq2seq", "dialog_qa",
                                  "biaffine_parser", "constituency_parser", "srl", "transformer_qa"])
def test_a_batch_of_inputs_is_answered_as_allennlps_batch(name, imported, monkeypatch):
    case = CASES[name]
    same_spacy(case, monkeypatch)
    monkeypatch.chdir(repository(case["repository"]))
    predictor = Predictor.from_path(str(GOLDEN / name / "model.tar.gz"), case["predictor"])
    mine = json.loads(json.dumps(predictor.predict_batch_json(case["inputs"])))
    assert not differences(mine, case["batched"]), differences(mine, case["batched"])[:5]


def test_serve_answers_semantic_role_labeling_inputs_whole(tmp_path):
    """One input is one instance per predicate: serve answers it through the predictor's whole-input path (the
    server's spaCy is the blank one, so the predicate-free sentence is the one it can be compared on)."""
    import httpx

    from support.serving import ServerProcess

    case = CASES["srl"]
    with ServerProcess(GOLDEN / "srl" / "model.tar.gz", tmp_path / "server", "--predictor", case["predictor"]) as server:
        answer = httpx.post(server.url + "/predict", json=case["inputs"][2], timeout=60)
        assert answer.status_code == 200 and answer.json() == case["outputs"][2], answer.text
        answer = httpx.post(server.url + "/predict", json={"sentence": "John saw Mary ."}, timeout=60)
        assert answer.json() == {"verbs": [], "words": ["John", "saw", "Mary", "."]}, answer.text
        refused = httpx.post(server.url + "/predict", json={"text": "A man ."}, timeout=60)
        assert refused.status_code == 422 and refused.json()["error"]["field"] == "sentence", refused.text
        assert server.stop() == 0


def test_distrain_predict_answers_semantic_role_labeling_inputs_whole(tmp_path):
    """The CLI's spaCy is the blank one too: the predicate-free golden sentence, and one that would have verbs."""
    case = CASES["srl"]
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text(json.dumps(case["inputs"][2]) + "\n" + json.dumps({"sentence": "John saw Mary ."}) + "\n")
    out = tmp_path / "out.jsonl"
    done = run_cli("predict", str(GOLDEN / "srl" / "model.tar.gz"), str(inputs), "--predictor", case["predictor"],
                   "--batch-size", "2", "--output-file", str(out), cwd=repository(case["repository"]))
    assert done.returncode == 0, done.stderr[-3000:]
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert written == [case["outputs"][2], {"verbs": [], "words": ["John", "saw", "Mary", "."]}]


def test_semantic_role_labeling_without_a_tagging_spacy_answers_the_words_alone(imported, monkeypatch):
    """With spaCy's blank pipeline (what this machine has) no word is a predicate: AllenNLP's answer then."""
    monkeypatch.chdir(repository("allennlp-models"))
    predictor = Predictor.from_path(str(GOLDEN / "srl" / "model.tar.gz"), "semantic_role_labeling")
    assert predictor.predict(sentence="The cat sat on the mat .") == {
        "verbs": [], "words": ["The", "cat", "sat", "on", "the", "mat", "."]}


def test_a_predicate_tagged_sentence_splits_into_one_frame_per_verb(imported, monkeypatch):
    case = CASES["srl"]
    same_spacy(case, monkeypatch)
    monkeypatch.chdir(repository("allennlp-models"))
    predictor = Predictor.from_path(str(GOLDEN / "srl" / "model.tar.gz"))
    theirs = case["outputs"][1]
    mine = json.loads(json.dumps(predictor.predict_tokenized(theirs["words"])))
    assert len(theirs["verbs"]) == 2 and not differences(mine, theirs), differences(mine, theirs)[:5]


@pytest.mark.parametrize("name", ["coref", "coref_coarse_to_fine"])
def test_a_batch_of_documents_gets_each_documents_own_clusters(name, imported, monkeypatch):
    """Differs on purpose: AllenNLP's coreference model keeps a share of the batch's padded length in spans, so in
    its batch the shorter document gets other spans and clusters than alone; distrain's answers each alone."""
    case = CASES[name]
    assert case["batched"][1] != case["outputs"][1]  # what AllenNLP does
    monkeypatch.chdir(repository(case["repository"]))
    predictor = Predictor.from_path(str(GOLDEN / name / "model.tar.gz"), case["predictor"])
    mine = json.loads(json.dumps(predictor.predict_batch_json(case["inputs"])))
    assert not differences(mine, case["outputs"]), differences(mine, case["outputs"])[:5]


def test_an_archive_without_a_predictor_named_gets_its_models_default(imported, monkeypatch):
    monkeypatch.chdir(repository("allennlp"))
    predictor = Predictor.from_path(str(GOLDEN / "simple_tagger" / "model.tar.gz"))
    assert type(predictor).__name__ == "SentenceTaggerPredictor"
    assert predictor.predict(sentence="cats are animals .")["words"] == ["cats", "are", "animals", "."]
    monkeypatch.chdir(repository("allennlp-models"))
    for seq2seq in ("simple_seq2seq", "composed_seq2seq", "copynet_seq2seq"):
        assert type(Predictor.from_path(str(GOLDEN / seq2seq / "model.tar.gz"))).__name__ == "Seq2SeqPredictor"
    assert type(Predictor.from_path(str(GOLDEN / "dialog_qa" / "model.tar.gz"))).__name__ == "DialogQAPredictor"
    assert type(Predictor.from_path(str(GOLDEN / "biaffine_parser" / "model.tar.gz"))).__name__ == \
        "BiaffineDependencyParserPredictor"
    assert type(Predictor.from_path(str(GOLDEN / "constituency_parser" / "model.tar.gz"))).__name__ == \
        "ConstituencyParserPredictor"
    assert type(Predictor.from_path(str(GOLDEN / "coref" / "model.tar.gz"))).__name__ == "CorefPredictor"
    assert type(Predictor.from_path(str(GOLDEN / "srl" / "model.tar.gz"))).__name__ == "SemanticRoleLabelerPredictor"
    assert type(Predictor.from_path(str(GOLDEN / "transformer_qa" / "model.tar.gz"))).__name__ == \
        "TransformerQAPredictor"


#: one golden case of each predictor (a subprocess cannot take the test's spaCy stand-in: those cases are left out)
ONE_PER_PREDICTOR = sorted({case["predictor"]: name for name, case in sorted(CASES.items()) if "spacy" not in case}
                           .values())
#: the key each predictor names first when a request lacks everything
FIRST_KEY = {"text_classifier": "sentence", "sentence_tagger": "sentence", "textual_entailment": "premise",
             "reading_comprehension": "question", "transformer_mc": "alternatives", "next_token_lm": "sentence",
             "masked_language_model": "sentence", "seq2seq": "source", "dialog_qa": "paragraphs",
             "biaffine_dependency_parser": "sentence", "constituency_parser": "sentence",
             "coreference_resolution": "document", "transformer_qa": "question"}


@pytest.mark.parametrize("name", ONE_PER_PREDICTOR)
def test_distrain_predict_with_a_predictor_writes_allennlps_lines(name, tmp_path):
    case = CASES[name]
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text("".join(json.dumps(item) + "\n" for item in case["inputs"]))
    out = tmp_path / "out.jsonl"
    done = run_cli("predict", str(GOLDEN / name / "model.tar.gz"), str(inputs), "--predictor", case["predictor"],
                   "--batch-size", "1", "--output-file", str(out), cwd=repository(case["repository"]))
    assert done.returncode == 0, done.stderr[-3000:]
    written = [json.loads(line) for line in out.read_text().splitlines()]
    theirs = [json.loads(line) for line in case["dump_lines"]]
    assert len(written) == len(theirs) == len(case["inputs"])
    # AllenNLP's dump_lines are its batched answers; with --batch-size 1 each line is the one-at-a-time answer
    assert not differences(written, case["outputs"]), differences(written, case["outputs"])[:5]


def test_a_bad_input_line_is_one_line_naming_the_file_line_and_key(tmp_path):
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text('{"premise": "A man .", "hypothesis": "A person ."}\n{"premise": "no hypothesis"}\n')
    out = tmp_path / "out.jsonl"
    out.write_text("kept\n")
    done = run_cli("predict", str(GOLDEN / "esim" / "model.tar.gz"), str(inputs), "--predictor",
                   "textual_entailment", "--output-file", str(out), cwd=repository("allennlp-models"))
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1].endswith(f"{inputs}:2: missing key 'hypothesis' (the input has "
                                                         "['premise'])"), done.stderr[-2000:]
    assert "Traceback" not in done.stderr and out.read_text() == "kept\n"
    unknown = run_cli("predict", str(GOLDEN / "esim" / "model.tar.gz"), str(inputs), "--predictor", "no_such",
                      "--output-file", str(out), cwd=repository("allennlp-models"))
    assert unknown.returncode != 0 and "--predictor no_such: no predictor of that name" in unknown.stderr
    assert "textual_entailment" in unknown.stderr and "Traceback" not in unknown.stderr


@pytest.mark.parametrize("name", ONE_PER_PREDICTOR)
def test_serve_with_a_predictor_answers_its_json_and_names_a_missing_key(name, tmp_path, monkeypatch):
    import httpx

    from support.serving import ServerProcess

    case = CASES[name]
    monkeypatch.chdir(repository(case["repository"]))  # where the archive's config finds its files, as predict
    incomplete = {"unrelated": "A man ."}
    missing = FIRST_KEY[case["predictor"]]
    with ServerProcess(GOLDEN / name / "model.tar.gz", tmp_path / "server", "--predictor", case["predictor"]) as server:
        for item, theirs in zip(case["inputs"], case["outputs"]):
            answer = httpx.post(server.url + "/predict", json=item, timeout=60)
            assert answer.status_code == 200, answer.text
            assert not differences(answer.json(), theirs), differences(answer.json(), theirs)[:5]
        refused = httpx.post(server.url + "/predict", json=incomplete, timeout=60)
        assert refused.status_code == 422 and refused.json()["error"]["field"] == missing, refused.text
        assert server.stop() == 0
