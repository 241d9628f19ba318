"""Every registered metric read on 1, 2 and 3 real worker processes (gloo, uneven shares, one
worker empty) equals scikit-learn / scipy / seqeval (and the official SQuAD and CoNLL-2005 SRL scorers, EVALB, and
scorch's CoNLL-2012 coreference scores) on the concatenated data."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
from scipy import stats
from seqeval.metrics.sequence_labeling import precision_recall_fscore_support as span_scores
from sklearn import metrics as sk

from support.evalb import official_reference as evalb_official
from support.metric_cases import CASES, CLASS_NAMES, build_metric, compute_all, feed
from support.rank_runner import run_on_ranks
from support.srl_eval import official_reference

TOLERANCE = 1e-6
WORLD_SIZES = (1, 2, 3)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """``results(world_size)`` → what each rank read; one spawn per world size, on first use."""

    @functools.lru_cache(maxsize=None)
    def read(world_size: int) -> list[dict]:
        folder = tmp_path_factory.mktemp(f"world{world_size}")
        if world_size == 1:
            from distrain.distributed.world import SINGLE

            compute_all(SINGLE, str(folder))  # one worker is the plain, unlaunched process
        else:
            run_on_ranks(compute_all, world_size, str(folder))
        return [json.loads((folder / f"rank{rank}.json").read_text()) for rank in range(world_size)]

    return read


# ------------------------------------------------------------------------------ references
def _kept(data):
    return data["mask"] > 0


def _argmax(data):
    return data["predictions"].argmax(-1)


def _prf(data, **options):
    precision, recall, fscore, _ = sk.precision_recall_fscore_support(
        data["gold_labels"], _argmax(data), sample_weight=data["mask"], zero_division=0, **options
    )
    return precision, recall, fscore


def fbeta_per_label(data):
    precision, recall, fscore = _prf(data, beta=2.0, labels=list(range(6)), average=None)
    result = {}
    for i, name in enumerate(CLASS_NAMES):
        result.update({f"{name}_precision": precision[i], f"{name}_recall": recall[i], f"{name}_fscore": fscore[i]})
    return result


def fbeta_averaged(average, beta=1.0, labels=tuple(range(6))):
    def reference(data):
        precision, recall, fscore = _prf(data, beta=beta, labels=list(labels), average=average)
        return {"precision": precision, "recall": recall, "fscore": fscore}

    return reference


def tie_break_accuracy(data):
    scores, gold = data["predictions"], data["gold_labels"]
    tied = scores == scores.max(-1, keepdims=True)
    credit = tied[np.arange(len(gold)), gold] / tied.sum(-1)
    return np.average(credit, weights=data["mask"])


def boolean_accuracy(data):
    keep = data["mask"] > 0
    counted = keep.any(-1)
    as_text = lambda rows: [str(row[k].tolist()) for row, k, c in zip(rows, keep, counted) if c]  # noqa: E731
    return sk.accuracy_score(as_text(data["gold_labels"]), as_text(data["predictions"]))


def f1_binary(data):
    gold, predicted, weights = data["gold_labels"], _argmax(data), data["mask"]
    return {
        "precision": sk.precision_score(gold, predicted, sample_weight=weights),
        "recall": sk.recall_score(gold, predicted, sample_weight=weights),
        "f1": sk.f1_score(gold, predicted, sample_weight=weights),
    }


def span_f1(tags, scheme_to_iobes):
    def reference(data):
        predicted = data["predictions"]
        predicted = predicted.argmax(-1) if predicted.ndim == 3 else predicted
        keep = data["mask"] > 0
        to_text = lambda rows: [  # noqa: E731
            [scheme_to_iobes(tags[i]) for i in row[k]] for row, k in zip(rows, keep)
        ]
        gold_text, predicted_text = to_text(data["gold_labels"]), to_text(predicted)
        kinds = sorted({tag[2:] for tag in tags if tag != "O"})
        result = {f"{kind}_{name}": 0.0 for kind in kinds for name in ("precision", "recall", "f1")}
        present = sorted({kind for row in gold_text + predicted_text for tag in row if tag != "O" for kind in [tag[2:]]})
        precision, recall, f1, _ = span_scores(gold_text, predicted_text, average=None)
        for i, kind in enumerate(present):
            result.update({f"{kind}_precision": precision[i], f"{kind}_recall": recall[i], f"{kind}_f1": f1[i]})
        precision, recall, f1, _ = span_scores(gold_text, predicted_text, average="micro")
        result.update({"precision": precision, "recall": recall, "f1": f1})
        return result

    return reference


def auc(data):
    keep = _kept(data)
    scores = data["predictions"]
    if scores.ndim == 2:
        scores = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
        scores = scores[:, 1]
    return sk.roc_auc_score(data["gold_labels"][keep], scores[keep])


def perplexity(data):
    keep = _kept(data)
    logits = data["predictions"][keep]
    probabilities = np.exp(logits - logits.max(-1, keepdims=True))
    probabilities /= probabilities.sum(-1, keepdims=True)
    return float(np.exp(sk.log_loss(data["gold_labels"][keep], probabilities, labels=list(range(logits.shape[-1])))))


def sequence_accuracy(data):
    keep = data["mask"] > 0
    as_text = lambda rows: [str(row[k].tolist()) for row, k in zip(rows, keep)]  # noqa: E731
    return sk.accuracy_score(as_text(data["gold_labels"]), as_text(data["predictions"]))


def squad_official(data):
    """The official SQuAD v1.1 evaluation (tests/support/squad.py), as fractions."""
    from support.squad import official_evaluate

    gold = {str(i): answers for i, answers in enumerate(data["gold_answers"])}
    result = official_evaluate(gold, {str(i): text for i, text in enumerate(data["predictions"])})
    return {"em": result["exact_match"] / 100, "f1": result["f1"] / 100}


def attachment_scores(data):
    """Counted: unmasked words whose gold label is not 1; a sentence with none counted is an exact match."""
    counted = (data["mask"] > 0) & (data["gold_labels"] != 1)
    heads = (data["predicted_indices"] == data["gold_indices"]) & counted
    both = heads & (data["predicted_labels"] == data["gold_labels"])
    sentences = len(counted)
    return {"UAS": heads.sum() / counted.sum(), "LAS": both.sum() / counted.sum(),
            "UEM": (heads | ~counted).all(-1).sum() / sentences, "LEM": (both | ~counted).all(-1).sum() / sentences}



def coref_clusters(data) -> tuple[list, list]:
    """A coreference case's gold clusters and the clusters its predicted links make, per document."""
    from distrain.zoo.coref.metrics.conll_coref_scores import predicted_clusters

    links = zip(data["top_spans"].tolist(), data["antecedent_indices"].tolist(), data["predicted_antecedents"].tolist())
    predicted = [predicted_clusters(*item) for item in links]
    return [item["clusters"] for item in data["metadata_list"]], predicted


