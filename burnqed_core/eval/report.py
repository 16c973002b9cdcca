"""Eval reports: a text table for the terminal, markdown for the UI and files,
JSON for machines, a PNG plot, and the comparison across iterations (seed
003, 5.8). Every table shows the automation baselines ((a), (b), and (c), the
search with no learned policy, when measured), the best of them with the
prover's paired change against it on the primary statistic (pass@1 by cluster,
equal compute) and at pass@k, what the prover solved beyond them (a proof step
only the policy proposed; steps the automation also proposed counted apart),
the solve rates per theorem and per cluster with their 95% cluster-bootstrap
intervals (`burnqed_core.eval.summary`), e.g. ``84.5% [78.6, 90.5] of 84
theorems; by cluster 71.0% [60.2, 81.3] of 31 clusters``, the theorems that
could not start with Lean's error, and the set's nearest-neighbour similarity
to the training corpus with the near-twins found and the rates on the unseen
theorems; the plot draws the intervals as error bars."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from burnqed_core.errors import DataError
from burnqed_core.eval.summary import PRIMARY_STATISTIC, BaselineChoice, Estimate, EvalSummary, Rate, ebm_change_line
from burnqed_core.record_io import atomic_write_text

SUMMARY_FILE = "summary.json"
REPORT_FILE = "report.md"
PLOT_FILE = "solve_rate.png"
MAX_LISTED = 12


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _names(names: Sequence[str]) -> str:
    return ", ".join(names[:MAX_LISTED]) + (" ..." if len(names) > MAX_LISTED else "")


def _ci(e: Estimate | None) -> str:
    """``84.5% [78.6, 90.5]``, or ``-`` without an estimate."""
    return str(e) if e is not None else "-"


def _rate_line(rate: Rate, per_theorem: Estimate | None, by_cluster: Estimate | None, clusters: int) -> str:
    """``84.5% [78.6, 90.5] of 84 theorems; by cluster 71.0% [60.2, 81.3] of 31 clusters`` (without
    intervals: the plain rate)."""
    head = f"{per_theorem} of {rate.total} theorems" if per_theorem is not None else \
        f"{_pct(rate.rate)} of {rate.total} theorems"
    return head + (f"; by cluster {by_cluster} of {clusters} clusters" if by_cluster is not None else "")


def headline(s: EvalSummary) -> list[str]:
    """The rates with their intervals: pass@k at the largest budget, the hard split, the mean per attempt."""
    k = s.pass_k
    out = [f"solved (pass@{k}): " + _rate_line(s.cumulative, s.cumulative_ci, s.cumulative_by_cluster, s.clusters)]
    if s.cumulative_hard.total:
        out.append("hard split: " + _rate_line(s.cumulative_hard, s.hard_ci, s.hard_by_cluster, s.hard_clusters))
    if s.per_attempt is not None:
        out.append(f"mean per attempt (pass@1 over {k} attempt{'s' if k != 1 else ''}): {s.per_attempt}"
                   + (f"; by cluster {s.per_attempt_by_cluster} (the primary statistic, {PRIMARY_STATISTIC})"
                      if s.per_attempt_by_cluster is not None else ""))
    if s.bootstrap_samples:
        out.append(f"({100 * s.confidence:.0f}% intervals: cluster bootstrap, {s.bootstrap_samples} resamples of "
                   f"the clusters, seed {s.bootstrap_seed})")
    return out


def _structural_line(s: EvalSummary) -> str | None:
    """Baseline (c) at the largest budget with its interval, per budget, and on the hard split."""
    c = s.structural_baseline
    if c is None:
        return None
    out = f"{c}" + (f" [{100 * s.structural_ci.low:.1f}, {100 * s.structural_ci.high:.1f}]"
                    if s.structural_ci is not None else "")
    if s.structural_by_cluster is not None:
        out += f"; by cluster {s.structural_by_cluster}"
    if s.structural_pass1_by_cluster is not None and s.pass_k > 1:
        out += f"; pass@1 by cluster {s.structural_pass1_by_cluster} ({s.pass_k} seeded searches, as the prover's)"
    cells = [f"{b.budget}: {_pct(b.structural.rate)}" for b in s.budgets if b.structural is not None]
    if len(cells) > 1:
        out += f"; per budget {', '.join(cells)}"
    if s.structural_hard is not None and s.structural_hard.total:
        out += f"; hard split {s.structural_hard}"
    return out


def _best_line(b: BaselineChoice, split: str) -> str:
    """``best baseline (all theorems): (b) definition-aware 72/84 (85.7%); prover vs it: +2.4 pp [...]``."""
    below = b.versus is not None and b.versus.change.high < 0
    verdict = "" if b.beaten is None else (" (beats it: interval above zero)" if b.beaten
                                           else " (below it: interval below zero)" if below
                                           else " (does not beat it: interval reaches zero)")
    return f"best baseline ({split}): {b.describe()}{verdict}"


def _retrieval_line(s: EvalSummary) -> str | None:
    """Baseline (c) with retrieval and the prover against it, when measured."""
    if s.retrieval_baseline is None:
        return None
    out = f"{s.retrieval_baseline}"
    v = s.versus_retrieval
    if v is not None and v.versus_primary is not None:
        out += f"; prover vs it, {v.versus_primary.change.pp()} (pass@1 by cluster)"
    return out


def checks_line(s: EvalSummary) -> str | None:
    """Lean tactic checks per theorem (every candidate sent to Lean): the prover's and each searched baseline's."""
    parts = [(what, v) for what, v in (("prover", s.checks_per_theorem), ("(c)", s.structural_checks),
                                        ("(c) with retrieval", s.retrieval_checks)) if v is not None]
    if not parts:
        return None
    return "Lean checks per theorem (compute): " + ", ".join(f"{what} {v:.1f}" for what, v in parts)


def baseline_lines(s: EvalSummary) -> list[str]:
    """The baselines (a), (b), (c), (c) with retrieval, either of (a)/(b), the best one per split and the prover
    against it, and the checks each search spent."""
    out = [f"baseline (a) single tactic (rfl/trivial/decide/omega/simp/simp_all/grind): {s.automation_baseline}",
           f"baseline (b) definition-aware (simp/grind [defs], induction x <;> ...):    {s.defaware_baseline}"]
    if (line := _structural_line(s)) is not None:
        out.append(f"baseline (c) structural steps + automation, no learned policy ({s.structural_budget} nodes): "
                   + line)
    if (line := _retrieval_line(s)) is not None:
        out.append(f"baseline (c) with retrieval (premise steps too), no learned policy: {line}")
    if (line := checks_line(s)) is not None:
        out.append(line)
    out.append(f"either baseline: {s.either_baseline}")
    if s.best_baseline is not None:
        out.append(_best_line(s.best_baseline, "all theorems"))
    if s.best_baseline_hard is not None:
        out.append(_best_line(s.best_baseline_hard, "hard split"))
    return out


def _variant(s: EvalSummary) -> str:
    return "policy" + (" + automation" if s.automation else "") + (" + EBM" if s.ebm else "")


def attribution_lines(s: EvalSummary) -> list[str]:
    """What the prover solved beyond automation (a step only the policy proposed), what it solved with policy
    steps the automation also proposed (``both``), and by automation steps alone."""
    out = [f"solved beyond automation (a proof step only the policy proposed): {s.beyond_count}"
           + (f" ({_names(s.beyond_automation)})" if s.beyond_automation else "")]
    if s.beyond_by_both:
        out.append(f"hard, with policy steps the automation also proposed ('both'), not beyond it: "
                   f"{len(s.beyond_by_both)} ({_names(s.beyond_by_both)})")
    if s.automation_only:
        out.append(f"hard but by automation steps alone: {len(s.automation_only)} ({_names(s.automation_only)})")
    if s.beyond_by_premise:
        out.append(f"hard, with a premise step (a retrieved premise's rw/simp only/exact/apply): "
                   f"{len(s.beyond_by_premise)} ({_names(s.beyond_by_premise)})")
    return out


def start_failure_lines(s: EvalSummary) -> list[str]:
    """Each theorem that could not start, with Lean's error: counted unsolved, never silently."""
    if not s.start_failures:
        return []
    out = [f"could not start (the statement did not elaborate; counted unsolved): {len(s.start_failures)}"]
    out += [f"  {n}: {msg}" for n, msg in list(s.start_failures.items())[:MAX_LISTED]]
    if len(s.start_failures) > MAX_LISTED:
        out.append(f"  ... ({len(s.start_failures) - MAX_LISTED} more in summary.json)")
    return out


