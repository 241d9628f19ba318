"""What AllenNLP 2.10.1's multiple-choice readers (allennlp-models ``piqa``, ``piqa_tt``, ``swag``,
``commonsenseqa``) make of allennlp-models' mc fixtures with the local MiniLM tokenizer, for
tests/allennlp/test_allennlp_transformer_mc.py. Run with the oracle's Python, not by pytest:

    /work/oracle/bin/python tests/allennlp_oracle/mc_reader_outputs.py MINILM_FOLDER

It writes tests/allennlp_golden/mc_readers.json: per reader and ``length_limit`` (512, 20), each instance's qid,
label and, per choice, its token ids and type ids.
"""

import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the fixtures' one locator
from support.allennlp_fixtures import ALLENNLP_MODELS  # noqa: E402
from provenance import made_by  # noqa: E402

warnings.filterwarnings("ignore")

import allennlp_models.mc.dataset_readers  # noqa: E402,F401
from allennlp.data import DatasetReader  # noqa: E402
from allennlp_models.mc.dataset_readers.piqa_tt import PiqaReaderTransformerToolkit  # noqa: E402,F401

TESTS = Path(__file__).resolve().parent.parent
MC = ALLENNLP_MODELS / "test_fixtures" / "mc"
DATA = {"piqa": "piqa.jsonl", "piqa_tt": "piqa.jsonl", "swag": "swag.csv", "commonsenseqa": "commonsenseqa.jsonl"}


def choices(field):
    if hasattr(field, "tokens"):  # a TextField of PretrainedTransformerTokenizer tokens
        return [t.text_id for t in field.tokens], [t.type_id for t in field.tokens]
    return field.input_ids.tolist(), field.token_type_ids.tolist()  # piqa_tt's TransformerTextField


def main() -> None:
    model = sys.argv[1]
    # AllenNLP's piqa_tt also runs TransformerMCReader.__init__ (its second base), which loads the default
    # roberta-large whatever the config names (then replaced by the named tokenizer): it loads the named one here
    from allennlp_models.mc.dataset_readers.transformer_mc import TransformerMCReader
    TransformerMCReader.__init__.__defaults__ = (model, 512)
    result = {"made_by": made_by(__file__, "MINILM_FOLDER")}
    for name, data in DATA.items():
        for limit in (512, 20):
            reader = DatasetReader.by_name(name)(transformer_model_name=model, length_limit=limit)
            rows = []
            for instance in reader.read(str(MC / data)):
                pairs = [choices(field) for field in instance["alternatives"].field_list]
                rows.append({"qid": instance["qid"].metadata, "label": instance["correct_alternative"].sequence_index,
                             "ids": [ids for ids, _ in pairs], "type_ids": [types for _, types in pairs]})
            result[f"{name}/{limit}"] = rows
    lines = ",\n".join(f" {json.dumps(key)}: {json.dumps(rows, separators=(',', ':'))}" for key, rows in result.items())
    (TESTS / "allennlp_golden" / "mc_readers.json").write_text("{\n" + lines + "\n}\n")


if __name__ == "__main__":
    main()
