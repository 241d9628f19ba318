"""Taggers trained by the CLI on small CoNLL data (tests/support/tagging_data.py; not a benchmark): span F1 (overall
and per type) from ``distrain evaluate`` on 1 and 2 workers equals seqeval's entity-level F1 on the tags ``distrain predict``
writes (BIO and BIOUL); ``crf_tagger`` on 2 workers ends within 1e-5 of one; bad CoNLL lines are one
line naming file:line, exit 2, nothing trained or archived. One trained run per scheme serves every assertion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from seqeval.metrics import classification_report, f1_score

from support.cli import run_cli
from support.distributed import final_metrics, max_weight_difference
from support.tagging_data import write_conll, write_word_tags


def tagger_config(scheme: str, workers: int = 1) -> dict:
    config = {
        "dataset_reader": {"type": "conll2003", "tag_label": "ner", "convert_to_coding_scheme": scheme},
        "train_data_path": "conll/train.txt", "validation_data_path": "conll/dev.txt",
        "model": {"type": "crf_tagger", "label_encoding": scheme, "verbose_metrics": True,
                  "text_field_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 16}}},
                  "encoder": {"type": "lstm", "input_size": 16, "hidden_size": 8, "bidirectional": True},
                  "feedforward": {"input_dim": 16, "num_layers": 1, "hidden_dims": 12, "activations": "tanh"}},
        "data_loader": {"batch_size": 8 // workers, "shuffle": True},
        "trainer": {"optimizer": {"type": "adam", "lr": 0.03}, "num_epochs": 4,
                    "validation_metric": "+f1-measure-overall"},
    }
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers}
    return config


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tagging")
    write_conll(root / "conll" / "train.txt", 32, seed=1)
    write_conll(root / "conll" / "dev.txt", 16, seed=2)
    return root


def train(workdir: Path, name: str, config: dict) -> Path:
    path = workdir / f"{name}.json"
    path.write_text(json.dumps(config))
    result = run_cli("train", str(path), "-s", f"runs/{name}", "-f", cwd=workdir)
    assert result.returncode == 0, result.stderr
    return workdir / "runs" / name


@pytest.fixture(scope="module")
def runs(workdir) -> dict[str, Path]:
    return {"BIO": train(workdir, "bio", tagger_config("BIO")), "BIOUL": train(workdir, "bioul", tagger_config("BIOUL"))}


def gold_iob1(path: Path) -> list[list[str]]:
    """The NER column as the file has it (IOB1); seqeval reads its entities the conlleval way."""
    sentences, current = [], []
    for line in path.read_text().splitlines():
        columns = line.split()
        if not columns or columns[0] == "-DOCSTART-":
            if current:
                sentences.append(current)
            current = []
        else:
            current.append(columns[3])
    return sentences + ([current] if current else [])


def for_seqeval(tag: str) -> str:
    """BIOUL's L and U are seqeval's (IOBES's) E and S."""
    return {"L": "E", "U": "S"}.get(tag[0], tag[0]) + tag[1:] if tag != "O" else tag


@pytest.mark.parametrize("scheme", ["BIO", "BIOUL"])
def test_span_f1_on_one_and_two_workers_equals_seqeval_on_the_predicted_tags(workdir, runs, scheme):
    archive, data = str(runs[scheme] / "model.tar.gz"), str(workdir / "conll" / "dev.txt")
    predicted = workdir / f"predicted_{scheme}.jsonl"
    result = run_cli("predict", archive, data, "--output-file", str(predicted), cwd=workdir)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in predicted.read_text().splitlines()]
    gold = gold_iob1(workdir / "conll" / "dev.txt")
    assert [len(row["tags"]) for row in rows] == [len(tags) for tags in gold]
    assert [len(row["words"]) for row in rows] == [len(tags) for tags in gold]
    tags = [[for_seqeval(tag) for tag in row["tags"]] for row in rows]
    expected = f1_score(gold, tags)
    assert 0 < expected < 1  # a partly trained tagger: the comparison is not between two zeros or two ones
    per_type = {kind: report["f1-score"] for kind, report in classification_report(gold, tags, output_dict=True).items()
                if kind in ("PER", "LOC", "ORG")}
    assert len(per_type) == 3
    for workers in (1, 2):
        out = workdir / f"evaluate_{scheme}_{workers}.json"
        overrides = json.dumps({"distributed": {"cuda_devices": [-1] * workers}} if workers > 1 else {})
        result = run_cli("evaluate", archive, data, "--output-file", str(out), "-o", overrides, cwd=workdir)
        assert result.returncode == 0, result.stderr
        metrics = json.loads(out.read_text())
        assert metrics["f1-measure-overall"] == pytest.approx(expected, abs=1e-9), workers
        assert {kind: metrics[f"f1-measure-{kind}"] for kind in per_type} == pytest.approx(per_type, abs=1e-9), workers


