"""allennlp-models' seq2seq family in distrain: the ``seq2seq`` and ``copynet_seq2seq`` readers, and
``simple_seq2seq``, ``composed_seq2seq`` (``auto_regressive_seq_decoder`` over ``lstm_cell`` or
``stacked_self_attention``) and ``copynet_seq2seq``.

Every experiment config of allennlp-models' ``generation`` fixtures outside BART and T5 (those have their own
tests, with local stand-ins for their hub models) passes ``distrain check`` and trains an epoch from the
repository's folder as it is, but for one change where this machine cannot do what the config asks: spaCy's
tagger, parser and entity recogniser need the model package ``en_core_web_sm``, which no package index serves,
so without it those analyses are switched off (the indexers of their features then index their
``default_value``). ``composed/experiment_transformer.json`` names AllenNLP 0.9's ``pos_tag`` indexer, which
AllenNLP 2.10.1 lacks (its own ``allennlp train`` fails there): distrain has it, so that config runs too.
"""

from __future__ import annotations

import csv
import json

import pytest

from distrain.data.reader import DataError
from distrain.data.tokenizers.spacy import model_installed
from distrain.zoo.seq2seq.readers.copynet_seq2seq import CopyNetDatasetReader, first_appearance_ids
from distrain.zoo.seq2seq.readers.seq2seq import Seq2SeqDatasetReader
from support.allennlp import assert_evaluate_gives_each, plain_sgd_on
from support.allennlp_fixtures import ALLENNLP_MODELS, needs_fixtures
from support.cli import run_cli
from support.configs import write_config
from support.distributed import final_metrics, max_weight_difference

pytestmark = needs_fixtures

GENERATION = ALLENNLP_MODELS / "test_fixtures" / "generation"
#: the folders of the family (BART's and T5's are tested in test_allennlp_bart.py / test_allennlp_t5.py)
FAMILY = ("simple", "composed", "copynet")
CONFIGS = sorted(str(path.relative_to(ALLENNLP_MODELS)) for folder in FAMILY
                 for path in (GENERATION / folder).glob("experiment*.json*"))
ANALYSES = ("pos_tags", "parse", "ner")


def overrides_for(config: str) -> dict:
    """What this machine changes: the spaCy analyses a config asks for, off where ``en_core_web_sm`` is missing."""
    text = json.loads((ALLENNLP_MODELS / config).read_text()) if config.endswith(".json") else {}
    tokenizer = text.get("dataset_reader", {}).get("source_tokenizer", {})
    if tokenizer.get("type") != "spacy" or model_installed(tokenizer.get("language", "en_core_web_sm")):
        return {}
    return {f"dataset_reader.source_tokenizer.{key}": False for key in ANALYSES if tokenizer.get(key)}


def test_the_family_has_its_five_experiments():
    assert len(CONFIGS) == 5, CONFIGS


@pytest.mark.parametrize("config", CONFIGS)
def test_allennlp_models_seq2seq_experiment_checks_and_trains_an_epoch(config, tmp_path):
    overrides = json.dumps(overrides_for(config))
    checked = run_cli("check", config, "-o", overrides, cwd=ALLENNLP_MODELS)
    assert checked.returncode == 0, checked.stderr
    run = tmp_path / "run"
    epoch = json.dumps({**json.loads(overrides), "trainer.num_epochs": 1})
    trained = run_cli("train", config, "-s", str(run), "-o", epoch, cwd=ALLENNLP_MODELS)
    assert trained.returncode == 0, trained.stderr
    metrics = final_metrics(run)
    assert metrics["epoch"] == 0 and metrics["validation_loss"] > 0
    # the trainer's validation pass (BLEU of its beam search, where the model has one) is distrain evaluate's
    names = [name for name in ("validation_BLEU", "validation_loss") if name in metrics][:1]
    assert_evaluate_gives_each(run, fixture_config(config)["validation_data_path"],
                               {name: metrics[name] for name in names}, ALLENNLP_MODELS, "-o", overrides)


