"""Every experiment config of allennlp-models' test fixtures (``test_fixtures/``, found by a glob, so a new fixture
joins by itself; ``vision/`` aside) runs as it is: ``distrain check`` and one epoch of ``distrain train`` succeed
from a copy of the repository's folder. The one change is :data:`SWAPS`: a name the config gives that cannot be had
on a machine without network (a hub model, a URL, a path of AllenNLP's old layout) becomes the local stand-in.

A config another test file already trains an epoch of (as it is, or with no more than its own file's stated
changes) is listed in :data:`TRAINED_ELSEWHERE` with that file, and trained there only; the ``broken_experiments``
are wrong on purpose (allennlp-models' tests expect them to fail) and must fail with one line, no traceback. The
configs of models other work is porting now are ``xfail(strict=True)``, so each turns into a failure when it passes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from distrain.config.loading import load_config
from support.allennlp_fixtures import ALLENNLP_MODELS, copy_repository, needs_fixtures
from support.cli import run_cli
from support.paths import TESTS

pytestmark = needs_fixtures

FIXTURES = ALLENNLP_MODELS / "test_fixtures"

#: a name a config gives that cannot be had here -> what stands in for it (the same kind of model, local)
SWAPS = {
    "bert-base-uncased": "test_fixtures/bert-xsmall-dummy",
    "epwalsh/bert-xsmall-dummy": "test_fixtures/bert-xsmall-dummy",  # the hub's copy of the fixture's tiny BERT
    # the configs state ALBERT's width (768): an ALBERT that wide, one layer, random, over the tiny BERT's word
    # pieces, made by the ``repository`` fixture (:func:`make_albert_stand_in`)
    "albert-base-v2": "test_fixtures/albert-768-stand-in",
    "sshleifer/bart-tiny-random": "test_fixtures/generation/bart-tiny-random",  # tests/allennlp_overlay
    "patrickvonplaten/t5-tiny-random": "test_fixtures/generation/t5-tiny-random",  # tests/allennlp_overlay
    # debiaswe's seed pairs at the commit the URL names: the fixture's own copy
    "https://raw.githubusercontent.com/tolga-b/debiaswe/4c3fa843ffff45115c43fe112d4283c91d225c09/data/"
    "definitional_pairs.json": "test_fixtures/pair_classification/bias_mitigation/debiaswe/definitional_pairs.json",
    "https://raw.githubusercontent.com/tolga-b/debiaswe/4c3fa843ffff45115c43fe112d4283c91d225c09/data/"
    "equalize_pairs.json": "test_fixtures/pair_classification/bias_mitigation/debiaswe/equalize_pairs.json",
    # the tiny ELMo and CoNLL lines of AllenNLP's old layout (allennlp/tests/fixtures): the same files in this folder
    "allennlp/tests/fixtures/elmo/": "test_fixtures/lm/elmo/",
    "allennlp/tests/fixtures/data/conll2003.txt": "test_fixtures/lm/conll2003.txt",
}

#: config -> the test file that trains an epoch of it (with the changes that file states)
TRAINED_ELSEWHERE = {
    "generation/simple/experiment.json": "test_allennlp_seq2seq.py",  # spaCy's analyses off (no en_core_web_sm)
    "generation/composed/experiment.json": "test_allennlp_seq2seq.py",
    "generation/composed/experiment_transformer.json": "test_allennlp_seq2seq.py",
    "generation/copynet/experiment.json": "test_allennlp_seq2seq.py",
    "generation/copynet/experiment_transformer.jsonnet": "test_allennlp_seq2seq.py",
    "tagging/crf_tagger/experiment_conll2000.json": "test_allennlp_tagging_configs.py",
    "tagging/crf_tagger/experiment_ccgbank.json": "test_allennlp_tagging_configs.py",
    "pair_classification/bias_mitigation/adversarial_experiment.json": "test_allennlp_bias_mitigation.py",
}

#: wrong on purpose: a clear one-line refusal (from check, or from train) is the pass
BROKEN = {"classification/biattentive_classification_network/broken_experiments/elmo_in_text_field_embedder.json",
          "classification/biattentive_classification_network/broken_experiments/no_elmo_tokenizer_for_elmo.json"}

#: folders whose models are being ported now: strict, so a config that starts passing fails here until moved out
BEING_PORTED: dict[str, str] = {}


def _is_experiment(path: Path) -> bool:
    """A config (not data) that trains: it names a model and training data, itself or through an import."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if "train_data_path" not in text and "import" not in text:
        return False
    try:
        config = load_config(path)
    except Exception:  # noqa: BLE001 - a data file that is not a config
        return False
    return isinstance(config, dict) and "model" in config and "train_data_path" in config


