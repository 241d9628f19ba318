"""``import allennlp`` in a process of its own: distrain's modules where no AllenNLP is installed, the real
one wherever it is (the hook never shadows it), and one module object under both names."""

from __future__ import annotations

import subprocess
import sys

from support.cli import cli_environment


def python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=cli_environment(env))


def test_allennlp_names_are_distrains_own_modules_and_classes():
    # allennlp.data's Instance is distrain.allennlp's (AllenNLP's padding API over distrain's own Instance)
    done = python("import allennlp.data, allennlp.nn.util as u, distrain.data.fields as f, distrain.allennlp.nn.util as d;"
                  "import distrain.allennlp.data as a;"
                  "print(allennlp.data.Instance is a.Instance, issubclass(a.Instance, f.Instance), u is d, "
                  "allennlp.__name__)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "True", "distrain.allennlp"]


def test_a_name_distrain_lacks_is_a_plain_module_not_found():
    done = python("import allennlp.no_such_module")
    assert done.returncode == 1
    assert "ModuleNotFoundError: No module named 'allennlp.no_such_module'" in done.stderr


def test_a_real_allennlp_on_the_path_is_imported_instead(tmp_path):
    real = tmp_path / "allennlp"
    (real / "data").mkdir(parents=True)
    (real / "__init__.py").write_text("WHOSE = 'real'\n")
    (real / "data" / "__init__.py").write_text("WHOSE = 'real data'\n")
    done = python("import allennlp, allennlp.data; print(allennlp.WHOSE, '|', allennlp.data.WHOSE)",
                  PYTHONPATH=f"{tmp_path}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "real | real data"
