"""Metric test cases shared by the test process (references) and the worker processes (metrics).

Every case builds the same data from its seed in every process. A worker feeds only its own,
deliberately uneven share of the items (one worker of three gets none) in batches of varying size,
with an empty batch and a discarded placeholder batch thrown in, then reads the metric.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

NUM_ITEMS = 61
BIO_TAGS = ["O", "B-LOC", "I-LOC", "B-PER", "I-PER", "B-ORG", "I-ORG"]
BIOUL_TAGS = ["O", "B-LOC", "I-LOC", "L-LOC", "U-LOC", "B-PER", "I-PER", "L-PER", "U-PER"]
CLASS_NAMES = ["a", "b", "c", "d", "e", "f"]


@dataclass
class Case:
    metric: dict[str, Any]
    make_data: Callable[[np.random.Generator], dict[str, np.ndarray]]
    label_names: list[str] | None = None
    seed: int = 0
    #: the metric scores one item a call (DROP's, as AllenNLP's): each batch is fed item by item
    per_item: bool = False

    def data(self) -> dict[str, np.ndarray]:
        return self.make_data(np.random.default_rng(self.seed))


# ------------------------------------------------------------------------------ data makers
def _item_mask(rng, shape=(NUM_ITEMS,)):
    return (rng.random(shape) > 0.15).astype(np.float64)


def class_scores(rng, classes: int = 5, never: int | None = None):
    scores = rng.normal(size=(NUM_ITEMS, classes))
    gold = rng.integers(0, classes if never is None else never, NUM_ITEMS)
    scores[np.arange(NUM_ITEMS), gold] += rng.random(NUM_ITEMS) * 1.5  # better than chance
    if never is not None:
        scores[:, never:] = -1e9
    return {"predictions": scores, "gold_labels": gold, "mask": _item_mask(rng)}


def tied_scores(rng):
    scores = rng.integers(0, 3, size=(NUM_ITEMS, 5)).astype(np.float64)
    return {"predictions": scores, "gold_labels": rng.integers(0, 5, NUM_ITEMS), "mask": _item_mask(rng)}


def boolean_items(rng):
    gold = rng.integers(0, 2, size=(NUM_ITEMS, 3))
    flips = rng.random((NUM_ITEMS, 3)) < 0.2
    mask = (rng.random((NUM_ITEMS, 3)) > 0.25).astype(np.float64)
    mask[:3] = 0  # items with nothing to compare do not count
    return {"predictions": np.where(flips, 1 - gold, gold), "gold_labels": gold, "mask": mask}


def binary_scores(rng):
    return class_scores(rng, classes=2)


def tag_sequences(tags: list[str], as_scores: bool):
    def make(rng):
        length = 9
        gold = rng.integers(0, len(tags), size=(NUM_ITEMS, length))
        gold[rng.random((NUM_ITEMS, length)) < 0.4] = 0  # plenty of O
        noise = rng.random((NUM_ITEMS, length)) < 0.25
        predicted = np.where(noise, rng.integers(0, len(tags), size=(NUM_ITEMS, length)), gold)
        lengths = rng.integers(0, length + 1, NUM_ITEMS)
        mask = (np.arange(length)[None, :] < lengths[:, None]).astype(np.float64)
        gold = np.where(mask > 0, gold, -100)  # padding as SequenceLabelField pads it
        if as_scores:
            predicted = np.eye(len(tags))[predicted] + rng.random((NUM_ITEMS, length, len(tags))) * 0.1
        return {"predictions": predicted, "gold_labels": gold, "mask": mask}

    return make


def scores_for_auc(rng):
    gold = rng.integers(0, 2, NUM_ITEMS)
    scores = np.round(gold * 0.4 + rng.random(NUM_ITEMS), 1)  # rounding makes ties
    return {"predictions": scores, "gold_labels": gold, "mask": _item_mask(rng)}


def correlated(rng, ties: bool = False):
    x = rng.normal(size=NUM_ITEMS) * 3 + 10
    y = 0.6 * x + rng.normal(size=NUM_ITEMS)
    if ties:
        x, y = np.round(x), np.round(y)
    return {"predictions": x, "gold_labels": y, "mask": _item_mask(rng)}


def token_logits(rng):
    vocab, length = 7, 5
    gold = rng.integers(0, vocab, size=(NUM_ITEMS, length))
    logits = rng.normal(size=(NUM_ITEMS, length, vocab))
    mask = (rng.random((NUM_ITEMS, length)) > 0.2).astype(np.float64)
    return {"predictions": logits, "gold_labels": np.where(mask > 0, gold, -100), "mask": mask}


def values(rng):
    return {"value": rng.normal(size=NUM_ITEMS) * 2 + 1, "mask": _item_mask(rng)}


def tag_id_sequences(rng):
    gold = rng.integers(0, 3, size=(NUM_ITEMS, 4))
    predicted = np.where(rng.random((NUM_ITEMS, 4)) < 0.1, rng.integers(0, 3, size=(NUM_ITEMS, 4)), gold)
    lengths = rng.integers(0, 5, NUM_ITEMS)
    mask = (np.arange(4)[None, :] < lengths[:, None]).astype(np.float64)
    return {"predictions": predicted, "gold_labels": np.where(mask > 0, gold, -100), "mask": mask}


def multi_label_scores(rng):
    gold = (rng.random((NUM_ITEMS, 5)) < 0.4).astype(np.int64)
    scores = np.clip(rng.random((NUM_ITEMS, 5)) * 0.7 + gold * 0.3, 0.01, 1.0)  # better than chance, never all 0
    return {"predictions": scores, "gold_labels": gold, "mask": _item_mask(rng)}


def beam_sequences(rng):
    gold = rng.integers(1, 9, size=(NUM_ITEMS, 4))
    beams = np.where(rng.random((NUM_ITEMS, 2, 4)) < 0.5, gold[:, None, :], rng.integers(1, 9, size=(NUM_ITEMS, 2, 4)))
    mask = (rng.random((NUM_ITEMS, 4)) > 0.2).astype(np.float64)
    return {"predictions": beams, "gold_labels": gold, "mask": mask}


def squad_answers(rng):
    """Predicted strings (some empty, or empty once normalised) and 1-3 gold answers per question, each holding a
    word that normalisation keeps, as SQuAD v1.1's do (object arrays: strings are fed as lists)."""
    words = np.array(["the", "an", "Oslo", "oslo,", "old", "city", "of", "Norway.", "A", "square"])
    text = lambda: " ".join(rng.choice(words, size=rng.integers(0, 4)))  # noqa: E731
    predictions = np.array([text() for _ in range(NUM_ITEMS)], dtype=object)
    answer = lambda: " ".join(rng.permutation([*text().split(), str(rng.choice(words[2:8]))]))  # noqa: E731
    gold = np.empty(NUM_ITEMS, dtype=object)
    gold[:] = [[answer() for _ in range(rng.integers(1, 4))] for _ in range(NUM_ITEMS)]
    return {"predictions": predictions, "gold_answers": gold}