@functools.lru_cache(maxsize=None)
def _coref_scorch():
    from support.scorch_coref import allennlp_means

    return allennlp_means(*coref_clusters(CASES["conll_coref_scores"].data()))


def coref_scorch(data):
    """scorch's MUC, B³ and CEAFe on the predicted links' clusters, AllenNLP's means of them, computed once (the data
    is the case's)."""
    return _coref_scorch()


def mention_recall(data):
    gold = [{tuple(m) for cluster in item["clusters"] for m in cluster} for item in data["batched_metadata"]]
    kept = [{tuple(span) for span in spans} for spans in data["batched_top_spans"].tolist()]
    return sum(len(g & k) for g, k in zip(gold, kept)) / sum(len(g) for g in gold)


def _ngrams(row, size, excluded):
    """AllenNLP's ``ngrams`` as it wrote it: every start offset, the row split into size-long slices."""
    from collections import Counter

    counts = Counter()
    for start in range(size):
        for begin in range(start, len(row) - size + 1, size):
            gram = tuple(int(t) for t in row[begin:begin + size])
            if not any(t in excluded for t in gram):
                counts[gram] += 1
    return counts


def _allennlp_lcs(first, second, excluded):
    """AllenNLP ROUGE's longest common subsequence: the longer row outside, its excluded ids skipped."""
    if len(first) < len(second):
        first, second = second, first
    previous = [0] * (len(second) + 1)
    for i in range(len(first) - 1, -1, -1):
        if int(first[i]) in excluded:
            continue
        current = [0] * (len(second) + 1)
        for j in range(len(second) - 1, -1, -1):
            current[j] = 1 + previous[j + 1] if first[i] == second[j] else max(current[j + 1], previous[j])
        previous = current
    return previous[0]


