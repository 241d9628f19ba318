"""Each test file's time in a whole-suite run, slowest first, kept in ``tests/durations.json`` (keyed by the
file's path, as in test ids: ``tests/distributed/test_fsdp.py``) so pytest-xdist starts the longest files first
(``conftest.py``). Regenerate it after a quiet whole-suite run:

    .venv/bin/python -m pytest --junitxml=/tmp/suite.xml && .venv/bin/python tests/support/durations.py /tmp/suite.xml
"""

from __future__ import annotations

import collections
import json
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

STORED = Path(__file__).resolve().parents[1] / "durations.json"


def file_durations(junit_xml: Path) -> dict[str, float]:
    """Seconds per test file (setup, call and teardown of its tests), slowest first, from a JUnit report."""
    seconds: collections.Counter = collections.Counter()
    for case in ElementTree.parse(junit_xml).iter("testcase"):
        parts = case.get("classname").split(".")  # tests.FOLDER.test_x[.TestClass]
        module = next(number for number, part in enumerate(parts) if part.startswith("test_"))  # not a class
        seconds["/".join(parts[:module + 1]) + ".py"] += float(case.get("time") or 0)
    return {name: round(total, 1) for name, total in seconds.most_common()}


def slowest_first() -> list[str]:
    """The stored file names, slowest first (empty when nothing is stored)."""
    return list(json.loads(STORED.read_text())) if STORED.exists() else []


if __name__ == "__main__":
    STORED.write_text(json.dumps(file_durations(Path(sys.argv[1])), indent=0) + "\n")
    print(f"wrote {STORED}")
