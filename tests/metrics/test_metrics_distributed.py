"""Every registered metric read on 1, 2 and 3 real worker processes (gloo, uneven shares, one worker empty)
equals a reference computed on the concatenated data by code that is not distrain's:

- scikit-learn, scipy and seqeval: accuracies, F-scores, span F1, AUC, correlations, errors, perplexity, averages;
- the official scorers, taken from the AllenNLP 2.10.1 wheels at set-up: the CoNLL-2005 SRL script (perl) and
  EVALB (its C source, compiled);
- packages that implement a task's scores: scorch (CoNLL-2012 coreference), torchmetrics (SQuAD v1.1 EM and F1),
  rouge-score (ROUGE-N, ROUGE-L) and sacrebleu (corpus BLEU), configured to AllenNLP's definitions;
- no package computes tie-break accuracy, attachment scores, mention recall or unigram recall: AllenNLP 2.10.1's
  own metrics are their oracle, run on the same cases' data (tests/allennlp_oracle/metric_references.py wrote
  tests/allennlp_golden/metric_references.json).
"""

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
from support.paths import TESTS
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


def squad_torchmetrics(data):
    """torchmetrics' SQuAD (the official v1.1 formula; tests/support/squad.py), as fractions."""
    from support.squad import squad_v1_scores

    gold = {str(i): answers for i, answers in enumerate(data["gold_answers"])}
    result = squad_v1_scores(gold, {str(i): text for i, text in enumerate(data["predictions"])})
    return {"em": result["exact_match"] / 100, "f1": result["f1"] / 100}


def drop_oracle(data):
    """The mean of AllenNLP's own per-question EM and F1 (tests/allennlp_golden/drop.json) over the drawn questions."""
    from support.metric_cases import DROP_GOLDEN

    key = lambda prediction, annotations: json.dumps([prediction, annotations], sort_keys=True)  # noqa: E731
    oracle = {key(case["prediction"], case["annotations"]): (case["em"], case["f1"])
              for case in json.loads(DROP_GOLDEN.read_text())["metric_cases"]}
    scores = [oracle[key(prediction, annotations)]
              for prediction, annotations in zip(data["prediction"], data["ground_truths"])]
    return {"em": sum(em for em, _ in scores) / len(scores), "f1": sum(f1 for _, f1 in scores) / len(scores)}


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


EXCLUDED_IDS = frozenset({0, 1, 2})  # the rouge and bleu cases' start, end and padding


def id_words(row, excluded=EXCLUDED_IDS) -> str:
    """Token ids as the words a text scorer reads, the excluded ids left out. They sit only at the row's ends in
    these cases (asserted), so no n-gram is made across one, as distrain and AllenNLP never make one."""
    kept = [position for position, token in enumerate(row) if int(token) not in excluded]
    assert kept == list(range(kept[0], kept[-1] + 1)) if kept else True, row
    return " ".join(str(int(row[position])) for position in kept)


class SpaceTokenizer:
    """rouge-score's tokenizer interface: its default lower-cases, keeps [a-z0-9]+ and may stem; ids need none."""

    @staticmethod
    def tokenize(text: str) -> list[str]:
        return text.split()


def rouge_score_package(data, size=3):
    """Google's rouge-score on the id words: each sequence's ROUGE-1..3 recall, precision and F1 and ROUGE-L F1
    (AllenNLP's keys), averaged over sequences as AllenNLP's ROUGE is."""
    from rouge_score.rouge_scorer import RougeScorer

    scorer = RougeScorer([f"rouge{n}" for n in range(1, size + 1)] + ["rougeL"], tokenizer=SpaceTokenizer())
    scores = [scorer.score(id_words(gold), id_words(predicted))  # target first
              for predicted, gold in zip(data["predictions"], data["gold_targets"])]
    mean = lambda kind, field: float(np.mean([getattr(score[kind], field) for score in scores]))  # noqa: E731
    fields = {"R": "recall", "P": "precision", "F1": "fmeasure"}
    result = {f"ROUGE-{n}_{key}": mean(f"rouge{n}", field) for n in range(1, size + 1) for key, field in fields.items()}
    return {**result, "ROUGE-L": mean("rougeL", "fmeasure")}


