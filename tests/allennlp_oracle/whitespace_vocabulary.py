"""AllenNLP 2.10.1's vocabulary for a text-classification config whose tokenizer is ``whitespace``, over two of
AllenNLP's IMDB fixtures (mixed case, punctuation stuck to words), written to
tests/allennlp_golden/whitespace_vocabulary.json for tests/allennlp_semantics/test_whitespace_tokenizer.py. Run
from the repository root with the oracle's Python (built by ../shared/allennlp-oracle/setup.sh), not by pytest:

    ORACLE/bin/python tests/allennlp_oracle/whitespace_vocabulary.py

The config names its data relative to AllenNLP's repository root, as AllenNLP's own configs do; the vocabulary
is built as ``allennlp train`` builds it (every split the config reads, ``datasets_for_vocab_creation`` unset).
"""

import json
import os
import sys
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")

sys.path.insert(0, str(Path(__file__).parent))
from provenance import made_by  # noqa: E402

from allennlp.common import Params  # noqa: E402
from allennlp.data import DatasetReader, Vocabulary  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT.parent / "shared" / "allennlp-fixtures" / "allennlp"
OUT = ROOT / "tests" / "allennlp_golden" / "whitespace_vocabulary.json"

CONFIG = {
    "dataset_reader": {
        "type": "text_classification_json",
        "tokenizer": {"type": "whitespace"},
        "token_indexers": {"tokens": {"type": "single_id"}},
    },
    "train_data_path": "test_fixtures/data/text_classification_json/imdb_corpus.jsonl",
    "validation_data_path": "test_fixtures/data/text_classification_json/imdb_corpus2.jsonl",
    "model": {
        "type": "basic_classifier",
        "text_field_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 4}}},
        "seq2vec_encoder": {"type": "boe", "embedding_dim": 4},
    },
    "data_loader": {"batch_size": 2},
    "trainer": {"num_epochs": 1, "optimizer": {"type": "adam", "lr": 0.01}},
}


def main() -> None:
    os.chdir(FIXTURES)  # the config's paths are relative to AllenNLP's repository root
    reader = DatasetReader.from_params(Params(json.loads(json.dumps(CONFIG["dataset_reader"]))))
    instances = [instance for key in ("train_data_path", "validation_data_path") for instance in reader.read(CONFIG[key])]
    vocabulary = Vocabulary.from_instances(instances)
    namespaces = {namespace: [vocabulary.get_token_from_index(index, namespace)
                              for index in range(vocabulary.get_vocab_size(namespace))]
                  for namespace in sorted(vocabulary.get_namespaces())}
    OUT.write_text(json.dumps({"made_by": made_by(__file__), "config": CONFIG, "namespaces": namespaces},
                              indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}: " + ", ".join(f"{name} {len(tokens)}" for name, tokens in namespaces.items()))


if __name__ == "__main__":
    main()
