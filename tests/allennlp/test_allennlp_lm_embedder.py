"""allennlp-models' language model token embedders (``bidirectional_lm_token_embedder``): AllenNLP 2.10.1's archive
of the embedder's own fixture (tests/allennlp_golden/bidirectional_lm_token_embedder: a crf_tagger mixing the layers
of the fixture's transformer LM archive, test_fixtures/lm/language_model/model.tar.gz) gives AllenNLP's logits and
tags in distrain (its ``evaluate`` metrics: tests/allennlp/test_allennlp_archives.py, every golden case);
``constituency_parser_transformer_elmo`` passes ``distrain check`` and trains an epoch on the PTB fixture with that
archive; a parser with the embedder ends on 2 CPU workers where it does on one; a missing archive is one line."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import numpy as np
import pytest
import torch

from support.allennlp import CONFIGS, check_and_train_an_epoch, golden_job, plain_sgd_on, train_on_one_and_two_workers
from support.allennlp_fixtures import ALLENNLP_MODELS, needs_fixtures
from support.cli import run_cli
from support.configs import write_config
from support.distributed import final_metrics, max_weight_difference

pytestmark = needs_fixtures

MODELS = ALLENNLP_MODELS
LM_ARCHIVE = MODELS / "test_fixtures" / "lm" / "language_model" / "model.tar.gz"  # 16-wide tokens, 3 layers: 32 out
PARSER = MODELS / "test_fixtures" / "structured_prediction"
TREES = PARSER / "example_ptb.trees"


def test_allennlp_archive_with_the_embedder_gives_allennlps_logits_and_tags(monkeypatch):
    monkeypatch.chdir(MODELS)  # the archive names the LM archive by a path relative to allennlp-models
    job, golden = golden_job("bidirectional_lm_token_embedder")
    worst = 0.0
    with torch.inference_mode():
        for index, theirs in enumerate(golden):
            mine = job.model(**job.dataset.batch(np.arange(index, index + 1)))
            worst = max(worst, float(np.abs(mine["logits"][0].numpy() - np.asarray(theirs["logits"])).max()))
            assert job.model.make_output_human_readable(mine)["tags"][0] == theirs["tags"]
    print("bidirectional_lm_token_embedder max |logits difference| from AllenNLP's:", worst)
    assert worst <= 1e-5


def test_return_all_layers_gives_each_layer_with_only_the_top_one_normed():
    from distrain.zoo.lm.modules.bidirectional_lm_transformer import BidirectionalLanguageModelTransformer

    torch.manual_seed(0)
    encoder = BidirectionalLanguageModelTransformer(hidden_dim=6, num_layers=2, input_dim=8).eval()
    inputs, mask = torch.randn(2, 5, 8), torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    top = encoder(inputs, mask)
    encoder.return_all_layers = True
    layers = encoder(inputs, mask)
    assert len(layers) == 2 and all(layer.shape == (2, 5, 16) for layer in layers)
    assert torch.equal(layers[-1], top)
    forward = encoder.forward_transformer
    steps = torch.tril(torch.ones(5, 5, dtype=torch.bool)).unsqueeze(0)
    first = forward.layers[0](inputs + _positions(5, 8), mask.unsqueeze(-1) & steps)
    torch.testing.assert_close(layers[0][..., :8], first, rtol=0, atol=1e-6)  # the lower layer is not normed


def _positions(steps: int, width: int) -> torch.Tensor:
    from distrain.zoo.lm.modules.bidirectional_lm_transformer import sinusoidal_positions

    return sinusoidal_positions(steps, width, torch.float32, torch.device("cpu"))


def test_constituency_parser_transformer_elmo_passes_check_and_trains_an_epoch(tmp_path):
    """allennlp-models' config with the fixture LM archive: 32 wide where the config's LM was 1024, so the encoder's
    input_size 1074 = 1024 + 50 becomes 32 + 50; nothing else changes but the data paths."""
    from distrain.config.loading import load_config

    (tmp_path / "ptb").mkdir()
    for split in ("train", "dev", "test"):
        (tmp_path / "ptb" / f"{split}.trees").write_text(TREES.read_text())
    config = load_config(CONFIGS / "constituency_parser_transformer_elmo.jsonnet",
                         ext_vars={"BIDIRECTIONAL_LM_ARCHIVE_PATH": str(LM_ARCHIVE)})
    assert config["model"]["encoder"]["input_size"] == 1024 + 50
    config["model"]["encoder"]["input_size"] = 32 + 50
    run = check_and_train_an_epoch(tmp_path, config, "constituency_parser_transformer_elmo",
                                   metric="best_validation_evalb_f1_measure")
    assert "validation_evalb_f1_measure" in json.loads((run / "metrics.json").read_text())


def _without_dropout(archive: Path, folder: Path) -> Path:
    """A copy of the LM archive whose transformer drops nothing (dropout draws differ between workers, as in the
    other 1-vs-2-worker tests, which set it to 0)."""
    with tarfile.open(archive) as source:
        source.extractall(folder / "lm", filter="data")
    config = folder / "lm" / "config.json"
    text = config.read_text()
    assert text.count('"dropout": 0.1') == 1 and text.count('"input_dropout": 0.1') == 1
    config.write_text(text.replace('"dropout": 0.1', '"dropout": 0.0').replace('"input_dropout": 0.1', '"input_dropout": 0.0'))
    with tarfile.open(folder / "lm.tar.gz", "w:gz") as target:
        for member in sorted((folder / "lm").iterdir()):
            target.add(member, member.name)
    return folder / "lm.tar.gz"


def _parser_with_the_embedder(workers: int, archive: Path = LM_ARCHIVE) -> dict:
    """The parser fixture over the LM embedder (fine-tuned, so the LM's gradients are synced too), 2 epochs of
    one global batch of the fixture's 2 trees, plain SGD."""
    config = json.loads((PARSER / "constituency_parser" / "experiment.json").read_text())
    config["dataset_reader"]["token_indexers"] = {"elmo": {"type": "elmo_characters"}}
    config["model"]["text_field_embedder"] = {"token_embedders": {"elmo": {
        "type": "bidirectional_lm_token_embedder", "archive_file": str(archive), "dropout": 0.0,
        "requires_grad": True}}}
    config["model"]["encoder"]["input_size"] = 32
    return plain_sgd_on(config, str(TREES), workers)


def test_two_workers_end_within_1e_5_of_one_worker(tmp_path):
    archive = _without_dropout(LM_ARCHIVE, tmp_path)
    runs = train_on_one_and_two_workers(tmp_path, lambda workers: _parser_with_the_embedder(workers, archive))
    difference = max_weight_difference(runs[1], runs[2])
    print("bidirectional_lm_token_embedder parser, 1 vs 2 workers, max |weight difference|:", difference)
    assert difference <= 1e-5
    one, two = final_metrics(runs[1]), final_metrics(runs[2])
    assert abs(one["validation_loss"] - two["validation_loss"]) <= 1e-5
    assert one["validation_evalb_f1_measure"] == two["validation_evalb_f1_measure"]


def _as_allennlp_0x_wrote_it(archive: Path, folder: Path) -> Path:
    """The LM archive with its config.json as AllenNLP 0.x wrote them (allennlp-models' old fixture archive was one):
    a trailing comma, an ``iterator`` and a ``trainer.log_batch_size_period``, keys AllenNLP 2.x ignores."""
    with tarfile.open(archive) as source:
        source.extractall(folder / "old", filter="data")
    config = json.loads((folder / "old" / "config.json").read_text())
    config["iterator"] = {"type": "basic", "batch_size": 32}
    config["trainer"]["log_batch_size_period"] = 10
    text = json.dumps(config, indent=4)
    assert text.count('"elmo_characters"\n') == 1
    (folder / "old" / "config.json").write_text(text.replace('"elmo_characters"\n', '"elmo_characters",\n'))
    with tarfile.open(folder / "old.tar.gz", "w:gz") as target:
        for member in sorted((folder / "old").iterdir()):
            target.add(member, member.name)
    return folder / "old.tar.gz"


def test_an_archive_config_as_allennlp_0x_wrote_it_loads_with_the_same_weights(tmp_path):
    from distrain.zoo.lm.modules.language_model_embedder import BidirectionalLanguageModelTokenEmbedder

    old = _as_allennlp_0x_wrote_it(LM_ARCHIVE, tmp_path)
    with pytest.raises(json.JSONDecodeError):  # the trailing comma: plain JSON cannot read it
        with tarfile.open(old) as archive:
            json.loads(archive.extractfile("config.json").read())
    new, legacy = (BidirectionalLanguageModelTokenEmbedder(str(path)) for path in (LM_ARCHIVE, old))
    theirs = legacy.state_dict()
    assert theirs.keys() == new.state_dict().keys()
    assert all(torch.equal(value, theirs[name]) for name, value in new.state_dict().items())
    assert torch.equal(legacy.boundaries, new.boundaries) and legacy.boundaries.numel() > 0


def test_a_missing_archive_is_one_line_naming_its_key_before_data_is_read(tmp_path):
    config = _parser_with_the_embedder(1)
    config["model"]["text_field_embedder"]["token_embedders"]["elmo"]["archive_file"] = "no/lm.tar.gz"
    config["train_data_path"] = "no/such.trees"  # never read: the archive is checked first
    checked = run_cli("train", str(write_config(tmp_path / "bad.json", config)), "-s", "run", cwd=tmp_path)
    assert checked.returncode == 2, checked.stderr
    errors = [line for line in checked.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and "model.text_field_embedder.token_embedders.elmo.archive_file" in errors[0], errors
    assert "no/lm.tar.gz does not exist" in errors[0] and "such.trees" not in errors[0]
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("tokens", [None, ("<S>", "</S>")])
def test_the_boundaries_are_the_archives_elmo_characters(tokens):
    from distrain.zoo.lm.modules.language_model_embedder import _boundary_ids
    from distrain.modules.elmo_characters import BEGIN_SENTENCE_IDS, END_SENTENCE_IDS

    config = {"dataset_reader": {"token_indexers": {"chars": {"type": "elmo_characters"}}}}
    ids = _boundary_ids(config, "chars", tokens, "lm.tar.gz")
    assert ids.tolist() == ([] if tokens is None else [BEGIN_SENTENCE_IDS, END_SENTENCE_IDS])
