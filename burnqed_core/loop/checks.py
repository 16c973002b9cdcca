"""What the pipeline's asset checks judge, read from iteration N's outputs in the run directory.

Each function reads the stage's files (never the Dagster event log) and hands them to the pure judging
function of its module, returning a `CheckVerdict`:

* `tactic_pairs_check`: `burnqed_core.eval.hygiene.pairs_verdict` on ``iter_N/tactic_pairs``;
* `embeddings_check`: `burnqed_core.ebm.metrics.embeddings_verdict` on the separation measured from the
  embeddings cache of ``iter_N/embeddings`` over the trajectories of iterations < N;
* `ebm_check`: `burnqed_core.ebm.metrics.ebm_verdict` on the EBM's metrics record, failed when the head comes
  from a joint run its monitor aborted (``ebm.joint``, `burnqed_core.training.joint_monitor`);
* `eval_report_check`: `burnqed_core.eval.compare.interval_verdict` on the eval summaries of N and N-1 (the
  go/no-go on paired cluster-bootstrap intervals, as ``burnqed compare``; `burnqed_core.eval.gonogo`'s point
  rule where the summaries give no intervals).

A missing or unreadable output is a failed verdict naming the file (a check of a stage that did not
finish cannot pass).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from burnqed_core.config import Profile
from burnqed_core.errors import BurnqedError
from burnqed_core.eval.gonogo import Verdict
from burnqed_core.loop.layout import BaseLayout
from burnqed_core.loop.markers import read_marker
from burnqed_core.records import Theorem
from burnqed_core.verdict import CheckVerdict

if TYPE_CHECKING:
    from burnqed_core.ebm.metrics import SeparationMetrics

log = logging.getLogger(__name__)


def _missing(check: str, what: str) -> CheckVerdict:
    return CheckVerdict(check=check, failures=[what])


def _source_theorems(profile: Profile) -> tuple[list[Theorem], str]:
    """The corpus's theorem statements (the pairs' sources), when the corpus is a theorem set."""
    from burnqed_core.loop.corpus import corpus_theorems

    d = profile.data
    if d.trace_repo:
        return [], f"corpus traced from {d.trace_repo}: no statements to compare"
    try:
        return corpus_theorems(profile), ""
    except (BurnqedError, OSError, ValueError) as e:
        return [], f"corpus {d.corpus} holds no theorem statements ({str(e).splitlines()[0][:120]})"


def _earlier_root_goals(layout: BaseLayout, n: int) -> dict[str, str]:
    """Benchmark root goals as Lean printed them in the evals of iterations < n (where they exist)."""
    from burnqed_core.eval.run import root_goals

    goals: dict[str, str] = {}
    for k in range(n):
        ev = layout.iteration(k).stage("eval_report")
        if ev.is_dir():
            for name, goal in root_goals(ev).items():
                goals.setdefault(name, goal)
    return goals


def tactic_pairs_check(profile: Profile, layout: BaseLayout, n: int) -> CheckVerdict:
    from burnqed_core.data.theorems.load import load_theorems
    from burnqed_core.eval.hygiene import pairs_verdict
    from burnqed_core.record_io import read_records
    from burnqed_core.records import TacticPair

    out = layout.iteration(n).stage("tactic_pairs")
    train_file, val_file = out / "train.parquet", out / "val.parquet"
    if not train_file.is_file():
        return _missing("tactic_pairs", f"{train_file}: missing (tactic_pairs[{n}] did not finish)")
    train = read_records(train_file, TacticPair)
    val = read_records(val_file, TacticPair) if val_file.is_file() else []
    sources, why = _source_theorems(profile)
    v = pairs_verdict(train, val, load_theorems(profile.data.benchmark), _earlier_root_goals(layout, n), sources)
    return v.model_copy(update={"notes": [*v.notes, why]}) if why else v


def _separation(metrics: dict[str, Any]) -> SeparationMetrics | None:
    from burnqed_core.ebm.metrics import SeparationMetrics

    sep = metrics.get("separation")
    return SeparationMetrics.model_validate(sep) if isinstance(sep, dict) else None


def embeddings_check(profile: Profile, layout: BaseLayout, n: int) -> CheckVerdict:
    from burnqed_core.ebm.embeddings import cache_dir_for
    from burnqed_core.ebm.metrics import embeddings_verdict, separation_metrics
    from burnqed_core.ebm.run import load_training_data
    from burnqed_core.loop.inputs import trajectory_dirs

    it = layout.iteration(n)
    dirs = trajectory_dirs([layout.iteration(k).stage("trajectories") for k in range(n)])
    if not dirs:
        return embeddings_verdict(None, "")
    cache = cache_dir_for(it.stage("embeddings"))
    try:
        z, data, meta = load_training_data(cache, dirs)
    except (BurnqedError, OSError) as e:
        return _missing("embeddings", f"{cache}: {e}")
    sep = separation_metrics(z, data, profile.ebm.val_fraction, profile.ebm.seed)
    prev_marker = read_marker(layout.iteration(n - 1).stage("embeddings")) if n > 0 else None
    previous = _separation(prev_marker.metrics) if prev_marker is not None else None
    return embeddings_verdict(sep, meta.pooling, previous)


def ebm_check(profile: Profile, layout: BaseLayout, n: int) -> CheckVerdict:
    from burnqed_core.ebm.metrics import MIN_RANK_GROUPS, EbmMetrics, ebm_verdict
    from burnqed_core.ebm.train import METRICS_FILE, has_ebm, read_report

    out = layout.iteration(n).stage("ebm")
    cfg = profile.ebm
    marker = read_marker(out)
    if not has_ebm(out):
        if marker is None:
            return _missing("ebm", f"{out}: no finished EBM stage (ebm[{n}] did not run)")
        return ebm_verdict(None, cfg.temperature_min, cfg.temperature_max,
                           str(marker.metrics.get("reason") or marker.summary))
    metrics: EbmMetrics | None = None
    if not (out / METRICS_FILE).is_file():
        return _missing("ebm", f"{out}: a trained EBM without metrics ({METRICS_FILE})")
    rep = read_report(out)
    usable = [m for m in (rep.val, rep.train) if m is not None]
    metrics = next((m for m in usable if m.rank1.n >= MIN_RANK_GROUPS), usable[0] if usable else None)
    if metrics is None:
        return _missing("ebm", f"{out}: a trained EBM without metrics ({METRICS_FILE})")
    v = ebm_verdict(metrics, cfg.temperature_min, cfg.temperature_max)
    if rep.joint_abort:  # the joint run stopped on a monitor: its last good checkpoint is not promoted
        return v.model_copy(update={"failures": [*v.failures, rep.joint_abort]})
    if rep.trained_jointly:
        return v.model_copy(update={"notes": [*v.notes, "trained jointly with the adapter (ebm.joint)"]})
    return v


def eval_report_check(profile: Profile, layout: BaseLayout, n: int) -> tuple[Verdict | None, CheckVerdict]:
    """Iteration n's eval against n-1's: better only when a change's 95% paired cluster-bootstrap interval lies
    above zero, a regression when one lies wholly below -``eval.regression_pp`` (`interval_verdict`)."""
    from burnqed_core.eval.compare import interval_verdict
    from burnqed_core.eval.report import read_summary

    try:
        current = read_summary(layout.iteration(n).stage("eval_report"))
        previous = read_summary(layout.iteration(n - 1).stage("eval_report")) if n > 0 else None
    except BurnqedError as e:
        return None, _missing("eval_report", str(e))
    return interval_verdict(current, previous, regression_pp=profile.eval.regression_pp,
                            ebm_min_gain_pp=profile.eval.ebm_min_gain_pp)


def report_passes(profile: Profile, work_dir: Path, n: int) -> bool:
    """Iteration n's eval passes the go/no-go (what the N+1 sensor asks)."""
    verdict, _ = eval_report_check(profile, BaseLayout(root=work_dir), n)
    return verdict is not None and verdict.go
