"""scripts/ kept working as distrain changes: every name a script imports from distrain (or from another script)
exists, every script answers ``--help``, and every script that CI can run (a CPU, CI's packages) runs ``--quick``
(launching, timing and assembling through ``scripts/harness.py``) and ends on a ``name=value`` line, as the
benchmarks do. The scripts import distrain inside functions, so only the
import scan sees a renamed name in a path ``--help`` does not take."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from support.cli import threads_per_test_process
from support.paths import ROOT

SCRIPTS = ROOT / "scripts"
TESTS = ROOT / "tests"
#: packages a script imports that CI does not install: locust, the AllenNLP oracle's
OPTIONAL = {"locust", "allennlp", "allennlp_models"}
#: imported by the scripts (or by locust, or by a job's workers), not run
MODULES = {"harness.py", "chaos_checks.py", "chaos_faults.py", "chaos_job.py", "chaos_probe.py", "soak_clients.py",
           "locustfile.py"}
#: scripts whose --quick is not run here, and why (each still answers --help, and its imports are checked); every
#: other script's --quick runs below, each cut to a few seconds on this 2-core machine (the script's --help and
#: docstring say what its quick leaves out)
NOT_HERE = {
    "gpu_smoke.py": "needs a CUDA device (exits 2 without one)",
    "allennlp_golden.py": "runs under the AllenNLP oracle's Python only; no quick mode",
    "bench_vs_allennlp.py": "trains with the AllenNLP oracle's Python too, a venv of its own that CI does not build",
    "chaos.py": "tests/scripts/test_chaos_and_soak.py runs its smoke (three faults)",
    "soak_serve.py": "tests/scripts/test_chaos_and_soak.py runs its smoke",
}


def environment(**extra: str) -> dict[str, str]:
    """harness.environment's (not imported here: importing it registers its callback in this test process), with this
    test process's share of the cores (support.cli.threads_per_test_process)."""
    path = os.pathsep.join(filter(None, [str(ROOT / "src"), str(SCRIPTS), os.environ.get("PYTHONPATH")]))
    return {"OMP_NUM_THREADS": str(threads_per_test_process()), **os.environ, "PYTHONPATH": path, "HF_HUB_OFFLINE": "1",
            **extra}


def scripts() -> list[Path]:
    return sorted(path for path in SCRIPTS.glob("*.py") if path.name not in MODULES)


def quick_scripts() -> list[str]:
    return [path.name for path in scripts() if path.name not in NOT_HERE]


# ----------------------------------------------------------------------------------- (a) imports
def imported_names(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name) of every ``from M import name`` and ``import M`` anywhere in the file (inside
    functions and ``try`` blocks too); ``name`` None for ``import M``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names]
    return found


def defines(path: Path, name: str) -> bool:
    """Whether a script module defines ``name`` at its top level (read, not run: importing a script
    registers its components in this test process)."""
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((alias.asname or alias.name.split(".")[0]) == name for alias in node.names):
                return True
        if isinstance(node, ast.Try):  # names registered inside `try: ... except ImportError`
            if any(isinstance(inner, (ast.FunctionDef, ast.ClassDef)) and inner.name == name for inner in node.body):
                return True
        if isinstance(node, ast.If):  # `if Callback is not None:` around a registered class
            if any(isinstance(inner, (ast.FunctionDef, ast.ClassDef)) and inner.name == name for inner in node.body):
                return True
    return False


def distrain_problem(module: str, name: str | None) -> str | None:
    try:
        imported = importlib.import_module(module)
    except ImportError as error:
        return f"{module}: {error}"
    if name is None or hasattr(imported, name):
        return None
    try:  # a submodule: `from distrain.experiment import assemble`
        importlib.import_module(f"{module}.{name}")
    except ImportError:
        return f"{module} has no {name}"
    return None


