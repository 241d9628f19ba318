"""What AllenNLP 2.10.1's ``sanitize`` makes of the value in tests/allennlp/test_allennlp_predictor.py, printed as the
literal that test holds. Run with the oracle's Python (built by ../shared/allennlp-oracle/setup.sh):

    /work/oracle/bin/python tests/allennlp_oracle/sanitize_outputs.py
"""

import warnings

warnings.filterwarnings("ignore")

import numpy  # noqa: E402
import spacy  # noqa: E402
import torch  # noqa: E402
from allennlp.common.util import sanitize  # noqa: E402
from allennlp.data import Token  # noqa: E402


class Jsonable:
    def to_json(self):
        return {"from": "to_json"}


words = spacy.blank("en")("spaCy words")
value = {"tensor": torch.tensor([[1.5, 2.0]]), "array": numpy.arange(3), "float32": numpy.float32(0.5),
         "int64": numpy.int64(7), "bool_": numpy.bool_(True), "tuple": (1, "x", None), "set": {2},
         "tokens": [Token("token"), words[1]], "object": Jsonable(), "bool": False}
print(f"SANITIZED = {sanitize(value)!r}")
try:
    sanitize(object())
except ValueError:
    print("UNSANITIZABLE = ValueError")
