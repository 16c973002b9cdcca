#!/usr/bin/env bash
# Set up (idempotent) and run the small CPU profile (configs/small.yaml: a ~5 M parameter model, larger
# budgets) for iterations 0, 1 and 2 through the Dagster pipeline, like scripts/run_tiny.sh: it takes
# hours on 2 cores (docs/results.md). Extra arguments go to `burnqed loop` (they come after the defaults, so a later
# `--iterations` wins).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/runs/small/dagster}"
exec burnqed loop --profile small --iterations 0,1,2 --last-until eval_report "$@"