def held_out_lines(s: EvalSummary) -> list[str]:
    """The similarity block and the rates on the unseen theorems."""
    out = s.similarity.lines() if s.similarity is not None else []
    if s.unseen is not None:
        out += s.unseen.lines()
    return out


def _policy_only_line(s: EvalSummary) -> str | None:
    """The main variant beside the policy alone (no automation candidates)."""
    p = s.policy_only
    if p is None:
        return None
    cells = ", ".join(f"{b.budget}: {_pct(b.all.rate)}" for b in p.budgets)
    return (f"policy alone (no automation candidates): {cells}; hard {p.cumulative_hard}; beyond automation "
            f"{p.beyond_count} (with automation: {_pct(s.cumulative.rate)}, hard {s.cumulative_hard}, "
            f"beyond {s.beyond_count})")


def format_table(s: EvalSummary) -> str:
    """The terminal table: one row per node budget (pass@k), then the baselines."""
    k = s.pass_k
    head = (f"{'budget':>7} | {f'solved (pass@{k})':>17} | {'95% interval':>12} | {'by cluster [95%]':>21} | "
            f"{'pass@1 (mean)':>13} | {'hard (neither baseline)':>23} | {'avg nodes to proof':>18}")
    clusters = f"{s.clusters} clusters, " if s.clusters else ""
    lines = [f"Eval: iteration {s.iteration}, {_variant(s)}, on {s.benchmark} ({s.theorems} theorems, {clusters}"
             f"{s.hard_theorems} hard, pass@{k})", head, "-" * len(head)]
    for b in s.budgets:
        interval = f"[{100 * b.all_ci.low:.1f}, {100 * b.all_ci.high:.1f}]" if b.all_ci is not None else "-"
        lines.append(f"{b.budget:>7} | {b.all!s:>17} | {interval:>12} | {_ci(b.all_by_cluster):>21} | "
                     f"{_pct(b.pass1):>13} | {b.hard!s:>23} | {b.avg_nodes_proved:>18.1f}")
    lines.append("-" * len(head))
    lines += headline(s)
    lines += baseline_lines(s)
    lines += attribution_lines(s)
    if (line := _policy_only_line(s)) is not None:
        lines.append(line)
    if s.without_ebm is not None:
        w = s.without_ebm
        cells = ", ".join(f"{b.budget}: {_pct(b.all.rate)} -> {_pct(s.rate_at(b.budget) or 0.0)}" for b in w.budgets)
        lines.append(f"EBM ablation (without -> with): {cells}; beyond automation {w.beyond_count} -> "
                     f"{s.beyond_count}")
        if (line := ebm_change_line(s)) is not None:
            lines.append(line)
    elif s.ebm:
        lines.append("EBM ablation: not run (eval.ebm_ablation off): the EBM's own effect is not measured here")
    if s.unmeasured:
        lines.append(f"({s.unmeasured} theorems have no baseline measurement)")
    notes = []
    if s.timeouts:
        notes.append(f"{s.timeouts} timeouts (per-theorem cap)")
    if s.start_errors:
        notes.append(f"{s.start_errors} start errors")
    if s.infra_errors:
        notes.append(f"{s.infra_errors} infra errors (not counted as failures of the prover)")
    lines.append("timeouts: " + (", ".join(notes) if notes else "0"))
    lines += start_failure_lines(s)
    if s.newly_solved:
        lines.append(f"newly solved (by no earlier iteration): {_names(s.newly_solved)}")
    lines += held_out_lines(s)
    return "\n".join(lines)


