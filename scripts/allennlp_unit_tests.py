"""Run AllenNLP's own unit tests against distrain's ``allennlp``: the measure of how much of AllenNLP's API it serves.

    python scripts/allennlp_unit_tests.py CLONE [--folders nn modules training/metrics data] [--timeout 120]
    python scripts/allennlp_unit_tests.py --quick    # the machinery alone, on a made-up clone of three tests

CLONE is a clone of allenai/allennlp the user made (the measure is taken at 80fb606, AllenNLP 2.10.1); nothing of it
is copied into the project. Its test folders are copied into a scratch folder outside both the clone and the project
and run there with pytest, one subprocess per folder: run inside the clone, pytest would put the clone's root on
``sys.path`` and its real ``allennlp`` package would be imported instead of distrain's. The tests read their fixtures
from ``CLONE/test_fixtures`` (the variable :data:`FIXTURES_VARIABLE`, which ``AllenNlpTestCase.FIXTURES_ROOT`` reads).

Each folder's passed / failed / errors / skipped are read from pytest's junit report. A test file that fails to import
hides its tests from pytest; its tests (``def test*`` in it, parametrized cases counted once) count as errors, so the
share is not raised by a file that does not even import. The last line is ``allennlp_unit_tests_passed_share=`` the
passed tests over those that ran (skipped ones, which need a GPU, left out).
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("nn", "modules", "training/metrics", "data")
#: where ``AllenNlpTestCase.FIXTURES_ROOT`` points when set (see distrain.allennlp.common.testing.test_case)
FIXTURES_VARIABLE = "DISTRAIN_ALLENNLP_TEST_FIXTURES"

PYTEST_INI = """[pytest]
python_files = *_test.py test_*.py
python_classes = Test* *Test
markers =
    java
    gpu: needs at least one GPU
filterwarnings =
    ignore::DeprecationWarning
    ignore::PendingDeprecationWarning
