"""Both automation baselines of a benchmark, measured by the Lean pool and
cached per benchmark content.

(a) single tactic (`burnqed_core.lean.baseline.AUTOMATION_TACTICS`), (b)
definition-aware (`burnqed_core.lean.baseline.definition_aware_tactics`). A
theorem is "hard" when neither closes it. The cache file is keyed by a hash of
the benchmark's theorems (name, statement, preamble), the tactic lists and the
Lean version, so an edited benchmark file or another Lean is re-measured; a
measurement that saw infrastructure failures is not cached (those theorems
stay unmeasured).

Baseline (c), the same search as the prover's with no learned policy
(`burnqed_core.eval.structural`), is measured apart (it is a search, not a
tactic list) and travels here as `Baselines.structural`, so that the shards
of an eval share it with (a) and (b).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from burnqed_core.errors import DataError
from burnqed_core.lean.baseline import (
    AUTOMATION_TACTICS,
    DEFAWARE_SHAPES,
    automation_baseline,
    definition_aware_baseline,
)
from burnqed_core.lean.types import ProofEnv
from burnqed_core.record_io import atomic_write_text
from burnqed_core.records import Theorem

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

BASELINE_VERSION = 1


class StructuralBaseline(BaseModel):
    """Baseline (c) (`burnqed_core.eval.structural.measure_structural`): per theorem, the nodes the search
    with `burnqed_core.policy.structural.StructuralPolicy` (no learned policy; the profile's automation
    candidates) created before its proof, None when it found none within ``budget``.

    With ``attempts`` > 1 (the eval's pass@k) it searched each theorem that many times with as many seeds (the
    structural policy orders its steps by each attempt's seeds), so that the prover's k searches meet k searches
    of (c): ``nodes`` is the best of them (pass@k), ``per_attempt`` each one."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    key: str = ""
    budget: int = Field(0, ge=0, description="node budget of each search per theorem (the eval's largest)")
    attempts: int = Field(1, ge=1, description="searches per theorem, each with its own seed (the eval's pass@k)")
    nodes: dict[str, int | None] = Field(default_factory=dict,
                                         description="nodes to proof per measured theorem, the fewest over its "
                                                     "attempts (None: no attempt proved it)")
    per_attempt: dict[str, list[int | None]] = Field(
        default_factory=dict, description="nodes to proof per attempt (attempt order); empty for one attempt "
                                          "(then ``nodes`` is the one attempt)")
    infra: list[str] = Field(default_factory=list, description="theorems left unmeasured by a Lean failure")
    timeouts: list[str] = Field(default_factory=list,
                                description="searches stopped by the per-theorem time cap (counted unproved)")
    proofs: dict[str, list[str]] = Field(default_factory=dict, description="the proof found, per proved theorem")
    checks: dict[str, float] = Field(default_factory=dict, description="Lean tactic checks per measured theorem "
                                     "(the mean over its attempts); empty in files measured before it was counted")
    profile: str = Field("", description="the profile it was measured with (its key covers the settings; the "
                                         "name tells shipped files of one set apart)")

    def measured(self, name: str) -> bool:
        return name in self.nodes

    def proved(self, name: str, budget: int | None = None) -> bool:
        """Proved by some attempt within ``budget`` nodes (None: within its own budget; pass@k); False when not
        measured."""
        n = self.nodes.get(name)
        return n is not None and (budget is None or n <= budget)

    def attempt_rate(self, name: str, budget: int | None = None) -> float:
        """The fraction of its attempts that proved it within ``budget`` nodes (pass@1 as the mean over
        attempts); 0.0 when not measured."""
        runs = self.per_attempt.get(name)
        if not runs:
            return float(self.proved(name, budget))
        return sum(n is not None and (budget is None or n <= budget) for n in runs) / len(runs)


class Baselines(BaseModel):
    """Per theorem: the tactic of each baseline that closes it, or None; baseline (c) when measured."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    key: str = ""
    single: dict[str, str | None] = Field(default_factory=dict, description="baseline (a): one tactic alone")
    defaware: dict[str, str | None] = Field(default_factory=dict, description="baseline (b): definition-aware")
    infra: list[str] = Field(default_factory=list, description="theorems left unmeasured by a Lean failure")
    structural: StructuralBaseline | None = Field(
        None, description="baseline (c): the search with no learned policy (None: not measured; files written "
                          "before it have none)")
    structural_retrieval: StructuralBaseline | None = Field(
        None, description="baseline (c) with retrieval: the same search with the prover's premise steps too (None: "
                          "not measured; the search has no premise steps)")

    def measured(self, name: str) -> bool:
        return name in self.single and name in self.defaware

    def hard(self, name: str) -> bool | None:
        """Closed by neither baseline (None: not measured)."""
        if not self.measured(name):
            return None
        return self.single[name] is None and self.defaware[name] is None


def baseline_key(theorems: Sequence[Theorem], lean_version: str = "", tactic_timeout_s: float | None = None) -> str:
    """What a baseline file was measured for: the theorems, the tactic lists, the Lean version and the tactic
    timeout (a tactic that needs 40 s closes a theorem under a 60 s limit, not under 30 s)."""
    payload: dict[str, object] = {"version": BASELINE_VERSION, "single": list(AUTOMATION_TACTICS),
                                  "defaware": list(DEFAWARE_SHAPES), "lean": lean_version}
    if tactic_timeout_s is not None:
        payload["tactic_timeout_s"] = float(tactic_timeout_s)
    return theorems_key(json.dumps(payload), theorems)


def theorems_key(header: str, theorems: Sequence[Theorem]) -> str:
    """The key of a file measured on ``theorems`` (name, statement, preamble, in name order) under ``header``
    (what else the measurement depends on, as JSON)."""
    h = hashlib.sha256(header.encode())
    for t in sorted(theorems, key=lambda t: t.name):
        h.update(json.dumps([t.name, t.statement, t.preamble], ensure_ascii=False).encode())
    return h.hexdigest()


def keyed_path(directory: Path, prefix: str, key: str) -> Path:
    return directory / f"{prefix}{key[:24]}.json"


def read_keyed(path: Path, model: type[M], key: str, what: str) -> M | None:
    """The ``model`` record in ``path`` (None when absent); corrupt, or holding another key: an error naming
    the file."""
    if not path.exists():
        return None
    try:
        b = model.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValidationError, ValueError) as e:
        raise DataError(f"{path}: corrupt {what} ({str(e).splitlines()[0]}); delete it to re-measure") from None
    if getattr(b, "key", None) != key:
        raise DataError(f"{path}: {what} of another benchmark or settings (key {getattr(b, 'key', '')[:12]} != "
                        f"{key[:12]})")
    return b


def write_keyed(record: M, directory: Path, prefix: str, same_set: Callable[[M], bool]) -> Path:
    """Write ``record`` as ``<prefix><key24>.json`` in ``directory``; an older file of the prefix for which
    ``same_set`` holds (the same set re-measured) is removed, the files of other sets stay."""
    model = type(record)
    for old in directory.glob(f"{prefix}*.json"):
        try:
            other = model.model_validate_json(old.read_text(encoding="utf-8"))
        except (ValidationError, ValueError):
            continue
        if same_set(other):
            old.unlink()
    return atomic_write_text(keyed_path(directory, prefix, record.key),  # type: ignore[attr-defined]
                             record.model_dump_json(indent=1) + "\n")


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
