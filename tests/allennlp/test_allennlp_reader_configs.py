"""allennlp-models' configs that read with boolq, transformer_superglue_rte and ontonotes_ner
(tests/allennlp_configs/: the pretrained names at the local MiniLM, widths tied to roberta's at MiniLM's 384)
pass ``distrain check`` and train an epoch on allennlp-models' own fixture data (v2.10.1), in its own formats."""

from __future__ import annotations

import pytest

from distrain.config.loading import load_config
from support.allennlp import CONFIGS, check_and_train_an_epoch
from support.allennlp_fixtures import ALLENNLP_MODELS, ELMO, needs_fixtures
from support.cli import run_cli
from support.configs import write_config
from support.tagging_data import write_vectors

pytestmark = needs_fixtures

FIXTURES = ALLENNLP_MODELS / "test_fixtures"
CONLL_2012 = FIXTURES / "structured_prediction" / "srl" / "conll_2012"
CONLL_PATHS = {"CONLL_TRAIN_DATA_PATH": str(CONLL_2012), "CONLL_DEV_DATA_PATH": str(CONLL_2012)}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("reader_configs")


def with_data(config: dict, path) -> dict:
    for split in ("train", "validation", "test"):
        if f"{split}_data_path" in config:
            config[f"{split}_data_path"] = str(path)
    return config


def test_boolq_roberta_config_on_local_minilm_passes_check_and_trains_an_epoch(workdir):
    config = with_data(load_config(CONFIGS / "boolq_roberta.jsonnet"), FIXTURES / "classification" / "boolq.jsonl")
    check_and_train_an_epoch(workdir, config, "boolq")


def test_superglue_rte_roberta_config_on_local_minilm_passes_check_and_trains_an_epoch(workdir):
    config = with_data(load_config(CONFIGS / "superglue_rte_roberta.jsonnet"), FIXTURES / "rc" / "superglue_rte.jsonl")
    check_and_train_an_epoch(workdir, config, "superglue_rte")


def test_fgner_transformer_config_on_local_minilm_passes_check_and_trains_an_epoch_on_two_cpu_workers(workdir):
    """Each worker's ontonotes_ner reads its share of the fixture's sentences (no slower than one worker here)."""
    config = load_config(CONFIGS / "fgner_transformer.jsonnet", ext_vars=CONLL_PATHS)
    config["distributed"] = {"cuda_devices": [-1, -1]}
    run = check_and_train_an_epoch(workdir, config, "fgner_transformer", metric="best_validation_f1-measure-overall")
    assert (run / "out_worker1.log").exists()


def test_fine_grained_ner_config_with_the_fixture_elmo_passes_check_and_trains_an_epoch(workdir):
    """The fixture biLM is 32 wide where the config's is 1024: the encoder's stated input is 32 + 128 + 50."""
    write_vectors(workdir / "glove.6B.50d.txt.gz", 50)
    config = load_config(CONFIGS / "fine-grained-ner.jsonnet", ext_vars=CONLL_PATHS)
    embedders = config["model"]["text_field_embedder"]["token_embedders"]
    embedders["elmo"] |= {"options_file": str(ELMO / "options.json"), "weight_file": str(ELMO / "lm_weights.hdf5")}
    embedders["tokens"]["pretrained_file"] = "glove.6B.50d.txt.gz"
    config["model"]["encoder"]["input_size"] = 32 + 128 + 50
    check_and_train_an_epoch(workdir, config, "fine_grained_ner", metric="best_validation_f1-measure-overall")


def test_missing_names_in_a_reader_config_are_one_line_each_with_their_key_paths_before_data_is_read(workdir):
    config = load_config(CONFIGS / "superglue_rte_roberta.jsonnet")  # its data paths name no local file
    config["dataset_reader"]["no_such_argument"] = 1
    config["model"]["seq2vec_encoder"]["type"] = "no_such_pooler"
    result = run_cli("check", str(write_config(workdir / "missing.json", config)), cwd=workdir)
    assert result.returncode == 2
    problems = [line.strip() for line in result.stderr.splitlines()[1:]]
    assert len(problems) == 2 and problems[0].startswith("dataset_reader.no_such_argument: unknown key")
    assert problems[1].startswith('model.seq2vec_encoder.type: unknown Seq2VecEncoder type "no_such_pooler"')