def format_markdown(s: EvalSummary) -> str:
    out = [*_md_head(s), *_md_budget_table(s), "", *_md_baselines(s), *_md_beyond(s)]
    if s.start_failures:
        out += ["", *(f"- {line.strip()}" for line in start_failure_lines(s))]
    if (held := held_out_lines(s)):
        out += ["", "Held out in substance:", "", "```", *held, "```"]
    out += _md_variants(s)
    if s.newly_solved:
        out += ["", "Newly solved (by no earlier iteration): " + ", ".join(f"`{n}`" for n in s.newly_solved)]
    return "\n".join(out) + "\n"


def _md_head(s: EvalSummary) -> list[str]:
    clusters = f" in {s.clusters} clusters" if s.clusters else ""
    return [f"### Iteration {s.iteration} on `{s.benchmark}` ({_variant(s)})", "",
            f"{s.theorems} theorems{clusters}, {s.hard_theorems} closed by neither automation baseline (hard); "
            f"pass@{s.pass_k}; {s.timeouts} timeouts.", "",
            *(f"- **{line}**" if i == 0 else f"- {line}" for i, line in enumerate(headline(s))), ""]


def _md_budget_table(s: EvalSummary) -> list[str]:
    """One row per node budget; a column for baseline (c) when the summary has it."""
    k = s.pass_k
    with_c = s.structural_baseline is not None
    out = [f"| node budget | pass@{k} | pass@{k} [95%] | by cluster [95%] | pass@1 [95%] | hard split | hard [95%] "
           f"| easy split | avg nodes to proof |{' baseline (c) |' if with_c else ''}",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if with_c else "")]
    for b in s.budgets:
        out.append(f"| {b.budget} | {b.all} | {_ci(b.all_ci)} | {_ci(b.all_by_cluster)} | "
                   f"{_ci(b.pass1_ci) if b.pass1_ci is not None else _pct(b.pass1)} | {b.hard} | {_ci(b.hard_ci)} | "
                   f"{b.easy} | {b.avg_nodes_proved:.1f} |"
                   + (f" {b.structural if b.structural is not None else '-'} |" if with_c else ""))
    return out