def drop_answers(rng):
    """DROP questions drawn (with repeats) from the oracle's metric cases (:data:`DROP_GOLDEN`: spans, numbers and
    dates, one or more annotations), for which AllenNLP's own EM and F1 are known."""
    cases = json.loads(DROP_GOLDEN.read_text())["metric_cases"]
    picked = [cases[int(index)] for index in rng.integers(0, len(cases), NUM_ITEMS)]
    as_objects = lambda items: np.array(items + [None], dtype=object)[:-1]  # noqa: E731 - lists stay lists
    return {"prediction": as_objects([case["prediction"] for case in picked]),
            "ground_truths": as_objects([case["annotations"] for case in picked])}


#: AllenNLP 2.10.1's DropEmAndF1 on each of its cases (made by tests/allennlp_oracle/drop_outputs.py)
DROP_GOLDEN = Path(__file__).resolve().parents[1] / "allennlp_golden" / "drop.json"


def dependency_parses(rng):
    """Heads (0-6) and labels (0-3) of 6-word sentences, mostly right, padded past each length."""
    length = 6
    gold_heads, gold_labels = rng.integers(0, length + 1, (NUM_ITEMS, length)), rng.integers(0, 4, (NUM_ITEMS, length))
    heads = np.where(rng.random((NUM_ITEMS, length)) < 0.15, rng.integers(0, length + 1, (NUM_ITEMS, length)),
                     gold_heads)
    labels = np.where(rng.random((NUM_ITEMS, length)) < 0.15, rng.integers(0, 4, (NUM_ITEMS, length)), gold_labels)
    mask = (np.arange(length)[None, :] < rng.integers(0, length + 1, NUM_ITEMS)[:, None]).astype(np.float64)
    return {"predicted_indices": heads, "predicted_labels": labels, "gold_indices": gold_heads,
            "gold_labels": gold_labels, "mask": mask}


