"""allennlp-models' language models with a head (``next_token_lm`` and ``masked_language_model``, their readers
``next_token_lm`` and ``masked_language_modeling``, the ``linear`` and ``bert`` heads, the ``transformer`` beam
search generator) in distrain.

The three fixture experiments (``lm/next_token_lm/experiment.json``, ``experiment_transformer.json`` and
``lm/masked_language_model/experiment.json``) pass ``distrain check`` and train an epoch from the repository's folder
as they are. Archives the real AllenNLP 2.10.1 trained on them (tests/allennlp_golden/CASE, scripts/allennlp_golden.py)
give AllenNLP's outputs here; their ``evaluate`` metrics are tests/allennlp/test_allennlp_archives.py's (every golden
case) and their predictors' answers tests/allennlp/test_allennlp_predictors.py's (every case of predictors.json).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from support.allennlp import plain_sgd_on
from support.allennlp_fixtures import ALLENNLP_MODELS, needs_fixtures
from support.cli import run_cli
from support.configs import write_config
from support.distributed import final_metrics, max_weight_difference

pytestmark = needs_fixtures

LM = "test_fixtures/lm"
CONFIGS = [f"{LM}/next_token_lm/experiment.json", f"{LM}/next_token_lm/experiment_transformer.json",
           f"{LM}/masked_language_model/experiment.json"]


@pytest.mark.parametrize("config", CONFIGS)
def test_the_lm_head_fixture_experiment_checks_and_trains_an_epoch(config, tmp_path):
    checked = run_cli("check", config, cwd=ALLENNLP_MODELS)
    assert checked.returncode == 0, checked.stderr
    run = tmp_path / "run"
    trained = run_cli("train", config, "-s", str(run), cwd=ALLENNLP_MODELS)
    assert trained.returncode == 0, trained.stderr
    metrics = final_metrics(run)
    assert metrics["epoch"] == 0 and metrics["validation_loss"] > 0
    assert metrics["validation_perplexity"] == pytest.approx(np.exp(metrics["validation_loss"]), rel=1e-6)


#: golden case -> the key of its readable predicted words
ARCHIVES = {"next_token_lm": "top_tokens", "next_token_lm_transformer": "top_tokens",
            "masked_language_model": "words"}


@pytest.mark.parametrize("case", sorted(ARCHIVES))
def test_allennlps_lm_head_archive_gives_allennlps_outputs(case, monkeypatch):
    """One validation sentence at a time: the best words' probabilities and the loss within 1e-5, their ids (the
    transformer's: each beam's word pieces) and words, and the input's ids and words, as AllenNLP gave them. The
    inputs' outputs differ (the masked LM's head sees the mask's embedding alone: its losses and inputs differ)."""
    import torch

    from support.allennlp import golden_job

    monkeypatch.chdir(ALLENNLP_MODELS)
    job, golden = golden_job(case)
    assert len({json.dumps([theirs["loss"], theirs["tokens"]]) for theirs in golden}) == len(golden)
    if case != "masked_language_model":
        assert np.ptp([theirs["probabilities"][0] for theirs in golden]) > 1e-3
    words = ARCHIVES[case]
    job.model.eval()
    with torch.inference_mode():
        for index, theirs in enumerate(golden):
            mine = job.model(**job.dataset.batch(np.arange(index, index + 1)))
            np.testing.assert_allclose(mine["probabilities"][0].numpy(), theirs["probabilities"], atol=1e-5, rtol=0)
            assert abs(float(mine["loss"]) - theirs["loss"]) < 1e-5
            assert mine["top_indices"][0].tolist() == theirs["top_indices"]
            assert mine["token_ids"][0].tolist() == theirs["token_ids"]
            readable = job.model.make_output_human_readable(mine)
            assert readable[words][0] == theirs[words] and readable["tokens"][0] == theirs["tokens"]


def _fixture(config: str) -> dict:
    from distrain.config.loading import load_config

    return load_config(ALLENNLP_MODELS / config)


@pytest.mark.parametrize("config", CONFIGS)
def test_lm_head_fixture_on_two_workers_ends_within_1e_5_of_one(config, tmp_path):
    """Plain SGD in global batches of 2 over two sentences of one length (AllenNLP's next_token_lm reads a batch's
    last position, padding included, so a batch padded otherwise would read other positions), the tiny BERT's dropout
    off (``eval_mode``: each worker would draw its own masks): 1 and 2 CPU workers end with the same weights, losses
    and perplexities."""
    data = tmp_path / "two.txt"
    same_pieces = "This is the first sentence.\nthat was the end\n"  # 8 word pieces each under the tiny BERT
    data.write_text(same_pieces if "transformer" in config else "This is the first sentence.\nMy cat sleeps all day\n")
    runs = {}
    for workers in (1, 2):
        lr = 0.05 if "transformer" in config else 0.5  # at 0.5 the tiny BERT predicts "the" at once (loss ~5e-4)
        trained_config = plain_sgd_on(_fixture(config), str(data), workers, global_batch=2, lr=lr)
        embedder = trained_config["model"]["text_field_embedder"]["token_embedders"]["tokens"]
        if embedder["type"] == "pretrained_transformer":
            embedder["eval_mode"] = True
        runs[workers] = tmp_path / f"workers_{workers}"
        path = write_config(tmp_path / f"w{workers}.json", trained_config)
        trained = run_cli("train", str(path), "-s", str(runs[workers]), cwd=ALLENNLP_MODELS)
        assert trained.returncode == 0, trained.stderr
    one, two = final_metrics(runs[1]), final_metrics(runs[2])
    assert max_weight_difference(runs[1], runs[2]) < 1e-5
    for name in ("training_loss", "validation_loss"):
        assert abs(one[name] - two[name]) < 1e-5, name
    # exp of the loss: a loss within 1e-5 is a perplexity within a relative 1e-5 (55.66 was 1.3e-5 apart on one CPU)
    assert two["validation_perplexity"] == pytest.approx(one["validation_perplexity"], rel=1e-5, abs=0)


