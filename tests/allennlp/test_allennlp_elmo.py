"""ELMo against AllenNLP: the fixture biLM (tests/allennlp_fixtures/allennlp/test_fixtures/elmo, AllenNLP 2.10.1's
``test_fixtures/elmo``) reproduces the LM embeddings AllenNLP's own test compares with, and the indexer and the
token embedder give what AllenNLP gives (golden files made by tests/allennlp_oracle/elmo_outputs.py)."""

from __future__ import annotations

import json
from pathlib import Path

import h5py  # the elmo extra, which the set-up installs
import numpy as np
import pytest
import torch

from support.allennlp import check_and_train_an_epoch, sentences
from support.allennlp_fixtures import ELMO, needs_fixtures
from support.cli import run_cli
from support.configs import write_config
from support.paths import TESTS
from distrain.config.schema import resolve_object
from distrain.data.token_indexers.elmo_characters import ELMoTokenCharactersIndexer
from distrain.models.model import Model
from distrain.modules.elmo import ElmoBiLm, remove_sentence_boundaries
from distrain.modules.token_embedders.elmo import ElmoTokenEmbedder
from distrain.plugins import import_builtins

pytestmark = needs_fixtures

import_builtins()

FIXTURES = ELMO
GOLDEN = TESTS / "allennlp_golden" / "elmo"
OPTIONS, WEIGHTS = str(FIXTURES / "options.json"), str(FIXTURES / "lm_weights.hdf5")


def character_ids(batch: list[list[str]], indexer: ELMoTokenCharactersIndexer | None = None) -> torch.Tensor:
    """The indexer's ids for a batch of sentences, padded with all-zero tokens as a batch is."""
    indexer = indexer or ELMoTokenCharactersIndexer()
    rows = [indexer.tokens_to_indices(sentence, None)["elmo_tokens"].values for sentence in batch]
    ids = torch.zeros(len(rows), max(map(len, rows)), 50, dtype=torch.long)
    for index, row in enumerate(rows):
        if row:
            ids[index, : len(row)] = torch.from_numpy(np.stack(row))
    return ids


def lm_embedding_differences() -> list[float]:
    """As AllenNLP's ``test_elmo_bilm``: the 30 sentences in batches of 3 (batch i holds sentence i of each of
    the 3 lists), one biLM for all batches in order; the top layer, boundaries removed, against
    ``lm_embeddings_k.hdf5`` (forward and backward halves side by side). The max |difference| per file."""
    lists = json.loads((FIXTURES / "sentences.json").read_text())
    bilm = ElmoBiLm(OPTIONS, WEIGHTS)
    worst = [0.0] * len(lists)
    with torch.no_grad():
        for index, batch in enumerate(zip(*lists)):
            layers, mask = bilm(character_ids([sentence.split() for sentence in batch]))
            top, kept = remove_sentence_boundaries(layers[2], mask)
            for k, sentence in enumerate(batch):
                with h5py.File(FIXTURES / f"lm_embeddings_{k}.hdf5", "r") as expected_file:
                    expected = expected_file[str(index)][...]
                length = int(kept[k].sum())
                assert length == len(sentence.split())
                difference = np.abs(top[k, :length].numpy() - np.concatenate([expected[0], expected[1]], -1)).max()
                worst[k] = max(worst[k], float(difference))
    return worst


def test_elmo_reproduces_allennlps_lm_embeddings_of_the_fixture_sentences_within_1e_5():
    worst = lm_embedding_differences()
    assert max(worst) < 1e-5, worst


