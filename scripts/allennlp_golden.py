"""Write the golden files the suite compares distrain with: archives trained by the real AllenNLP, its outputs on
the fixture data and its ``evaluate`` metrics. Run with the oracle's Python, never distrain's:

    bash ../shared/allennlp-oracle/setup.sh /tmp/oracle     # AllenNLP + allennlp-models 2.10.1, torch 1.12.1
    /tmp/oracle/bin/python scripts/allennlp_golden.py       # rewrites tests/allennlp_golden/ (and one fixture)
    /tmp/oracle/bin/python scripts/allennlp_golden.py esim  # rewrites that case alone (any number of cases)

Each case trains an unchanged fixture config of AllenNLP or allennlp-models (their ``test_fixtures``, read where
tests/support/allennlp_fixtures.py finds them: ``../shared/allennlp-fixtures``) from a copy of that repository's
folder, with the project's own files laid over it (``tests/allennlp_overlay``), as AllenNLP's own tests do, then writes
``tests/allennlp_golden/CASE/``: ``model.tar.gz`` (the archive as AllenNLP wrote it), ``outputs.json`` (the model's
outputs on each validation instance, one instance at a time, so no padding) and ``metrics.json`` (``evaluate`` on the
validation data). ``MADE_BY.json`` records, for each case, its repository, config and overrides, the command that
wrote it (the case alone) and the versions it ran on; a case written alone leaves the others' records as they are.

The ``bidirectional_lm_token_embedder`` case reads a transformer language model archive where its config expects one,
``test_fixtures/lm/language_model/model.tar.gz``, which the provided fixtures lack: before that case, the oracle trains
``test_fixtures/lm/language_model/experiment_transformer.jsonnet`` (the fixture config of that very model) and writes
its archive there, in the overlay.

AllenNLP's default tokenizer is spaCy's ``en_core_web_sm``; no spaCy model package can be installed here, so the spaCy
model is ``spacy.blank("en")`` (the same tokenization rules, without tagger or parser), as distrain's ``spacy``
tokenizer does when only tokens are asked for.
"""

from __future__ import annotations

import importlib.metadata
import json
import platform
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from support.allennlp_fixtures import OVERLAY, copy_repository  # noqa: E402 - the one place naming the fixtures

#: the transformer language model the lm token embedder's fixture config loads (see the docstring)
LM_CONFIG = "test_fixtures/lm/language_model/experiment_transformer.jsonnet"
LM_ARCHIVE = OVERLAY / "allennlp-models" / "test_fixtures" / "lm" / "language_model" / "model.tar.gz"
GOLDEN = ROOT / "tests" / "allennlp_golden"
#: sentences that differ in their first and last words (the overlay's), the language-model heads' validation data
VARIED = "test_fixtures/lm/next_token_lm/varied_sentences.txt"

