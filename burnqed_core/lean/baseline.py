"""The automation-only baseline: which single tactic closes a theorem alone.

Every solve rate is reported beside this baseline, and benchmarks report
their automation-resistant ("hard") split separately: a prover that only
learned to type ``omega`` should not look good. For each theorem the
tactics of `AUTOMATION_TACTICS` are tried in that order, each in one batched
round over the theorems still open; the first that closes the goal is the
theorem's automation tactic, and a theorem none closes is hard (``null`` in
``automation.json``, the format `burnqed_core.data.theorems.automation_map`
reads). ``exact?`` is left out: too slow in the embedded build.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, Field
from tqdm import tqdm

from burnqed_core.lean.types import GoalState, ProofEnv, Status
from burnqed_core.record_io import atomic_write_text
from burnqed_core.records import Theorem

log = logging.getLogger(__name__)

AUTOMATION_TACTICS: tuple[str, ...] = ("rfl", "trivial", "decide", "omega", "simp", "simp_all", "grind")


class BaselineReport(BaseModel):
    theorems: int
    closed: int = 0
    hard: int = 0
    by_tactic: dict[str, int] = Field(default_factory=dict)
    start_errors: list[str] = Field(default_factory=list, description="theorems whose statement did not elaborate")
    infra: list[str] = Field(default_factory=list, description="theorems with a timeout/crash on some tactic")
    elapsed_s: float = 0.0

    def summary(self) -> str:
        tactics = ", ".join(f"{k} {v}" for k, v in self.by_tactic.items() if v)
        s = (f"{self.theorems} theorems: {self.closed} closed by automation ({tactics or 'none'}), "
             f"{self.hard} hard")
        if self.start_errors:
            s += f", {len(self.start_errors)} did not start"
        if self.infra:
            s += f", {len(self.infra)} with infrastructure failures"
        return s + f" ({self.elapsed_s:.0f}s)"


async def automation_baseline(env: ProofEnv, theorems: Sequence[Theorem],
                              tactics: Sequence[str] = AUTOMATION_TACTICS,
                              progress: bool = False) -> tuple[dict[str, str | None], BaselineReport]:
    """name -> the first tactic of ``tactics`` that closes the theorem alone
    (None: none does, or the statement did not start), and a report."""
    t0 = time.monotonic()
    report = BaselineReport(theorems=len(theorems), by_tactic=dict.fromkeys(tactics, 0))
    result: dict[str, str | None] = {t.name: None for t in theorems}
    starts = await asyncio.gather(*(env.start_proof(t) for t in theorems))
    open_: dict[str, GoalState] = {}
    for t, r in zip(theorems, starts, strict=True):
        if r.ok and r.state is not None:
            open_[t.name] = r.state
        elif r.status.is_infra:
            report.infra.append(t.name)
        else:
            report.start_errors.append(t.name)
    bar = tqdm(total=len(tactics), desc="baseline", unit="tactic", disable=not progress)
    for tactic in tactics:
        names = list(open_)
        if not names:
            break
        results = await env.apply_many([(open_[n], tactic) for n in names])
        for n, r in zip(names, results, strict=True):
            if r.ok and r.state is not None and r.state.is_proved:
                result[n] = tactic
                report.by_tactic[tactic] += 1
                del open_[n]
            elif r.status.is_infra and n not in report.infra:
                report.infra.append(n)
            elif r.status is Status.REJECTED:
                log.warning("the sandbox rejected automation tactic %r: %s", tactic, r.message)
        bar.update(1)
    bar.close()
    await env.free(list(open_.values()))
    report.closed = sum(v is not None for v in result.values())
    report.hard = len(theorems) - report.closed - len(report.start_errors)
    report.elapsed_s = round(time.monotonic() - t0, 2)
    return result, report


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