def test_the_character_encoder_reproduces_allennlps_context_free_token_embeddings():
    """AllenNLP's ``test_elmo_token_representation``: vocab_test.txt's words in 10 sentences of 50."""
    words = (FIXTURES / "vocab_test.txt").read_text().strip().split("\n")
    ids = character_ids([words[k * 50: (k + 1) * 50] for k in range(10)])
    with torch.no_grad():
        vectors, mask = ElmoBiLm(OPTIONS, WEIGHTS).character_encoder(ids)
    vectors = remove_sentence_boundaries(vectors, mask)[0].reshape(-1, vectors.shape[-1])[: len(words)]
    with h5py.File(FIXTURES / "elmo_token_embeddings.hdf5", "r") as expected_file:
        expected = expected_file["embedding"][...]
    assert np.abs(vectors.numpy() - expected).max() < 1e-5


def test_the_elmo_characters_indexer_gives_allennlps_ids():
    golden = json.loads((GOLDEN / "character_ids.json").read_text())
    words = golden["words"]

    def ids(indexer: ELMoTokenCharactersIndexer) -> list[list[int]]:
        return [row.tolist() for row in indexer.tokens_to_indices(words, None)["elmo_tokens"].values]

    assert ids(ELMoTokenCharactersIndexer()) == golden["ids"]
    assert ids(ELMoTokenCharactersIndexer(tokens_to_add=golden["tokens_to_add"])) == golden["ids_with_tokens_to_add"]


@pytest.mark.parametrize("setting", ["default", "layer_norm_fixed_mix"])
def test_the_token_embedder_gives_allennlps_outputs_batch_after_batch(setting):
    """Three batches of 3, 2 and 4 rows through one embedder: the LSTM state AllenNLP carries from batch to
    batch (cut and grown with the batch size) is in the expected outputs; after reset_states the first
    batch comes out as it did the first time."""
    golden = json.loads((GOLDEN / "token_embedder.json").read_text())
    embedder = ElmoTokenEmbedder(OPTIONS, WEIGHTS, dropout=0.0, **golden["settings"][setting])
    with torch.no_grad():
        outputs = [embedder(character_ids(batch)) for batch in golden["batches"]]
        for output, expected in zip(outputs, golden["outputs"][setting]):
            assert (output - torch.tensor(expected)).abs().max() < 1e-5
        embedder.elmo.bilm.lstm.reset_states()
        first_again = embedder(character_ids(golden["batches"][0]))
    assert torch.equal(first_again, outputs[0])


@pytest.mark.parametrize("requires_grad", [False, True])
def test_requires_grad_decides_whether_the_bilm_learns_and_the_mix_always_does(requires_grad):
    embedder = ElmoTokenEmbedder(OPTIONS, WEIGHTS, requires_grad=requires_grad, projection_dim=5)
    embedder(torch.randint(0, 262, (3, 4, 50))).sum().backward()
    bilm = {name: p.grad for name, p in embedder.named_parameters() if name.startswith("elmo.bilm.")}
    assert bilm and all((grad is not None) == requires_grad for grad in bilm.values())
    others = {name: p.grad for name, p in embedder.named_parameters() if not name.startswith("elmo.bilm.")}
    assert {"elmo.scalar_mixes.0.gamma", "projection.weight"} <= set(others)
    assert all(grad is not None for grad in others.values())
    assert embedder.get_output_dim() == 5


def elmo_classifier_config(workdir: Path, **embedder) -> dict:
    for name, seed in (("train", 1), ("dev", 2)):
        (workdir / f"{name}.jsonl").write_text("".join(
            json.dumps({"text": " ".join(words), "label": label}) + "\n" for words, label in sentences(16, seed)))
    return {
        "dataset_reader": {"type": "text_classification_json", "token_indexers": {"elmo": {"type": "elmo_characters"}}},
        "train_data_path": str(workdir / "train.jsonl"),
        "validation_data_path": str(workdir / "dev.jsonl"),
        "model": {"type": "basic_classifier",
                  "text_field_embedder": {"token_embedders": {"elmo": {
                      "type": "elmo_token_embedder", "options_file": OPTIONS, "weight_file": WEIGHTS, "dropout": 0.2,
                      **embedder}}},
                  "seq2vec_encoder": {"type": "boe", "embedding_dim": 32, "averaged": True}},
        "data_loader": {"batch_size": 4, "shuffle": True},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adam", "lr": 0.01}, "progress_bar": False},
    }