#: NAQANet's fixture trained longer (its 2 epochs of one batch barely move the model: distrain's run of them answers
#: every question with the same count): 10 epochs of batches of 2 at a larger rate, so that answers differ
NAQANET_LONGER = {"trainer.num_epochs": 10, "trainer.optimizer.lr": 0.01, "data_loader.batch_size": 2}
#: case -> (repository folder, config, the outputs kept per instance, evaluate batch size, overrides)
CASES = {
    "basic_classifier_seq2seq": ("allennlp", "test_fixtures/basic_classifier/experiment_seq2seq.jsonnet",
                                 ["logits", "probs"], 5, {}),
    "basic_classifier_seq2vec": ("allennlp", "test_fixtures/basic_classifier/experiment_seq2vec.jsonnet",
                                 ["logits", "probs"], 5, {}),
    # fine-tunes the seq2seq case's archive (written where the config expects it before this case runs)
    "basic_classifier_from_archive": ("allennlp", "test_fixtures/basic_classifier/experiment_from_archive.jsonnet",
                                      ["logits", "probs"], 5, {}),
    "simple_tagger": ("allennlp", "test_fixtures/simple_tagger/experiment.json", ["logits", "class_probabilities"], 80, {}),
    "simple_tagger_span_f1": ("allennlp", "test_fixtures/simple_tagger_with_span_f1/experiment.json",
                              ["logits", "class_probabilities"], 80, {}),
    # the fixture's GRUs (300 and 80 wide) make a 9.6 MB archive: narrower ones keep the golden file small
    "crf_tagger": ("allennlp-models", "test_fixtures/tagging/crf_tagger/experiment.json", ["logits", "tags"], 32,
                   {"model.encoder.hidden_size": 12, "model.encoder.input_size": 66,
                    "model.text_field_embedder.token_embedders.token_characters.encoder.hidden_size": 8}),
    "transformer_qa": ("allennlp-models", "test_fixtures/rc/transformer_qa/experiment.jsonnet",
                       ["span_start_logits", "span_end_logits", "best_span_scores", "best_span", "best_span_str"], 3,
                       {}),
    # 12 epochs instead of 1: after 1 (and up to 6) every pair gets the same label
    "decomposable_attention": ("allennlp-models", "test_fixtures/pair_classification/decomposable_attention/experiment.json",
                               ["label_logits", "label_probs", "h2p_attention", "p2h_attention"], 3,
                               {"trainer.num_epochs": 12}),
    # 3 epochs instead of 5: at 5 the three pairs (train and validation data alike) are all right, accuracy 1
    "esim": ("allennlp-models", "test_fixtures/pair_classification/esim/experiment.json",
             ["label_logits", "label_probs"], 3, {"trainer.num_epochs": 3}),
    # the fixture's 200- and 100-wide LSTMs make a 10 MB archive: narrower ones (the matchers' widths follow); its
    # Adam at 0.001 gets the three pairs (train and validation data alike) all right in the first epoch, under any
    # seed tried: one epoch at 1e-5 from pytorch seed 1 answers them differently, one of them right
    "bimpm": ("allennlp-models", "test_fixtures/pair_classification/bimpm/experiment.json",
              ["logits", "label_probs"], 3,
              {"trainer.optimizer.lr": 1e-5, "trainer.num_epochs": 1, "pytorch_seed": 1,
               "model.text_field_embedder.token_embedders.token_characters.encoder.hidden_size": 10,
               "model.matcher_word.hidden_dim": 320, "model.encoder1.input_size": 320,
               "model.encoder1.hidden_size": 16, "model.matcher_forward1.hidden_dim": 16,
               "model.matcher_backward1.hidden_dim": 16, "model.encoder2.input_size": 32,
               "model.encoder2.hidden_size": 16, "model.matcher_forward2.hidden_dim": 16,
               "model.matcher_backward2.hidden_dim": 16, "model.aggregator.hidden_size": 12,
               "model.classifier_feedforward.input_dim": 48, "model.classifier_feedforward.hidden_dims": [20, 2]}),
    # the fixture's Adadelta at 1e-6 for one epoch gives every sentence the same class: a usual rate (1.0) for 100
    # epochs (at 10 or 30 every sentence still gets the most frequent class)
    "bcn": ("allennlp-models", "test_fixtures/classification/biattentive_classification_network/experiment.json",
            ["logits", "class_probabilities"], 80, {"trainer.optimizer.lr": 1.0, "trainer.num_epochs": 100}),
    "bidaf": ("allennlp-models", "test_fixtures/rc/bidaf/experiment.json",
              ["span_start_logits", "span_end_logits", "best_span", "best_span_str"], 5, {}),
    "qanet": ("allennlp-models", "test_fixtures/rc/qanet/experiment.json",
              ["span_start_logits", "span_end_logits", "best_span", "best_span_str"], 5, {}),
    # NAQANet returns no scores: its heads' outputs (a "_name" key) are kept beside its loss and answers; evaluate in
    # one batch, where AllenNLP's loss (the batches' mean) is distrain's (the questions' mean)
    **{name: ("allennlp-models", "test_fixtures/rc/naqanet/experiment.json", [
        "loss", "question_id", "answer", "_answer_ability_predictor", "_passage_span_start_predictor",
        "_passage_span_end_predictor", "_question_span_start_predictor", "_question_span_end_predictor",
        "_number_sign_predictor", "_count_number_predictor"], 32, overrides)
       # all four abilities: after 10 epochs at 0.01 every question is answered with the same count; at 0.02 (30
       # epochs, which the fixture's patience of 10 cuts to 11) the "who" questions get a passage span
       for name, overrides in (("naqanet", {**NAQANET_LONGER, "trainer.num_epochs": 30, "trainer.optimizer.lr": 0.02}),
                               # one ability: no ability predictor, the passage span's marginal is the loss
                               ("naqanet_passage_span", {**NAQANET_LONGER,
                                                         "model.answering_abilities": ["passage_span_extraction"]}),
                               ("naqanet_numbers", {**NAQANET_LONGER, "model.answering_abilities": [
                                   "addition_subtraction", "counting"]}))},
    # bert-base-uncased cannot be downloaded: the fixture's tiny BERT (allennlp-models' own) stands for it; a
    # larger learning rate and a short warmup move its choices' logits apart (at 1e-5 they differ by 1e-6)
    "transformer_mc": ("allennlp-models", "test_fixtures/mc/transformer_mc/experiment.jsonnet",
                       ["logits", "best_alternative"], 10,  # one batch: AllenNLP's loss, the batches' mean, is then
                       # the instances' mean, distrain's
                       {"dataset_reader.transformer_model_name": "test_fixtures/bert-xsmall-dummy",
                        "model.transformer_model": "test_fixtures/bert-xsmall-dummy",
                        "trainer.optimizer.lr": 0.01, "trainer.learning_rate_scheduler.warmup_steps": 2}),
    # the unsampled fixture: a sampled softmax draws from numpy's global generator, so only the full one is
    # deterministic; one evaluate batch, where AllenNLP's perplexity (of the batches' mean loss) is distrain's
    "language_model": ("allennlp-models", "test_fixtures/lm/language_model/experiment_unsampled.jsonnet",
                       ["loss", "forward_loss", "backward_loss", "lm_embeddings", "noncontextual_token_embeddings"],
                       32, {}),
    # dialog_qa returns no logits: its span predictors' outputs (a "_name" key: the submodule's output) are kept (the
    # yes/no and follow-up logits, 3 a token, would make the file 1.5 MB: the loss and the predictions stand for them)
    "dialog_qa": ("allennlp-models", "test_fixtures/rc/dialog_qa/experiment.json",
                  ["_span_start_predictor", "_span_end_predictor", "loss", "best_span_str", "qid", "yesno",
                   "followup"], 3, {}),
    # bias mitigation (linear's neighbour, hard + paired_pca) on the fixture's tiny BERT; the seed and equalize
    # word pairs are local copies of debiaswe's (the config's URLs, at the commit they name)
    "bias_mitigation": ("allennlp-models", "test_fixtures/pair_classification/bias_mitigation/experiment.json",
                        ["logits", "probs"], 5, {
                            **{key: "test_fixtures/bert-xsmall-dummy" for key in (
                                "dataset_reader.tokenizer.model_name",
                                "dataset_reader.token_indexers.tokens.model_name",
                                "model.base_model.text_field_embedder.token_embedders.tokens.model_name",
                                "model.bias_mitigator.bias_direction.tokenizer.model_name",
                                "model.bias_mitigator.tokenizer.model_name")},
                            "model.bias_mitigator.bias_direction.seed_word_pairs_file":
                                "test_fixtures/pair_classification/bias_mitigation/debiaswe/definitional_pairs.json",
                            "model.bias_mitigator.equalize_word_pairs_file":
                                "test_fixtures/pair_classification/bias_mitigation/debiaswe/equalize_pairs.json"}),
    # the adversarial mitigator (a two_means direction, a feed-forward adversary, AllenNLP's backward callback and
    # multi optimizer) on the same tiny BERT and local seed pairs; evaluate reports the predictor's loss and accuracy
    "adversarial_bias_mitigation": (
        "allennlp-models", "test_fixtures/pair_classification/bias_mitigation/adversarial_experiment.json",
        ["logits", "probs"], 5, {
            **{key: "test_fixtures/bert-xsmall-dummy" for key in (
                "dataset_reader.tokenizer.model_name", "dataset_reader.token_indexers.tokens.model_name",
                "model.predictor.text_field_embedder.token_embedders.tokens.model_name",
                "model.bias_direction.tokenizer.model_name")},
            "model.bias_direction.seed_word_pairs_file":
                "test_fixtures/pair_classification/bias_mitigation/debiaswe/definitional_pairs.json"}),
    # the parser's arc and label scores are not among its outputs: its arc_attention's and tag_bilinear's are kept
    # (the label scores of the loss's call: at the gold heads); the second case decodes greedily, not by MST
    **{name: ("allennlp-models", "test_fixtures/structured_prediction/biaffine_dependency_parser/experiment.json",
              ["predicted_heads", "predicted_dependencies", "arc_loss", "tag_loss", "loss", "_arc_attention",
               "_tag_bilinear"], 5, overrides)
       for name, overrides in (("biaffine_parser", {}),
                               ("biaffine_parser_greedy", {"model.use_mst_decoding_for_validation": False}))},
    "graph_parser": ("allennlp-models", "test_fixtures/structured_prediction/semantic_dependencies/experiment.json",
                     ["arcs", "arc_tags", "arc_loss", "tag_loss", "loss", "arc_probs", "arc_tag_probs"], 5, {}),
    # the fixture's lr (1e-6) leaves every span wrong: a usual Adadelta rate, more epochs and batches of 2 make some
    # right, so the span scores compared are not all zero
    "srl": ("allennlp-models", "test_fixtures/structured_prediction/srl/experiment.json",
            ["logits", "class_probabilities", "tags", "words", "verb"], 80,
            {"trainer.optimizer.lr": 1.0, "trainer.num_epochs": 40, "data_loader.batch_sampler.batch_size": 2}),
    # epwalsh/bert-xsmall-dummy cannot be downloaded: the same tiny BERT, allennlp-models' local copy; one evaluate
    # batch, where AllenNLP's loss (the batches' mean) is distrain's (the predicates' mean)
    "srl_bert": ("allennlp-models", "test_fixtures/structured_prediction/srl/bert_srl.jsonnet",
                 ["logits", "class_probabilities", "tags", "wordpiece_tags", "words", "verb"], 10,
                 {"dataset_reader.bert_model_name": "test_fixtures/bert-xsmall-dummy",
                  "model.bert_model": "test_fixtures/bert-xsmall-dummy"}),
    # the fixture's lr (1e-6) leaves the model at its start, and its 2-wide embeddings label no span but the whole
    # sentence: a usual Adadelta rate, more epochs, batches of 1 and 16-wide layers train it to label inner spans, so
    # its trees are telling; the span logits are the tag_projection_layer's
    "constituency_parser": ("allennlp-models", "test_fixtures/structured_prediction/constituency_parser/experiment.json",
                            ["class_probabilities", "spans", "num_spans", "trees", "_tag_projection_layer"], 5,
                            {"trainer.optimizer.lr": 1.0, "trainer.num_epochs": 300,
                             "data_loader.batch_sampler.batch_size": 1,
                             "model.text_field_embedder.token_embedders.tokens.embedding_dim": 16,
                             "model.encoder.input_size": 16, "model.encoder.hidden_size": 16,
                             "model.encoder.bidirectional": True, "model.feedforward.input_dim": 64,
                             "model.feedforward.hidden_dims": 16, "model.span_extractor.input_dim": 32}),
    # at the fixture's 0.4 spans per word its random 10-wide embeddings keep next to no gold mention and link none right
    # (longer training prunes them all): one span per word keeps some, and some links are right, so the CoNLL scores
    # compared are not all zero; the scores are its scorers' outputs (mention scores of every span, pair scores of the
    # kept spans' candidates); evaluate in batches of one document, where AllenNLP's summed loss is distrain's mean
    "coref": ("allennlp-models", "test_fixtures/coref/experiment.json",
              ["top_spans", "antecedent_indices", "predicted_antecedents", "clusters", "loss", "_mention_scorer",
               "_antecedent_scorer"], 1, {"model.spans_per_word": 1.0}),
    # the same with the spanbert config's coarse-to-fine antecedents and second-order span updates
    "coref_coarse_to_fine": ("allennlp-models", "test_fixtures/coref/experiment.json",
                             ["top_spans", "antecedent_indices", "predicted_antecedents", "clusters", "loss",
                              "_mention_scorer", "_antecedent_scorer"], 1,
                             {"model.spans_per_word": 1.0, "model.coarse_to_fine": True, "model.inference_order": 2}),
    # sshleifer/bart-tiny-random cannot be downloaded: a tiny random BART made here (tests/allennlp_oracle/make_tiny_bart.py) stands
    # for it; the outputs are the beam search's best sequence, its summed log-probability and its text. The random
    # model never ends a summary: 20 beam steps instead of 140 (the rest would repeat its last token) keep the
    # suite's decoding of the 10 stories within its time
    "bart": ("allennlp-models", "test_fixtures/generation/bart/experiment.jsonnet",
             ["predictions", "log_probabilities", "predicted_text"], 10,
             {**{key: "test_fixtures/generation/bart-tiny-random" for key in (
                 "dataset_reader.source_tokenizer.model_name", "dataset_reader.source_token_indexers.tokens.model_name",
                 "model.model_name")}, "model.beam_search.max_steps": 20}),
    # t5-tiny-random stands for patrickvonplaten/t5-tiny-random (tests/allennlp_oracle/make_tiny_t5.py); AllenNLP's default beam
    # (3 wide, 50 steps) cut to 20 steps as for bart
    "t5": ("allennlp-models", "test_fixtures/generation/t5/experiment.jsonnet",
           ["predictions", "predicted_log_probs", "predicted_text"], 10,
           {**{key: "test_fixtures/generation/t5-tiny-random" for key in (
               "dataset_reader.source_tokenizer.model_name", "dataset_reader.source_token_indexers.tokens.model_name",
               "model.model_name")}, "model.beam_search": {"beam_size": 3, "max_steps": 20}}),
    # simple_seq2seq's fixture with spaCy's tagger, parser and recogniser off (the blank pipeline has none: their
    # features are empty strings either way, and distrain refuses to ask for them without en_core_web_sm); 100
    # epochs instead of 2, so the decoded sentences are not all empty and differ; the outputs are every beam of
    # its beam search (5 wide, 20 steps), their summed log-probabilities and tokens
    "simple_seq2seq": ("allennlp-models", "test_fixtures/generation/simple/experiment.json",
                       ["predictions", "class_log_probabilities", "predicted_tokens"], 3,
                       {"trainer.num_epochs": 100, **{f"dataset_reader.source_tokenizer.{key}": False
                                                      for key in ("pos_tags", "parse", "ner")}}),
    # composed_seq2seq's lstm_cell fixture, changed as simple_seq2seq's; its decoder keeps the best beam's tokens
    "composed_seq2seq": ("allennlp-models", "test_fixtures/generation/composed/experiment.json",
                         ["predictions", "class_log_probabilities", "predicted_tokens"], 3,
                         {"trainer.num_epochs": 100, **{f"dataset_reader.source_tokenizer.{key}": False
                                                        for key in ("pos_tags", "parse", "ner")}}),
    # composed_seq2seq's transformer fixture (a stacked self-attention encoder and decoder, tied embeddings, label
    # smoothing), changed as the others and where AllenNLP 2.10.1 cannot run it: its pos_tag indexer (AllenNLP 0.9's)
    # is a single_id of the same tags, and 10 beam steps instead of 120 keep the decoding short; 150 epochs without
    # early stopping still decode the same beams for the three sentences, whose scores differ (by ~0.01)
    "composed_seq2seq_transformer": (
        "allennlp-models", "test_fixtures/generation/composed/experiment_transformer.json",
        ["predictions", "class_log_probabilities", "predicted_tokens"], 3,
        {"trainer.num_epochs": 150, "trainer.patience": None, "model.decoder.beam_search.max_steps": 10,
         "dataset_reader.source_token_indexers.pos_tags": {"type": "single_id", "feature_name": "tag_",
                                                           "default_value": "NONE", "namespace": "pos"},
         **{f"dataset_reader.source_tokenizer.{key}": False for key in ("pos_tags", "parse", "ner")}}),
    # copynet_seq2seq's fixture, 50 epochs instead of 2 so that it copies; the beams run over the extended
    # vocabulary (a copied source position is an id past the target vocabulary)
    "copynet_seq2seq": ("allennlp-models", "test_fixtures/generation/copynet/experiment.json",
                        ["predictions", "predicted_log_probs", "predicted_tokens"], 2, {"trainer.num_epochs": 50}),
    # the same over the fixture's tiny BERT (frozen); its learning rate (5e-5) and 2 epochs leave every beam the
    # same string of [UNK]s: 30 epochs at 0.01 make the two sentences' beams differ
    "copynet_seq2seq_transformer": ("allennlp-models", "test_fixtures/generation/copynet/experiment_transformer.jsonnet",
                                    ["predictions", "predicted_log_probs", "predicted_tokens"], 2,
                                    {"trainer.optimizer.lr": 0.01, "trainer.num_epochs": 30}),
    # allennlp-models' next-token and masked LMs: 40 epochs at a larger rate instead of 1 at 0.01 on the fixtures'
    # data, so the heads are trained, not their start; validated on four sentences of the project's (the fixture's two
    # share their first and their last word, which is all the linear heads see); the human-readable outputs are kept
    "next_token_lm": ("allennlp-models", "test_fixtures/lm/next_token_lm/experiment.json",
                      ["probabilities", "top_indices", "token_ids", "loss", "top_tokens", "tokens"], 2,
                      {"trainer.num_epochs": 40, "trainer.optimizer.lr": 0.5, "validation_data_path": VARIED}),
    # the same over the fixture's tiny BERT, its BERT head and a beam search of 2 beams over 5 steps; the fixture's
    # target namespace, "tokens", is empty (the word pieces' ids are in "tags", where the transformer's indexer puts
    # its vocabulary), so AllenNLP's make_output_human_readable fails there: "tags" gives the ids their word pieces
    "next_token_lm_transformer": ("allennlp-models", "test_fixtures/lm/next_token_lm/experiment_transformer.json",
                                  ["probabilities", "top_indices", "token_ids", "loss", "top_tokens", "tokens"], 2,
                                  {"trainer.num_epochs": 10, "trainer.optimizer.lr": 0.05,
                                   "model.target_namespace": "tags", "validation_data_path": VARIED}),
    "masked_language_model": ("allennlp-models", "test_fixtures/lm/masked_language_model/experiment.json",
                              ["probabilities", "top_indices", "token_ids", "loss", "words", "tokens"], 2,
                              {"trainer.num_epochs": 40, "trainer.optimizer.lr": 0.5, "validation_data_path": VARIED}),
    # a crf_tagger whose ELMo-like embedder mixes the layers of a transformer LM archive (made by make_lm_archive, read
    # from test_fixtures/lm/language_model/ when the tagger's archive is loaded)
    "bidirectional_lm_token_embedder": (
        "allennlp-models", "test_fixtures/lm/language_model/bidirectional_lm_characters_token_embedder.jsonnet",
        ["logits", "tags"], 32, {}),
}


