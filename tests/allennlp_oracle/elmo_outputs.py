"""What AllenNLP 2.10.1's ELMo gives for tests/allennlp/test_allennlp_elmo.py, written to tests/allennlp_golden/elmo/.
Run with the oracle's Python (built by ../shared/allennlp-oracle/setup.sh), not by pytest:

    /work/oracle/bin/python tests/allennlp_oracle/elmo_outputs.py

character_ids.json: the ``elmo_characters`` indexer's ids for WORDS (and with TOKENS_TO_ADD).
token_embedder.json: ``elmo_token_embedder`` outputs (dropout 0) for BATCHES run one after another through
one embedder (so the LSTM state AllenNLP carries between batches, and its resizing when the batch size
changes, are in them), for each setting in SETTINGS.
"""

import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the fixtures' one locator
from support.allennlp_fixtures import ELMO  # noqa: E402

warnings.filterwarnings("ignore")

import torch  # noqa: E402
from provenance import made_by  # noqa: E402
from allennlp.data import Token, Vocabulary  # noqa: E402
from allennlp.data.token_indexers.elmo_indexer import ELMoTokenCharactersIndexer  # noqa: E402
from allennlp.modules.elmo import batch_to_ids  # noqa: E402
from allennlp.modules.token_embedders import ElmoTokenEmbedder  # noqa: E402

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = ELMO
GOLDEN = TESTS / "allennlp_golden" / "elmo"

WORDS = ["The", "ELMo", "naïve", "日本語", "", "<S>", "</S>", "@@PADDING@@", "x" * 60, "é" * 30, "[MASK]"]
TOKENS_TO_ADD = {"[MASK]": 5, "<S>": 7}
BATCHES = [
    [["The", "sentence", "."], ["ELMo", "helps", "disambiguate", "ELMo", "from", "Elmo", "."], ["Short"]],
    [["A", "second", "batch", ",", "smaller", "."], ["naïve", "café"]],
    [["Four", "rows", "now"], ["so", "the", "state", "grows"], ["one"], ["two", "words"]],
]
SETTINGS = {
    "default": {},
    "layer_norm_fixed_mix": {"do_layer_norm": True, "scalar_mix_parameters": [1.0, -1.0, 0.5]},
}


def main() -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    tokens = [Token(word) for word in WORDS]
    ids = {
        "made_by": made_by(__file__),
        "words": WORDS,
        "ids": ELMoTokenCharactersIndexer().tokens_to_indices(tokens, Vocabulary())["elmo_tokens"],
        "tokens_to_add": TOKENS_TO_ADD,
        "ids_with_tokens_to_add": ELMoTokenCharactersIndexer(tokens_to_add=TOKENS_TO_ADD).tokens_to_indices(
            tokens, Vocabulary())["elmo_tokens"],
    }
    (GOLDEN / "character_ids.json").write_text(json.dumps(ids) + "\n")
    outputs = {"made_by": made_by(__file__), "batches": BATCHES, "settings": SETTINGS, "outputs": {}}
    for name, setting in SETTINGS.items():
        torch.manual_seed(0)
        embedder = ElmoTokenEmbedder(str(FIXTURES / "options.json"), str(FIXTURES / "lm_weights.hdf5"),
                                     dropout=0.0, **setting)
        with torch.no_grad():
            outputs["outputs"][name] = [embedder(batch_to_ids(batch)).tolist() for batch in BATCHES]
    (GOLDEN / "token_embedder.json").write_text(json.dumps(outputs) + "\n")


if __name__ == "__main__":
    main()
