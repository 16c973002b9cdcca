"""What a stage of iteration N reads besides its own iteration's outputs.

Iteration N reads iteration N-1's adapter or merged model (warm start), the
trajectories of every iteration < N (training mix, theorem selection, EBM)
and the eval results of every iteration < N ("newly solved"). These are not
edges of the Dagster asset graph (a back edge would close a cycle, and
Dagster 1.13 has no "previous partition" mapping for dynamic partitions),
so they are read through the run directory layout here, and a missing one
is an error naming the iteration (the partition) to materialise first.
The pipeline records in each materialisation which iterations it used.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from burnqed_core.config import Profile
from burnqed_core.data.selection import Selection
from burnqed_core.errors import BurnqedError
from burnqed_core.loop.layout import IterationLayout
from burnqed_core.loop.markers import is_done
from burnqed_core.records import Theorem

log = logging.getLogger(__name__)


class LoopError(BurnqedError):
    """The loop cannot run as asked (e.g. iteration N before N-1)."""


def require(stage_dir: Path, what: str, iteration: int | None, needed_by: str) -> Path:
    """``stage_dir`` if its stage finished, else a `LoopError` naming the partition to materialise."""
    if is_done(stage_dir):
        return stage_dir
    where = f"{what}[{iteration}]" if iteration is not None else what
    raise LoopError(f"{needed_by} needs {where}, which is not materialised ({stage_dir} has no finished output): "
                    f"materialise {where} first")


def trajectory_dirs(earlier: list[IterationLayout]) -> list[Path]:
    """Every trajectory output (``*.traj``) of the given iterations."""
    return [p for it in earlier for p in sorted(it.trajectories.glob("*.traj")) if p.is_dir()]


def benchmark_theorems(profile: Profile) -> list[Theorem]:
    """The held-out benchmark (its fixed sample of ``eval.sample`` when set), cut to ``eval.max_theorems`` (first
    by name) when set."""
    from burnqed_core.data.selection import stratified_sample
    from burnqed_core.data.theorems import load_theorems

    theorems = load_theorems(profile.data.benchmark)
    if profile.eval.sample is not None:
        theorems = stratified_sample(theorems, profile.eval.sample)
    return _cut(profile, theorems)


def _cut(profile: Profile, theorems: list[Theorem]) -> list[Theorem]:
    if profile.eval.max_theorems is not None:
        return sorted(theorems, key=lambda t: t.name)[: profile.eval.max_theorems]
    return theorems


def eval_theorems(profile: Profile) -> dict[str, list[Theorem]]:
    """Every set the eval reports (`burnqed_core.eval.steps.eval_set_specs`: ``data.benchmark``, its
    ``eval.sample`` when set, then ``eval.also``, each of those its ``eval.also_sample`` when set), each cut to
    ``eval.max_theorems``. A
    theorem name in two sets is an error naming both (the eval's rows are keyed by theorem)."""
    from burnqed_core.data.selection import stratified_sample
    from burnqed_core.data.theorems import load_theorems
    from burnqed_core.errors import DataError
    from burnqed_core.eval.steps import eval_set_specs

    out: dict[str, list[Theorem]] = {}
    where: dict[str, str] = {}
    for spec in eval_set_specs(profile):
        theorems = load_theorems(spec)
        if spec != profile.data.benchmark and profile.eval.also_sample is not None:
            theorems = stratified_sample(theorems, profile.eval.also_sample)
        if spec == profile.data.benchmark and profile.eval.sample is not None:
            theorems = stratified_sample(theorems, profile.eval.sample)
        theorems = _cut(profile, theorems)
        if not theorems:
            raise DataError(f"eval set {spec}: no theorems")
        for t in theorems:
            if t.name in where:
                raise DataError(f"theorem {t.name!r} is in two eval sets ({where[t.name]} and {spec}): rename "
                                "one or drop the set from eval.also")
            where[t.name] = spec
        out[spec] = theorems
    return out


def search_selection(profile: Profile, n: int, earlier_trajectories: list[Path],
                     withheld: Collection[str] = ()) -> Selection:
    """The corpus theorems iteration ``n`` searches: a seeded sample that leaves out the benchmark, theorems
    searched by earlier iterations and those automation closes alone (`select_theorems`), weighted towards the
    families where earlier searches failed (``data.search_failed_family_boost``); theorems no earlier search
    proved may be searched again when never-searched ones run out (``data.search_retry_failed``). ``withheld``:
    the exercises of the base split (``data.withhold_fraction``), drawn before the other theorems, at most
    ``data.search_exercises`` of them."""
    from burnqed_core.data.selection import family_fail_rates, select_theorems
    from burnqed_core.data.theorems import automation_map, load_theorems
    from burnqed_core.loop.corpus import corpus_theorems
    from burnqed_core.trajectory_io import finished_theorems, read_results

    d = profile.data
    if d.search_pool is not None:
        return _pool_selection(profile, n, earlier_trajectories)
    corpus = corpus_theorems(profile)
    benchmark = load_theorems(d.benchmark)
    easy = {k for k, v in (automation_map(d.corpus) or {}).items() if v is not None}
    searched: set[str] = set()
    verdicts: dict[str, bool] = {}  # theorem -> proved by any earlier search
    for p in earlier_trajectories:
        searched |= finished_theorems(p)  # (raises on a theorem saved twice)
        for r in read_results(p):
            if r.error != "start":  # a statement that does not elaborate says nothing about its family
                verdicts[r.theorem] = verdicts.get(r.theorem, False) or r.proved
    rates = family_fail_rates(verdicts, {t.name: t.family for t in corpus})
    retry = [name for name, ok in verdicts.items() if not ok] if d.search_retry_failed else []
    return select_theorems(corpus, d.search_theorems, d.seed + n, searched=searched,
                           held_out={t.name for t in benchmark}, easy=easy, held_out_theorems=benchmark,
                           retry=retry, family_fail_rate=rates, failed_family_boost=d.search_failed_family_boost,
                           prefer=withheld, prefer_max=d.search_exercises)


def _pool_selection(profile: Profile, n: int, earlier_trajectories: list[Path]) -> Selection:
    """`search_selection` on ``data.search_pool``: a seeded draw of theorems never searched, spread over the
    pool's families (weighted towards failing ones), with up to ``data.search_retry_max`` theorems that earlier
    searches failed on drawn first; those one automation tactic closes alone (the ``automation.json`` beside the
    pool, when there is one) are left out. Every theorem of an eval set (``data.benchmark``, ``eval.also``) and of a
    held-out split is left out, by name and by split."""
    from burnqed_core.data.selection import family_fail_rates, select_theorems
    from burnqed_core.data.theorems import automation_map, load_theorems
    from burnqed_core.eval.steps import eval_set_specs
    from burnqed_core.trajectory_io import finished_theorems, read_results

    d = profile.data
    assert d.search_pool is not None
    pool = load_theorems(d.search_pool)
    easy = {k for k, v in (automation_map(d.search_pool) or {}).items() if v is not None}
    held = [t for spec in eval_set_specs(profile) for t in load_theorems(spec)]
    searched: set[str] = set()
    verdicts: dict[str, bool] = {}
    for p in earlier_trajectories:
        searched |= finished_theorems(p)
        for r in read_results(p):
            if r.error != "start":
                verdicts[r.theorem] = verdicts.get(r.theorem, False) or r.proved
    rates = family_fail_rates(verdicts, {t.name: t.family for t in pool})
    failed = sorted(name for name, ok in verdicts.items() if not ok) if d.search_retry_failed else []
    return select_theorems(pool, d.search_theorems, d.seed + n, searched=searched, held_out_theorems=held,
                           easy=easy, retry=failed, family_fail_rate=rates,
                           failed_family_boost=d.search_failed_family_boost,
                           prefer=failed if d.search_retry_max is not None else (),
                           prefer_max=d.search_retry_max)


def earlier_solved(eval_dirs: list[Path]) -> set[str] | None:
    """Theorems proved by the evals in ``eval_dirs``, those of every earlier iteration (None at iteration 0); a
    missing or corrupt earlier eval raises, naming the file (`burnqed_core.eval.run.earlier_solved`)."""
    from burnqed_core.eval.run import earlier_solved as read_earlier_solved

    if not eval_dirs:
        return None
    return read_earlier_solved(eval_dirs)


class UsedPartitions(BaseModel):
    """Which iterations' outputs a stage read, for the materialisation metadata."""

    model_config = ConfigDict(frozen=True)
    same_iteration: list[str]
    earlier: dict[str, list[int]]

    def describe(self) -> str:
        parts = list(self.same_iteration)
        parts += [f"{k}[{', '.join(map(str, v))}]" for k, v in self.earlier.items() if v]
        return ", ".join(parts) or "none"