def _blank_spacy() -> None:
    """AllenNLP's spaCy loader, given the blank English pipeline (no model package can be installed here)."""
    import spacy
    from allennlp.common import util

    def get_spacy_model(name: str, pos_tags: bool = True, parse: bool = False, ner: bool = False):
        return spacy.blank(name[:2])

    util.get_spacy_model = get_spacy_model
    import allennlp.data.tokenizers.spacy_tokenizer as spacy_tokenizer
    spacy_tokenizer.get_spacy_model = get_spacy_model


def _as_json(value):
    import numpy
    import torch
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, numpy.ndarray):
        return value.tolist()
    if isinstance(value, (numpy.floating, numpy.integer)):
        return value.item()
    if hasattr(value, "pformat"):  # an nltk tree: its bracketed form on one line, as AllenNLP gave EVALB
        return value.pformat(margin=1000000)
    if isinstance(value, (list, tuple)):
        return [_as_json(item) for item in value]
    if isinstance(value, dict):  # NAQANet's answers
        return {key: _as_json(item) for key, item in value.items()}
    return value


def make_lm_archive() -> None:
    """Train the fixture's transformer language model (:data:`LM_CONFIG`) and write its archive to :data:`LM_ARCHIVE`."""
    import allennlp_models.lm  # noqa: F401 - registers simple_language_modeling and language_model
    from allennlp.commands.train import train_model_from_file

    with tempfile.TemporaryDirectory() as scratch:
        workdir = copy_repository("allennlp-models", Path(scratch) / "allennlp-models")
        previous = Path.cwd()
        import os
        os.chdir(workdir)
        try:
            train_model_from_file(LM_CONFIG, str(Path(scratch) / "run"))
        finally:
            os.chdir(previous)
        LM_ARCHIVE.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(scratch) / "run" / "model.tar.gz", LM_ARCHIVE)


