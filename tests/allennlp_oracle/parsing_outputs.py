"""What AllenNLP 2.10.1's ``decode_mst`` (``allennlp.nn.chu_liu_edmonds``) and ``AttachmentScores`` give, for
tests/modules/test_chu_liu_edmonds.py and tests/metrics/test_attachment_scores.py, written to
tests/allennlp_golden/parsing.json. Run with the oracle's Python (built by ../shared/allennlp-oracle/setup.sh),
not by pytest:

    /work/oracle/bin/python tests/allennlp_oracle/parsing_outputs.py

MST cases: seeded random energies, continuous (no ties) and small integers (many ties, which only AllenNLP's own
order of search resolves), with and without labels, some padded past ``length``. Metric cases: seeded random
predictions against gold heads and labels, with masks and ignored classes, fed in several batches.
"""

import json
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")

import numpy  # noqa: E402
import torch  # noqa: E402
from provenance import made_by  # noqa: E402
from allennlp.nn.chu_liu_edmonds import decode_mst  # noqa: E402
from allennlp.training.metrics import AttachmentScores  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "allennlp_golden" / "parsing.json"


def mst_cases() -> list[dict]:
    rng = numpy.random.default_rng(0)
    cases = []
    for index in range(60):
        has_labels = index % 2 == 0
        length = int(rng.integers(2, 9))
        padded = length + int(rng.integers(0, 3))
        shape = (3, padded, padded) if has_labels else (padded, padded)
        if index % 3 == 0:  # ties everywhere
            energy = rng.integers(0, 4, size=shape).astype(numpy.float64)
        else:
            energy = rng.random(shape)
        heads, labels = decode_mst(energy.copy(), length, has_labels=has_labels)
        cases.append({"energy": energy.tolist(), "length": length, "has_labels": has_labels,
                      "heads": heads.tolist(), "labels": None if labels is None else labels.tolist()})
    return cases


def metric_cases() -> list[dict]:
    generator = torch.Generator().manual_seed(0)
    cases = []
    for ignore in ([], [1], [0, 2]):
        metric = AttachmentScores(ignore_classes=ignore)
        batches = []
        for _ in range(3):
            size, length = 3, 6
            gold_heads = torch.randint(0, length + 1, (size, length), generator=generator)
            gold_labels = torch.randint(0, 4, (size, length), generator=generator)
            # predictions mostly right, so exact matches happen
            wrong = torch.rand((size, length), generator=generator) < 0.2
            heads = torch.where(wrong, torch.randint(0, length + 1, (size, length), generator=generator), gold_heads)
            wrong = torch.rand((size, length), generator=generator) < 0.2
            labels = torch.where(wrong, torch.randint(0, 4, (size, length), generator=generator), gold_labels)
            lengths = torch.randint(1, length + 1, (size,), generator=generator)
            mask = torch.arange(length).unsqueeze(0) < lengths.unsqueeze(1)
            mask[0, 0] = False  # a masked word inside a sentence (a parser's punctuation)
            metric(heads, labels, gold_heads, gold_labels, mask)
            batches.append({"predicted_heads": heads.tolist(), "predicted_labels": labels.tolist(),
                            "gold_heads": gold_heads.tolist(), "gold_labels": gold_labels.tolist(),
                            "mask": mask.tolist()})
        cases.append({"ignore_classes": ignore, "batches": batches, "metric": metric.get_metric()})
    return cases


def main() -> None:
    OUT.write_text(json.dumps({"made_by": made_by(__file__), "decode_mst": mst_cases(), "attachment_scores": metric_cases()}) + "\n")
    print(f"written to {OUT}")


if __name__ == "__main__":
    main()
