"""What AllenNLP 2.10.1's own predictors answer, on archives the real AllenNLP trained (tests/allennlp_golden/CASE/
model.tar.gz), for JSON inputs written here: tests/allennlp_golden/predictors.json, which
tests/allennlp/test_allennlp_predictors.py compares distrain's predictors of the same names with. Run with the
oracle's Python from the repository root, not by pytest:

    ORACLE/bin/python tests/allennlp_oracle/predictor_outputs.py

Each case runs in a copy of the archive's repository fixtures (as scripts/allennlp_golden.py trained it), so the
paths its config names resolve. AllenNLP's spaCy model is ``spacy.blank("en")`` (no spaCy model package installs
here), as in scripts/allennlp_golden.py; distrain's ``spacy`` tokenizer splits as it does.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "allennlp_oracle"))
from provenance import made_by  # noqa: E402
from support.allennlp_fixtures import copy_repository  # noqa: E402

GOLDEN = ROOT / "tests" / "allennlp_golden"

#: (case: the golden archive's folder, its repository, the predictor's registered name, JSON inputs or the
#: name of the function here that makes them from the repository's fixtures)
CASES = [
    ("basic_classifier_seq2vec", "allennlp", "text_classifier", [
        {"sentence": "This movie was a great movie , the best I have seen ."},
        {"sentence": "The film was terrible and boring ."},
        {"sentence": "an unknown word zyx is here"},
    ]),
    ("simple_tagger", "allennlp", "sentence_tagger", [
        {"sentence": "cats are animals ."},
        {"sentence": "dogs are animals , cats are too ."},
    ]),
    ("crf_tagger", "allennlp-models", "sentence_tagger", [
        {"sentence": "Paris is in France ."},
        {"sentence": "John Smith lives in New York ."},
    ]),
    ("esim", "allennlp-models", "textual_entailment", [
        {"premise": "Two women are embracing while holding to go packages .",
         "hypothesis": "Two woman are holding packages ."},
        {"premise": "A man is playing a guitar .", "hypothesis": "Nobody is playing ."},
    ]),
    ("decomposable_attention", "allennlp-models", "textual_entailment", [
        {"premise": "Two women are embracing while holding to go packages .",
         "hypothesis": "The men are fighting outside a deli ."},
        {"premise": "A person on a horse jumps over a broken down airplane .",
         "hypothesis": "A person is outdoors , on a horse ."},
    ]),
    ("bidaf", "allennlp-models", "reading_comprehension", [
        {"question": "What is the capital of France ?",
         "passage": "Paris is the capital and most populous city of France . It has 2 million people ."},
        {"question": "Who wrote the book ?", "passage": "The book was written by an old man in 1850 ."},
    ]),
    ("transformer_mc", "allennlp-models", "transformer_mc", [
        {"prefix": "To open a jar, you", "alternatives": ["twist the lid.", "eat the glass."]},
        {"prefix": "When it rains, people", "alternatives": ["open umbrellas.", "close the sky.", "swim home."]},
    ]),
    ("next_token_lm", "allennlp-models", "next_token_lm", [
        {"sentence": "This is the first"}, {"sentence": "My cat sleeps all"}, {"sentence": "Another sentence is"},
    ]),
    ("next_token_lm_transformer", "allennlp-models", "next_token_lm", [
        {"sentence": "This is the first"}, {"sentence": "My cat sleeps all day"},
    ]),
    # the seq2seq family's default predictor, on the fixture's source sentences (the archives decode them apart)
    ("simple_seq2seq", "allennlp-models", "seq2seq", [
        {"source": "this is a sentence"}, {"source": "all these sentences should get copied"},
        {"source": "this is another"},
    ]),
    ("composed_seq2seq", "allennlp-models", "seq2seq", [
        {"source": "this is a sentence"}, {"source": "all these sentences should get copied"},
        {"source": "this is another"},
    ]),
    ("copynet_seq2seq", "allennlp-models", "seq2seq", [
        {"source": "these tokens should be copied over : hello world"},
        {"source": "these should also be copied : copynet is cool"},
    ]),
    # the dependency parser on sentences of other words and lengths (spaCy's blank pipeline tags nothing, so every
    # part-of-speech input is the vocabulary's OOV entry, in AllenNLP and in distrain)
    ("biaffine_parser", "allennlp-models", "biaffine_dependency_parser", [
        {"sentence": "The cat sat on the mat ."}, {"sentence": "John loves Mary ."},
        {"sentence": "Stocks fell sharply in early trading on Monday ."},
    ]),
    ("constituency_parser", "allennlp-models", "constituency_parser", [
        {"sentence": "The cat sat on the mat ."}, {"sentence": "John loves Mary ."},
        {"sentence": "Stocks fell sharply in early trading on Monday ."},
    ]),
    # coreference on short documents of several sentences, split by spaCy's sentencizer in both
    ("coref", "allennlp-models", "coreference_resolution", [
        {"document": "John went to the store . He bought milk . Then he went home ."},
        {"document": "Mary met her sister in Paris . The two women had lunch together ."},
    ]),
    ("coref_coarse_to_fine", "allennlp-models", "coreference_resolution", [
        {"document": "John went to the store . He bought milk . Then he went home ."},
        {"document": "The company said its profits rose . It will pay a dividend ."},
    ]),
    # one predicate, two, and none (AllenNLP then answers the words alone)
    ("srl", "allennlp-models", "semantic_role_labeling", [
        {"sentence": "The cat sat on the mat ."}, {"sentence": "John saw Mary and gave her a book ."},
        {"sentence": "A quiet morning in the hills ."},
    ]),
    # questions on the fixture's SQuAD passages (one by "passage"), and one on a context of three passages, longer
    # than the reader's length limit: its windows are answered apart and the best one kept
    ("transformer_qa", "allennlp-models", "transformer_qa", "squad_questions"),
    # dialog_qa on the fixture's QuAC dialog (its two copies are one): its first three turns, and its last three
    ("dialog_qa", "allennlp-models", "dialog_qa", "quac_dialogs"),
    # the linear head without a contextualizer sees the mask's embedding alone: the sentences differ in their words
    ("masked_language_model", "allennlp-models", "masked_language_model", [
        {"sentence": "[MASK] is the first sentence."}, {"sentence": "My cat [MASK] all day"},
    ]),
]


#: the cases whose spaCy tags verbs (tests/support/spacy_verbs.py): the semantic role labeller's predictor labels
#: the predicates spaCy tags
VERB_TAGGING = {"srl"}


def patch_spacy(verbs: bool = False) -> None:
    """Wherever AllenNLP asks for a spaCy model (the predictors import the function itself), ``spacy.blank``, or with
    ``verbs`` the verb-tagging stand-in the tests use too."""
    import spacy
    from allennlp.common import util
    import allennlp.data.tokenizers.spacy_tokenizer as spacy_tokenizer
    from support.spacy_verbs import verb_tagging_pipeline

    def get_spacy_model(name: str, pos_tags: bool = True, parse: bool = False, ner: bool = False):
        nlp = verb_tagging_pipeline(name) if verbs else spacy.blank(name[:2])
        if parse:  # the parse's sentence boundaries: spaCy's rule-based sentencizer stands in (distrain's fallback)
            nlp.add_pipe("sentencizer")
        return nlp

    util.get_spacy_model = spacy_tokenizer.get_spacy_model = get_spacy_model
    for module in list(sys.modules.values()):  # modules that imported the function itself (coref's predictor)
        if getattr(module, "__name__", "").startswith("allennlp") and hasattr(module, "get_spacy_model"):
            module.get_spacy_model = get_spacy_model


def quac_dialogs(workdir: Path) -> list[dict]:
    """Two dialogs over the fixture's passage: its first three turns, and its last three."""
    paragraph = json.loads((workdir / "test_fixtures/rc/dialog_qa/quac_sample.json").read_text())["data"][0][
        "paragraphs"][0]
    return [{"paragraphs": [{"context": paragraph["context"], "qas": turns}]}
            for turns in (paragraph["qas"][:3], paragraph["qas"][3:])]