def rouge_allennlp(data, size=3, excluded=frozenset({0, 1, 2})):
    """AllenNLP 2.10.1's ROUGE transcribed loop for loop (means over sequences of per-sequence scores)."""
    sums = {f"ROUGE-{n}_{k}": 0.0 for k in ("R", "P", "F1") for n in range(1, size + 1)}
    rouge_l = 0.0
    for predicted, gold in zip(data["predictions"], data["gold_targets"]):
        for n in range(1, size + 1):
            mine, theirs = _ngrams(predicted, n, excluded), _ngrams(gold, n, excluded)
            matches = sum(min(mine[g], c) for g, c in theirs.items())
            if not matches:
                continue
            recall, precision = matches / sum(theirs.values()), matches / sum(mine.values())
            sums[f"ROUGE-{n}_R"] += recall
            sums[f"ROUGE-{n}_P"] += precision
            sums[f"ROUGE-{n}_F1"] += 2 * recall * precision / (recall + precision)
        common = _allennlp_lcs(gold, predicted, excluded)
        if common:
            m, n = sum(int(t) not in excluded for t in gold), sum(int(t) not in excluded for t in predicted)
            rouge_l += 2 * (common / m) * (common / n) / (common / m + common / n)
    count = len(data["predictions"])
    return {**{key: value / count for key, value in sums.items()}, "ROUGE-L": rouge_l / count}


def bleu_allennlp(data, excluded=frozenset({0, 1, 2})):
    """AllenNLP 2.10.1's BLEU (clipped counts, brevity penalty, its 1e-13 smoothing of the logarithms)."""
    import math

    matches, totals = [0] * 4, [0] * 4
    for predicted, gold in zip(data["predictions"], data["gold_targets"]):
        for n in range(4):
            mine, theirs = _ngrams(predicted, n + 1, excluded), _ngrams(gold, n + 1, excluded)
            matches[n] += sum(min(c, theirs[g]) for g, c in mine.items())
            totals[n] += sum(mine.values())
    valid = lambda rows: sum(int(t) not in excluded for row in rows for t in row)  # noqa: E731
    predicted_length, reference_length = valid(data["predictions"]), valid(data["gold_targets"])
    brevity = 1.0 if predicted_length > reference_length else math.exp(1 - reference_length / predicted_length)
    return {"BLEU": brevity * math.exp(sum(0.25 * (math.log(matches[n] + 1e-13) - math.log(totals[n] + 1e-13))
                                           for n in range(4)))}


