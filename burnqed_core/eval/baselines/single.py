"""Baseline (a): which single automation tactic closes a theorem alone.

Every solve rate is reported beside this baseline, and benchmarks report
their automation-resistant ("hard") split separately: a prover that only
learned to type ``omega`` should not look good. For each theorem the
tactics of `AUTOMATION_TACTICS` are tried in that order, each in one batched
round over the theorems still open (`burnqed_core.eval.baselines.rounds.first_closing`); the first that closes
the goal is the theorem's automation tactic, and a theorem none closes is hard (``null`` in
``automation.json``, `write_automation`; the format `burnqed_core.data.theorems.load.automation_map`
reads). ``exact?`` is left out: too slow in the embedded build.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path

from burnqed_core.data.theorems.load import automation_map, load_theorems
from burnqed_core.data.theorems.sampling import stratified_sample
from burnqed_core.eval.baselines.rounds import BaselineReport, first_closing
from burnqed_core.lean.types import ProofEnv
from burnqed_core.record_io import atomic_write_text
from burnqed_core.records import Theorem

AUTOMATION_TACTICS: tuple[str, ...] = ("rfl", "trivial", "decide", "omega", "simp", "simp_all", "grind")


async def automation_baseline(env: ProofEnv, theorems: Sequence[Theorem],
                              tactics: Sequence[str] = AUTOMATION_TACTICS,
                              progress: bool = False) -> tuple[dict[str, str | None], BaselineReport]:
    """name -> the first tactic of ``tactics`` that closes the theorem alone
    (None: none does, or the statement did not start), and a report."""
    return await first_closing(env, theorems, {t.name: list(tactics) for t in theorems}, progress=progress,
                               by_tactic=tactics)


def write_automation(mapping: Mapping[str, str | None], path: Path, merge: bool = True) -> Path:
    """Write ``automation.json`` (sorted by name). With ``merge``, entries of an
    existing file for other theorems are kept (one file serves several sets)."""
    data: dict[str, str | None] = {}
    if merge and path.exists():
        old = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(old, dict):
            data.update(old)
    data.update(mapping)
    atomic_write_text(path, json.dumps(dict(sorted(data.items())), indent=1, ensure_ascii=False) + "\n")
    return path


async def benchmark_automation(spec: str, sample: int | None, env: Callable[[], Awaitable[ProofEnv]]
                               ) -> tuple[dict[str, str | None], int]:
    """Baseline (a) of the benchmark ``spec`` (its fixed sample of ``sample`` theorems when set: the theorems the
    eval reports): read from the ``automation.json`` beside it for the theorems it covers, measured in Lean
    (``env``, started only then) for the rest. Returns name -> closing tactic (None: hard), and how many theorems
    were measured now."""
    theorems = load_theorems(spec)
    if sample is not None:  # the eval's own sample (`burnqed_core.eval.plan.set_theorems`)
        theorems = stratified_sample(theorems, sample)
    known = {k: v for k, v in (automation_map(spec) or {}).items() if k in {t.name for t in theorems}}
    missing = [t for t in theorems if t.name not in known]
    if missing:
        measured, _report = await automation_baseline(await env(), missing, progress=True)
        known.update(measured)
    return known, len(missing)