def fixture_config(config: str) -> dict:
    """A fixture config as loaded, with :func:`overrides_for`'s changes."""
    from distrain.config.loading import load_config

    loaded = load_config(ALLENNLP_MODELS / config)
    for key, value in overrides_for(config).items():
        loaded["dataset_reader"]["source_tokenizer"][key.rsplit(".", 1)[1]] = value
    return loaded


#: config -> its data (the simple and composed ones read the 3 copy pairs: the last global batch of 2 is one pair,
#: which one worker holds); composed's scheduled sampling draws each step's choice on every worker alike
WORKER_CASES = {"test_fixtures/generation/simple/experiment.json": "test_fixtures/generation/seq2seq_copy.tsv",
                "test_fixtures/generation/composed/experiment.json": "test_fixtures/generation/seq2seq_copy.tsv",
                "test_fixtures/generation/copynet/experiment.json": "test_fixtures/generation/copynet/data/copyover.tsv"}


@pytest.mark.parametrize("config", sorted(WORKER_CASES))
def test_seq2seq_fixture_on_two_workers_ends_within_1e_5_of_one(config, tmp_path):
    """The fixture's config under plain SGD in global batches of 2, on 1 and on 2 CPU workers: the same weights,
    losses and BLEU of the beam search."""
    runs = {}
    for workers in (1, 2):
        trained_config = plain_sgd_on(fixture_config(config), WORKER_CASES[config], workers, global_batch=2, lr=0.5)
        runs[workers] = tmp_path / f"workers_{workers}"
        path = write_config(tmp_path / f"w{workers}.json", trained_config)
        trained = run_cli("train", str(path), "-s", str(runs[workers]), cwd=ALLENNLP_MODELS)
        assert trained.returncode == 0, trained.stderr
    one, two = final_metrics(runs[1]), final_metrics(runs[2])
    assert max_weight_difference(runs[1], runs[2]) < 1e-5
    for name in ("training_loss", "validation_loss", "validation_BLEU"):
        if name in one:
            assert abs(one[name] - two[name]) < 1e-5, name


COLOURS = ["red", "blue", "green", "yellow"]


