#!/usr/bin/env bash
# Set up (idempotent) and run the whole test suite. Extra arguments go to pytest.
# Two pytest processes at once (tests/conftest.py, --part): the tests that start Lean, one after the other, and
# every other test beside them; the second part's output is printed when both are done.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
ruff check .
# One torch intra-op thread per test process (and the processes they start): the two parts share the 2 cores, and
# with torch's default of one thread per core each small op of a training test waits for the core the other part
# holds (a LoRA test took 28.6 s with two threads, 2.1 s with one; docs/testing.md).
export OMP_NUM_THREADS=1
# Bytecode of the project's own modules kept in a cache outside the tree, also where the environment sets
# PYTHONDONTWRITEBYTECODE: else every test process and subprocess compiles them again (a whole-suite collection
# took ~19 CPU-s without it, ~11 with it).
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="${XDG_CACHE_HOME:-$HOME/.cache}/burnqed/pycache"
rest_log=$(mktemp)
trap 'rm -f "$rest_log"' EXIT
set +e
python -m pytest -q --durations=15 --part rest "$@" >"$rest_log" 2>&1 &
rest_pid=$!
python -m pytest -q --durations=25 --part lean "$@"
lean_rc=$?
wait "$rest_pid"
rest_rc=$?
set -e
echo
echo "== the tests that do not start Lean (--part rest)"
cat "$rest_log"
echo "== exit status: lean part $lean_rc, rest part $rest_rc"
# 5: a part collected no tests (fine for one part under -k/-m; both: a failure)
if [ "$lean_rc" -eq 5 ] && [ "$rest_rc" -eq 5 ]; then
    echo "pytest collected no tests: that is a failure" >&2
    exit 1
fi
for rc in "$lean_rc" "$rest_rc"; do
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ]; then
        exit "$rc"
    fi
done
exit 0
