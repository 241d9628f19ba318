"""What AllenNLP 2.10.1's tokenizers give for tests/allennlp/test_allennlp_tokenizers.py, printed as the Python literals
that test holds. Run with the oracle's Python (built by ../shared/allennlp-oracle/setup.sh), not by pytest:

    /work/oracle/bin/python tests/allennlp_oracle/tokenizer_outputs.py

No spaCy model package is installed there either: AllenNLP's own cache of loaded spaCy models is handed
``spacy.blank("en")`` (the pipeline distrain falls back to), so AllenNLP's SpacyTokenizer code runs on it.
"""

import pprint
import warnings

warnings.filterwarnings("ignore")

import spacy  # noqa: E402
from allennlp.common import util  # noqa: E402
from allennlp.data.tokenizers import (CharacterTokenizer, LettersDigitsTokenizer, SpacyTokenizer,  # noqa: E402
                                      WhitespaceTokenizer)

SENTENCES = [
    "AllenNLP's default tokenizer splits don't, U.S.A. and 3.5kg!",
    "Hello  world,\tit's Mr. Smith's (e-mail: a@b.com).",
    "Ünïcödé naïve café, 2024-05-06: über 1,000 résumés?",
]
for pos_tags in (True, False):
    util.LOADED_SPACY_MODELS[("en_core_web_sm", pos_tags, False, False)] = spacy.blank("en")


def spans(tokens):
    return [(t.text, t.idx, t.idx_end) for t in tokens]


def analyses(tokens):
    """The (lemma, pos, tag, dep, entity type) values that occur."""
    return sorted({(t.lemma_, t.pos_, t.tag_, t.dep_, t.ent_type_) for t in tokens}, key=str)


def show(name, value):
    indent = " " * (len(name) + 3)
    print(f"{name} = " + pprint.pformat(value, width=114 - len(indent), compact=True).replace("\n", "\n" + indent))


spacy_tokens = [SpacyTokenizer().tokenize(sentence) for sentence in SENTENCES]
bounded = SpacyTokenizer(pos_tags=False, start_tokens=["@start@", "<s>"], end_tokens=["@end@"])
characters = CharacterTokenizer(lowercase_characters=True, start_tokens=["<w>"], end_tokens=["</w>"])
byte_ids = CharacterTokenizer(byte_encoding="utf-8", start_tokens=[259], end_tokens=[260])
show("SPACY", [spans(tokens) for tokens in spacy_tokens])
show("SPACY_ANALYSES", analyses(token for tokens in spacy_tokens for token in tokens))
show("SPACY_BOUNDED", spans(bounded.tokenize(SENTENCES[0])))
show("SPACY_SPLIT_ON_SPACES", spans(SpacyTokenizer(split_on_spaces=True).tokenize(SENTENCES[0])))
show("LETTERS_DIGITS", [[(t.text, t.idx) for t in LettersDigitsTokenizer().tokenize(s)] for s in SENTENCES])
show("CHARACTERS", [(t.text, t.idx) for t in characters.tokenize(SENTENCES[2])])
show("BYTE_IDS", [(t.text, t.idx, t.text_id) for t in byte_ids.tokenize(SENTENCES[2])])
show("WHITESPACE", [[t.text for t in WhitespaceTokenizer().tokenize(s)] for s in SENTENCES])