SRL_TAGS = ["O", "B-V", "I-V", "B-ARG0", "I-ARG0", "B-ARG1", "I-ARG1", "B-C-ARG1", "I-C-ARG1", "B-R-ARG0", "I-R-ARG0",
            "B-ARGM-TMP", "I-ARGM-TMP"]


def srl_frames(rng):
    """Per predicate: gold BIO arguments (discontinuous ARG1 + C-ARG1 among them; a tenth without a predicate)
    and predictions with a quarter of the tags redrawn (ill-formed BIO too), as lists (object arrays)."""
    gold, predicted, verbs = [], [], []
    kinds = ["ARG0", "ARG1", "C-ARG1", "R-ARG0", "ARGM-TMP"]
    for _ in range(NUM_ITEMS):
        length = int(rng.integers(3, 12))
        tags = ["O"] * length
        verb = None if rng.random() < 0.1 else int(rng.integers(0, length))
        if verb is not None:
            tags[verb] = "B-V"
            position = 0
            while position < length:
                size = int(rng.integers(1, 4))
                if rng.random() < 0.5 and all(tag == "O" for tag in tags[position:position + size]):
                    kind = kinds[int(rng.integers(0, len(kinds)))]
                    tags[position:position + size] = [f"B-{kind}"] + [f"I-{kind}"] * (size - 1)
                position += size
            tags = tags[:length]
        noisy = [SRL_TAGS[int(rng.integers(0, len(SRL_TAGS)))] if rng.random() < 0.25 else tag for tag in tags]
        gold.append(tags), predicted.append(noisy), verbs.append(verb)
    as_objects = lambda items: np.array(items + [None], dtype=object)[:-1]  # noqa: E731 - lists stay lists
    return {"predicted_tags": as_objects(predicted), "gold_tags": as_objects(gold), "verb_indices": as_objects(verbs)}


PHRASES = ["S", "NP", "VP", "PP", "ADVP", "PRT", "NP-SBJ", "S=2", "SBAR", "TOP", ","]
POS_TAGS = ["NN", "VB", "DT", "JJ", "RP", ",", ".", "-NONE-", "``"]


def _random_tree(rng, leaves: list):
    """A phrase over ``leaves`` (POS-tag nodes), split into 1-3 parts, now and then a unary chain."""
    from distrain.zoo.structured_prediction.trees import Tree

    label = PHRASES[int(rng.integers(0, len(PHRASES)))]
    if len(leaves) == 1:
        return Tree(label, leaves) if rng.random() < 0.5 else leaves[0]
    parts = int(rng.integers(2, min(3, len(leaves)) + 1))
    cuts = sorted(rng.choice(np.arange(1, len(leaves)), size=parts - 1, replace=False).tolist())
    children = [_random_tree(rng, leaves[a:b]) for a, b in zip([0, *cuts], [*cuts, len(leaves)])]
    node = Tree(label, children)
    return Tree(PHRASES[int(rng.integers(0, 4))], [node]) if rng.random() < 0.1 else node