def make_case(name: str, repository: str, config: str, keys: list[str], batch_size: int, overrides: dict) -> dict:
    import allennlp_models.pair_classification  # noqa: F401 - registers snli, decomposable_attention, esim, bimpm
    import allennlp_models.classification  # noqa: F401 - registers bcn
    import allennlp_models.rc  # noqa: F401 - registers transformer_squad and transformer_qa
    import allennlp_models.tagging  # noqa: F401 - registers crf_tagger
    import allennlp_models.mc.dataset_readers  # noqa: F401 - registers piqa, swag and commonsenseqa
    import allennlp_models.mc.models  # noqa: F401 - registers transformer_mc
    import allennlp_models.lm  # noqa: F401 - registers simple_language_modeling and language_model
    import allennlp.fairness  # noqa: F401 - registers bias_mitigator_applicator, its mitigators and directions
    import allennlp_models.structured_prediction  # noqa: F401 - registers the parsers, srl, srl_bert and their readers
    import allennlp_models.coref  # noqa: F401 - registers coref, its reader and its metrics
    import allennlp_models.generation  # noqa: F401 - registers cnn_dm, seq2seq, bart, t5 and the seq2seq models
    from allennlp.commands.train import train_model_from_file
    from allennlp.data.data_loaders import MultiProcessDataLoader
    from allennlp.models.archival import load_archive
    from allennlp.training.util import evaluate
    import torch

    out = GOLDEN / name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch) / repository
        copy_repository(repository, workdir)
        previous = Path.cwd()
        import os
        os.chdir(workdir)
        os.environ["NLTK_DATA"] = str(workdir)  # nltk (the ptb_trees reader) reads only under its data folders
        try:
            train_model_from_file(config, str(Path(scratch) / "run"), overrides=json.dumps(overrides))
            shutil.copy(Path(scratch) / "run" / "model.tar.gz", out / "model.tar.gz")
            archive = load_archive(str(out / "model.tar.gz"))
            model = archive.model
            model.eval()
            reader = archive.validation_dataset_reader
            data_path = archive.config["validation_data_path"]
            instances = list(reader.read(data_path))
            outputs = []
            captured = {}  # a "_name" key: what the model's submodule of that name gave
            for key in keys:  # "_name": the submodule ``_name``, or ``name`` where the model names it so
                module = getattr(model, key, None) if hasattr(model, key) else getattr(model, key[1:], None)
                if key.startswith("_") and isinstance(module, torch.nn.Module):
                    module.register_forward_hook(
                        lambda module, inputs, output, key=key: captured.__setitem__(key, output.squeeze(-1)))
            for instance in instances:
                produced = model.forward_on_instance(instance)
                produced = {**produced, **captured}
                outputs.append({key: _as_json(produced[key]) for key in keys if key in produced})
            model.get_metrics(reset=True)  # evaluate does not reset: the outputs above would count (a mean loss)
            loader = MultiProcessDataLoader(reader, data_path, batch_size=batch_size)
            loader.index_with(model.vocab)
            metrics = evaluate(model, loader, cuda_device=-1)
        finally:
            os.chdir(previous)
    (out / "outputs.json").write_text(json.dumps(outputs, indent=1) + "\n")
    (out / "metrics.json").write_text(json.dumps(_as_json(metrics), indent=1, sort_keys=True) + "\n")
    return {"repository": repository, "config": config, "overrides": overrides, "evaluate_batch_size": batch_size,
            "instances": len(instances), "outputs": keys}


