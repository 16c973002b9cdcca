"""Leave-one-family-out transfer: does the prover learn a technique or a template?

For a corpus family ``F`` (one surface form of a technique), a *fold* trains the model on the corpus without
``F`` (``data.exclude_families``: ``F`` is neither traced, pre-trained on, fine-tuned on nor searched) and
evaluates it on ``F``'s theorems, beside baseline (c) (the same search with a fixed enumerator of structural
steps instead of the learned policy) on the same theorems. A technique was learned, not a template, when the
prover beats (c) on the families it never saw: the fold's paired change against (c) with its 95% cluster
bootstrap interval above zero, in a fold of at least `MIN_CLUSTERS` template clusters.

A fold is read at iteration 0 by default. Read at a later iteration N (``burnqed transfer --iteration N``), it
also runs the expert-iteration loop's iterations 1..N on the corpus without ``F`` (the held-out family is never
searched either), and its result adds the paired change of the prover from iteration 0 to N on ``F``: whether
more iterations move transfer. Results and tables of iteration N > 0 are kept in files of their own
(`result_file`, `report_files`), beside iteration 0's.

This module plans folds and writes their inputs (the held-out theorems as a JSONL theorem set and a profile
file extending the base profile), and reads a fold's eval summary into a `FoldResult`; ``burnqed transfer``
(`burnqed_pipeline.commands.transfer`) runs each fold's stages through the pipeline, up to the read iteration's eval
report.

A held-out theorem that is a twin or a strong near-twin (`burnqed_core.data.twins.near_twins.find_near_twins`, the
relation the eval's hygiene check refuses) of a theorem left in the corpus is not evaluated: the fold would
measure memory, not transfer. The fold counts them.

Every fold records the key of the corpus it was planned on (`corpus_key`). A table gathered from an output
directory (``burnqed transfer --table``) may hold folds that ran before the corpus changed (a family added, a
proof rewritten): they are marked and left out of the counts, which read the current corpus only.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.config import Profile
from burnqed_core.data.synthetic.families import Technique
from burnqed_core.errors import DataError
from burnqed_core.eval.summary import Delta, Estimate, EvalSummary, Rate, paired_deltas
from burnqed_core.record_io import json_sha256
from burnqed_core.records import Theorem

log = logging.getLogger(__name__)

THEOREMS_FILE = "theorems.jsonl"
PROFILE_FILE = "profile.yaml"
RESULT_FILE = "fold.json"
REPORT_JSON = "transfer.json"
REPORT_MD = "transfer.md"
MIN_CLUSTERS = 6
"""Fewer template clusters than this and a fold is reported but not judged against (c): the cluster bootstrap
resamples whole clusters, so with one cluster its interval is a single point (5/5 against 0/5 reads
[+100, +100]), and with fewer than six not even every cluster on the prover's side is significant at 5%
(two-sided sign test over clusters: 2/2^5 = 0.0625)."""


def result_file(iteration: int = 0) -> str:
    """A fold's result file for the iteration it is read at: `RESULT_FILE` at 0, ``fold-iterN.json`` after."""
    return RESULT_FILE if iteration == 0 else f"fold-iter{iteration}.json"


def report_files(iteration: int = 0) -> tuple[str, str]:
    """The table's JSON and markdown file names for an iteration (`REPORT_JSON`, `REPORT_MD` at 0)."""
    if iteration == 0:
        return REPORT_JSON, REPORT_MD
    return f"transfer-iter{iteration}.json", f"transfer-iter{iteration}.md"


class Fold(BaseModel):
    """One held-out family: its theorems that are evaluated, and those left out as twins of the corpus."""

    model_config = ConfigDict(frozen=True)
    family: str
    technique: Technique
    theorems: list[Theorem]
    twins: list[str] = Field(default_factory=list, description="held-out theorems with a twin left in the corpus")
    corpus: str | None = Field(None, description="the key of the corpus the fold was planned on (`corpus_key`)")


