"""The house of a framework plus a zoo: task code lives in ``zoo/<task>/``, the framework packages hold only what
any task uses, and the registry's walk reaches every module that registers a component."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

from support.paths import ROOT
from test_import_graph import PACKAGE, import_graph, module_name, package_of

#: what each framework package may hold (files under it, relative). A task's reader, model, module or metric
#: goes to ``zoo/<task>/`` instead; a new generic component is added here, deliberately.
FRAMEWORK = {
    "data": {
        "batch_sampler.py", "batch_samplers/bucket.py", "cache.py", "dataset.py", "dataset_writer.py", "field.py",
        "fields.py", "label_fields.py", "loader.py", "prepare.py", "reader.py", "sampler.py", "streaming.py", "token_indexer.py",
        "sentence_splitter.py", "sentence_splitters/spacy.py",
        "span_tags.py", "tokenizer.py", "vocabulary.py", "vocabulary_files.py",
        # readers of generic formats (AllenNLP's core ones, distrain's prompt and text-block readers, adapters)
        "readers/babi.py", "readers/feature_classification_json.py", "readers/huggingface.py", "readers/interleaving.py", "readers/packed_text.py",
        "readers/prompt_completion_json.py", "readers/prompt_json.py", "readers/sequence_tagging.py",
        "readers/sharded.py", "readers/text_blocks.py", "readers/text_classification_json.py",
        "token_indexers/characters.py", "token_indexers/elmo_characters.py", "token_indexers/pretrained_transformer.py",
        "token_indexers/pretrained_transformer_mismatched.py", "token_indexers/single_id.py",
        "token_indexers/pos_tag.py",
        "tokenizers/character.py", "tokenizers/just_spaces.py", "tokenizers/letters_digits.py",
        "tokenizers/pretrained_transformer.py", "tokenizers/spacy.py", "tokenizers/words_and_punctuation.py",
    },
    # the base, AllenNLP core's two generic models, and distrain's transformer models serving and export build on
    "models": {
        "model.py", "classification.py", "tagging.py", "basic_classifier.py", "feedforward_classifier.py",
        "simple_tagger.py", "causal_language_model.py", "masked_language_model.py", "transformer_classifier.py",
    },
    "modules": {
        "activation.py", "adapter.py", "adapters/lora.py", "attention.py", "attentions/additive.py", "attentions/bilinear.py",
        "attentions/cosine.py", "attentions/dot_product.py", "attentions/linear.py", "augmented_lstm.py",
        "beam_constraint.py", "beam_constraints/repeated_ngram_blocking.py", "beam_sampler.py",
        "beam_samplers/deterministic.py", "beam_samplers/gumbel.py", "beam_samplers/multinomial.py",
        "beam_samplers/top_k.py", "beam_samplers/top_p.py", "beam_search.py", "checkpoint_wrapper.py", "combinations.py", "elmo.py", "elmo_character_encoder.py",
        "elmo_characters.py", "elmo_lstm.py", "feedforward.py", "gated_sum.py", "highway.py", "layer_norm.py",
        "input_variational_dropout.py", "linear_cross_entropy.py", "masked_softmax.py", "masking.py", "matrix_attention.py",
        "matrix_attentions/bilinear.py", "matrix_attentions/cosine.py", "matrix_attentions/dot_product.py",
        "matrix_attentions/linear.py", "maxout.py", "pretrained_transformer.py", "residual_with_layer_dropout.py",
        "scalar_mix.py", "selection.py", "sequence_scorer.py", "sequence_scorers/length_normalized.py",
        "sequence_scorers/sequence_log_prob.py", "encoder_base.py", "seq2seq_encoder.py", "seq2seq_encoders/alternating_lstm.py",
        "seq2seq_encoders/compose.py", "seq2seq_encoders/feedforward.py", "seq2seq_encoders/gated_cnn.py",
        "seq2seq_encoders/multi_head_self_attention.py", "seq2seq_encoders/pass_through.py",
        "seq2seq_encoders/pytorch_transformer.py", "seq2seq_encoders/rnn.py",
        "seq2seq_encoders/stacked_bidirectional_lstm.py", "seq2vec_encoder.py", "seq2vec_encoders/bag_of_embeddings.py",
        "seq2vec_encoders/boe.py", "seq2vec_encoders/bert_pooler.py", "seq2vec_encoders/cls_pooler.py",
        "seq2vec_encoders/cnn.py", "seq2vec_encoders/cnn_highway.py", "seq2vec_encoders/rnn.py",
        "seq2vec_encoders/stacked_bidirectional_lstm.py",
        "seq2vec_encoders/transformer.py", "sizes.py", "span_extractor.py", "span_extractors/bidirectional_endpoint.py",
        "span_extractors/endpoint.py", "span_extractors/max_pooling.py", "span_extractors/self_attentive.py", "tensor_ops.py", "text_field_embedder.py",
        "time_distributed.py", "token_embedder.py", "token_embedders/character_encoding.py", "token_embedders/elmo.py",
        "token_embedders/bag_of_word_counts.py", "token_embedders/embedding.py", "token_embedders/embeddings_text_file.py",
        "token_embedders/empty.py", "token_embedders/pass_through.py", "token_embedders/pretrained_transformer.py",
        "token_embedders/pretrained_transformer_mismatched.py", "viterbi.py",
    },
    "metrics": {
        "auc.py", "average.py", "boolean_accuracy.py", "categorical_accuracy.py", "classes.py", "covariance.py",
        "assignment.py", "entropy.py", "f1.py", "fbeta.py", "fbeta_multi_label.py",
        "mean_absolute_error.py", "metric.py", "pearson_correlation.py", "perplexity.py", "ranking.py",
        "sequence_accuracy.py", "span_based_f1.py", "span_f1.py", "spearman_correlation.py", "unigram_recall.py",
    },
}
#: what a task folder is made of (besides plain modules of its own, such as a format it parses)
TASK_PARTS = {"readers", "models", "modules", "metrics", "predictors"}


def held(package: str) -> set[str]:
    folder = PACKAGE / package
    return {str(path.relative_to(folder)) for path in folder.rglob("*.py") if path.name != "__init__.py"}


def test_the_framework_packages_hold_only_what_any_task_uses():
    for package, allowed in FRAMEWORK.items():
        extra, gone = held(package) - allowed, allowed - held(package)
        assert not extra, f"{package}/ holds {sorted(extra)}: a task's code goes to zoo/<task>/ (or, if generic, "\
                          f"into this list)"
        assert not gone, f"{package}/ no longer holds {sorted(gone)}: take it off this list"


def test_each_task_folder_is_made_of_readers_models_modules_and_metrics():
    for task in sorted(path for path in (PACKAGE / "zoo").iterdir() if path.is_dir() and path.name != "__pycache__"):
        assert (task / "__init__.py").read_text().strip(), f"zoo/{task.name}/__init__.py says nothing of its task"
        folders = {path.name for path in task.iterdir() if path.is_dir() and path.name != "__pycache__"}
        assert folders <= TASK_PARTS, f"zoo/{task.name}/ has {sorted(folders - TASK_PARTS)}"


#: besides the zoo itself, only the trees ``import allennlp`` and ``import allennlp_models`` are served from may
#: import it: they re-export names of AllenNLP's core that distrain keeps with a task (its CRF, BLEU, Evalb...)
ZOO_IMPORTERS = {"zoo", "allennlp", "allennlp_models"}


def test_nothing_outside_the_zoo_imports_it():
    found = [f"{module} -> {target}" for module, imported in import_graph().items()
             if package_of(module) not in ZOO_IMPORTERS
             for target in imported if package_of(target) == "zoo"]
    assert not found, found


def registering_calls(source: str) -> list[str]:
    """The component names a module's source registers: ``@Base.register("name")`` decorators and
    ``Base.register("name")(cls)`` calls (``atexit.register(f)`` and other non-literal calls are not)."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "register"
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            names.append(node.args[0].value)
    return names


def test_the_finder_sees_decorators_and_calls_but_not_other_registers():
    source = ('import atexit\n@Model.register("a")\nclass A: ...\nB = Model.register("b", exist_ok=True)(A)\n'
              'atexit.register(print)\nInterface.register(NAME, f)\n')
    assert registering_calls(source) == ["a", "b"]


def test_the_registry_walk_reaches_every_module_that_registers_a_component():
    registering = {module_name(path) for path in PACKAGE.rglob("*.py") if registering_calls(path.read_text())}
    assert "distrain.zoo.rc.models.bidaf" in registering and "distrain.models.basic_classifier" in registering
    script = "import json, sys\nfrom distrain.plugins import import_builtins\nimport_builtins()\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True)
    imported = set(json.loads(done.stdout.splitlines()[-1]))
    missed = sorted(registering - imported)
    assert not missed, f"registered components the walk (distrain.plugins.COMPONENT_ROOTS) never imports: {missed}"


def test_the_experiment_package_assembles_and_registers_no_component():
    registering = [str(path.relative_to(PACKAGE)) for path in (PACKAGE / "experiment").rglob("*.py")
                   if registering_calls(path.read_text())]
    assert not registering, f"components registered in experiment/: {registering} (they go where their kind lives)"
