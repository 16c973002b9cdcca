"""Both automation baselines of a benchmark, measured by the Lean pool and
cached per benchmark content.

(a) single tactic (`burnqed_core.eval.baselines.single`), (b)
definition-aware (`burnqed_core.eval.baselines.defaware`), measured together into one `Baselines` record. A
theorem is "hard" when neither closes it. The cache file is keyed by a hash of
the benchmark's theorems (name, statement, preamble), the tactic lists and the
Lean version, so an edited benchmark file or another Lean is re-measured; a
measurement that saw infrastructure failures is not cached (those theorems
stay unmeasured).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

from burnqed_core.errors import DataError
from burnqed_core.eval.baselines.defaware import DEFAWARE_SHAPES, definition_aware_baseline
from burnqed_core.eval.baselines.keyed import keyed_path, read_keyed, theorems_key, write_keyed
from burnqed_core.eval.baselines.records import Baselines
from burnqed_core.eval.baselines.single import AUTOMATION_TACTICS, automation_baseline
from burnqed_core.lean.types import ProofEnv
from burnqed_core.record_io import atomic_write_text
from burnqed_core.records import Theorem

log = logging.getLogger(__name__)

BASELINE_VERSION = 1


def baseline_key(theorems: Sequence[Theorem], lean_version: str = "", tactic_timeout_s: float | None = None) -> str:
    """What a baseline file was measured for: the theorems, the tactic lists, the Lean version and the tactic
    timeout (a tactic that needs 40 s closes a theorem under a 60 s limit, not under 30 s)."""
    payload: dict[str, object] = {"version": BASELINE_VERSION, "single": list(AUTOMATION_TACTICS),
                                  "defaware": list(DEFAWARE_SHAPES), "lean": lean_version}
    if tactic_timeout_s is not None:
        payload["tactic_timeout_s"] = float(tactic_timeout_s)
    return theorems_key(json.dumps(payload), theorems)


def cache_path(cache_dir: Path, key: str) -> Path:
    return keyed_path(cache_dir, "baselines-", key)


def read_cached(cache_dir: Path, key: str) -> Baselines | None:
    return read_keyed(cache_path(cache_dir, key), Baselines, key, "baseline cache")


async def measure_baselines(env: ProofEnv, theorems: Sequence[Theorem], cache_dir: Path | None,
                            *, lean_version: str = "", progress: bool = False,
                            shipped: Path | None = None, tactic_timeout_s: float | None = None) -> Baselines:
    """Both baselines of ``theorems``: read from ``cache_dir`` when measured
    before, else from ``shipped`` (the theorem set's own directory, read only:
    `write_shipped` put the file there), else measured now and cached. The
    key covers the theorems, the tactic lists, the Lean version and the tactic
    timeout, so a file measured for another benchmark, another Lean or another
    timeout is never used."""
    key = baseline_key(theorems, lean_version, tactic_timeout_s)
    for where, d in (("cached", cache_dir), ("shipped with the theorem set", shipped)):
        if d is None:
            continue
        cached = read_cached(d, key)
        if cached is not None:
            log.info("automation baselines: %s (%s)", where, cache_path(d, key))
            return cached
    single, rep_a = await automation_baseline(env, theorems, progress=progress)
    defaware, rep_b = await definition_aware_baseline(env, theorems, progress=progress)
    infra = sorted(set(rep_a.infra) | set(rep_b.infra))
    for n in infra:
        single.pop(n, None)
        defaware.pop(n, None)
    log.info("baseline (a) single tactic: %s", rep_a.summary())
    log.info("baseline (b) definition-aware: %s", rep_b.summary())
    b = Baselines(key=key, single=single, defaware=defaware, infra=infra)
    if cache_dir is not None and not infra:
        cache_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(cache_path(cache_dir, key), b.model_dump_json(indent=1) + "\n")
    elif infra:
        log.warning("%d theorems saw Lean failures while measuring the baselines (left unmeasured, not cached): %s",
                    len(infra), ", ".join(infra[:5]))
    return b


def write_shipped(baselines: Baselines, set_dir: Path) -> Path:
    """Write measured baselines beside a theorem set (``burnqed lean baseline
    --eval-baselines``), where `measure_baselines` finds them by key. Several
    sets can share a directory (``bundled:dev`` and ``bundled:test``): an older
    file of the same set (the same theorem names, measured for other
    statements, tactics, Lean or timeout) is replaced, the others stay. Baseline (c) is not written here
    (`burnqed_core.eval.structural.write_shipped_structural`)."""
    if baselines.infra:
        raise DataError(f"{len(baselines.infra)} theorems were left unmeasured by Lean failures: not written")
    baselines = baselines.model_copy(update={"structural": None})  # (c) has a file of its own, with its own key
    names = set(baselines.single) | set(baselines.defaware)
    return write_keyed(baselines, set_dir, "baselines-",
                       lambda other: set(other.single) | set(other.defaware) == names)
