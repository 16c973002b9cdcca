#!/usr/bin/env bash
# Idempotent set-up on a fresh machine: a venv in .venv with the CPU build of
# torch installed FIRST (a plain `torch` requirement would pull GBs of CUDA
# packages), burnqed with its dev extra, and the embedded Lean 4 backend
# (cached in ${BURNQED_HOME:-~/.cache/burnqed}/lean-wasm, reused across runs).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip
if ! python -c "import torch, sys; sys.exit(0 if torch.__version__.startswith('2.13.0') else 1)" 2>/dev/null; then
    python -m pip install -q torch==2.13.0
fi
python -m pip install -q -e '.[dev]'
burnqed lean setup