def _md_baselines(s: EvalSummary) -> list[str]:
    out = [f"- baseline (a) single automation tactic: **{s.automation_baseline}**",
           f"- baseline (b) definition-aware automation: **{s.defaware_baseline}**"]
    if (line := _structural_line(s)) is not None:
        out.append(f"- baseline (c) structural steps + automation, no learned policy ({s.structural_budget} nodes): "
                   f"**{line}**")
    if (line := _retrieval_line(s)) is not None:
        out.append(f"- baseline (c) with retrieval (premise steps too), no learned policy: **{line}**")
    if (line := checks_line(s)) is not None:
        out.append(f"- {line}")
    out.append(f"- either baseline ((a) or (b)): {s.either_baseline}")
    for choice, split in ((s.best_baseline, "all theorems"), (s.best_baseline_hard, "hard split")):
        if choice is not None:
            out.append(f"- {_best_line(choice, split)}")
    return out


def _named(names: list[str]) -> str:
    """``: `a`, `b``` after a count, or nothing when there are none."""
    return (": " + ", ".join(f"`{n}`" for n in names)) if names else ""


def _md_beyond(s: EvalSummary) -> list[str]:
    return [f"- solved beyond automation (a proof step only the policy proposed): **{s.beyond_count}**"
            + _named(s.beyond_automation),
            f"- hard, with policy steps the automation also proposed (`both`), not beyond it: "
            f"{len(s.beyond_by_both)}" + _named(s.beyond_by_both),
            f"- hard theorems solved by automation steps alone: {len(s.automation_only)}" + _named(s.automation_only)]


def _md_variants(s: EvalSummary) -> list[str]:
    """The policy alone and the EBM ablation beside the main variant, where the summary has them."""
    out: list[str] = []
    if s.policy_only is not None:
        p = s.policy_only
        out += ["", "Policy alone (the search without automation candidates) vs policy + automation:", "",
                "| node budget | policy alone | policy + automation | hard: policy alone | hard: with automation |",
                "|---:|---:|---:|---:|---:|"]
        for b in p.budgets:
            hard = next((x.hard for x in s.budgets if x.budget == b.budget), None)
            out.append(f"| {b.budget} | {b.all} | {_pct(s.rate_at(b.budget) or 0.0)} | {b.hard} | {hard} |")
    if s.without_ebm is not None:
        out += ["", "EBM ablation:", "", "| node budget | without EBM | with EBM |", "|---:|---:|---:|"]
        for b in s.without_ebm.budgets:
            out.append(f"| {b.budget} | {b.all} | {_pct(s.rate_at(b.budget) or 0.0)} |")
        if (line := ebm_change_line(s)) is not None:
            out += ["", line + " (95% intervals: paired cluster bootstrap)"]
    return out


