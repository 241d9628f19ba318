"""The golden files are telling: a golden case whose model answers every input alike, or whose metrics sit at their
bounds, would pass a distrain that ignores its input or computes a metric wrongly. Over tests/allennlp_golden:

* every file says how it was made: the command (a script of this repository) and the versions it ran on, in the
  file (``made_by``) or, for the cases scripts/allennlp_golden.py trains, in ``MADE_BY.json`` (the case's own record,
  or the run-wide one);
* every ``evaluate`` metric of a case (``CASE/metrics.json``) lies strictly inside its bounds: (0, 1), (0, 100) for a
  percentage, a loss or perplexity finite and above 0;
* each case's discrete outputs (``CASE/outputs.json``: predicted labels, tags, spans, heads, answers, decoded
  sequences) are not the same for every instance, a labelling does not give every token one label, and decoded
  sequences do not all have one length (all running to the beam search's last step).

The cases that are still not telling are listed in :data:`STILL_DEGENERATE` with what is wrong, exactly as the checks
find it: a listed case that has become telling fails as surely as an unlisted one that is not, so the list only
shrinks. Pure data: reads the golden files, runs no model."""

from __future__ import annotations

import json
import math
import re

import pytest

from support.paths import ROOT, TESTS

GOLDEN = TESTS / "allennlp_golden"
MADE_BY = json.loads((GOLDEN / "MADE_BY.json").read_text())
CASES = sorted(path.parent.name for path in GOLDEN.glob("*/outputs.json"))

#: how an output field becomes each instance's discrete answer: ARGMAX the predicted class (of each token, for
#: per-token scores), LABEL the field itself, BEST its first entry where it is a list of beams or top-k lists (the
#: best beam, the top prediction), TREE a bracketed tree's constituent labels (its words dropped), VALUE a number
#: (a model with no discrete output: the value itself, rounded to 1e-6)
ARGMAX, LABEL, BEST, TREE, VALUE = "argmax", "label", "best", "tree", "value"
#: the kinds whose answers are labellings (a flat list: one label a token, a head, a turn)
LABELLINGS = {ARGMAX, LABEL, TREE}

#: case -> {output field: kind}; every case of tests/allennlp_golden is here
DISCRETE = {
    "adversarial_bias_mitigation": {"probs": ARGMAX},
    "bart": {"predictions": BEST},
    "basic_classifier_from_archive": {"probs": ARGMAX},
    "basic_classifier_seq2seq": {"probs": ARGMAX},
    "basic_classifier_seq2vec": {"probs": ARGMAX},
    "bcn": {"class_probabilities": ARGMAX},
    "biaffine_parser": {"predicted_heads": LABEL, "predicted_dependencies": LABEL},
    "biaffine_parser_greedy": {"predicted_heads": LABEL, "predicted_dependencies": LABEL},
    "bias_mitigation": {"probs": ARGMAX},
    "bidaf": {"best_span": LABEL},
    "bidirectional_lm_token_embedder": {"tags": LABEL},
    "bimpm": {"label_probs": ARGMAX},
    "composed_seq2seq": {"predicted_tokens": BEST},
    "composed_seq2seq_transformer": {"predicted_tokens": BEST},
    "constituency_parser": {"trees": TREE},
    "copynet_seq2seq": {"predicted_tokens": BEST},
    "copynet_seq2seq_transformer": {"predicted_tokens": BEST},
    "coref": {"predicted_antecedents": LABEL, "clusters": LABEL},
    "coref_coarse_to_fine": {"predicted_antecedents": LABEL, "clusters": LABEL},
    "crf_tagger": {"tags": LABEL},
    "decomposable_attention": {"label_probs": ARGMAX},
    "dialog_qa": {"best_span_str": LABEL, "yesno": LABEL, "followup": LABEL},
    "esim": {"label_probs": ARGMAX},
    "graph_parser": {"arcs": LABEL, "arc_tags": LABEL},
    "language_model": {"loss": VALUE},  # its outputs are losses and embeddings
    "masked_language_model": {"words": BEST},
    "naqanet": {"answer": LABEL},
    "naqanet_numbers": {"answer": LABEL},
    "naqanet_passage_span": {"answer": LABEL},
    "next_token_lm": {"top_tokens": BEST},
    "next_token_lm_transformer": {"top_tokens": BEST},
    "qanet": {"best_span": LABEL},
    "simple_seq2seq": {"predicted_tokens": BEST},
    "simple_tagger": {"class_probabilities": ARGMAX},
    "simple_tagger_span_f1": {"class_probabilities": ARGMAX},
    "srl": {"tags": LABEL},
    "srl_bert": {"tags": LABEL},
    "t5": {"predictions": BEST},
    "transformer_mc": {"best_alternative": LABEL},
    "transformer_qa": {"best_span": LABEL},
}
#: the decoded sequences, whose lengths must differ too (a sequence that ends is shorter than max_steps)
SEQUENCES = {"bart": "predictions", "t5": "predictions", "simple_seq2seq": "predicted_tokens",
             "composed_seq2seq": "predicted_tokens", "composed_seq2seq_transformer": "predicted_tokens",
             "copynet_seq2seq": "predicted_tokens", "copynet_seq2seq_transformer": "predicted_tokens"}