def _mutated(rng, tree):
    """A prediction near ``tree``: phrases relabelled, flattened or grouped anew, the words and POS tags kept."""
    from distrain.zoo.structured_prediction.trees import Tree

    if isinstance(tree, str) or (len(tree.children) == 1 and isinstance(tree.children[0], str)):
        return tree
    children = []
    for child in tree.children:
        child = _mutated(rng, child)
        if isinstance(child, Tree) and not isinstance(child.children[0], str) and rng.random() < 0.15:
            children += child.children  # flattened
        else:
            children.append(child)
    if len(children) > 2 and rng.random() < 0.2:
        at = int(rng.integers(0, len(children) - 1))
        children[at:at + 2] = [Tree(PHRASES[int(rng.integers(0, len(PHRASES)))], children[at:at + 2])]
    label = PHRASES[int(rng.integers(0, len(PHRASES)))] if rng.random() < 0.2 else tree.label
    return Tree(label, children)


def constituency_trees(rng):
    """Gold trees (punctuation and empty elements among the POS tags, function tags and deleted labels among the
    phrases) and predictions near them; a few with a changed word or only deleted words (EVALB's error and skip
    lines), as lists (object arrays)."""
    from distrain.zoo.structured_prediction.trees import Tree

    gold, predicted = [], []
    for item in range(NUM_ITEMS):
        length = 1 if item % 20 == 7 else int(rng.integers(2, 14))
        tags = [POS_TAGS[int(rng.integers(0, len(POS_TAGS)))] for _ in range(length)]
        if item % 20 == 7:
            tags = ["."]
        leaves = [Tree(tag, [f"w{i}"]) for i, tag in enumerate(tags)]
        tree = _random_tree(rng, leaves)
        tree = tree if isinstance(tree, Tree) and not isinstance(tree.children[0], str) else Tree("S", [tree])
        guess = _mutated(rng, tree)
        if item % 20 == 13:
            guess = Tree("S", [Tree("NN", ["other"]), guess])
        gold.append(tree), predicted.append(guess)
    as_objects = lambda items: np.array(items + [None], dtype=object)[:-1]  # noqa: E731 - lists stay lists
    return {"predicted_trees": as_objects(predicted), "gold_trees": as_objects(gold)}



