"""The A/B/C report (`burnqed_core.loop.configs_abc`): each configuration's embedding and EBM metrics and solve
rates, and the paired intervals of A -> B and B -> C, from real eval summaries (no Lean: the searches' results
are given)."""

from __future__ import annotations

import pytest

from burnqed_core.config import load_profile
from burnqed_core.ebm.metrics import SeparationMetrics
from burnqed_core.eval.summary import SummaryOptions, paired_deltas, summarize
from burnqed_core.loop.configs_abc import WHAT, AbcReport, ConfigOutcome, abc_markdown, with_joint
from tests.core.eval.test_summary import WIDE, WIDE_BASE, twelve


def _summary(solved: int, iteration: int):
    return summarize(twelve({n: 5 for n in WIDE[:solved]}, iteration), WIDE_BASE,
                     SummaryOptions(iteration=iteration, benchmark="exercises:iter_1", budgets=[8, 32]))


def test_the_report_gives_each_configuration_and_both_changes_with_intervals() -> None:
    summaries = {"A": _summary(3, 0), "B": _summary(6, 1), "C": _summary(9, 1)}
    seps = {"A": 0.40, "B": 0.12, "C": 0.38}
    configs = [ConfigOutcome(name=k, what=WHAT[k], model=f"{k}/model", ebm=f"{k}/ebm", trained_jointly=k == "C",
                             separation=SeparationMetrics(positives=20, negatives=20, centroid_l2=seps[k],
                                                          centroid_l2_ratio=seps[k] / 2, linear_probe_acc=0.8))
               for k in "ABC"]
    report = AbcReport(iteration=1, exercises="12 exercises", theorems=WIDE, configs=configs,
                       a_to_b=paired_deltas(summaries["A"], summaries["B"]),
                       b_to_c=paired_deltas(summaries["B"], summaries["C"]))
    md = abc_markdown(report, summaries)
    assert report.a_to_b is not None and report.b_to_c is not None
    ab = next(d for d in report.a_to_b.deltas if d.name == "pass@k, budget 32")
    assert ab.change.value == pytest.approx(3 / 12) and ab.change.low <= ab.change.value <= ab.change.high
    assert "**A -> B**" in md and "**B -> C**" in md and "pass@k, budget 32: +25.0 pp [" in md
    assert "budget 8" not in md.split("**A -> B**")[1]  # the changes at the largest budget only
    rows = [line for line in md.splitlines() if line.startswith(("| A ", "| B ", "| C "))]
    assert len(rows) == 3 and "0.1200" in rows[1] and "3/12 (25.0%) at 32" in rows[0]


def test_b_and_c_differ_only_in_ebm_joint() -> None:
    prof = load_profile("tiny", environ={})
    b, c = with_joint(prof, False), with_joint(prof, True)
    assert b.model_dump(exclude={"ebm"}) == c.model_dump(exclude={"ebm"})
    assert b.ebm.model_dump(exclude={"joint"}) == c.ebm.model_dump(exclude={"joint"}) and c.ebm.joint