REFERENCES = {
    "categorical_accuracy": lambda d: sk.accuracy_score(d["gold_labels"], _argmax(d), sample_weight=d["mask"]),
    "categorical_accuracy_top3": lambda d: sk.top_k_accuracy_score(
        d["gold_labels"], d["predictions"], k=3, labels=list(range(5)), sample_weight=d["mask"]
    ),
    "categorical_accuracy_tie_break": tie_break_accuracy,
    "boolean_accuracy": boolean_accuracy,
    "fbeta_per_label": fbeta_per_label,
    "fbeta_micro": fbeta_averaged("micro"),
    "fbeta_macro": fbeta_averaged("macro"),
    "fbeta_weighted": fbeta_averaged("weighted", beta=0.5),
    "fbeta_macro_named_labels": fbeta_averaged("macro", labels=(2, 0, 5)),
    "f1": f1_binary,
    "span_f1_bio": span_f1(CASES["span_f1_bio"].label_names, lambda tag: tag),
    "span_f1_bioul": span_f1(
        CASES["span_f1_bioul"].label_names, lambda tag: tag.replace("U-", "S-").replace("L-", "E-")
    ),
    "auc": auc,
    "auc_from_logits": auc,
    "pearson_correlation": lambda d: stats.pearsonr(d["predictions"][_kept(d)], d["gold_labels"][_kept(d)])[0],
    "spearman_correlation": lambda d: stats.spearmanr(d["predictions"][_kept(d)], d["gold_labels"][_kept(d)])[0],
    "mean_absolute_error": lambda d: sk.mean_absolute_error(d["gold_labels"], d["predictions"], sample_weight=d["mask"]),
    "perplexity": perplexity,
    "average": lambda d: np.average(d["value"], weights=d["mask"]),
    "sequence_accuracy": sequence_accuracy,
    "squad_em_and_f1": squad_official,
    "attachment_scores": attachment_scores,
    "srl_eval": official_reference,  # the CoNLL-2005 script itself (perl)
    "evalb": evalb_official,  # EVALB itself (its C source compiled with gcc), COLLINS.prm
    "conll_coref_scores": coref_scorch,  # scorch, an independent implementation of the CoNLL-2012 scores
    "mention_recall": mention_recall,
    "rouge": rouge_allennlp,
    "bleu": bleu_allennlp,
}


def assert_close(actual, expected, where: str) -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and sorted(actual) == sorted(expected), f"{where}: keys {actual} vs {expected}"
        for key in expected:
            assert_close(actual[key], expected[key], f"{where}.{key}")
    else:
        assert abs(float(actual) - float(expected)) <= TOLERANCE, f"{where}: {actual} != reference {expected}"


# ---------------------------------------------------------------------------------- the tests
def test_every_registered_metric_has_a_distributed_case():
    from distrain.metrics.metric import Metric
    from distrain.plugins import import_builtins

    import_builtins()
    covered = {case.metric["type"] for case in CASES.values()}
    assert set(Metric.list_available()) <= covered
    assert set(REFERENCES) == set(CASES)


@pytest.mark.parametrize("world_size", WORLD_SIZES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_metric_on_uneven_workers_equals_reference_on_concatenated_data(results, case, world_size):
    expected = REFERENCES[case](CASES[case].data())
    for rank, read in enumerate(results(world_size)):
        assert_close(read[case], expected, f"{case} rank {rank}/{world_size}")


def test_conll_coref_scores_muc_b_cubed_and_ceafe_each_equal_scorchs():
    """Each of the three, not only their means: precision, recall and F1 within 1e-9 relative of scorch's on the
    case's documents, where all three have links right and wrong (on the coref archive's predictions MUC is 0)."""
    from support.scorch_coref import scorch_scores

    case = CASES["conll_coref_scores"]
    metric = build_metric(case)
    feed(metric, case.data(), slice(None))
    mine, theirs = metric.scores(metric.state()), scorch_scores(*coref_clusters(case.data()))
    assert sorted(mine) == sorted(theirs) == ["b_cubed", "ceafe", "muc"]
    for name, expected in theirs.items():
        assert all(0 < value < 1 for value in expected), (name, expected)
        assert mine[name] == pytest.approx(expected, rel=1e-9), (name, mine[name], expected)


@pytest.mark.parametrize("world_size", WORLD_SIZES)
def test_reset_metric_reads_as_if_nothing_was_seen(results, world_size):
    for case_name, case in CASES.items():
        fresh = build_metric(case).get_metric()
        for read in results(world_size):
            assert_close(read[case_name + "/after_reset"], fresh, f"{case_name} after reset")