def coref_documents(rng, spans: int = 12, most: int = 5):
    """Documents of 20 three-word slots, each mention one slot's first 1-3 words (so no two cross, as in CoNLL
    files): 12 kept spans linked to one of their 5 nearest predecessors or to none, and gold clusters of
    2-4 mentions (none of one: AllenNLP's B³ reads gold clusters as having none), most of them among the kept spans."""
    top, chosen, gold = [], [], []
    candidates = np.maximum(np.arange(spans)[:, None] - 1 - np.arange(most)[None, :], 0)
    for _ in range(NUM_ITEMS):
        slots = np.sort(rng.choice(20, size=spans, replace=False))
        top.append([[3 * slot, 3 * slot + int(rng.integers(0, 3))] for slot in slots])
        chosen.append([-1 if i == 0 or rng.random() < 0.4 else int(rng.integers(0, min(i, most))) for i in range(spans)])
        mentions = [span if rng.random() < 0.8 else [span[0], 3 * (span[0] // 3) + int(rng.integers(0, 3))]
                    for span in rng.permutation(np.array(top[-1]))[:8].tolist()]
        mentions += [[3 * slot, 3 * slot] for slot in sorted(set(range(20)) - set(slots.tolist()))[:3]]
        order, clusters, at = rng.permutation(len(mentions)), [], 0
        while len(mentions) - at >= 2:
            size = min(int(rng.integers(2, 5)), len(mentions) - at)
            size = size if len(mentions) - at - size != 1 else size + 1
            clusters.append([mentions[i] for i in order[at:at + size]])
            at += size
        gold.append({"clusters": clusters})
    as_objects = lambda items: np.array(items + [None], dtype=object)[:-1]  # noqa: E731 - dicts stay dicts
    return {"top_spans": np.asarray(top), "antecedent_indices": np.repeat(candidates[None], NUM_ITEMS, 0),
            "predicted_antecedents": np.asarray(chosen), "metadata_list": as_objects(gold)}


def coref_kept_spans(rng):
    data = coref_documents(rng)
    return {"batched_top_spans": data["top_spans"], "batched_metadata": data["metadata_list"]}


def token_id_sequences(rng):
    """Predicted and gold token ids over a small vocabulary (so n-grams repeat and match), each row ended by 2
    and padded with 0 (ids 0-2 are the start, padding and end a generator's metric excludes); predictions are
    the gold rows with tokens changed, dropped or repeated, some empty."""
    gold = np.zeros((NUM_ITEMS, 14), dtype=np.int64)
    predicted = np.zeros((NUM_ITEMS, 16), dtype=np.int64)
    for item in range(NUM_ITEMS):
        row = [1] + rng.integers(3, 9, int(rng.integers(1, 12))).tolist() + [2]
        gold[item, :len(row)] = row
        guess = [t if rng.random() > 0.3 else int(rng.integers(3, 9)) for t in row[1:-1] for _ in range(
            int(rng.choice([0, 1, 1, 1, 2])))][:14] if item % 13 else []
        predicted[item, :len(guess) + 1] = guess + [2]
    return {"predictions": predicted, "gold_targets": gold}


CASES: dict[str, Case] = {
    "categorical_accuracy": Case({"type": "categorical_accuracy"}, class_scores, seed=1),
    "categorical_accuracy_top3": Case({"type": "categorical_accuracy", "top_k": 3}, class_scores, seed=2),
    "categorical_accuracy_tie_break": Case({"type": "categorical_accuracy", "tie_break": True}, tied_scores, seed=3),
    "boolean_accuracy": Case({"type": "boolean_accuracy"}, boolean_items, seed=4),
    "fbeta_per_label": Case(
        {"type": "fbeta", "beta": 2.0}, lambda rng: class_scores(rng, 6, never=5), CLASS_NAMES, seed=5
    ),
    "fbeta_micro": Case({"type": "fbeta", "average": "micro"}, lambda rng: class_scores(rng, 6, never=5), CLASS_NAMES, seed=6),
    "fbeta_macro": Case({"type": "fbeta", "average": "macro"}, lambda rng: class_scores(rng, 6, never=5), CLASS_NAMES, seed=7),
    "fbeta_weighted": Case(
        {"type": "fbeta", "average": "weighted", "beta": 0.5}, lambda rng: class_scores(rng, 6, never=5), CLASS_NAMES, seed=8
    ),
    "fbeta_macro_named_labels": Case(
        {"type": "fbeta", "average": "macro", "labels": ["c", "a", "f"]},
        lambda rng: class_scores(rng, 6, never=5), CLASS_NAMES, seed=9,
    ),
    "f1": Case({"type": "f1", "positive_label": "yes"}, binary_scores, ["no", "yes"], seed=10),
    "span_f1_bio": Case({"type": "span_f1"}, tag_sequences(BIO_TAGS, as_scores=True), BIO_TAGS, seed=11),
    "span_f1_bioul": Case(
        {"type": "span_f1", "tag_scheme": "BIOUL"}, tag_sequences(BIOUL_TAGS, as_scores=False), BIOUL_TAGS, seed=12
    ),
    "auc": Case({"type": "auc"}, scores_for_auc, seed=13),
    "auc_from_logits": Case({"type": "auc", "positive_label": "yes"}, binary_scores, ["no", "yes"], seed=14),
    "pearson_correlation": Case({"type": "pearson_correlation"}, correlated, seed=15),
    "spearman_correlation": Case({"type": "spearman_correlation"}, lambda rng: correlated(rng, ties=True), seed=16),
    "mean_absolute_error": Case({"type": "mean_absolute_error"}, correlated, seed=17),
    "covariance": Case({"type": "covariance"}, correlated, seed=27),
    "perplexity": Case({"type": "perplexity"}, token_logits, seed=18),
    "average": Case({"type": "average"}, values, seed=19),
    "sequence_accuracy": Case({"type": "sequence_accuracy"}, tag_id_sequences, seed=20),
    "squad_em_and_f1": Case({"type": "squad_em_and_f1"}, squad_answers, seed=21),
    "drop_em_and_f1": Case({"type": "drop_em_and_f1"}, drop_answers, seed=23, per_item=True),
    "drop": Case({"type": "drop"}, drop_answers, seed=29, per_item=True),
    "attachment_scores": Case({"type": "attachment_scores", "ignore_classes": [1]}, dependency_parses, seed=22),
    "srl_eval": Case({"type": "srl_eval"}, srl_frames, SRL_TAGS, seed=23),
    "evalb": Case({"type": "evalb"}, constituency_trees, seed=24),
    "conll_coref_scores": Case({"type": "conll_coref_scores"}, coref_documents, seed=25),
    "mention_recall": Case({"type": "mention_recall"}, coref_kept_spans, seed=25),
    "rouge": Case({"type": "rouge", "ngram_size": 3, "exclude_indices": [0, 1, 2]}, token_id_sequences, seed=25),
    "bleu": Case({"type": "bleu", "exclude_indices": [0, 1, 2]}, token_id_sequences, seed=26),
    "fbeta_multi_label": Case({"type": "fbeta_multi_label", "average": "macro", "threshold": 0.6}, multi_label_scores,
                              seed=28),
    "f1_multi_label": Case({"type": "f1_multi_label", "average": "micro"}, multi_label_scores, seed=29),
    "unigram_recall": Case({"type": "unigram_recall"}, beam_sequences, seed=30),
}


# ---------------------------------------------------------------------------- the worker side
def share_of(rank: int, world_size: int) -> slice:
    """Uneven shares: 2 workers split 3:1; of 3 workers, rank 0 gets nothing."""
    cuts = {1: [0, NUM_ITEMS], 2: [0, 45, NUM_ITEMS], 3: [0, 0, 40, NUM_ITEMS]}[world_size]
    return slice(cuts[rank], cuts[rank + 1])


def build_metric(case: Case):
    from distrain.config.schema import resolve_object
    from distrain.metrics.metric import Metric
    from distrain.plugins import import_builtins

    import_builtins()
    problems: list = []
    metric = resolve_object(Metric, case.metric, "metric", problems).build()
    assert not problems, problems
    if case.label_names is not None:
        metric.set_label_names(case.label_names)
    return metric


def feed(metric, data: dict[str, np.ndarray], items: slice, per_item: bool = False) -> None:
    tensors = {name: list(array[items]) if array.dtype == object else torch.as_tensor(array[items])
               for name, array in data.items()}
    if per_item:
        metric = _item_by_item(metric)
    count = len(next(iter(tensors.values())))
    if count == 0:
        return  # a worker without data never calls the metric, as in the trainer
    metric(**{name: tensor[:0] for name, tensor in tensors.items()})  # an empty batch changes nothing
    start, sizes = 0, [7, 1, 12]
    for position in range(count):
        size = sizes[position % len(sizes)]
        if start >= count:
            break
        if position == 1:  # a zero-weight placeholder, discarded as Model.metrics_frozen does
            saved = metric.state()
            metric(**{name: tensor[:2] for name, tensor in tensors.items()})
            metric.load_state(saved)
        metric(**{name: tensor[start : start + size] for name, tensor in tensors.items()})
        start += size


class _item_by_item:
    """A metric that scores one item a call, fed a batch: each item in turn (state and load_state passed on)."""

    def __init__(self, metric) -> None:
        self.metric = metric

    def __call__(self, **batch) -> None:
        for position in range(len(next(iter(batch.values())))):
            self.metric(**{name: values[position] for name, values in batch.items()})

    def state(self):
        return self.metric.state()

    def load_state(self, saved) -> None:
        self.metric.load_state(saved)


def compute_all(world, out_dir: str) -> None:
    """Every case on this worker's share; every worker writes what it read."""
    results = {}
    for name, case in CASES.items():
        metric = build_metric(case)
        feed(metric, case.data(), share_of(world.rank, world.size), case.per_item)
        results[name] = metric.get_metric(reset=True)
        results[name + "/after_reset"] = metric.get_metric()
    Path(out_dir, f"rank{world.rank}.json").write_text(json.dumps(results))