def test_a_classifier_on_elmo_passes_check_and_trains_an_epoch(tmp_path):
    check_and_train_an_epoch(tmp_path, elmo_classifier_config(tmp_path), "elmo")


def test_a_missing_weight_file_is_one_line_with_its_key_path_before_data_is_read(tmp_path):
    config = elmo_classifier_config(tmp_path, weight_file="no_weights.hdf5")  # short: a long value is cut
    config["train_data_path"] = config["validation_data_path"] = "no/such/file.jsonl"
    result = run_cli("train", str(write_config(tmp_path / "missing.json", config)), "-s", "runs/missing", cwd=tmp_path)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == [f'error: model.text_field_embedder.token_embedders.elmo.weight_file: must be a local ELMo HDF5 '
                     f'weight file that exists (distrain downloads nothing), got "no_weights.hdf5"'], \
        result.stderr


def test_an_options_file_that_is_not_elmos_and_a_mix_of_the_wrong_length_are_config_problems(tmp_path):
    not_options = tmp_path / "options.json"
    not_options.write_text('{"lstm": 3}')
    problems = []
    embedder = {"type": "elmo_token_embedder", "options_file": str(not_options), "weight_file": WEIGHTS}
    resolve_object(Model, {"type": "basic_classifier", "seq2vec_encoder": {"type": "boe", "embedding_dim": 32},
                           "text_field_embedder": {"token_embedders": {"elmo": embedder}}}, "model", problems)
    assert [str(p).split(",")[0] for p in problems] == [
        "model.text_field_embedder.token_embedders.elmo.options_file: must be a local ELMo options.json that exists "
        "and reads (distrain downloads nothing)"]
    problems = []
    embedder.update(options_file=OPTIONS, scalar_mix_parameters=[1.0, 2.0])
    resolve_object(Model, {"type": "basic_classifier", "seq2vec_encoder": {"type": "boe", "embedding_dim": 32},
                           "text_field_embedder": {"token_embedders": {"elmo": embedder}}}, "model", problems)
    assert [str(p) for p in problems] == [
        "model.text_field_embedder.token_embedders.elmo.scalar_mix_parameters: needs one weight per layer: 3 "
        "(the character layer and 2 LSTM layers), got 2"]


def test_a_broken_rule_inside_an_optional_component_is_reported_and_the_model_still_checked():
    """A cross-argument problem under ``text_field_embedder`` (a ``TextFieldEmbedder | None``) left the block a
    plain dict, and basic_classifier's own check crashed on it."""
    problems = []
    chars = {"type": "character_encoding", "embedding": {"embedding_dim": 4, "num_embeddings": 10},
             "encoder": {"type": "cnn", "embedding_dim": 5, "num_filters": 8}}
    resolve_object(Model, {"type": "basic_classifier", "seq2vec_encoder": {"type": "boe", "embedding_dim": 7},
                           "text_field_embedder": {"token_embedders": {"chars": chars}}}, "model", problems)
    assert [str(p) for p in problems] == [
        "model.text_field_embedder.token_embedders.chars.encoder.embedding_dim: is 5, but the embedding gives 4",
        "model.seq2vec_encoder.embedding_dim: is 7, but the text_field_embedder gives 32"]  # cnn: 8 filters x 4 sizes


def test_an_hdf5_file_without_elmos_weights_is_named_with_what_it_lacks(tmp_path):
    with h5py.File(tmp_path / "other.hdf5", "w") as other:
        other.create_dataset("x", data=[1.0])
    with pytest.raises(ValueError, match=r"other\.hdf5 is not ELMo weights for .*options\.json: .*char_embed"):
        ElmoBiLm(OPTIONS, str(tmp_path / "other.hdf5"))
