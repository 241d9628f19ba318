"""What makes a golden case of tests/allennlp_golden telling, for tests/allennlp/test_golden_informative.py (which
checks every case) and for the tests that compare distrain's outputs with a case's (:func:`assert_outputs_vary`,
through :func:`support.allennlp.golden_job`): each case's discrete outputs, how they must vary across its instances,
the bounds of its metrics, and the cases that are not telling yet (:data:`STILL_DEGENERATE`)."""

from __future__ import annotations

import json
import math
import re

from support.paths import TESTS

GOLDEN = TESTS / "allennlp_golden"

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
    'biaffine_parser': 'LAS=0; LEM=0; UEM=0',
    'biaffine_parser_greedy': 'LAS=0; LEM=0; UEM=0',
    'bias_mitigation': 'probs: 1 for all 5 instances',
    'bidaf': 'em=0; end_acc=0; span_acc=0; start_acc=0',
    'bidirectional_lm_token_embedder': 'tags: ["O", "O", "O", "O", "O", "O", "O"] for all 2 instances',
    'composed_seq2seq_transformer': 'predicted_tokens: ["this", "is", "another"] for all 3 instances; '
                                    'predicted_tokens: every sequence 3 long',
    'copynet_seq2seq': 'BLEU=1',
    'copynet_seq2seq_transformer': 'predicted_tokens: ["the", "[UNK]"] for all 2 instances; '
                                   'predicted_tokens: every sequence 2 long',
    'crf_tagger': 'tags: ["I-ORG", "I-LOC", "O", "O", "O", "O"... for all 2 instances',
    'dialog_qa': 'best_span_str: ["DJ", "DJ", "DJ", "DJ", "DJ", "DJ"] for all 2 instances; '
                 'yesno: ["x", "x", "x", "x", "x", "x"] for all 2 instances; '
                 'followup: ["n", "n", "n", "n", "n", "n"] for all 2 instances; end_acc=0; span_acc=0; start_acc=0',
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


def assert_outputs_vary(case: str, golden: list[dict]) -> None:
    """Before a test compares distrain's outputs with AllenNLP's ``golden`` ones of ``case``: they vary across the
    instances (else a distrain that ignores its input would pass), unless the case is listed as not telling yet."""
    found = output_problems(golden, DISCRETE[case], SEQUENCES.get(case))
    assert not found or case in STILL_DEGENERATE, f"{case}: AllenNLP's outputs do not vary: {found}"


def problems(case: str) -> str:
    """Everything the checks find wrong with a golden case, in one line ("" when it is telling)."""
    outputs = json.loads((GOLDEN / case / "outputs.json").read_text())
    metrics = json.loads((GOLDEN / case / "metrics.json").read_text())
    return "; ".join(output_problems(outputs, DISCRETE[case], SEQUENCES.get(case)) + metric_problems(case, metrics))