"""

#: a per-test time limit (pytest-timeout may not be installed): an alarm fails the test that overruns it
TIMEOUT_PLUGIN = '''
import os, signal
import pytest

LIMIT = int(os.environ.get("ALLENNLP_UNIT_TEST_TIMEOUT", "120"))


class TestTimedOut(Exception):
    pass


def _alarm(signum, frame):
    raise TestTimedOut(f"over {LIMIT} s")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(LIMIT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
'''


@dataclass
class Tally:
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    broken_files: list[str] = field(default_factory=list)
    #: each failing or erring test, ``file::Class::test: the first line of its message``
    failures: list[str] = field(default_factory=list)

    @property
    def ran(self) -> int:
        return self.passed + self.failed + self.errors

    def add(self, other: Tally) -> None:
        self.passed += other.passed
        self.failed += other.failed
        self.errors += other.errors
        self.skipped += other.skipped
        self.broken_files += other.broken_files
        self.failures += other.failures


def count_tests(path: Path) -> int:
    """The tests a file defines (functions named ``test*`` at module level or in a class), for a file that failed
    to import; 1 if even that cannot be read."""
    try:
        tree = ast.parse(path.read_text())
    except (OSError, SyntaxError):
        return 1
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            functions += [item for item in node.body if isinstance(item, ast.FunctionDef)]
    return max(1, sum(function.name.startswith("test") for function in functions))


def read_report(report: Path, tests_root: Path) -> Tally:
    """The tally of one junit report; a collection error (a testcase without a name of a test) counts as the
    tests of the file it could not import."""
    tally = Tally()
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        outcome = {child.tag for child in case} & {"failure", "error", "skipped"}
        if not case.get("classname") and "error" in outcome:  # the file itself failed to import
            module = case.get("name", "")
            path = tests_root.parent / (module.replace(".", "/") + ".py")
            tally.errors += count_tests(path) if path.is_file() else 1
            tally.broken_files.append(module)
        elif outcome & {"error", "failure"}:
            if "error" in outcome:
                tally.errors += 1
            else:
                tally.failed += 1
            problem = next(child for child in case if child.tag in ("error", "failure"))
            message = (problem.get("message") or problem.text or "").strip().splitlines() or [""]
            tally.failures.append(f"{case.get('classname', '')}::{case.get('name')}: "
                                  f"{message[0][:240]}")
        elif "skipped" in outcome:
            tally.skipped += 1
        else:
            tally.passed += 1
    return tally


def prepare(clone: Path, scratch: Path, folders: list[str]) -> Path:
    """Copy the clone's chosen test folders (and the packages' ``__init__.py`` above them) into ``scratch/tests``."""
    tests = scratch / "tests"
    for folder in folders:
        source = clone / "tests" / folder
        if not source.is_dir():
            raise SystemExit(f"allennlp_unit_tests: no folder tests/{folder} in {clone}")
        shutil.copytree(source, tests / folder, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
        parent = Path(folder).parent
        while True:
            init = clone / "tests" / parent / "__init__.py"
            if init.is_file():
                (tests / parent).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(init, tests / parent / "__init__.py")
            if parent == Path("."):
                break
            parent = parent.parent
    (scratch / "pytest.ini").write_text(PYTEST_INI)
    (scratch / "allennlp_unit_test_timeout.py").write_text(TIMEOUT_PLUGIN)
    return tests


def run_folder(folder: str, scratch: Path, tests: Path, environment: dict, limit: int, verbose: bool) -> Tally:
    report = scratch / f"report-{folder.replace('/', '-')}.xml"
    command = [sys.executable, "-m", "pytest", str(tests / folder), "-c", str(scratch / "pytest.ini"),
               "--rootdir", str(scratch), "-p", "no:cacheprovider", "-p", "allennlp_unit_test_timeout",
               "-q", "-rN", "--continue-on-collection-errors", "--tb=short" if verbose else "--tb=no", f"--junitxml={report}"]
    try:
        finished = subprocess.run(command, cwd=scratch, env=environment, timeout=limit, capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        print(f"allennlp_unit_tests: tests/{folder} ran over {limit} s; counted as it reported", file=sys.stderr)
        finished = None
    if verbose and finished is not None and finished.stderr.strip():
        print(finished.stderr[-5000:])
    if not report.is_file():
        tail = finished.stdout[-2000:] + finished.stderr[-2000:] if finished else ""
        print(f"allennlp_unit_tests: tests/{folder} wrote no report\n{tail}", file=sys.stderr)
        tally = Tally()
        tally.errors = sum(count_tests(path) for path in (tests / folder).rglob("*_test.py"))
        return tally
    return read_report(report, tests)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clone", type=Path, nargs="?", help="a clone of allenai/allennlp (its tests/ and test_fixtures/)")
    parser.add_argument("--quick", action="store_true",
                        help="run on a made-up clone (one test passes, one fails, one file does not import)")
    parser.add_argument("--folders", nargs="+", default=list(FOLDERS), help="folders under tests/ to run")
    parser.add_argument("--timeout", type=int, default=120, help="seconds one test may run")
    parser.add_argument("--folder-timeout", type=int, default=3600, help="seconds one folder may run")
    parser.add_argument("--verbose", action="store_true", help="print pytest's output and each failure's line")
    arguments = parser.parse_args(argv)
    if arguments.quick:
        with tempfile.TemporaryDirectory(prefix="allennlp-quick-clone-") as made:
            arguments.clone, arguments.folders = made_up_clone(Path(made)), ["nn"]
            return measure(arguments)
    if arguments.clone is None:
        parser.error("give CLONE (a clone of allenai/allennlp), or --quick")
    return measure(arguments)


def made_up_clone(folder: Path) -> Path:
    """A folder laid out as allenai/allennlp: ``tests/nn`` holding a test that passes, one that fails and a file
    that does not import (its one test counted as an error), and ``test_fixtures/``."""
    (folder / "tests" / "nn").mkdir(parents=True)
    (folder / "test_fixtures").mkdir()
    (folder / "tests" / "__init__.py").write_text("")
    (folder / "tests" / "nn" / "__init__.py").write_text("")
    (folder / "tests" / "nn" / "util_test.py").write_text(
        "import torch\nfrom allennlp.nn import util\n\n\ndef test_logsumexp():\n"
        "    assert abs(util.logsumexp(torch.zeros(2)).item() - 0.6931) < 1e-3\n\n\n"
        "def test_a_wrong_claim():\n    assert util.logsumexp(torch.zeros(2)).item() == 0\n")
    (folder / "tests" / "nn" / "missing_test.py").write_text(
        "from allennlp.no_such_module import X\n\n\ndef test_one():\n    pass\n")
    return folder


def measure(arguments: argparse.Namespace) -> int:
    clone = arguments.clone.resolve()
    if not (clone / "tests").is_dir() or not (clone / "test_fixtures").is_dir():
        print(f"allennlp_unit_tests: {clone} is not a clone of allenai/allennlp (no tests/ or test_fixtures/)",
              file=sys.stderr)
        return 2
    environment = dict(os.environ)
    environment[FIXTURES_VARIABLE] = str(clone / "test_fixtures")
    environment["ALLENNLP_UNIT_TEST_TIMEOUT"] = str(arguments.timeout)
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), environment.get("PYTHONPATH")]))
    total = Tally()
    with tempfile.TemporaryDirectory(prefix="allennlp-unit-tests-") as scratch_name:
        scratch = Path(scratch_name)
        tests = prepare(clone, scratch, arguments.folders)
        environment["PYTHONPATH"] += os.pathsep + str(scratch)  # the timeout plugin
        for folder in arguments.folders:
            tally = run_folder(folder, scratch, tests, environment, arguments.folder_timeout, arguments.verbose)
            total.add(tally)
            print(f"tests/{folder}: passed={tally.passed} failed={tally.failed} errors={tally.errors} "
                  f"skipped={tally.skipped} files_not_importing={len(tally.broken_files)}")
            for module in tally.broken_files:
                print(f"  does not import: {module}")
            for failure in tally.failures if arguments.verbose else ():
                print(f"  fails: {failure}")
    share = total.passed / total.ran if total.ran else 0.0
    print(f"total: passed={total.passed} failed={total.failed} errors={total.errors} skipped={total.skipped}")
    print(f"allennlp_unit_tests_passed_share={share:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