def squad_questions(workdir: Path) -> list[dict]:
    """Three questions on the fixture's two SQuAD passages, the last on both of them and the first again."""
    paragraphs = [paragraph for article in json.loads((workdir / "test_fixtures/rc/squad.json").read_text())["data"]
                  for paragraph in article["paragraphs"]]
    first, second = paragraphs[0], paragraphs[1]
    return [{"question": first["qas"][0]["question"], "context": first["context"]},
            {"question": second["qas"][2]["question"], "passage": second["context"]},
            {"question": second["qas"][0]["question"],
             "context": " ".join([first["context"], second["context"], first["context"]])}]


def plain(value):
    """The predictor's sanitized output as JSON writes it (tuples become lists)."""
    return json.loads(json.dumps(value))


def main() -> None:
    import allennlp_models.pair_classification  # noqa: F401 - registers snli, esim, decomposable_attention
    import allennlp_models.rc  # noqa: F401 - registers bidaf, transformer_qa and their predictors
    import allennlp_models.tagging  # noqa: F401 - registers crf_tagger
    import allennlp_models.mc  # noqa: F401 - registers transformer_mc and its predictor
    import allennlp_models.lm  # noqa: F401 - registers next_token_lm, masked_language_model and their predictors
    import allennlp_models.generation  # noqa: F401 - registers the seq2seq models, readers and predictor
    import allennlp_models.structured_prediction  # noqa: F401 - registers the parsers and their predictors
    import allennlp_models.coref  # noqa: F401 - registers the coreference model, reader and predictor
    from allennlp.predictors import Predictor

    results = []
    only = set(sys.argv[1:])  # case names: rerun those alone, keeping the file's other cases as they are
    for case, repository, name, inputs in CASES:
        if only and case not in only:
            continue
        patch_spacy(verbs=case in VERB_TAGGING)
        archive = GOLDEN / case / "model.tar.gz"
        with tempfile.TemporaryDirectory() as scratch:
            workdir = copy_repository(repository, Path(scratch) / repository)
            previous = Path.cwd()
            os.chdir(workdir)
            if isinstance(inputs, str):  # inputs made from the repository's fixtures
                inputs = globals()[inputs](workdir)
            try:
                # a fresh predictor for each pass (transformer_qa numbers its questions from 1 in each)
                one_at_a_time = [plain(output) for predictor in [Predictor.from_path(str(archive), name)]
                                 for output in map(predictor.predict_json, inputs)]
                batched = plain(Predictor.from_path(str(archive), name).predict_batch_json(inputs))
                predictor = Predictor.from_path(str(archive), name)
                lines = [predictor.dump_line(output) for output in predictor.predict_batch_json(inputs)]
            finally:
                os.chdir(previous)
        results.append({"case": case, "repository": repository, "predictor": name, "inputs": inputs,
                        "outputs": one_at_a_time, "batched": batched, "dump_lines": lines,
                        **({"spacy": "verb_tagging_pipeline"} if case in VERB_TAGGING else {})})
        print(f"{case}: {name}, {len(inputs)} inputs, keys {sorted(one_at_a_time[0])}")
    if only:
        kept = json.loads((GOLDEN / "predictors.json").read_text())["cases"]
        fresh = {result["case"]: result for result in results}
        results = [fresh.pop(old["case"], old) for old in kept] + list(fresh.values())
    golden = {"made_by": made_by(__file__), "cases": results}
    (GOLDEN / "predictors.json").write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