def discover() -> list[str]:
    """Every experiment config under ``test_fixtures/`` but ``vision/``, relative to it."""
    if not FIXTURES.is_dir():
        return []
    found = [Path(folder) / name for folder, _, names in os.walk(FIXTURES, followlinks=True)  # a folder of links
             for name in names if name.endswith((".json", ".jsonnet"))]
    return sorted(str(path.relative_to(FIXTURES)) for path in found
                  if "vision" not in path.relative_to(FIXTURES).parts and _is_experiment(path))


CONFIGS = discover()


def _param(config: str):
    reason = next((why for folder, why in BEING_PORTED.items() if config.startswith(folder)), None)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(config, marks=marks, id=config)


def make_albert_stand_in(repository: Path) -> None:
    """``test_fixtures/albert-768-stand-in``: an ALBERT 768 wide (what the configs naming ``albert-base-v2`` state),
    one layer, seeded random weights, with the tiny BERT's word-piece vocabulary and tokenizer."""
    import shutil

    import torch
    import transformers

    folder = repository / "test_fixtures" / "albert-768-stand-in"
    torch.manual_seed(0)
    settings = transformers.AlbertConfig(vocab_size=250, embedding_size=20, hidden_size=768, num_hidden_layers=1,
                                         num_attention_heads=12, intermediate_size=40, pad_token_id=0)
    transformers.AlbertModel(settings).save_pretrained(folder)
    shutil.copy(repository / "test_fixtures" / "bert-xsmall-dummy" / "vocab.txt", folder)
    (folder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "BertTokenizer", "do_lower_case": True}))


@pytest.fixture(scope="module")
def repository(tmp_path_factory) -> Path:
    copied = copy_repository("allennlp-models", tmp_path_factory.mktemp("models") / "allennlp-models")
    make_albert_stand_in(copied)
    return copied


def swapped(repository: Path, config: str, scratch: Path) -> str:
    """The config's path, or, where it names something of :data:`SWAPS`, a copy with only those names changed
    (jsonnet imports resolved first, the copy written as JSON)."""
    text = (repository / "test_fixtures" / config).read_text()
    if not any(name in text for name in SWAPS) and not config.endswith(".jsonnet"):
        return f"test_fixtures/{config}"
    loaded = json.dumps(load_config(repository / "test_fixtures" / config))
    if not any(name in loaded for name in SWAPS):
        return f"test_fixtures/{config}"
    for name, local in SWAPS.items():
        loaded = loaded.replace(name, local)
    path = scratch / "swapped.json"
    path.write_text(loaded)
    return str(path)


def test_the_configs_trained_here_and_elsewhere_are_the_whole_folder():
    assert len(CONFIGS) >= 50, CONFIGS  # the glob found the fixtures' configs (54 at allennlp-models 2.10.1)
    for config, test_file in TRAINED_ELSEWHERE.items():
        assert config in CONFIGS, f"{config} is no fixture config any more: take it off TRAINED_ELSEWHERE"
        text = (TESTS / "allennlp" / test_file).read_text()  # names the config, or its folder (a glob of its own)
        assert config.rsplit("/", 1)[-1] in text or f'"{config.split("/")[-2]}"' in text, (config, test_file)
    assert set(CONFIGS) == set(TRAINED_HERE) | set(TRAINED_ELSEWHERE) | BROKEN
    assert BROKEN <= set(CONFIGS)


TRAINED_HERE = [config for config in CONFIGS if config not in TRAINED_ELSEWHERE and config not in BROKEN]


@pytest.mark.parametrize("config", [_param(config) for config in TRAINED_HERE])
def test_allennlp_models_fixture_config_checks_and_trains_an_epoch_as_it_is(config, repository, tmp_path):
    path = swapped(repository, config, tmp_path)
    checked = run_cli("check", path, cwd=repository)
    assert checked.returncode == 0, checked.stderr[-3000:]
    run = tmp_path / "run"
    trained = run_cli("train", path, "-s", str(run), "-o", '{"trainer.num_epochs": 1}', cwd=repository)
    assert trained.returncode == 0, trained.stderr[-3000:]
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["epoch"] == 0 and (run / "model.tar.gz").is_file()


@pytest.mark.parametrize("config", sorted(BROKEN))
def test_a_broken_fixture_config_is_refused_with_one_line(config, repository, tmp_path):
    path = f"test_fixtures/{config}"
    result = run_cli("check", path, cwd=repository)
    if result.returncode == 0:
        result = run_cli("train", path, "-s", str(tmp_path / "run"), "-o", '{"trainer.num_epochs": 1}',
                         cwd=repository)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert "elmo" in result.stderr.lower(), result.stderr[-3000:]