# ------------------------------------------------------------------------------------------- the readers
def _texts(field) -> list[str]:
    return [token if isinstance(token, str) else token.text for token in field.tokens]


def test_next_token_reader_gives_every_line_the_target_the_and_keeps_the_last_max_tokens(tmp_path):
    from distrain.zoo.lm.readers.next_token_lm import NextTokenLMReader

    path = tmp_path / "lines.txt"
    path.write_text("one two three\n\nfour five\n")
    instances = list(NextTokenLMReader(max_tokens=2).read(path))
    assert [_texts(instance["tokens"]) for instance in instances] == [["two", "three"], ["four", "five"]]
    assert [_texts(instance["target_ids"]) for instance in instances] == [["the"], ["the"]]
    assert "target_ids" not in NextTokenLMReader().text_to_instance(sentence="no target")


def test_a_transformer_readers_target_is_its_first_word_piece_without_special_tokens():
    from distrain.data.tokenizers.pretrained_transformer import PretrainedTransformerTokenizer
    from distrain.zoo.lm.readers.masked_language_modeling import MaskedLanguageModelingReader

    bert = str(ALLENNLP_MODELS / "test_fixtures" / "bert-xsmall-dummy")
    tokenizer = PretrainedTransformerTokenizer(bert)
    reader = MaskedLanguageModelingReader(tokenizer=tokenizer)
    instance = reader.text_to_instance(sentence="[MASK] is here", targets=["yet"])
    [target] = instance["target_ids"].tokens
    first_piece = tokenizer.tokenizer("yet", add_special_tokens=False)["input_ids"][0]
    assert target.text == "yet" and target.text_id == first_piece
    assert tokenizer.adds_special_tokens  # the reader's own tokenizer still wraps sentences
    assert [field.sequence_index for field in instance["mask_positions"].field_list] == [1]  # after [CLS]


def test_masked_reader_masks_each_lines_first_word_and_refuses_a_sentence_without_a_mask(tmp_path):
    from distrain.zoo.lm.readers.masked_language_modeling import MaskedLanguageModelingReader

    path = tmp_path / "lines.txt"
    path.write_text("This is one\nThat is two\n")
    reader = MaskedLanguageModelingReader()
    instances = list(reader.read(path))
    assert [_texts(instance["tokens"]) for instance in instances] == [["[MASK]", "is", "one"], ["[MASK]", "is", "two"]]
    assert [_texts(instance["target_ids"]) for instance in instances] == [["This"], ["That"]]
    with pytest.raises(ValueError, match="No \\[MASK\\] tokens found"):
        reader.text_to_instance(sentence="nothing hidden")
    with pytest.raises(ValueError, match="Found 2 mask tokens and 1 targets"):
        reader.text_to_instance(sentence="[MASK] and [MASK]", targets=["a"])


def test_the_transformer_generator_puts_the_prediction_after_each_sentences_last_real_piece():
    import torch

    from distrain.modules.beam_search import BeamSearch
    from distrain.zoo.lm.modules.beam_search_generators.transformer import TransformerBeamSearchGenerator

    generator = TransformerBeamSearchGenerator(BeamSearch(end_index=3), namespace="tokens")
    state = {"token_ids": torch.tensor([[2, 7, 3, 0], [2, 8, 9, 3]]),
             "mask": torch.tensor([[True, True, True, False], [True, True, True, True]]),
             "type_ids": torch.zeros(2, 4, dtype=torch.long)}
    grown = generator.prepare_step_input(torch.tensor([5, 6]), state)["tokens"]
    assert grown["token_ids"].tolist() == [[2, 7, 3, 5, 0], [2, 8, 9, 3, 6]]
    assert grown["mask"].tolist() == [[True, True, True, True, False], [True] * 5]
    assert grown["type_ids"].shape == (2, 5)


def test_a_masked_lm_predictor_input_without_a_mask_is_one_line_naming_the_key(tmp_path):
    from distrain.data.reader import RecordError
    from distrain.zoo.lm.predictors.sentence_input import sentence_instance
    from distrain.zoo.lm.readers.masked_language_modeling import MaskedLanguageModelingReader

    with pytest.raises(RecordError) as raised:
        sentence_instance(MaskedLanguageModelingReader(), "nothing hidden")
    assert str(raised.value) == '"sentence": No [MASK] tokens found!'
    with pytest.raises(RecordError, match='"sentence" must be a string'):
        sentence_instance(MaskedLanguageModelingReader(), 3)


def test_a_generators_beam_search_without_an_end_index_is_one_line_naming_it(tmp_path):
    """No model gives the generator's beam search its end symbol: the config must, and ``check`` says where."""
    config = _fixture(f"{LM}/next_token_lm/experiment_transformer.json")
    del config["model"]["beam_search_generator"]["beam_search"]["end_index"]
    checked = run_cli("check", str(write_config(tmp_path / "no_end.json", config)), cwd=ALLENNLP_MODELS)
    assert checked.returncode == 2, checked.stderr
    errors = [line for line in checked.stderr.splitlines() if line.startswith("error")]
    assert errors == ["error: model.beam_search_generator.beam_search: end_index is required: no model gives this "
                      "beam search its end symbol"], checked.stderr
    assert "Traceback" not in checked.stderr
