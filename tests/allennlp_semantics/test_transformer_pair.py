"""A ``(question, passage)`` pair through the pretrained transformer tokenizer as AllenNLP readers write it:
``tokenize`` each text (``add_special_tokens: false``), then ``add_special_tokens(question, passage)`` wraps them in
the model's pair template, ``[CLS] question [SEP] passage [SEP]`` with type ids 0 then 1. A user's reader built so
trains ``basic_classifier`` on a tiny BERT through the CLI."""

from __future__ import annotations

import json
import random

from distrain.data.tokenizers.pretrained_transformer import PretrainedTransformerTokenizer
from support.allennlp import assert_evaluate_gives
from support.cli import run_cli
from support.configs import write_config
from support.transformer_fixtures import write_tiny_bert

PLUGIN = '''
from allennlp.data import DatasetReader, Instance
from distrain.allennlp import LabelField, PretrainedTransformerIndexer, PretrainedTransformerTokenizer, TextField


@DatasetReader.register("user_pairs")
class PairReader(DatasetReader):
    def __init__(self, model_name: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.tokenizer = PretrainedTransformerTokenizer(model_name, add_special_tokens=False)
        self.indexers = {"tokens": PretrainedTransformerIndexer(model_name)}

    def _read(self, file_path):
        with open(file_path) as lines:
            for line in lines:
                question, passage, label = line.rstrip("\\n").split("\\t")
                yield self.text_to_instance(question, passage, label)

    def text_to_instance(self, question, passage, label=None):
        tokens = self.tokenizer.add_special_tokens(self.tokenizer.tokenize(question), self.tokenizer.tokenize(passage))
        fields = {"tokens": TextField(tokens, self.indexers)}
        if label is not None:
            fields["label"] = LabelField(label)
        return Instance(fields=fields)
'''


def pairs(count: int, seed: int) -> str:
    """The label says whether the passage holds the question's last word."""
    rng = random.Random(seed)
    words = ["cat", "dog", "bird", "tree", "house", "park"]
    lines = []
    for _ in range(count):
        asked = rng.choice(words)
        passage = rng.sample(words, 3)
        lines.append(f"she saw the {asked}\tthe {' and the '.join(passage)} sat\t{asked in passage}\n")
    return "".join(lines)


def test_add_special_tokens_wraps_a_tokenized_pair_in_the_models_template(tmp_path):
    tokenizer = PretrainedTransformerTokenizer(str(write_tiny_bert(tmp_path / "bert")), add_special_tokens=False)
    question, passage = tokenizer.tokenize("she saw the cat"), tokenizer.tokenize("the dog sat")
    assert [token.text for token in question] == ["she", "saw", "the", "cat"]
    wrapped = tokenizer.add_special_tokens(question, passage)
    assert [token.text for token in wrapped] == ["[CLS]", *[t.text for t in question], "[SEP]",
                                                 *[t.text for t in passage], "[SEP]"]
    assert [token.type_id for token in wrapped] == [0] * (len(question) + 2) + [1] * (len(passage) + 1)
    assert all(token.text_id is not None for token in wrapped)
    assert [t.text for t in tokenizer.add_special_tokens(["the", "cat"])] == ["[CLS]", "the", "cat", "[SEP]"]


def test_a_pair_reader_trains_a_transformer_classifier(tmp_path):
    import torch
    import transformers

    bert = str(write_tiny_bert(tmp_path / "bert"))
    torch.manual_seed(0)
    transformers.BertModel(transformers.BertConfig.from_pretrained(bert)).save_pretrained(bert)  # random weights
    (tmp_path / "user_pairs.py").write_text(PLUGIN)
    (tmp_path / "train.tsv").write_text(pairs(16, 1))
    (tmp_path / "validation.tsv").write_text(pairs(8, 2))
    config = {
        "dataset_reader": {"type": "user_pairs", "model_name": bert}, "train_data_path": "train.tsv",
        "validation_data_path": "validation.tsv",
        "model": {"type": "basic_classifier", "text_field_embedder": {"token_embedders": {
            "tokens": {"type": "pretrained_transformer", "model_name": bert}}},
            "seq2vec_encoder": {"type": "cls_pooler", "embedding_dim": 64}},
        "data_loader": {"batch_size": 8},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adam", "lr": 0.001}, "progress_bar": False},
    }
    trained = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", "run",
                      "--include-package", "user_pairs", cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    reported = json.loads((tmp_path / "run" / "metrics.json").read_text())["validation_accuracy"]
    assert 0 <= reported <= 1
    assert_evaluate_gives(tmp_path / "run", "validation.tsv", "validation_accuracy", reported, tmp_path,
                          "--include-package", "user_pairs")