class FoldResult(BaseModel):
    """What one fold measured: the prover trained without the family against baseline (c) on it."""

    model_config = ConfigDict(frozen=True)
    family: str
    technique: Technique
    theorems: int
    twins: int
    clusters: int
    pass_k: int
    prover: Estimate = Field(description="pass@k of the prover (policy + automation), per theorem, 95% interval")
    prover_by_cluster: Estimate | None = None
    structural: Rate | None = Field(None, description="baseline (c) on the same theorems")
    versus_structural: Delta | None = Field(None, description="prover minus (c), per theorem, paired interval")
    versus_structural_by_cluster: Delta | None = None
    policy_only: Rate | None = Field(None, description="the prover without the automation candidates")
    automation: Rate = Field(description="baseline (a): a single automation tactic")
    iteration: int = Field(0, ge=0, description="the iteration whose model was evaluated")
    versus_iteration0: Delta | None = Field(
        None, description="the prover at this iteration minus the prover at iteration 0 on the same theorems, "
        "paired per theorem (iteration > 0 only)")
    corpus: str | None = Field(None, description="the key of the corpus the fold was planned on (`corpus_key`); "
                               "None: written before burnqed recorded it")

    @property
    def judged(self) -> bool:
        """Whether the fold can say anything against (c): it has an interval and at least `MIN_CLUSTERS`
        template clusters."""
        return self.versus_structural is not None and self.clusters >= MIN_CLUSTERS

    @property
    def above_structural(self) -> bool | None:
        """Whether the prover beats (c): the paired interval lies above zero (None: not `judged`)."""
        return self.versus_structural.change.low > 0 if self.judged and self.versus_structural else None


class TransferReport(BaseModel):
    """Every fold of one transfer run."""

    model_config = ConfigDict(frozen=True)
    profile: str
    iteration: int = 0
    folds: list[FoldResult]
    missing: list[str] = Field(default_factory=list, description="planned families with no result, and why")
    corpus: str | None = Field(None, description="the current corpus's key (`corpus_key`): folds planned on "
                               "another are marked and not counted; None: every fold counts")

    def current(self, fold: FoldResult) -> bool:
        """Whether ``fold`` was read on the report's corpus."""
        return self.corpus is None or fold.corpus == self.corpus


def corpus_key(corpus: Sequence[Theorem]) -> str:
    """A short key of the corpus a fold is planned on (every theorem's name, preamble, statement and proof, in
    any order): folds with the same key trained on the same theorems, less their own family."""
    return json_sha256(sorted([t.name, t.preamble, t.statement, list(t.proof)] for t in corpus))[:16]


def corpus_families(profile: Profile, corpus: Sequence[Theorem]) -> dict[str, list[Theorem]]:
    """The profile's corpus theorems (``corpus``, already less ``data.exclude_families``) by family, only
    theorems with a family name."""
    out: dict[str, list[Theorem]] = {}
    for t in corpus:
        if t.family:
            out.setdefault(t.family, []).append(t)
    return out


def plan_folds(profile: Profile, corpus: Sequence[Theorem], *, families: Sequence[str] = (),
               techniques: Sequence[str] = ()) -> list[Fold]:
    """One fold per corpus family, restricted to ``families`` and/or to the families of ``techniques`` when
    given: the named families first, in the order given (a planned order is run as planned), then those of
    the techniques, in family order; every family when neither is given. Unknown names are a `DataError`
    naming what exists."""
    from burnqed_core.data.synthetic.catalogue import technique_of
    from burnqed_core.data.twins.near_twins import find_near_twins, forms_of

    by_family = corpus_families(profile, corpus)
    unknown = sorted(set(families) - set(by_family))
    if unknown:
        raise DataError(f"transfer: families {unknown} are not in the corpus {profile.data.corpus} "
                        f"(less data.exclude_families); it has {', '.join(sorted(by_family))}")
    known_techniques = {technique_of(f) for f in by_family}
    bad = sorted(set(techniques) - known_techniques)
    if bad:
        raise DataError(f"transfer: techniques {bad} have no family in the corpus; it has "
                        f"{', '.join(sorted(known_techniques))}")
    named = list(dict.fromkeys(families))
    chosen = named + [f for f in sorted(by_family) if f not in named
                      and ((not families and not techniques) or technique_of(f) in techniques)]
    folds = []
    key = corpus_key(corpus)
    for fam in chosen:
        held = by_family[fam]
        rest = [t for t in corpus if t.family != fam]
        twin_names = sorted({tw.theorem for tw in find_near_twins(forms_of(rest), held, partial=False)})
        kept = [t for t in held if t.name not in twin_names]
        if twin_names:
            log.info("transfer fold %s: %d of %d theorems left out as twins of the rest of the corpus", fam,
                     len(twin_names), len(held))
        folds.append(Fold(family=fam, technique=technique_of(fam), theorems=kept, twins=twin_names, corpus=key))
    return folds