#: metrics on a 0-100 scale (AllenNLP's QuAC F1); every other metric but a loss or perplexity is on 0-1
PERCENTAGES = {("dialog_qa", "f1")}
UNBOUNDED = {"loss", "perplexity"}
#: how far inside its bounds a metric must be (BLEU's smoothing leaves ~1e-13 where no 4-gram matches)
MARGIN = 1e-6

#: the cases that are still not telling, and what the checks below find wrong with each, exactly
STILL_DEGENERATE: dict[str, str] = {
    'adversarial_bias_mitigation': 'probs: 2 for all 5 instances; accuracy=0',
    'bart': 'predictions: every sequence 20 long; BLEU=1.85e-13; ROUGE-2_F1=0; ROUGE-2_P=0; ROUGE-2_R=0',
    'basic_classifier_from_archive': 'probs: 0 for all 3 instances',
    'basic_classifier_seq2seq': 'probs: 0 for all 3 instances',
    'basic_classifier_seq2vec': 'probs: 1 for all 3 instances',
    'bcn': 'class_probabilities: 2 for all 21 instances',
    'biaffine_parser': 'LAS=0; LEM=0; UEM=0',
    'biaffine_parser_greedy': 'LAS=0; LEM=0; UEM=0',
    'bias_mitigation': 'probs: 1 for all 5 instances',
    'bidaf': 'em=0; end_acc=0; span_acc=0; start_acc=0',
    'bidirectional_lm_token_embedder': 'tags: ["O", "O", "O", "O", "O", "O", "O"] for all 2 instances',
    'bimpm': 'accuracy=1',
    'composed_seq2seq_transformer': 'predicted_tokens: ["this", "is", "another"] for all 3 instances; '
                                    'predicted_tokens: every sequence 3 long',
    'copynet_seq2seq': 'BLEU=1',
    'copynet_seq2seq_transformer': 'predicted_tokens: ["the", "[UNK]"] for all 2 instances; '
                                   'predicted_tokens: every sequence 2 long',
    'crf_tagger': 'tags: ["I-ORG", "I-LOC", "O", "O", "O", "O"... for all 2 instances',
    'decomposable_attention': 'label_probs: 0 for all 3 instances',
    'dialog_qa': 'best_span_str: ["DJ", "DJ", "DJ", "DJ", "DJ", "DJ"] for all 2 instances; '
                 'yesno: ["x", "x", "x", "x", "x", "x"] for all 2 instances; '
                 'followup: ["n", "n", "n", "n", "n", "n"] for all 2 instances; end_acc=0; span_acc=0; start_acc=0',
    'esim': 'accuracy=1',
    'graph_parser': 'arc_tags: every entry "compound"; recall=1',
    'masked_language_model': 'words: ["This", "the", "yet", "sentence.", "... for all 4 instances',
    'naqanet_numbers': 'loss=inf',
    'naqanet_passage_span': 'loss=inf',
    'next_token_lm': 'top_tokens: ["the"] for all 4 instances',
    'next_token_lm_transformer': 'top_tokens: ["the", "the", "the", "the", "the"] for all 4 instances',
    'qanet': 'best_span: [40, 84] for all 5 instances; em=0; end_acc=0; span_acc=0; start_acc=0',
    'simple_tagger': 'class_probabilities: [0, 0, 0, 0] for all 5 instances; accuracy3=1',
    't5': 'predictions: [58, 58, 282, 282, 282, 282, 282, 282... for all 10 instances; '
          'predictions: every sequence 20 long; BLEU=2.77e-13; ROUGE-2_F1=0; ROUGE-2_P=0; ROUGE-2_R=0',
    'transformer_qa': 'end_acc=0; per_instance_em=0; span_acc=0; start_acc=0',
}


