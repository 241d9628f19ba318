"""The environment's ``.pth`` line (written by ``scripts/setup.sh``): plain ``python`` serves ``import allennlp``,
and start-up imports no ``distrain``, so the tree a process's path puts first is the distrain it gets (a
benchmark of another revision, a worktree)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from distrain.compat import allennlp_imports

SRC = Path(allennlp_imports.__file__).resolve().parents[2]


def plain_python(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """``python -c CODE`` with nothing of the test's path: only what the environment's start-up puts there."""
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", **env}, timeout=120)


def test_the_pth_line_is_installed_and_imports_no_distrain_at_start_up(tmp_path):
    assert Path(sysconfig.get_paths()["purelib"], "distrain-allennlp.pth").exists(), "run scripts/setup.sh"
    done = plain_python("import sys; print('distrain' in sys.modules, [type(f).__name__ for f in sys.meta_path][:3])",
                        tmp_path)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    imported, finders = done.stdout.split(" ", 1)
    assert imported == "False" and "AllenNLPFinder" in finders


def test_plain_python_serves_allennlp_from_the_tree_its_path_puts_first(tmp_path):
    other = tmp_path / "other" / "src"
    shutil.copytree(SRC / "distrain", other / "distrain", ignore=shutil.ignore_patterns("__pycache__"))
    code = "import allennlp.nn.util, distrain; print(distrain.__file__); print(allennlp.nn.util.get_text_field_mask)"
    done = plain_python(code, tmp_path, PYTHONPATH=str(other))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == str(other / "distrain" / "__init__.py")


def test_a_tree_without_the_hook_starts_without_a_word(tmp_path):
    """An older revision (no ``compat/allennlp_imports.py``) first on the path: the line stands aside silently."""
    old = tmp_path / "old" / "src" / "distrain"
    old.mkdir(parents=True)
    (old / "__init__.py").write_text("")
    done = plain_python("import distrain; print(distrain.__file__)", tmp_path, PYTHONPATH=str(old.parent))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.strip() == str(old / "__init__.py")