def fold_overrides(profile: Profile, fold: Fold, fold_dir: Path) -> dict[str, Any]:
    """The keys a fold's profile file changes in the base profile: its work dir, the family excluded from the
    corpus (and no longer withheld), its held-out theorems as the benchmark and no other eval set."""
    d = profile.data
    return {
        "name": f"{profile.name}-without-{fold.family}",
        "paths": {"work_dir": str(fold_dir / "work")},
        "data": {
            "exclude_families": [*d.exclude_families, fold.family],
            "withhold_families": [f for f in d.withhold_families if f != fold.family],
            "benchmark": str(fold_dir / THEOREMS_FILE),
        },
        "eval": {"also": []},
    }


def write_fold(profile: Profile, fold: Fold, fold_dir: Path) -> Path:
    """Write the fold's held-out theorems and its profile file (extending the base profile's file); returns
    the profile file. Rewrites only what changed, so that a rerun finds its stages up to date."""
    if profile.source is None:
        raise DataError("transfer: the base profile must be loaded from a file (its source extends it)")
    if not fold.theorems:
        raise DataError(f"transfer fold {fold.family}: no held-out theorem left to evaluate "
                        f"({len(fold.twins)} twins of the corpus)")
    fold_dir.mkdir(parents=True, exist_ok=True)
    body = "".join(t.model_dump_json() + "\n" for t in fold.theorems)
    _write_if_changed(fold_dir / THEOREMS_FILE, body)
    text = yaml.safe_dump({"extends": str(Path(profile.source).resolve()),
                           **fold_overrides(profile, fold, fold_dir.resolve())}, sort_keys=False, allow_unicode=True)
    header = (f"# transfer fold: {profile.name} trained without the {fold.family} family ({fold.technique}), "
              f"evaluated on its {len(fold.theorems)} theorems\n")
    _write_if_changed(fold_dir / PROFILE_FILE, header + text)
    return fold_dir / PROFILE_FILE


def _write_if_changed(path: Path, text: str) -> None:
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def fold_result(fold: Fold, summary: EvalSummary, first: EvalSummary | None = None) -> FoldResult:
    """A fold's figures from its eval summary on the held-out theorems; ``first``: the same fold's iteration-0
    summary, for the paired change from iteration 0 when ``summary`` is of a later iteration."""
    vs = summary.versus_structural
    since = None
    if first is not None and summary.iteration > 0:
        paired = paired_deltas(first, summary)
        budget = max(b.budget for b in summary.budgets) if summary.budgets else None
        name = f"pass@k, budget {budget}"
        since = next((d for d in paired.deltas if d.name == name), None) if paired is not None else None
    return FoldResult(
        family=fold.family, technique=fold.technique, theorems=summary.theorems, twins=len(fold.twins),
        clusters=summary.clusters, pass_k=summary.pass_k,
        prover=summary.cumulative_ci or Estimate(value=summary.cumulative.rate, low=summary.cumulative.rate,
                                                 high=summary.cumulative.rate),
        prover_by_cluster=summary.cumulative_by_cluster,
        structural=summary.structural_baseline,
        versus_structural=vs.versus if vs is not None else None,
        versus_structural_by_cluster=vs.versus_by_cluster if vs is not None else None,
        policy_only=summary.policy_only.cumulative if summary.policy_only is not None else None,
        automation=summary.automation_baseline,
        iteration=summary.iteration,
        versus_iteration0=since,
        corpus=fold.corpus,
    )


def _pct(e: Estimate | None) -> str:
    return "-" if e is None else f"{100 * e.value:.0f}% [{100 * e.low:.0f}, {100 * e.high:.0f}]"


def format_transfer(report: TransferReport) -> str:
    """The transfer table (markdown): one row per fold, grouped by technique, then a line per technique. Read at
    an iteration after 0, a last column holds the prover's paired change since iteration 0."""
    later = report.iteration > 0
    every = sorted(report.folds, key=lambda f: (f.technique, f.family))
    folds = [f for f in every if report.current(f)]  # the counts read one corpus: the current one
    lines = [*_table_head(report, later), *(_fold_row(report, f, later) for f in every), ""]
    lines += _technique_lines(folds)
    if later:
        lines.append(_since_line(folds))
    lines += _left_out_lines(report, [f for f in every if not report.current(f)])
    return "\n".join(lines)


