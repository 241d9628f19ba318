"""Load your own ``distrain serve`` with locust (not installed by setup.sh: ``pip install locust``).

    locust -f scripts/locustfile.py --host http://127.0.0.1:8000 --users 32 --spawn-rate 8 --run-time 1m --headless

Each user posts one record after another to ``/predict``. Records come from ``DISTRAIN_LOCUST_DATA``, a
JSON-lines file in the format of ``distrain predict``'s input (default: data/drug_reviews/validation.jsonl
if it exists, else a few built-in reviews). A 503 (queue full) or 504 (timed out) counts as a failure.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

from locust import HttpUser, constant, task

DEFAULT_DATA = Path(__file__).resolve().parents[1] / "data" / "drug_reviews" / "validation.jsonl"
SAMPLES = [
    {"text": "This medication worked well for me with hardly any side effects."},
    {"text": "Terrible headaches and nausea for two weeks, I stopped taking it."},
    {"text": "It helped a little but I gained weight."},
]


def load_records() -> list[dict]:
    path = Path(os.environ.get("DISTRAIN_LOCUST_DATA", DEFAULT_DATA))
    if not path.exists():
        return SAMPLES
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


RECORDS = load_records()


class PredictUser(HttpUser):
    wait_time = constant(0)  # closed loop: the next request as soon as the last is answered

    @task
    def predict(self) -> None:
        with self.client.post("/predict", json=random.choice(RECORDS), catch_response=True) as response:
            if response.status_code != 200:
                response.failure(f"{response.status_code}: {response.text[:200]}")
