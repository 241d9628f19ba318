"""Write tests/allennlp_golden/bart/teacher_forced.json: AllenNLP 2.10.1's training-mode outputs of its ``bart``
archive (written by scripts/allennlp_golden.py) on the first validation stories, one at a time: the loss
(label-smoothed, averaged over target tokens) and the decoder's logits at the first target positions (all of them
would make the file megabytes). Run with the oracle's Python after the ``bart`` case:

    /work/oracle/bin/python tests/allennlp_oracle/bart_teacher_forced_golden.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the fixtures' one locator
from support.allennlp_fixtures import ALLENNLP_MODELS  # noqa: E402
from provenance import made_by  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "tests" / "allennlp_golden" / "bart"
STORIES, POSITIONS = 3, 1


def main() -> None:
    import allennlp_models.generation  # noqa: F401 - registers cnn_dm and bart
    from allennlp.data import Batch
    from allennlp.models.archival import load_archive

    os.chdir(ALLENNLP_MODELS)
    archive = load_archive(str(CASE / "model.tar.gz"))
    model = archive.model
    model.train()  # the tiny BART has no dropout: training mode is deterministic
    instances = list(archive.validation_dataset_reader.read(archive.config["validation_data_path"]))[:STORIES]
    outputs = []
    for instance in instances:
        instance.index_fields(model.vocab)
        produced = model(**Batch([instance]).as_tensor_dict())
        outputs.append({"loss": produced["loss"].item(),
                        "decoder_logits": produced["decoder_logits"][0, :POSITIONS].tolist()})
    (CASE / "teacher_forced.json").write_text(json.dumps({"made_by": made_by(__file__), "cases": outputs}) + "\n")
    print(f"written to {CASE / 'teacher_forced.json'}")


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
