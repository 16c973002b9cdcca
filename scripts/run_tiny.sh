#!/usr/bin/env bash
# Set up (idempotent) and run the tiny CPU profile of the expert-iteration loop.
# Extra arguments go to `burnqed loop` (see `burnqed loop --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
exec burnqed loop --profile tiny "$@"