def _table_head(report: TransferReport, later: bool) -> list[str]:
    return [f"Leave-one-family-out transfer, profile {report.profile} (iteration {report.iteration}; pass@k of "
            "the prover trained without the family; (c): structural search with no learned policy, same budget)",
            "",
            "| technique | held-out family | theorems (twins left out) | clusters | prover | (c) | prover - (c) "
            "| by cluster | policy alone | (a) |" + (" since iteration 0 |" if later else ""),
            "|---|---|---|---|---|---|---|---|---|---|" + ("---|" if later else "")]


def _or_dash(value: object | None) -> str:
    return "-" if value is None else str(value)


def _fold_row(report: TransferReport, f: FoldResult, later: bool) -> str:
    """One fold's row; a fold read on another corpus than the current one is marked ``*``."""
    vs, vc, v0 = f.versus_structural, f.versus_structural_by_cluster, f.versus_iteration0
    since = ""
    if later:
        since = f" {v0.change.pp()} ({100 * v0.before:.0f}% -> {100 * v0.after:.0f}%) |" if v0 else " - |"
    mark = "" if report.current(f) else " *"
    return (f"| {f.technique} | {f.family}{mark} | {f.theorems} ({f.twins}) | {f.clusters} | {_pct(f.prover)} "
            f"| {_or_dash(f.structural)} | {vs.change.pp() if vs else '-'} "
            f"| {vc.change.pp() if vc else '-'} | {_or_dash(f.policy_only)} "
            f"| {f.automation} |{since}")


def _names(names: list[str]) -> str:
    """`` (a, b)`` after a count, or nothing when there are none."""
    return f" ({', '.join(names)})" if names else ""


def _technique_lines(folds: list[FoldResult]) -> list[str]:
    """Per technique: on how many judged held-out families the prover is above (c); then over the techniques."""
    techniques = sorted({f.technique for f in folds})
    lines = []
    for tech in techniques:
        mine = [f for f in folds if f.technique == tech and f.judged]
        above = [f.family for f in mine if f.above_structural]
        unjudged = [f.family for f in folds if f.technique == tech and not f.judged]
        lines.append(f"- {tech}: above (c) on {len(above)} of {len(mine)} held-out families" + _names(above)
                     + (f"; not judged (fewer than {MIN_CLUSTERS} clusters): {', '.join(unjudged)}" if unjudged
                        else ""))
    if not techniques:
        return lines
    judged = [t for t in techniques if any(f.judged for f in folds if f.technique == t)]
    won = sum(any(f.above_structural for f in folds if f.technique == t) for t in judged)
    lines.append(f"- techniques with a held-out family above (c): {won} of {len(judged)}"
                 + (f" ({len(techniques) - len(judged)} more with no fold of {MIN_CLUSTERS}+ clusters)"
                    if len(judged) < len(techniques) else ""))
    return lines


def _since_line(folds: list[FoldResult]) -> str:
    """The judged folds whose paired change since iteration 0 is above or below zero."""
    moved = [(f.family, f.versus_iteration0.change) for f in folds if f.judged and f.versus_iteration0]
    up = [fam for fam, c in moved if c.low > 0]
    down = [fam for fam, c in moved if c.high < 0]
    return (f"- since iteration 0 (judged folds, interval of the paired change): up on {len(up)} of "
            f"{len(moved)}" + _names(up) + f", down on {len(down)}" + _names(down))


def _left_out_lines(report: TransferReport, other: list[FoldResult]) -> list[str]:
    """The folds not counted: read on an earlier corpus, of an unrecorded corpus, or with no result."""
    earlier = [f.family for f in other if f.corpus is not None]
    unrecorded = [f.family for f in other if f.corpus is None]
    lines = []
    if earlier:
        lines.append(f"- read on an earlier corpus (rows marked *, not counted above; run them again to count "
                     f"them): {', '.join(earlier)}")
    if unrecorded:
        lines.append(f"- corpus not recorded (written before folds recorded it; rows marked *, not counted "
                     f"above): {', '.join(unrecorded)}")
    if report.missing:
        lines.append(f"- no result (failed or not run): {', '.join(report.missing)}")
    return lines


def write_transfer(report: TransferReport, out_dir: Path) -> tuple[Path, Path]:
    """``transfer.json`` and ``transfer.md`` in ``out_dir`` (`report_files` of the report's iteration)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    jn, mn = report_files(report.iteration)
    j, m = out_dir / jn, out_dir / mn
    _write_if_changed(j, report.model_dump_json(indent=1) + "\n")
    _write_if_changed(m, format_transfer(report) + "\n")
    return j, m
