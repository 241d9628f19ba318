"""What AllenNLP 2.10.1's ``huggingface_adamw`` (transformers 4.20's ``AdamW``) does to fixed parameters over four steps
of fixed gradients, with and without ``correct_bias``, and its ``huggingface_adafactor`` with its defaults, for tests/allennlp/test_allennlp_optim.py, written to
tests/allennlp_golden/optimizer_steps.json. Run with the oracle's Python (built by ../shared/allennlp-oracle/setup.sh),
not by pytest:

    /work/oracle/bin/python tests/allennlp_oracle/optimizer_steps.py
"""

import json
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")

import torch  # noqa: E402
from provenance import made_by  # noqa: E402
from allennlp.training.optimizers import HuggingfaceAdafactor, HuggingfaceAdamWOptimizer  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "allennlp_golden" / "optimizer_steps.json"
START = [[0.5, -1.25, 2.0], [0.0, 3.5, -0.75]]
GRADIENTS = [[[0.1, -0.2, 0.3], [1.5, 0.0, -2.0]], [[-0.4, 0.25, 0.05], [0.5, 1.0, 0.0]],
             [[0.3, 0.3, -0.6], [-1.0, 0.2, 0.8]], [[0.0, -0.1, 0.2], [0.4, -0.5, 0.6]]]
OPTIONS = {"lr": 0.05, "weight_decay": 0.01, "eps": 1e-6, "betas": [0.9, 0.98]}


def steps(correct_bias: bool) -> list:
    parameter = torch.nn.Parameter(torch.tensor(START, dtype=torch.float64))
    optimizer = HuggingfaceAdamWOptimizer([("weight", parameter)], correct_bias=correct_bias, **OPTIONS)
    after = []
    for gradient in GRADIENTS:
        parameter.grad = torch.tensor(gradient, dtype=torch.float64)
        optimizer.step()
        after.append(parameter.detach().tolist())
    return after


def adafactor_steps() -> list:
    """A matrix (its second moments factored by rows and columns) and a vector (not factored)."""
    matrix = torch.nn.Parameter(torch.tensor(START, dtype=torch.float32))
    vector = torch.nn.Parameter(torch.tensor(START[0], dtype=torch.float32))
    optimizer = HuggingfaceAdafactor([("matrix", matrix), ("vector", vector)])
    for gradient in GRADIENTS:
        matrix.grad = torch.tensor(gradient, dtype=torch.float32)
        vector.grad = torch.tensor(gradient[1], dtype=torch.float32)
        optimizer.step()
    return [matrix.detach().tolist(), vector.detach().tolist()]


if __name__ == "__main__":
    OUT.write_text(json.dumps({"made_by": made_by(__file__), "start": START, "gradients": GRADIENTS, "options": OPTIONS,
                               "correct_bias": steps(True), "no_bias_correction": steps(False),
                               "adafactor": adafactor_steps()}, indent=1) + "\n")
    print(OUT)