def test_crf_tagger_on_two_workers_ends_within_1e_5_of_one_worker(workdir, runs):
    """Global batch 8 either way (4 per worker on two), dropout off: the same updates."""
    two = train(workdir, "bioul_2", tagger_config("BIOUL", workers=2))
    assert max_weight_difference(runs["BIOUL"], two) <= 1e-5
    one, other = final_metrics(runs["BIOUL"]), final_metrics(two)
    for key in ("training_loss", "validation_loss", "validation_f1-measure-overall", "validation_accuracy"):
        assert other[key] == pytest.approx(one[key], abs=1e-5), key


def broken(workdir: Path, name: str, line_number: int, line: str) -> tuple[Path, object]:
    """Train on a copy of the training data with line ``line_number`` replaced; the run's folder and result."""
    lines = (workdir / "conll" / "train.txt").read_text().splitlines()
    lines[line_number - 1] = line
    data = workdir / "conll" / f"{name}.txt"
    data.write_text("\n".join(lines) + "\n")
    config = tagger_config("BIOUL") | {"train_data_path": str(data)}
    path = workdir / f"{name}.json"
    path.write_text(json.dumps(config))
    out = workdir / "runs" / name
    return data, out, run_cli("train", str(path), "-s", str(out), cwd=workdir)


@pytest.mark.parametrize("name,line,problem", [
    ("three_columns", "Paris NNP I-LOC", "expected 4 columns (word POS chunk NER), got 3"),
    ("outside_scheme", "Paris NNP I-NP U-LOC", "ner tag 'U-LOC' is not a IOB1 tag (expected O or B/I-TYPE)"),
])
def test_a_bad_conll_line_is_one_line_naming_file_and_line_exit_2_nothing_trained(workdir, name, line, problem):
    data, out, result = broken(workdir, name, 4, line)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [f"error: {data}:4: {problem}"]
    assert not out.exists()  # the config and log train wrote before reading data are removed with the folder


def test_simple_tagger_trains_from_word_tag_lines_and_predicts_a_tag_per_word(workdir):
    write_word_tags(workdir / "tagged" / "train.txt", 30, seed=5)
    write_word_tags(workdir / "tagged" / "dev.txt", 10, seed=6)
    config = {"dataset_reader": {"type": "sequence_tagging"},
              "train_data_path": "tagged/train.txt", "validation_data_path": "tagged/dev.txt",
              "model": {"type": "simple_tagger", "label_encoding": "IOB1", "verbose_metrics": True,
                        "text_field_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 8}}},
                        "encoder": {"type": "lstm", "input_size": 8, "hidden_size": 8}},
              "data_loader": {"batch_size": 8}, "trainer": {"optimizer": "adam", "num_epochs": 2}}
    run = train(workdir, "simple", config)
    metrics = final_metrics(run)
    assert {"validation_accuracy", "validation_f1-measure-overall", "validation_f1-measure-PER"} <= metrics.keys()
    out = workdir / "simple.jsonl"
    result = run_cli("predict", str(run / "model.tar.gz"), "tagged/dev.txt", "--output-file", str(out), cwd=workdir)
    assert result.returncode == 0, result.stderr
    lines = (workdir / "tagged" / "dev.txt").read_text().splitlines()
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["words"] for row in rows] == [[t.rsplit("###", 1)[0] for t in line.split()] for line in lines]
    assert all(len(row["tags"]) == len(row["words"]) for row in rows)
