"""Search a theorem list into a trajectory output: progress, resume, SIGTERM.

`run_search` drives `SearchEngine.search_many` over the theorems not yet
saved in the output, hands every finished search to a `TrajectoryWriter`
(one part file per ``flush_every`` theorems), shows a tqdm bar (theorems
done, proved, rate, ETA) and keeps the run record beside the parts.

SIGTERM (what a cloud sends before preempting a spot instance) and SIGINT
stop the search at once: the searches in flight are dropped (a resume redoes
them), everything finished is flushed, the run record is closed with status
``interrupted``, and the report says so (the command exits 143). Resume
(``resume=True``) reads the saved results, skips those theorems, checks that
the run settings match the saved run record, and appends new parts: a
theorem is never written twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from tqdm import tqdm

from burnqed_core.errors import DataError
from burnqed_core.records import Theorem
from burnqed_core.search.engine import SearchEngine
from burnqed_core.search.trajectories import (
    OutputExistsError,
    ResumeMismatchError,
    RunRecord,
    RunSession,
    TrajectoryWriter,
    clean_temporaries,
    finished_theorems,
    list_parts,
    now_iso,
    read_results,
    read_run_record,
    write_run_record,
)

log = logging.getLogger(__name__)


@dataclass
class RunReport:
    out: Path
    total: int
    skipped: int = 0
    searched: int = 0
    proved: int = 0
    interrupted: bool = False
    signal: str = ""
    wall_s: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)

    @property
    def done(self) -> int:
        return self.skipped + self.searched


def check_unique_names(theorems: Sequence[Theorem]) -> None:
    seen: set[str] = set()
    dups = sorted({t.name for t in theorems if t.name in seen or seen.add(t.name)})
    if dups:
        raise DataError(f"theorem names must be unique (the output is keyed by name); repeated: {', '.join(dups[:5])}")


def prepare_output(out: Path, record: RunRecord, resume: bool) -> tuple[set[str], RunRecord]:
    """The saved theorem names and the run record to continue (resume) or a
    fresh one; refuses to mix runs."""
    saved_record = read_run_record(out)
    has_parts = bool(list_parts(out))
    if not resume:
        if has_parts or saved_record is not None:
            raise OutputExistsError(f"{out} already holds a search output: pass --resume to continue it, "
                                    f"or choose another --out")
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise OutputExistsError(f"{out} exists and is not an empty directory")
        return set(), record
    if out.exists() and not out.is_dir():
        raise OutputExistsError(f"{out} is a file; a search output is a directory of parts")
    removed = clean_temporaries(out)
    if removed:
        log.info("removed %d half-written part file(s) left by a killed run", removed)
    if saved_record is None:
        if has_parts:
            raise ResumeMismatchError(f"{out} has parts but no run record ({out}/_run.json): cannot check settings")
        return set(), record
    diffs = saved_record.mismatches(record)
    if diffs:
        raise ResumeMismatchError(f"cannot resume {out} with other settings: " + "; ".join(diffs))
    return finished_theorems(out), saved_record


async def run_search(
    engine: SearchEngine,
    theorems: Sequence[Theorem],
    out: str | Path,
    record: RunRecord,
    *,
    resume: bool = False,
    flush_every: int = 10,
    progress: bool = True,
    handle_signals: bool = True,
) -> RunReport:
    """Search every theorem not yet saved in ``out``; see the module docstring."""
    out = Path(out)
    check_unique_names(theorems)
    served = record.served_model
    saved, record = prepare_output(out, record, resume)
    todo = [t for t in theorems if t.name not in saved]
    report = RunReport(out=out, total=len(theorems), skipped=len(theorems) - len(todo))
    if resume:
        log.info("resume: %d of %d theorems already saved, %d to search", report.skipped, len(theorems), len(todo))
    session = RunSession(resumed=resume and bool(saved), theorems_at_start=len(saved), served_model=served)
    record.sessions.append(session)
    out.mkdir(parents=True, exist_ok=True)
    write_run_record(out, record)

    writer = TrajectoryWriter(out, flush_every, already_saved=saved)
    t0 = time.perf_counter()
    bar = tqdm(total=len(theorems), initial=report.skipped, unit="thm", desc="search", disable=not progress,
               dynamic_ncols=True)
    proved_before = sum(r.proved for r in read_results(out)) if saved else 0

    async def consume() -> None:
        async for outcome in engine.search_many(todo):
            r = outcome.result
            writer.add(outcome)
            report.searched += 1
            report.proved += r.proved
            if r.error:
                report.errors[r.error] = report.errors.get(r.error, 0) + 1
            bar.update(1)
            bar.set_postfix(proved=proved_before + report.proved, refresh=False)

    task = asyncio.ensure_future(consume())
    loop = asyncio.get_running_loop()
    installed: list[int] = []

    def on_signal(signum: int) -> None:
        if not report.interrupted:
            report.interrupted = True
            report.signal = signal.Signals(signum).name
            log.warning("%s: stopping; flushing %d finished theorem(s)", report.signal, len(writer.buffer))
            task.cancel()

    if handle_signals:
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, on_signal, sig)
                installed.append(sig)
    status: Literal["complete", "interrupted", "failed"] = "failed"
    try:
        try:
            await task
            status = "complete"
        except asyncio.CancelledError:
            if not report.interrupted:
                raise
            status = "interrupted"
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
        bar.close()
        writer.close()
        report.wall_s = time.perf_counter() - t0
        session.ended = session.ended or now_iso()
        session.status = status
        session.theorems_written = writer.theorems_written
        write_run_record(out, record)
    log.info("search %s: %d searched (%d proved), %d skipped, %.1f s", status, report.searched, report.proved,
             report.skipped, report.wall_s)
    return report
