#!/usr/bin/env bash
# Set up (idempotent) and run the tiny CPU profile of the expert-iteration loop
# through the Dagster pipeline: `burnqed loop` materialises the assets in this
# process against the instance in runs/tiny/dagster, so `dagster dev` shows the
# run afterwards (docs/operations.md: "Use the Dagster UI").
# The last iteration stops at its eval report: its trajectories only feed the next iteration, whose run makes
# them (`burnqed loop --iterations 1,2`). Extra arguments go to `burnqed loop` (see `burnqed loop --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/runs/tiny/dagster}"
exec burnqed loop --profile tiny --last-until eval_report "$@"
