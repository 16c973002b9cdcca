"""Tactic pairs from a Lean repository traced by LeanDojo (the ``trace`` extra).

LeanDojo (``lean_dojo``, deprecated upstream but still the tracer the seeds
used) builds a repository at a commit with an instrumented Lean and returns
a ``TracedRepo``; each ``TracedTheorem`` has ``theorem.full_name``,
``file_path``, ``start``/``end`` positions (``line_nb``, ``column_nb``) and
``get_traced_tactics()``, whose items have ``tactic``, ``state_before`` and
``state_after`` (``"no goals"`` when the tactic closed the proof).

Tracing needs a native Lean toolchain and the network, so it runs only on a
prod box; `traced_entries` is the conversion, written against those
attributes only (duck-typed), so that it is tested on objects built in the
tests. It produces exactly the entries of a LeanDojo Benchmark 4 split file
(the same filter as LeanDojo's own benchmark script: no tactic on a
``no goals`` state, no bare ``·``), which `read_leandojo` turns into our
records, so both prod sources share one reader.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from burnqed_core.data.theorems.external import NO_GOALS, LeanDojoData, read_leandojo
from burnqed_core.errors import DataError

log = logging.getLogger(__name__)

TRACED_FILE = "leandojo_traced.json"


class _Pos(Protocol):
    line_nb: int
    column_nb: int


class _TracedTactic(Protocol):
    tactic: str
    state_before: str
    state_after: str


def _pos(p: Any) -> list[int]:
    if p is None:
        return []
    if hasattr(p, "line_nb"):
        return [int(p.line_nb), int(p.column_nb)]
    return [int(x) for x in p]


def traced_entries(traced_theorems: Iterable[Any], url: str = "", commit: str = "") -> list[dict[str, Any]]:
    """LeanDojo Benchmark 4 entries (``{url, commit, file_path, full_name,
    start, end, traced_tactics}``) of traced theorems; theorems without a
    traced tactic (term-mode proofs) are left out."""
    out: list[dict[str, Any]] = []
    for thm in traced_theorems:
        tactics = [
            {"tactic": t.tactic, "annotated_tactic": None, "state_before": t.state_before,
             "state_after": t.state_after}
            for t in thm.get_traced_tactics()
            if t.state_before != NO_GOALS and t.tactic.strip() != "·"
        ]
        if not tactics:
            continue
        out.append({
            "url": url, "commit": commit, "file_path": str(thm.file_path), "full_name": thm.theorem.full_name,
            "start": _pos(thm.start), "end": _pos(getattr(thm, "end", None)), "traced_tactics": tactics,
        })
    return out


def pairs_from_traced(traced_theorems: Iterable[Any], out_dir: Path, url: str = "", commit: str = "") -> LeanDojoData:
    """Write the entries of ``traced_theorems`` to ``out_dir/leandojo_traced.json`` and read them back as
    theorems and tactic pairs."""
    entries = traced_entries(traced_theorems, url, commit)
    if not entries:
        raise DataError(f"LeanDojo traced no theorem with tactics in {url or 'the repository'}@{commit}")
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / TRACED_FILE
    path.write_text(json.dumps(entries), encoding="utf-8")
    return read_leandojo(path, split="train")


def trace_repo(url: str, commit: str, out_dir: Path) -> LeanDojoData:  # pragma: no cover - needs LeanDojo + network
    """Trace ``url`` at ``commit`` with LeanDojo and convert its theorems (`pairs_from_traced`)."""
    try:
        from lean_dojo import LeanGitRepo, trace  # type: ignore[import-not-found]
    except ImportError:
        raise DataError("data.trace_repo needs LeanDojo: pip install -e '.[trace]'") from None
    repo = LeanGitRepo(url, commit)
    log.info("tracing %s@%s with LeanDojo (builds the repository; hours for Mathlib)", url, commit)
    traced = trace(repo)
    own = [t for t in traced.get_traced_theorems() if t.repo == traced.repo]  # not its dependencies'
    return pairs_from_traced(own, out_dir, url=url, commit=commit)