def test_a_trained_simple_seq2seq_decodes_each_source_to_its_own_target(tmp_path):
    """Four one-word copy pairs learnt (60 Adam steps; the source without boundary symbols, so the encoder's final
    state is the word's): ``distrain predict`` decodes each source to itself, so the predictions differ across
    inputs; every beam's tokens are given, the best first."""
    (tmp_path / "colours.tsv").write_text("".join(f"{word}\t{word}\n" for word in COLOURS))
    config = {
        "dataset_reader": {"type": "seq2seq", "source_tokenizer": {"type": "whitespace"},
                           "source_add_start_token": False, "source_add_end_token": False,
                           "source_token_indexers": {"tokens": {"namespace": "source_tokens"}},
                           "target_token_indexers": {"tokens": {"namespace": "target_tokens"}}},
        "train_data_path": "colours.tsv",
        "model": {"type": "simple_seq2seq", "target_namespace": "target_tokens", "target_embedding_dim": 16,
                  "source_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 16,
                                                                     "vocab_namespace": "source_tokens"}}},
                  "encoder": {"type": "lstm", "input_size": 16, "hidden_size": 16},
                  "attention": {"type": "dot_product"}, "beam_search": {"beam_size": 2, "max_steps": 4}},
        "data_loader": {"batch_size": 1},
        "trainer": {"num_epochs": 15, "optimizer": {"type": "adam", "lr": 0.03}},
    }
    trained = run_cli("train", str(write_config(tmp_path / "colours.json", config)), "-s", "run", cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    predicted = run_cli("predict", "run/model.tar.gz", "colours.tsv", "--output-file", "out.jsonl", cwd=tmp_path)
    assert predicted.returncode == 0, predicted.stderr
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [line["predicted_tokens"][0] for line in lines] == [[word] for word in COLOURS]
    for line in lines:
        assert len(line["predicted_tokens"]) == len(line["predictions"]) == 2
        assert line["class_log_probabilities"][0] >= line["class_log_probabilities"][1]


#: golden case -> the key of its beams' summed log-probabilities (AllenNLP's names)
ARCHIVES = {"simple_seq2seq": "class_log_probabilities", "composed_seq2seq": "class_log_probabilities",
            "composed_seq2seq_transformer": "class_log_probabilities", "copynet_seq2seq": "predicted_log_probs",
            "copynet_seq2seq_transformer": "predicted_log_probs"}


@pytest.mark.parametrize("case", sorted(ARCHIVES))
def test_allennlps_seq2seq_archive_decodes_allennlps_beams(case, monkeypatch):
    """Archives AllenNLP 2.10.1 trained on the fixtures (tests/allennlp_golden/CASE: 30-150 epochs, so the beams
    differ across the inputs, the self-attention one's scores only; CopyNet's copy the source's words, the BERT
    one its word pieces), decoded by distrain one sentence at a time: every beam's ids (CopyNet's over the extended vocabulary: a copied position is an id past the target
    vocabulary) and tokens as AllenNLP's beam search gave them, and their summed log-probabilities within 1e-5.
    (Their ``evaluate`` BLEU and loss: tests/allennlp/test_allennlp_archives.py, every golden case.)"""
    import numpy as np
    import torch

    from support.allennlp import golden_job

    monkeypatch.chdir(ALLENNLP_MODELS)
    job, golden = golden_job(case)
    scores = ARCHIVES[case]
    spread = np.ptp([theirs[scores][0] for theirs in golden])  # the inputs' beams differ, or else their scores
    assert len({json.dumps(theirs["predicted_tokens"]) for theirs in golden}) > 1 or spread > 1e-3
    job.model.eval()
    with torch.inference_mode():
        for index, theirs in enumerate(golden):
            mine = job.model(**job.dataset.batch(np.arange(index, index + 1)))
            assert mine["predictions"][0].tolist() == theirs["predictions"]
            np.testing.assert_allclose(mine[scores][0].numpy(), theirs[scores], atol=1e-5, rtol=0)
            readable = job.model.make_output_human_readable(mine)
            assert readable[0]["predicted_tokens"] == theirs["predicted_tokens"]


def test_stacked_self_attention_decodes_in_parallel_what_it_decodes_step_by_step():
    """Teacher forcing runs the self-attention decoder once over the whole target; each position may see only the
    ones before it, so the logits equal those of decoding one step at a time (dropout off), and a later target
    token changes no earlier position's logits."""
    import torch

    from distrain.data.vocabulary import Vocabulary
    from distrain.modules.token_embedders.embedding import Embedding
    from distrain.zoo.seq2seq.modules.decoder_nets.stacked_self_attention import StackedSelfAttentionDecoderNet
    from distrain.zoo.seq2seq.modules.seq_decoders.auto_regressive import AutoRegressiveSeqDecoder

    torch.manual_seed(0)
    vocab = Vocabulary({"tokens": ["@@PADDING@@", "@@UNKNOWN@@", "@start@", "@end@", "a", "b", "c"]})
    net = StackedSelfAttentionDecoderNet(decoding_dim=8, target_embedding_dim=8, feedforward_hidden_dim=16,
                                         num_layers=2, num_attention_heads=2)
    decoder = AutoRegressiveSeqDecoder(vocab, net, Embedding(8, num_embeddings=7)).eval()
    targets = torch.tensor([[2, 4, 5, 6, 3], [2, 6, 6, 3, 0]])
    state = {"encoder_outputs": torch.randn(2, 3, 8), "source_mask": torch.tensor([[1, 1, 1], [1, 1, 0]]).bool()}

    def parallel(ids: torch.Tensor) -> torch.Tensor:
        embedded = decoder.target_embedder(ids)
        _, decoded = net({}, state["encoder_outputs"], state["source_mask"], embedded[:, :-1])
        return decoder.output_projection_layer(decoded)

    stepwise = decoder.stepwise_logits(dict(state), targets, decoder.target_embedder(targets))
    torch.testing.assert_close(parallel(targets), stepwise, atol=1e-5, rtol=0)
    changed = targets.clone()
    changed[:, 3] = 4
    torch.testing.assert_close(parallel(changed)[:, :3], parallel(targets)[:, :3], atol=1e-6, rtol=0)
    assert not torch.allclose(parallel(changed)[:, 3], parallel(targets)[:, 3])


def test_simple_seq2seq_with_stacked_decoder_layers_and_no_attention_trains_and_decodes(tmp_path):
    """``target_decoder_layers: 2`` (a 2-layer LSTM started from the encoder's state in every layer), no attention,
    and AllenNLP's deprecated model-level ``beam_size`` / ``max_decoding_steps``: an epoch trains and validation
    decodes 3 beams of at most 4 steps."""
    (tmp_path / "pairs.tsv").write_text("a b\tb a\nc d\td c\n")
    config = {
        "dataset_reader": {"type": "seq2seq", "source_tokenizer": {"type": "just_spaces"}},
        "train_data_path": "pairs.tsv", "validation_data_path": "pairs.tsv",
        "model": {"type": "simple_seq2seq", "target_decoder_layers": 2, "beam_size": 3, "max_decoding_steps": 4,
                  "source_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 6}}},
                  "encoder": {"type": "gru", "input_size": 6, "hidden_size": 5}},
        "data_loader": {"batch_size": 2},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adam"}},
    }
    path = write_config(tmp_path / "layers.json", config)
    assert run_cli("check", str(path), cwd=tmp_path).returncode == 0
    trained = run_cli("train", str(path), "-s", "run", cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    predicted = run_cli("predict", "run/model.tar.gz", "pairs.tsv", "--output-file", "out.jsonl", cwd=tmp_path)
    assert predicted.returncode == 0, predicted.stderr
    for line in (tmp_path / "out.jsonl").read_text().splitlines():
        beams = json.loads(line)["predictions"]
        assert len(beams) == 3 and all(len(beam) <= 4 for beam in beams)


# ------------------------------------------------------------------------------------------- the readers
def texts(field) -> list[str]:
    return [token if isinstance(token, str) else token.text for token in field.tokens]


def test_seq2seq_reader_reads_tsv_rows_with_start_and_end_symbols_and_skips_empty_sides(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("a b c\tx y\n\tlonely target\nd e\t\nf\tz\n")
    reader = Seq2SeqDatasetReader(source_tokenizer=_spaces(), source_max_tokens=2,
                                  source_add_start_token=False, target_add_end_token=False)
    instances = list(reader.read(path))
    assert [texts(i["source_tokens"]) for i in instances] == [["a", "b", "@end@"], ["f", "@end@"]]
    assert [texts(i["target_tokens"]) for i in instances] == [["@start@", "x", "y"], ["@start@", "z"]]


def test_seq2seq_reader_reads_quoted_csv_with_the_delimiter_inside_a_field(tmp_path):
    path = tmp_path / "pairs.csv"
    with path.open("w", newline="") as out:
        csv.writer(out, quoting=csv.QUOTE_ALL).writerows([["one, two", "three"], ["four", "five six"]])
    reader = Seq2SeqDatasetReader(source_tokenizer=_spaces(), delimiter=",", start_symbol="<s>",
                                  end_symbol="</s>")
    instances = list(reader.read(path))
    assert [texts(i["source_tokens"]) for i in instances] == [["<s>", "one,", "two", "</s>"], ["<s>", "four", "</s>"]]
    assert texts(instances[1]["target_tokens"]) == ["<s>", "five", "six", "</s>"]


def test_seq2seq_reader_names_the_file_and_line_of_a_row_without_two_fields(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("a\tb\nno tab here\n")
    with pytest.raises(DataError) as raised:
        list(Seq2SeqDatasetReader(source_tokenizer=_spaces()).read(path))
    assert str(raised.value) == f"{path}:2: expected a source and a target separated by '\\t', got 1 field(s)"


def test_seq2seq_reader_is_refused_a_quoting_the_csv_module_lacks(tmp_path):
    (tmp_path / "d.tsv").write_text("a\tb\n")
    config = {"dataset_reader": {"type": "seq2seq", "quoting": 7}, "train_data_path": "d.tsv",
              "model": {"type": "simple_seq2seq", "encoder": {"type": "lstm", "input_size": 4, "hidden_size": 4},
                        "source_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 4}}}},
              "trainer": {"num_epochs": 1, "optimizer": {"type": "adam"}}}
    checked = run_cli("check", str(write_config(tmp_path / "c.json", config)), cwd=tmp_path)
    assert checked.returncode == 2 and "dataset_reader.quoting: must be one of the csv module's constants" in \
        checked.stderr, checked.stderr


def test_copynet_reader_numbers_tokens_by_first_appearance_across_source_and_target(tmp_path):
    path = tmp_path / "copy.tsv"
    path.write_text("copy the words\tthe words @@copied@@\n")
    instance = next(iter(CopyNetDatasetReader("target_tokens", source_tokenizer=_spaces()).read(path)))
    assert texts(instance["source_tokens"]) == ["copy", "the", "words"]
    assert texts(instance["target_tokens"]) == ["@start@", "the", "words", "@@copied@@", "@end@"]
    assert instance["source_token_ids"].ids.tolist() == [0, 1, 2]
    assert instance["target_token_ids"].ids.tolist() == [3, 1, 2, 4, 5]
    assert instance["metadata"].value == {"source_tokens": ["copy", "the", "words"],
                                          "target_tokens": ["the", "words", "@@copied@@"]}
    assert first_appearance_ids(["a", "b", "a", "c", "b"]) == [0, 1, 0, 2, 1]


def test_copynet_reader_counts_no_source_word_into_the_target_vocabulary(tmp_path):
    from distrain.data.vocabulary import Vocabulary

    path = tmp_path / "copy.tsv"
    path.write_text("alpha beta\tbeta\n")
    instances = list(CopyNetDatasetReader("target_tokens", source_tokenizer=_spaces()).read(path))
    vocab = Vocabulary.from_instances(instances)
    assert "alpha" not in vocab.tokens("target_tokens") and "beta" in vocab.tokens("target_tokens")
    source_to_target = instances[0]["source_to_target"].index(vocab).tolist()
    assert source_to_target == [vocab.get_token_index("@@UNKNOWN@@", "target_tokens"),
                                vocab.get_token_index("beta", "target_tokens")]


def _spaces():
    from distrain.data.tokenizers.just_spaces import WhitespaceTokenizer

    return WhitespaceTokenizer()


def test_pos_tag_indexer_indexes_fine_or_coarse_tags_and_none_for_a_token_without_one():
    from collections import Counter

    from distrain.data.token_indexers.pos_tag import PosTagIndexer
    from distrain.data.tokenizer import Token
    from distrain.data.vocabulary import Vocabulary

    tokens = [Token("@start@"), Token("dogs", pos_="NOUN", tag_="NNS"), Token("run", pos_="VERB", tag_="VBP")]
    for coarse, wanted in ((False, ["NONE", "NNS", "VBP"]), (True, ["NONE", "NOUN", "VERB"])):
        indexer = PosTagIndexer(coarse_tags=coarse)
        counters: dict[str, Counter] = {}
        for token in tokens:
            indexer.count_vocab_items(token, counters)
        assert sorted(counters["pos_tokens"]) == sorted(wanted)
        vocab = Vocabulary({"pos_tokens": ["@@PADDING@@", "@@UNKNOWN@@", *wanted]})
        ids = indexer.tokens_to_indices(tokens, vocab)["tokens"].values.tolist()
        assert [vocab.token(index, "pos_tokens") for index in ids] == wanted


def test_training_on_a_copynet_line_without_a_tab_exits_2_with_one_line_naming_it(tmp_path):
    from distrain.config.loading import load_config

    config = load_config(GENERATION / "copynet" / "experiment.json")
    bad = tmp_path / "bad.tsv"
    bad.write_text((GENERATION / "copynet" / "data" / "copyover.tsv").read_text() + "a source and no target\n")
    config["train_data_path"] = config["validation_data_path"] = str(bad)
    trained = run_cli("train", str(write_config(tmp_path / "bad.json", config)), "-s", str(tmp_path / "run"),
                      cwd=ALLENNLP_MODELS)
    assert trained.returncode == 2, trained.stderr
    errors = [line for line in trained.stderr.splitlines() if line.startswith("error")]
    assert errors == [f"error: {bad}:3: expected a source and a target separated by a tab, got 1 field(s)"], \
        trained.stderr
    assert "Traceback" not in trained.stderr and not (tmp_path / "run").exists()
