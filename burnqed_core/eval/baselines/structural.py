"""Baseline (c): the prover's search with no learned policy, measured once per benchmark and cached.

The search is the eval's (`burnqed_core.eval.run.run_eval`: ``eval.pass_k`` attempts at the largest node
budget of ``eval.budgets``, each with the eval's seed for that attempt, the per-theorem cap ``eval.timeout_s``,
the automation candidates of ``search.automation``, every proof re-checked as a whole theorem) with the policy
replaced by `burnqed_core.policy.structural.StructuralPolicy`, which proposes the structural steps of each goal
(intro, cases, induction, fun_induction, constructor ...) with uniform logprobs. What the learned policy adds
over structural steps plus automation is the prover's rate minus this one.

Equal compute: when the prover is read at pass@k it searches each theorem k times, and so does (c). Its policy
has no sampling, so with k > 1 each attempt lists a state's steps in an order drawn from that attempt's
per-expansion seeds (`StructuralPolicy` with ``seeded``; which equal-priority node is expanded first, and which
steps a long list keeps, then differ): k searches that differ as the prover's samples do, never one search read k
times. With k = 1 the steps keep their fixed order (the one-attempt baseline of before, and its files).
``StructuralBaseline.proved`` is its pass@k, ``attempt_rate`` its pass@1 (the mean over attempts).

The result (`StructuralBaseline`: nodes to proof per theorem) is keyed by `structural_key`: the theorems
(name, statement, preamble), the search settings the engine runs with (``search`` with the eval's budget,
seed and time cap; ``search.concurrency`` is kept, it sets the nodes each theorem gets per batch; only
``search.flush_every`` is left out), ``lean.tactic_timeout_s``, the structural policy's step limit, the Lean
version and `STRUCTURAL_VERSION`, and for (c) with retrieval whose retrieval is re-ranked, the re-ranker
(`burnqed_core.premises.rerank`: the prover's of that iteration, so (c) with retrieval gets the prover's
retrieval; measured again for each re-ranker). `measure_structural` reads ``structural-<key24>.json`` from the cache
directory, else from the theorem set's own directory (shipped there by `write_shipped_structural`, ``burnqed
lean baseline --structural``; one file per set and profile), else measures and caches it (not when Lean
failures left theorems unmeasured).
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from burnqed_core.config import PremiseStepsConfig, Profile, SearchConfig, StructuralStepsConfig
from burnqed_core.errors import DataError
from burnqed_core.eval.baselines.keyed import keyed_path, read_keyed, theorems_key, write_keyed
from burnqed_core.eval.baselines.records import StructuralBaseline
from burnqed_core.file_lock import file_lock
from burnqed_core.lean.types import ProofEnv
from burnqed_core.policy.structural import StructuralPolicy
from burnqed_core.premises.index import PremiseIndex
from burnqed_core.record_io import atomic_write_text
from burnqed_core.records import EvalResult, Theorem

log = logging.getLogger(__name__)

__all__ = ("STRUCTURAL_VERSION", "cache_path", "from_rows", "lock_file", "measure_structural",
           "partial_dir", "read_cached", "search_config", "structural_key", "write_shipped_structural")

STRUCTURAL_VERSION = 1  # the key of a one-attempt baseline is that of version 1 (its files stay valid)
FILE_PREFIX = "structural-"
OUTPUT_ONLY = frozenset({"flush_every"})  # search settings that change where results go, never what they are


def search_config(profile: Profile, retrieval: bool = False) -> SearchConfig:
    """The settings baseline (c)'s search runs with: ``search`` at the largest eval budget, the first eval
    attempt's seed and the eval's per-theorem time cap (what `run_eval` gives the engine), the policy removed:
    its structural steps come from the `StructuralPolicy` (the same list the prover's search adds), so the
    search's own structural candidates are off; with ``retrieval`` ("(c) with retrieval") the prover's premise
    steps are on, else off; its candidates are ranked by their priors (``search.rank`` 'prior': no model to
    score them), ``search.max_width`` and ``search.max_checks`` stay the prover's: equal checks."""
    from burnqed_core.eval.run import attempt_seed

    premises = profile.search.premises.model_copy(update={"enabled": True}) if retrieval else PremiseStepsConfig()
    return profile.search.model_copy(update={"max_nodes": max(profile.eval.budgets),
                                             "seed": attempt_seed(profile.search.seed, 0),
                                             "timeout_s": profile.eval.timeout_s,
                                             "structural": StructuralStepsConfig(), "premises": premises,
                                             "rank": "prior"})


# Search settings added after baseline (c) files were shipped: left out of the key while at their defaults, so
# that a file measured before them (when the search had none of them) still matches.
_NEWER: Mapping[str, Any] = MappingProxyType({"structural": StructuralStepsConfig().model_dump(mode="json"),
                                              "premises": PremiseStepsConfig().model_dump(mode="json"),
                                              "max_checks": None, "rank": "prior", "max_width": None})


def _search_payload(config: SearchConfig) -> dict[str, Any]:
    d = config.model_dump(mode="json", exclude=set(OUTPUT_ONLY))
    for k, default in _NEWER.items():
        if d.get(k) == default:
            d.pop(k, None)
    return d


def structural_key(theorems: Sequence[Theorem], profile: Profile, lean_version: str,
                   *, limit: int | None = None, retrieval: bool = False, rerank: str | None = None) -> str:
    """What a baseline (c) file was measured for (see the module docstring); ``limit``: the structural
    policy's step limit (None: the default `StructuralPolicy`'s); ``retrieval``: "(c) with retrieval";
    ``rerank``: the premise re-ranker that re-orders its retrieval (`PremiseIndex.rerank_key`; None: BM25 alone,
    the key of before)."""
    payload: dict[str, Any] = {
        "version": STRUCTURAL_VERSION,
        "lean": lean_version,
        "search": _search_payload(search_config(profile, retrieval)),
        "tactic_timeout_s": float(profile.lean.tactic_timeout_s),
        "budget": max(profile.eval.budgets),
        "timeout_s": float(profile.eval.timeout_s),
        "limit": limit if limit is not None else StructuralPolicy().limit,
    }
    if profile.eval.pass_k > 1:  # k seeded searches per theorem (equal compute with the prover's pass@k)
        payload["attempts"] = profile.eval.pass_k
    if retrieval and rerank is not None:  # the same retrieval as the prover's, re-ranked by its iteration's model
        payload["rerank"] = rerank
    return theorems_key(json.dumps(payload, sort_keys=True), theorems)


def cache_path(directory: Path, key: str) -> Path:
    return keyed_path(directory, FILE_PREFIX, key)


def lock_file(directory: Path, key: str) -> Path:
    """The lock held while baseline (c) of ``key`` is measured into ``directory`` (`file_lock`)."""
    return directory / f"{FILE_PREFIX}{key[:24]}.lock"


def partial_dir(directory: Path, key: str) -> Path:
    """Where baseline (c) of ``key`` is searched when it has a cache directory (kept until it is cached)."""
    return directory / f"{FILE_PREFIX}{key[:24]}.partial"


def read_cached(directory: Path, key: str) -> StructuralBaseline | None:
    """The baseline (c) file of ``key`` in ``directory``; None when absent; corrupt or of another key: an
    error naming it."""
    return read_keyed(cache_path(directory, key), StructuralBaseline, key, "baseline (c) file")


def from_rows(rows: Sequence[EvalResult], theorems: Sequence[Theorem], *, key: str, budget: int,
              attempts: int = 1) -> StructuralBaseline:
    """Baseline (c) from the eval rows of its searches (``attempts`` per theorem): a proved row gives its nodes
    to proof (and its proof), an unproved one None; a row with a Lean failure (``error == "infra"``) and a
    theorem without a row leave the theorem unmeasured (``infra``). ``nodes`` keeps the fewest nodes over the
    attempts (pass@k), ``per_attempt`` each attempt's (with more than one)."""
    nodes, proofs, infra, timeouts = _fewest_nodes(rows)
    names = [t.name for t in theorems]
    missing = [n for n in names if n not in nodes and n not in infra]
    if missing:
        log.warning("baseline (c): %d theorems have no search result (left unmeasured): %s", len(missing),
                    ", ".join(missing[:5]))
    infra = (infra | set(missing)) - {n for n, v in nodes.items() if v is not None}
    for n in infra:
        nodes.pop(n, None)
    wanted = set(names)
    per = _per_attempt(rows, attempts)
    per_attempt = {n: per[n] for n in names if n in nodes and n in per} if attempts > 1 else {}
    spent: dict[str, list[int]] = {}
    for r in rows:
        if r.attempt < attempts and not r.error:
            spent.setdefault(r.theorem, []).append(r.checks)
    return StructuralBaseline(key=key, budget=budget, attempts=attempts,
                              nodes={n: nodes[n] for n in names if n in nodes}, per_attempt=per_attempt,
                              infra=sorted(infra & wanted), timeouts=sorted((timeouts & wanted) - infra),
                              proofs={n: proofs[n] for n in names if n in proofs},
                              checks={n: sum(spent[n]) / len(spent[n]) for n in names if n in nodes and n in spent})


def _nodes_of(r: EvalResult) -> int:
    """A proved row's nodes to proof (its nodes used where it has none)."""
    return r.nodes_to_proof if r.nodes_to_proof is not None else r.nodes_used


def _per_attempt(rows: Sequence[EvalResult], attempts: int) -> dict[str, list[int | None]]:
    """Per theorem, each of the first ``attempts`` attempts' nodes to proof (None: unproved or not run); rows
    with an error left out."""
    per: dict[str, list[int | None]] = {}
    for r in rows:
        if r.attempt < attempts and not r.error:
            runs = per.setdefault(r.theorem, [None] * attempts)
            if r.proved:
                runs[r.attempt] = _nodes_of(r)
    return per


def _fewest_nodes(rows: Sequence[EvalResult]) -> tuple[dict[str, int | None], dict[str, list[str]], set[str],
                                                       set[str]]:
    """Over all rows: each theorem's fewest nodes to proof (None: searched, unproved) and that proof; the
    theorems with a Lean failure; the theorems with a search that timed out."""
    nodes: dict[str, int | None] = {}
    proofs: dict[str, list[str]] = {}
    infra: set[str] = set()
    timeouts: set[str] = set()
    for r in rows:
        if r.proved:
            n = _nodes_of(r)
            cur = nodes.get(r.theorem)
            if cur is None or n < cur:
                nodes[r.theorem], proofs[r.theorem] = n, list(r.proof)
        elif r.error == "infra":
            infra.add(r.theorem)
        else:
            nodes.setdefault(r.theorem, None)
            if r.timeout:
                timeouts.add(r.theorem)
    return nodes, proofs, infra, timeouts


async def measure_structural(
    profile: Profile,
    env: ProofEnv,
    theorems: Sequence[Theorem],
    *,
    cache_dir: Path | None,
    shipped: Path | None,
    lean_version: str,
    progress: bool = False,
    retrieval: bool = False,
    premises: PremiseIndex | None = None,
) -> StructuralBaseline:
    """Baseline (c) of ``theorems``: read from ``cache_dir`` when measured before, else from ``shipped`` (the
    theorem set's own directory, read only), else searched now in ``env`` (the eval's search with the
    structural policy, one attempt at the largest eval budget, every proof re-checked: `run_eval` into
    `partial_dir` of ``cache_dir``, so that a killed measurement resumes, or a temporary directory without
    one) and cached in ``cache_dir`` unless Lean failures left theorems unmeasured. Holds `lock_file` of
    ``cache_dir`` while it measures: a second process that needs the same baseline waits, then reads it."""
    if retrieval and premises is None:
        raise DataError("baseline (c) with retrieval needs the premise index")
    key = structural_key(theorems, profile, lean_version, retrieval=retrieval,
                         rerank=premises.rerank_key if premises is not None else None)
    found = _read_measured(key, cache_dir, shipped)
    if found is not None:
        return found
    if cache_dir is None:
        with tempfile.TemporaryDirectory(prefix="burnqed-structural-") as work:
            return await _search(profile, env, theorems, Path(work), key, None, progress, retrieval, premises)
    # Two runs that need the same baseline (a nightly eval beside a backfill, two profiles' experiments) share
    # the cache: the second waits for the first, then reads what it cached (or resumes its partial search).
    async with file_lock(lock_file(cache_dir, key), "baseline (c)"):
        found = read_cached(cache_dir, key)
        if found is not None:
            log.info("baseline (c) structural search: measured by another process meanwhile (%s)",
                     cache_path(cache_dir, key))
            return found
        # Searched in a directory of this key there: a killed measurement (hours for a large set at a large
        # budget) resumes from its flushed parts; removed once the result is cached.
        return await _search(profile, env, theorems, partial_dir(cache_dir, key), key, cache_dir, progress,
                             retrieval, premises)


def _read_measured(key: str, cache_dir: Path | None, shipped: Path | None) -> StructuralBaseline | None:
    for where, d in (("cached", cache_dir), ("shipped with the theorem set", shipped)):
        if d is None:
            continue
        found = read_cached(d, key)
        if found is not None:
            log.info("baseline (c) structural search: %s (%s)", where, cache_path(d, key))
            return found
    return None


async def _search(profile: Profile, env: ProofEnv, theorems: Sequence[Theorem], work: Path, key: str,
                  cache_dir: Path | None, progress: bool, retrieval: bool = False,
                  premises: PremiseIndex | None = None) -> StructuralBaseline:
    """Search ``theorems`` with the structural policy in ``work``; cache the result in ``cache_dir`` (and
    remove ``work``) unless Lean failures left theorems unmeasured."""
    from burnqed_core.eval.run import run_eval

    k = profile.eval.pass_k
    policy, budget = StructuralPolicy(seeded=k > 1), max(profile.eval.budgets)
    log.info("baseline (c)%s: searching %d theorems with the structural policy at %d nodes, %d attempt(s) "
             "(automation %s)", " with retrieval" if retrieval else "", len(theorems), budget, k,
             "on" if profile.search.automation.enabled else "off")
    try:
        rows = await run_eval(profile, policy, env, theorems, work, iteration=0,  # type: ignore[arg-type]
                              benchmark=str(profile.data.benchmark), budgets=[budget], pass_k=k,
                              progress=progress, search=search_config(profile, retrieval), premises=premises)
    finally:
        await policy.close()
    b = from_rows(rows, theorems, key=key, budget=budget, attempts=k).model_copy(update={"profile": profile.name})
    proved = sum(v is not None for v in b.nodes.values())
    log.info("baseline (c) structural search: proved %d/%d at %d nodes (%d unmeasured, %d timeouts)", proved,
             len(b.nodes), budget, len(b.infra), len(b.timeouts))
    if b.infra:
        log.warning("%d theorems saw Lean failures in the baseline (c) search (left unmeasured, not cached): %s",
                    len(b.infra), ", ".join(b.infra[:5]))
    elif cache_dir is not None:
        cache_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(cache_path(cache_dir, key), b.model_dump_json(indent=1) + "\n")
        shutil.rmtree(work, ignore_errors=True)
    return b


def write_shipped_structural(b: StructuralBaseline, set_dir: Path) -> Path:
    """Write baseline (c) beside a theorem set (``burnqed lean baseline --structural``), where
    `measure_structural` finds it by key. An older file of the same set and profile (the same theorem names
    and profile name, measured for other statements, settings or Lean) is replaced; the files of other sets in
    the directory, and of other profiles (tiny's and small's budgets differ, so do their keys), stay."""
    if b.infra:
        raise DataError(f"{len(b.infra)} theorems were left unmeasured by Lean failures: not written")
    names = set(b.nodes)
    return write_keyed(b, set_dir, FILE_PREFIX, lambda other: set(other.nodes) == names and other.profile == b.profile)