COMMAND = "/tmp/oracle/bin/python scripts/allennlp_golden.py"
ORACLE = "oracle: bash ../shared/allennlp-oracle/setup.sh /tmp/oracle"
SPACY = "spacy.blank('en') stands for en_core_web_sm (no spaCy model package is installable here)"


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     epilog="Run with the oracle's Python (AllenNLP 2.10.1); there is no quick mode.")
    parser.add_argument("cases", nargs="*", choices=[[], *CASES], metavar="CASE",
                        help=f"cases to write (default: all): {', '.join(CASES)}")
    wanted = parser.parse_args().cases or list(CASES)
    import allennlp
    import allennlp_models
    import torch

    _blank_spacy()
    versions = {"allennlp": allennlp.__version__, "allennlp_models": importlib.metadata.version("allennlp-models"),
                "torch": torch.__version__, "python": platform.python_version()}
    record_path = GOLDEN / "MADE_BY.json"
    for name in wanted:
        if name == "bidirectional_lm_token_embedder":
            make_lm_archive()
            print(f"the transformer LM archive: written to {LM_ARCHIVE}")
        made = make_case(name, *CASES[name])
        # each case's own command (the case alone) and versions, so a case rerun alone says how it was made
        made.update({"command": f"{COMMAND} {name}", "versions": versions})
        record = json.loads(record_path.read_text()) if record_path.exists() else {}
        record.update({"command": f"{COMMAND}  ({ORACLE})", "versions": versions, "spacy": SPACY})
        record.setdefault("cases", {})[name] = made
        record_path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")  # after each case: a later
        # case's failure keeps the records of the cases written before it
        print(f"{name}: written to {GOLDEN / name}")


if __name__ == "__main__":
    main()