def _versus_cell(s: EvalSummary) -> str:
    """``(c) +3.6 pp [-1.2, +8.3]``: the prover against the best baseline, or ``-``."""
    b = s.best_baseline
    if b is None:
        return "-"
    return f"({b.name}) " + (b.versus.change.pp() if b.versus is not None else f"{100 * b.rate.rate:.1f}%")


def format_comparison(summaries: Sequence[EvalSummary]) -> str:
    """pass@k per budget for each iteration, the hard split, the baselines (a), (b), (c), the prover against
    the best of them, and the change first -> last (the loop's closing table)."""
    if not summaries:
        return "no eval results"
    budgets = sorted({b.budget for s in summaries for b in s.budgets})
    head = ("iteration | " + " | ".join(f"budget {b:>4}" for b in budgets)
            + " | by cluster | hard (max) | beyond auto | baseline (a) | baseline (b) | policy alone (max, hard)"
            + " | baseline (c) | vs best baseline [95%]")
    lines = [head, "-" * len(head)]
    if any(s.automation for s in summaries):
        lines.insert(0, "budget columns: policy + automation candidates; policy alone: the search without them")
    for s in summaries:
        cells = [_pct(r) if (r := s.rate_at(b)) is not None else "-" for b in budgets]
        p = s.policy_only
        alone = f"{_pct(p.cumulative.rate)}, {_pct(p.cumulative_hard.rate)}" if p is not None else "-"
        by_cluster = _pct(s.cumulative_by_cluster.value) if s.cumulative_by_cluster is not None else "-"
        lines.append(f"{s.iteration:>9} | " + " | ".join(f"{c:>11}" for c in cells) + f" | {by_cluster:>10}"
                     + f" | {_pct(s.cumulative_hard.rate):>10} | {s.beyond_count:>11} | "
                     + f"{_pct(s.automation_baseline.rate):>12} | {_pct(s.defaware_baseline.rate):>12} | {alone:>24}"
                     + f" | {_pct(c.rate) if (c := s.structural_baseline) is not None else '-':>12}"
                     + f" | {_versus_cell(s):>22}")
    if len(summaries) > 1:
        a, z = summaries[0], summaries[-1]
        deltas = []
        for b in budgets:
            ra, rz = a.rate_at(b), z.rate_at(b)
            deltas.append(f"{100 * (rz - ra):+.1f}pp" if ra is not None and rz is not None else "-")
        lines.append("-" * len(head))
        ca, cz = a.cumulative_by_cluster, z.cumulative_by_cluster
        by_cluster = f"{100 * (cz.value - ca.value):+.1f}pp" if ca is not None and cz is not None else "-"
        lines.append(f"{f'Δ {a.iteration}→{z.iteration}':>9} | " + " | ".join(f"{d:>11}" for d in deltas)
                     + f" | {by_cluster:>10}"
                     + f" | {100 * (z.cumulative_hard.rate - a.cumulative_hard.rate):>+8.1f}pp"
                     + f" | {z.beyond_count - a.beyond_count:>+11} |"
                     + (f"{'':>14}|{'':>14}| {100 * (zp.cumulative.rate - ap.cumulative.rate):+.1f}pp"
                        if (ap := a.policy_only) is not None and (zp := z.policy_only) is not None else ""))
    return "\n".join(lines)


def write_report(s: EvalSummary, out_dir: str | Path, plot: bool = True) -> tuple[Path, Path]:
    """``summary.json``, ``report.md`` and (``plot``) ``solve_rate.png`` in ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    js = out_dir / SUMMARY_FILE
    md = out_dir / REPORT_FILE
    atomic_write_text(js, json.dumps(s.model_dump(mode="json"), indent=2) + "\n")
    atomic_write_text(md, format_markdown(s))
    if plot:
        from burnqed_core.eval.plot import plot_summaries

        plot_summaries([s], out_dir / PLOT_FILE, title=f"iteration {s.iteration} on {s.benchmark}")
    return js, md


def read_summary(out_dir: str | Path) -> EvalSummary:
    """``summary.json`` of an eval output; missing or corrupt is an error naming the file."""
    path = Path(out_dir) / SUMMARY_FILE
    try:
        return EvalSummary.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: missing (not an eval output, or its eval did not finish)") from None
    except (ValidationError, ValueError) as e:
        raise DataError(f"{path}: corrupt eval summary ({str(e).splitlines()[0]})") from None