def test_every_name_the_scripts_import_from_distrain_or_from_each_other_exists():
    """And from the tests' helpers (gpu_smoke.py borrows some), and every other module they import is
    installed (or one CI leaves out on purpose)."""
    problems, seen = [], 0
    own = {path.stem: path for path in SCRIPTS.glob("*.py")}  # scripts/ and tests/ modules, by import name
    own |= {".".join(path.relative_to(TESTS).with_suffix("").parts): path for path in TESTS.rglob("*.py")}
    for path in sorted(SCRIPTS.glob("*.py")):
        for line, module, name in imported_names(path):
            root = module.split(".")[0]
            if module in own:  # a module of tests/ in a folder: `from support.cli import run_cli`
                root = module
            if root == "distrain":
                problem = distrain_problem(module, name)
            elif root in own:
                problem = None if name is None or defines(own[root], name) else f"{module}.py defines no {name}"
            elif root in OPTIONAL or root == "__future__" or importlib.util.find_spec(root) is not None:
                continue
            else:
                problem = f"{module} is not installed, nor a module of scripts/ or tests/"
            seen += 1
            if problem:
                problems.append(f"scripts/{path.name}:{line}: {problem}")
    assert not problems, "\n".join(problems)
    assert seen > 50  # the scan finds the imports inside functions too


def test_the_attributes_chaos_probe_wraps_exist():
    """chaos_probe wraps functions of distrain's modules by name (``module.function = wrapped(...)``)."""
    tree = ast.parse((SCRIPTS / "chaos_probe.py").read_text())
    modules = {alias.asname or alias.name: f"{node.module}.{alias.name}" for node in tree.body
               if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("distrain") for alias in node.names}
    used = {(node.value.id, node.attr) for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
            and isinstance(node.ctx, ast.Load)}  # what it reads (and so wraps), not the marker it sets
    missing = [f"{modules[alias]}.{attribute}" for alias, attribute in sorted(used)
               if not hasattr(importlib.import_module(modules[alias]), attribute)]
    assert used and not missing, missing


# -------------------------------------------------------------------------------------- (b) --help
HELP_ALL = """
import contextlib, io, json, runpy, sys
answers = {}
for path in sys.argv[1:]:
    out = io.StringIO()
    sys.argv = [path, "--help"]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            runpy.run_path(path, run_name="__main__")
        status = "did not exit"
    except SystemExit as done:
        status = done.code or 0
    except BaseException as error:
        status = f"{type(error).__name__}: {error}"
    answers[path] = [status, out.getvalue()]
print(json.dumps(answers))
"""


@pytest.fixture(scope="module")
def helps() -> dict[str, tuple]:
    """Every script's ``--help``, all in one process (one interpreter and torch import for them all)."""
    paths = [str(path) for path in scripts()]
    done = subprocess.run([sys.executable, "-c", HELP_ALL, *paths], capture_output=True, text=True, timeout=300,
                          env=environment(), cwd=SCRIPTS)
    assert done.returncode == 0, done.stderr[-3000:]
    return {Path(path).name: tuple(answer) for path, answer in json.loads(done.stdout.splitlines()[-1]).items()}


@pytest.mark.parametrize("name", [path.name for path in scripts()])
def test_every_script_answers_help(helps, name):
    status, shown = helps[name]
    assert status == 0 and "usage:" in shown, f"{name} --help: {status}\n{shown[-2000:]}"
    if name != "allennlp_golden.py":  # the oracle's script has no quick mode
        assert "--quick" in shown, f"{name} --help names no --quick"


def test_setup_sh_is_valid_bash():
    assert subprocess.run(["bash", "-n", str(SCRIPTS / "setup.sh")]).returncode == 0


def test_every_script_not_smoked_here_says_why_and_the_rest_are_smoked():
    assert set(NOT_HERE) <= {path.name for path in scripts()}
    assert len(NOT_HERE) <= 5 and len(quick_scripts()) >= 24  # a script left out says why here


# ------------------------------------------------------------------------------------- (c) --quick
@pytest.mark.parametrize("name", quick_scripts())
def test_quick_runs_and_ends_on_a_name_value_line(name, tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPTS / name), "--quick"], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path,
                          env=environment(DISTRAIN_CURVES="off", DISTRAIN_CACHE=str(tmp_path / "cache")))
    assert done.returncode == 0, f"{name} --quick failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    last = done.stdout.strip().splitlines()[-1]
    assert re.match(r"^[a-z][a-z0-9_]*=\S", last), f"{name} --quick ended on {last!r}"
