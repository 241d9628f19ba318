"""The semantic dependency graph parser: the archive AllenNLP 2.10.1 trained on allennlp-models' fixture (golden case
``graph_parser``) gives, in distrain, AllenNLP's arcs, labels, arc and label probabilities and losses (its
``evaluate`` metrics: test_allennlp_archives.py); allennlp-models' ``semantic_dependencies.jsonnet`` passes ``check``
and trains an epoch on SDP data; 2 CPU workers end within 1e-5 of one; a malformed SDP line is one error naming
file:line."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from support.allennlp import CONFIGS, check_and_train_an_epoch, golden_job, train_on_one_and_two_workers
from support.allennlp_fixtures import ALLENNLP_MODELS, needs_fixtures
from support.cli import run_cli
from support.configs import write_config
from support.distributed import final_metrics, max_weight_difference
from support.tagging_data import write_vectors

pytestmark = needs_fixtures

MODELS = ALLENNLP_MODELS
FIXTURE = MODELS / "test_fixtures" / "structured_prediction" / "semantic_dependencies"
SDP = FIXTURE / "dm.sdp"


def test_allennlp_graph_parser_archive_gives_allennlps_arcs_labels_and_probabilities(monkeypatch):
    monkeypatch.chdir(MODELS)
    job, golden = golden_job("graph_parser")
    with torch.inference_mode():
        for index, theirs in enumerate(golden):
            batch = job.dataset.batch(np.arange(index, index + 1))
            mine = job.model(**batch)
            readable = job.model.make_output_human_readable(mine)[0]
            assert [list(arc) for arc in readable["arcs"]] == theirs["arcs"]
            assert readable["arc_tags"] == theirs["arc_tags"]
            for key in ("arc_probs", "arc_tag_probs"):
                np.testing.assert_allclose(mine[key][0].numpy(), theirs[key], atol=1e-5, rtol=0, err_msg=key)
            for key in ("arc_loss", "tag_loss", "loss"):
                assert float(mine[key]) == pytest.approx(theirs[key], abs=1e-5), key


def test_malformed_sdp_is_one_line_naming_file_and_line_exit_2_and_nothing_written(tmp_path):
    bad = tmp_path / "bad.sdp"
    lines = SDP.read_text().splitlines()
    lines[4] = "\t".join(lines[4].split("\t")[:5])  # the 3rd word of the first sentence loses its last columns
    bad.write_text("\n".join(lines) + "\n")
    config = json.loads((FIXTURE / "experiment.json").read_text())
    config["train_data_path"] = config["validation_data_path"] = str(bad)
    result = run_cli("train", str(write_config(tmp_path / "bad.json", config)), "-s", "run", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    errors = [text for text in result.stderr.splitlines() if text.strip()]
    assert len(errors) == 1 and errors[0].startswith(f"error: {bad}:5: expected at least 9 tab-separated columns"), \
        errors
    assert not (tmp_path / "run").exists()


def test_an_argument_without_its_predicate_names_its_line(tmp_path):
    from distrain.data.reader import DataError
    from distrain.zoo.structured_prediction.readers.semantic_dependencies import SemanticDependenciesDatasetReader as Reader

    path = tmp_path / "extra.sdp"
    path.write_text("#1\n1\tA\ta\tDT\t2\tdet\t-\t+\t_\t_\n2\tb\tb\tNN\t0\troot\t+\t-\t_\tBV\tARG1\n")
    with pytest.raises(DataError, match=f"^{path}:3: an argument in column 11, but the sentence has 1 predicates"):
        list(Reader().read(path))


def test_semantic_dependencies_config_passes_check_and_trains_an_epoch(tmp_path):
    """allennlp-models' config at its own sizes on the fixture's shorter sentence. Two keys are set here, not in
    the file (as shipped but for paths): ``trainer.cuda_device`` 0 becomes the CPU, and ``validation_metric`` "+LAS",
    which ``graph_parser`` does not report (AllenNLP's run fails on it too, after the first epoch), becomes "+f1"."""
    (tmp_path / "sdp").mkdir()
    shorter = "#" + SDP.read_text().split("\n#")[-1]
    for name in ("train", "dev", "test"):
        (tmp_path / "sdp" / f"{name}.sdp").write_text(shorter)
    words = sorted({line.split("\t")[1].lower() for line in SDP.read_text().splitlines()
                    if line and not line.startswith("#")})
    write_vectors(tmp_path / "sdp" / "glove.6B.100d.txt.gz", 100, words)
    from distrain.config.loading import load_config
    config = load_config(CONFIGS / "semantic_dependencies.jsonnet")
    config["trainer"] |= {"cuda_device": -1, "validation_metric": "+f1"}
    run = check_and_train_an_epoch(tmp_path, config, "semantic_dependencies", metric="best_validation_f1")
    metrics = json.loads((run / "metrics.json").read_text())
    assert {"validation_precision", "validation_recall", "validation_f1"} <= metrics.keys()


def test_a_validation_metric_the_model_does_not_report_is_one_line_naming_the_key():
    from distrain.errors import ConfigError
    from distrain.training.metric_tracker import MetricTracker

    with pytest.raises(ConfigError, match="^trainer.validation_metric: 'LAS' is not among the validation metrics "
                                          "\\(f1, loss, precision, recall\\)$"):
        MetricTracker("+LAS").update(0, {"f1": 0.5, "loss": 1.0, "precision": 0.5, "recall": 0.5})


def _small_graph_parser(workers: int) -> dict:
    """The golden fixture's tiny parser, 3 epochs of one global batch of both sentences (one a worker); plain SGD."""
    config = json.loads((FIXTURE / "experiment.json").read_text())
    config["train_data_path"] = config["validation_data_path"] = str(SDP)
    config["data_loader"] = {"batch_size": 2 // workers}
    config["trainer"] |= {"num_epochs": 3, "cuda_device": None, "optimizer": {"type": "sgd", "lr": 0.5}}
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers}
    return config


def test_two_workers_end_within_1e_5_of_one_worker(tmp_path):
    runs = train_on_one_and_two_workers(tmp_path, _small_graph_parser)
    assert max_weight_difference(runs[1], runs[2]) <= 1e-5
    one, two = final_metrics(runs[1]), final_metrics(runs[2])
    for key in ("validation_precision", "validation_recall", "validation_f1", "validation_loss"):
        assert one[key] == pytest.approx(two[key], abs=1e-6), key
