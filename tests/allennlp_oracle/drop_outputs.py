"""What AllenNLP 2.10.1's ``drop`` reader makes of allennlp-models' test_fixtures/rc/drop.json (in its three instance
formats, with and without the fixture experiment's limits and skips), and what its DROP metric (``drop``, the
official evaluator) scores for predictions against annotations, written as tests/allennlp_golden/drop.json for
tests/allennlp/test_allennlp_drop.py. Run with the oracle's Python, not by pytest:

    /tmp/oracle/bin/python tests/allennlp_oracle/drop_outputs.py

spaCy's model is ``spacy.blank("en")`` (no model package is installable here), as in scripts/allennlp_golden.py.
"""

import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the fixtures' one locator
from support.allennlp_fixtures import ALLENNLP_MODELS  # noqa: E402
from provenance import made_by  # noqa: E402

warnings.filterwarnings("ignore")

import spacy  # noqa: E402
from allennlp.common import util  # noqa: E402
import allennlp.data.tokenizers.spacy_tokenizer as spacy_tokenizer  # noqa: E402


def blank(name, pos_tags=True, parse=False, ner=False):
    return spacy.blank(name[:2])


util.get_spacy_model = spacy_tokenizer.get_spacy_model = blank

from allennlp.data.fields import (  # noqa: E402
    IndexField, LabelField, ListField, MetadataField, SequenceLabelField, SpanField, TextField)
from allennlp_models.rc.dataset_readers.drop import DropReader  # noqa: E402
from allennlp_models.rc.metrics.drop_em_and_f1 import DropEmAndF1  # noqa: E402
from allennlp_models.rc.tools.drop import answer_json_to_strings, get_metrics  # noqa: E402

TESTS = Path(__file__).resolve().parents[1]
DROP = ALLENNLP_MODELS / "test_fixtures" / "rc" / "drop.json"
METADATA = ("original_question", "passage_token_offsets", "question_token_offsets", "token_offsets", "number_tokens",
            "number_indices", "original_numbers", "answer_texts", "answer_info", "passage_id", "question_id",
            "valid_passage_spans", "question_tokens", "passage_tokens")


def value(field):
    if isinstance(field, TextField):
        return [token.text for token in field.tokens]
    if isinstance(field, SpanField):
        return [field.span_start, field.span_end]
    if isinstance(field, IndexField):
        return field.sequence_index
    if isinstance(field, SequenceLabelField):
        return list(field.labels)
    if isinstance(field, LabelField):
        return field.label
    if isinstance(field, ListField):
        return [value(element) for element in field.field_list]
    if isinstance(field, MetadataField):
        return {key: field.metadata[key] for key in METADATA if key in field.metadata}
    raise TypeError(type(field))


def dump(reader):
    return [{name: value(field) for name, field in instance.fields.items()} for instance in reader.read(str(DROP))]


limits = {"passage_length_limit": 400, "question_length_limit": 50}
readers = {
    "drop_train": DropReader(**limits, skip_when_all_empty=["passage_span", "question_span", "addition_subtraction",
                                                            "counting"]),
    "drop_validation": DropReader(passage_length_limit=1000, question_length_limit=100),
    "drop_counting_only": DropReader(skip_when_all_empty=["counting"]),
    "squad": DropReader(instance_format="squad", **limits),
    "squad_skip": DropReader(instance_format="squad", skip_when_all_empty=["passage_span"]),
    "bert": DropReader(instance_format="bert", passage_length_limit=200),
}
number = lambda text: {"number": text, "spans": [], "date": {"day": "", "month": "", "year": ""}}  # noqa: E731
spans = lambda *texts: {"number": "", "spans": list(texts), "date": {"day": "", "month": "", "year": ""}}  # noqa: E731
date = lambda day, month, year: {"number": "", "spans": [], "date": {"day": day, "month": month, "year": year}}  # noqa: E731
#: (prediction, annotations): exact and partial spans, numbers as words and digits, articles, punctuation, hyphens,
#: several spans to align, dates, and several annotations of which the best counts
METRIC_CASES = [
    ("this is the best span", [spans("this is a good span", "something irrelevant")]),
    ("this is another span", [spans("this is another span")]),
    ("The Chiefs", [spans("Kansas City Chiefs")]),
    ("2", [number("2.0")]),
    ("2 yards", [number("2")]),
    ("3 yards", [number("2")]),
    ("1,000", [number("1000")]),
    ("38-yard", [spans("38 yard field goal")]),
    ("Philip Rivers!", [spans("philip rivers")]),
    (["Rivers", "Tomlinson"], [spans("LaDainian Tomlinson", "Philip Rivers")]),
    (["Rivers", "Kaeding", "Carney"], [spans("Philip Rivers", "Nate Kaeding")]),
    (["a b c", "d"], [spans("a", "b c d", "e")]),
    ("May 1995", [date("12", "May", "1995")]),
    ("12 May 1995", [date("12", "May", "1995")]),
    ("Kansas City", [spans("the Chargers"), spans("Kansas City Chiefs"), spans("kansas city")]),
    ("seven", [number("7"), spans("seven games")]),
    ("one two three four five six seven", [spans("one two three four five six seven eight nine")]),
    ("x y z", [spans("x y z w v u t")]),
    ("", [spans("anything")]),
]
cases = []
for prediction, annotations in METRIC_CASES:
    metric = DropEmAndF1()
    metric(prediction, annotations)
    exact, f1 = metric.get_metric(reset=True)
    cases.append({"prediction": prediction, "annotations": annotations, "em": exact, "f1": f1,
                  "per_annotation": [list(get_metrics(prediction, answer_json_to_strings(annotation)[0]))
                                     for annotation in annotations]})
stream = DropEmAndF1()
for prediction, annotations in METRIC_CASES:
    stream(prediction, annotations)
em, f1 = stream.get_metric()
golden = {"made_by": made_by(__file__), "readers": {name: dump(reader) for name, reader in readers.items()},
          "metric_cases": cases, "metric_stream": {"em": em, "f1": f1}}
out = TESTS / "allennlp_golden" / "drop.json"
out.write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n")
print(out, {name: len(instances) for name, instances in golden["readers"].items()}, golden["metric_stream"])
