"""``--include-package`` as AllenNLP had it: the package is found in the working directory even when
nothing puts that folder on ``sys.path`` (the ``distrain`` console script does not; ``python -P`` stands
in for it here), its public submodules are imported with it, and workers import it too, whatever their
own working directory and however they are started."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.configs import text_config, write_config
from support.paths import ROOT


def environment() -> dict:
    """The CLI's environment with distrain's sources importable and nothing of the tests' plugins."""
    return dict(os.environ, PYTHONPATH=str(ROOT / "src"), HF_HUB_OFFLINE="1")


def write_package(folder: Path) -> Path:
    """``upper_probe``: a tokenizer registered in a subpackage's module, under an empty ``__init__``, beside
    private and test modules and packages that must not be imported."""
    package = folder / "upper_probe"
    (package / "tokenizers").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "tokenizers" / "__init__.py").write_text("")
    (package / "tokenizers" / "upper.py").write_text(
        "from distrain.data.tokenizer import Tokenizer\n\n\n"
        "@Tokenizer.register('upper_probe')\n"
        "class UpperTokenizer(Tokenizer):\n"
        "    def tokenize(self, text):\n"
        "        return text.upper().split()\n"
    )
    for name in ("_private.py", "test_upper.py", "_internal/__init__.py", "tests/__init__.py"):
        (package / name).parent.mkdir(exist_ok=True)
        (package / name).write_text("raise RuntimeError('AllenNLP did not import this module')\n")
    (package / "workers.py").write_text(
        "from pathlib import Path\n\n\n"
        "def note(world, folder):\n"
        "    import upper_probe.tokenizers.upper\n"
        "    Path(folder, f'rank{world.rank}').write_text(upper_probe.__file__)\n"
    )
    return package


def test_a_package_in_the_working_directory_is_found_with_its_submodules(tmp_path, text_data):
    write_package(tmp_path)
    config = text_config(text_data)
    config["dataset_reader"]["tokenizer"] = {"type": "upper_probe"}
    path = write_config(tmp_path / "config.json", config)
    result = subprocess.run([sys.executable, "-P", "-m", "distrain", "check", str(path), "--include-package",
                             "upper_probe"], cwd=tmp_path, env=environment(), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert "config OK" in result.stdout


def test_a_package_found_nowhere_is_still_one_line(tmp_path, text_data):
    path = write_config(tmp_path / "config.json", text_config(text_data))
    result = subprocess.run([sys.executable, "-P", "-m", "distrain", "check", str(path), "--include-package",
                             "upper_probe"], cwd=tmp_path, env=environment(), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 2
    assert result.stderr.strip() == ("error: --include-package upper_probe: cannot import it "
                                     "(No module named 'upper_probe')")


SPAWN_FROM_ELSEWHERE = """
import os, sys
from distrain.plugins import import_plugins
os.chdir(sys.argv[1])
import_plugins(["upper_probe"])
os.chdir(sys.argv[2])  # the workers start in a folder without the package
from distrain.distributed.config import DistributedConfig
from distrain.config.schema import resolve_object
from distrain.runtime.spawn import spawn
import upper_probe.workers
problems = []
distributed = resolve_object(DistributedConfig, {"cuda_devices": [-1, -1]}, "distributed", problems).build()
spawn(upper_probe.workers.note, (sys.argv[3],), distributed, None, include_packages=("upper_probe",))
"""


@pytest.mark.parametrize("method", ["forkserver", "spawn"])
def test_workers_import_the_package_from_the_parents_folder_whatever_their_working_directory(tmp_path, method):
    package = write_package(tmp_path / "project")
    elsewhere, notes = tmp_path / "elsewhere", tmp_path / "notes"
    elsewhere.mkdir()
    notes.mkdir()
    result = subprocess.run([sys.executable, "-P", "-c", SPAWN_FROM_ELSEWHERE, str(package.parent), str(elsewhere),
                             str(notes)], env=environment() | {"DISTRAIN_START_METHOD": method}, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(path.name for path in notes.iterdir()) == ["rank0", "rank1"]
    assert {path.read_text() for path in notes.iterdir()} == {str(package / "__init__.py")}
