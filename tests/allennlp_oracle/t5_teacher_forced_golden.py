"""Write tests/allennlp_golden/t5/teacher_forced.json: AllenNLP 2.10.1's teacher-forced outputs of its ``t5``
archive (written by scripts/allennlp_golden.py) on the first validation stories, one at a time: the loss (plain
cross-entropy averaged over the target's positions) and the decoder's logits at the first target positions (all of
them would make the file large). AllenNLP's ``t5`` model returns only the loss, so the logits are its T5 module's.
Run with the oracle's Python after the ``t5`` case:

    /work/oracle/bin/python tests/allennlp_oracle/t5_teacher_forced_golden.py
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
CASE = ROOT / "tests" / "allennlp_golden" / "t5"
STORIES, POSITIONS = 3, 3


def main() -> None:
    import allennlp_models.generation  # noqa: F401 - registers cnn_dm and t5
    from allennlp.data import Batch
    from allennlp.models.archival import load_archive

    os.chdir(ALLENNLP_MODELS)
    archive = load_archive(str(CASE / "model.tar.gz"))
    model = archive.model
    model.eval()  # AllenNLP's T5 module keeps dropout 0.1 in places whatever the config's rate: train() is random
    instances = list(archive.validation_dataset_reader.read(archive.config["validation_data_path"]))[:STORIES]
    outputs = []
    for instance in instances:
        instance.index_fields(model.vocab)
        tensors = Batch([instance]).as_tensor_dict()
        source, target = tensors["source_tokens"]["tokens"], tensors["target_tokens"]["tokens"]
        produced = model.t5(source["token_ids"], attention_mask=source["mask"], labels=target["token_ids"],
                            decoder_attention_mask=target["mask"])
        outputs.append({"loss": produced.loss.item(), "target_length": int(target["mask"].sum()),
                        "decoder_logits": produced.logits[0, :POSITIONS].tolist()})
    (CASE / "teacher_forced.json").write_text(json.dumps({"made_by": made_by(__file__), "cases": outputs}) + "\n")
    print(f"written to {CASE / 'teacher_forced.json'}")


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