def bleu_sacrebleu(data):
    """sacrebleu's corpus BLEU on the id words (tokenize "none": split at spaces), as a fraction. Its "floor"
    smoothing at 1e-13 is the nearest to AllenNLP's 1e-13 added inside each logarithm; on this case every order
    has matches and the brevity penalty bites (asserted), so neither smoothing touches the value."""
    from sacrebleu.metrics import BLEU

    bleu = BLEU(tokenize="none", smooth_method="floor", smooth_value=1e-13, force=True)
    score = bleu.corpus_score([id_words(row) for row in data["predictions"]],
                              [[id_words(row) for row in data["gold_targets"]]])
    assert all(score.counts) and score.bp < 1, (score.counts, score.bp)
    return {"BLEU": score.score / 100}


def multi_label(average, threshold):
    def reference(data):
        kept = _kept(data)
        precision, recall, fscore, _ = sk.precision_recall_fscore_support(
            data["gold_labels"][kept], (data["predictions"][kept] >= threshold).astype(int), average=average,
            zero_division=0)
        return {"precision": precision, "recall": recall, "fscore": fscore}

    return reference


#: AllenNLP's own metrics on the data of the cases no package computes (tests/allennlp_oracle/metric_references.py)
ORACLE_REFERENCES = json.loads((TESTS / "allennlp_golden" / "metric_references.json").read_text())["references"]


def allennlps(case: str):
    def reference(data):
        return ORACLE_REFERENCES[case]

    return reference


REFERENCES = {
    "categorical_accuracy": lambda d: sk.accuracy_score(d["gold_labels"], _argmax(d), sample_weight=d["mask"]),
    "categorical_accuracy_top3": lambda d: sk.top_k_accuracy_score(
        d["gold_labels"], d["predictions"], k=3, labels=list(range(5)), sample_weight=d["mask"]
    ),
    # AllenNLP 2.10.1's own metrics, on the case's data (golden)
    "categorical_accuracy_tie_break": allennlps("categorical_accuracy_tie_break"),
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
    "covariance": lambda d: np.cov(d["predictions"], d["gold_labels"], fweights=d["mask"].astype(int))[0, 1],
    "perplexity": perplexity,
    "average": lambda d: np.average(d["value"], weights=d["mask"]),
    "sequence_accuracy": sequence_accuracy,
    "squad_em_and_f1": squad_torchmetrics,  # torchmetrics' SQuAD, the official v1.1 formula
    "drop_em_and_f1": drop_oracle,  # AllenNLP 2.10.1's own DropEmAndF1, question by question (golden)
    "drop": drop_oracle,
    "attachment_scores": allennlps("attachment_scores"),
    "srl_eval": official_reference,  # the CoNLL-2005 script itself (perl)
    "evalb": evalb_official,  # EVALB itself (its C source compiled with gcc), COLLINS.prm
    "conll_coref_scores": coref_scorch,  # scorch, an independent implementation of the CoNLL-2012 scores
    "mention_recall": allennlps("mention_recall"),
    "rouge": rouge_score_package,  # Google's rouge-score
    "bleu": bleu_sacrebleu,  # sacrebleu
    "fbeta_multi_label": multi_label("macro", 0.6),  # scikit-learn on the thresholded scores
    "f1_multi_label": multi_label("micro", 0.5),
    "unigram_recall": allennlps("unigram_recall"),
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


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_metric_in_one_process_equals_the_reference(case):
    """Each case alone in this process, all its data on one plain worker: the reference, and after a reset what a
    fresh metric reads. scripts/mutation_score.py runs these (a mutant of one metric runs its own case only)."""
    data = CASES[case].data()
    metric = build_metric(CASES[case])
    feed(metric, data, slice(None), CASES[case].per_item)
    assert_close(metric.get_metric(reset=True), REFERENCES[case](data), case)
    assert_close(metric.get_metric(), build_metric(CASES[case]).get_metric(), f"{case} after reset")


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