def _argmax(value):
    if value and isinstance(value[0], list):
        return [_argmax(item) for item in value]
    return max(range(len(value)), key=value.__getitem__)


def _tree_labels(tree: str) -> list[str]:
    return re.findall(r"\((\S+)", tree)


def answer(value, kind: str):
    """An instance's discrete answer of an output field, as :data:`DISCRETE`'s kinds make it."""
    if kind == ARGMAX:
        return _argmax(value)
    if kind == BEST:
        return value[0] if isinstance(value, list) and value and isinstance(value[0], list) else value
    if kind == TREE:
        return _tree_labels(value)
    if kind == VALUE:
        return round(value, 6)
    return value


def _shown(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def output_problems(outputs: list[dict], fields: dict[str, str], sequence: str | None = None) -> list[str]:
    """What makes a case's ``outputs`` untelling: a field of ``fields`` answered alike for every instance, a
    labelling of one label, decoded sequences (the field ``sequence``) of one length."""
    problems = []
    if len(outputs) < 2:
        return [f"{len(outputs)} instance(s)"]
    for field, kind in fields.items():
        answers = [answer(output[field], kind) for output in outputs]
        distinct = {json.dumps(item, sort_keys=True) for item in answers}
        if len(distinct) == 1:
            problems.append(f"{field}: {_shown(answers[0])} for all {len(answers)} instances")
            continue
        if kind in LABELLINGS and all(isinstance(item, list) for item in answers):
            labels = {json.dumps(label) for item in answers for label in item}
            if all(not isinstance(label, (list, dict)) for item in answers for label in item) and len(labels) == 1:
                problems.append(f"{field}: every entry {labels.pop()}")
    if sequence is not None:
        lengths = {len(answer(output[sequence], BEST)) for output in outputs}
        if len(lengths) == 1:
            problems.append(f"{sequence}: every sequence {lengths.pop()} long")
    return problems


def metric_problems(case: str, metrics: dict[str, float]) -> list[str]:
    """The ``evaluate`` metrics of ``case`` that are not strictly inside their bounds (by :data:`MARGIN`)."""
    problems = []
    for name, value in sorted(metrics.items()):
        if name in UNBOUNDED:
            if not (math.isfinite(value) and value > 0):
                problems.append(f"{name}={value}")
            continue
        upper = 100.0 if (case, name) in PERCENTAGES else 1.0
        if not MARGIN * upper < value < upper * (1 - MARGIN):
            problems.append(f"{name}={value:.3g}")
    return problems


def problems(case: str) -> str:
    """Everything the checks find wrong with a golden case, in one line ("" when it is telling)."""
    outputs = json.loads((GOLDEN / case / "outputs.json").read_text())
    metrics = json.loads((GOLDEN / case / "metrics.json").read_text())
    return "; ".join(output_problems(outputs, DISCRETE[case], SEQUENCES.get(case)) + metric_problems(case, metrics))


def test_every_golden_case_is_classified_and_its_fields_exist():
    assert sorted(DISCRETE) == CASES
    assert set(SEQUENCES) <= set(DISCRETE) and set(STILL_DEGENERATE) <= set(DISCRETE)
    for case in CASES:
        outputs = json.loads((GOLDEN / case / "outputs.json").read_text())
        metrics = json.loads((GOLDEN / case / "metrics.json").read_text())
        assert metrics, case
        for field in DISCRETE[case]:
            assert all(field in output for output in outputs), (case, field)
        assert set(DISCRETE[case]) <= set(MADE_BY["cases"][case]["outputs"]), case


@pytest.mark.parametrize("case", CASES)
def test_golden_case_is_telling_or_listed_with_what_is_wrong(case):
    found = problems(case)
    if case in STILL_DEGENERATE:
        assert found, f"{case} is now telling: remove it from STILL_DEGENERATE"
        assert found == STILL_DEGENERATE[case], f"{case}: the checks now find {found!r}"
    else:
        assert not found, f"{case} is not telling: {found}"


def test_the_checks_find_what_they_are_for():
    """The checks themselves: a constant answer, a one-label tagging, one length of decoded sequences and metrics at
    or past their bounds are each found (on made-up values, not golden ones)."""
    assert answer([[0.1, 0.9], [0.8, 0.2]], ARGMAX) == [1, 0]
    assert answer([[3, 4], [5]], BEST) == [3, 4] and answer("(S (NP a) (VP b))", TREE) == ["S", "NP", "VP"]
    # one label for every instance; the same labels in other words; one label for every token; one length
    assert output_problems([{"p": [0.2, 0.8]}, {"p": [0.4, 0.6]}], {"p": ARGMAX}) == ["p: 1 for all 2 instances"]
    assert output_problems([{"p": [0.2, 0.8]}, {"p": [0.6, 0.4]}], {"p": ARGMAX}) == []
    assert output_problems([{"t": ["O", "O"]}, {"t": ["O"]}], {"t": LABEL}) == ['t: every entry "O"']
    assert output_problems([{"t": ["O", "B"]}, {"t": ["O"]}], {"t": LABEL}) == []
    assert output_problems([{"s": (0, 1)}, {"s": (0, 1)}], {"s": LABEL}) == ["s: [0, 1] for all 2 instances"]
    beams = [{"b": [["a", "b"], ["c"]]}, {"b": [["c", "d"], ["a"]]}]
    assert output_problems(beams, {"b": BEST}, "b") == ["b: every sequence 2 long"]
    assert output_problems([*beams, {"b": [["e"]]}], {"b": BEST}, "b") == []
    assert output_problems(beams[:1], {"b": BEST}) == ["1 instance(s)"]
    # a metric at either bound, past it, barely off it (BLEU's smoothing) or not finite; a percentage's bound is 100
    for value in (0.0, 1.0, 1.5, -0.1, 1e-13, 1 - 1e-9, math.nan):
        assert metric_problems("any", {"accuracy": value}) != [], value
    assert metric_problems("any", {"accuracy": 0.5, "BLEU": 0.01, "loss": 3.0, "perplexity": 20.0}) == []
    assert metric_problems("any", {"loss": math.inf}) == ["loss=inf"] and metric_problems("any", {"loss": 0.0})
    assert metric_problems("dialog_qa", {"f1": 2.7}) == [] and metric_problems("any", {"f1": 2.7}) == ["f1=2.7"]


def _script_of(command: str) -> str | None:
    return next((part for part in command.split() if part.endswith(".py")), None)


def _provenance_problem(command, versions) -> str | None:
    if not isinstance(command, str) or not command.strip():
        return "no command"
    script = _script_of(command)
    if script is None or not (ROOT / script).is_file():
        return f"{command!r} names no script of the repository"
    if not versions or not isinstance(versions, dict) or not {"allennlp", "torch"} <= {
            key.lower() for key in versions}:
        return f"versions {versions!r} lack allennlp's or torch's"
    return None


def _one_line_versions(record: str) -> tuple[str, dict]:
    """The older one-line ``made_by``: "command (AllenNLP x, torch y)"."""
    command, _, rest = record.partition(" (")
    versions = dict(re.findall(r"(AllenNLP|torch) ([0-9][^\s,)]*)", rest))
    return command, {key.lower(): value for key, value in versions.items()}


def test_every_golden_file_carries_its_command_and_versions():
    run_wide = (MADE_BY.get("command"), MADE_BY.get("versions"))
    assert _provenance_problem(*run_wide) is None, run_wide
    assert {"allennlp", "allennlp_models", "torch"} <= set(MADE_BY["versions"])
    missing = []
    for path in sorted(GOLDEN.rglob("*")):
        if not path.is_file() or path.name == "MADE_BY.json" or "__pycache__" in path.parts:
            continue
        relative = path.relative_to(GOLDEN)
        if path.parent.parent == GOLDEN and path.name in {"model.tar.gz", "outputs.json", "metrics.json"}:
            record = MADE_BY["cases"].get(path.parent.name)
            if record is None:
                missing.append(f"{relative}: its case is not in MADE_BY.json")
                continue
            found = _provenance_problem(record.get("command", run_wide[0]), record.get("versions", run_wide[1]))
            if not {"repository", "config"} <= set(record):  # (no "overrides": the config unchanged)
                found = found or f"the case's record lacks its repository or config: {sorted(record)}"
        elif path.suffix == ".json":
            record = json.loads(path.read_text()).get("made_by")
            if isinstance(record, str):
                record = dict(zip(("command", "versions"), _one_line_versions(record)))
            found = (_provenance_problem(record.get("command"), record.get("versions")) if isinstance(record, dict)
                     else "no made_by")
        else:
            found = "neither a case's file nor JSON with a made_by"
        if found:
            missing.append(f"{relative}: {found}")
    assert not missing, missing
