"""Automation tactics as search candidates, without Lean: which tactics a goal
gets (definition-aware ones name only the definitions the goal mentions),
deduplication against the policy's samples, the origin marked on every
node, old trajectory files without the column, the training mix's
include/exclude flag, and the two eval variants in summaries and reports.
`test_search_automation_lean.py` runs the same on the real Lean."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pydantic import ValidationError

from burnqed_core.config import AutomationConfig, SearchConfig, load_profile
from burnqed_core.data.pairs.mixing import positive_steps
from burnqed_core.eval.gonogo import go_no_go
from burnqed_core.eval.report import format_comparison, format_markdown, format_table
from burnqed_core.eval.run import variant_rows, variants
from burnqed_core.eval.summary import SummaryOptions, summarize_variants
from burnqed_core.loop.corpus import base_split
from burnqed_core.loop.stages import tactic_pairs as tactic_pairs_stage
from burnqed_core.loop.stages import trajectories as trajectories_stage
from burnqed_core.policy.base import Candidate
from burnqed_core.policy.fixed import FixedTacticsPolicy
from burnqed_core.records import EvalResult, Theorem, TrajectoryRecord
from burnqed_core.search.automation import AutomationCandidates
from burnqed_core.search.engine import SearchEngine
from burnqed_core.search.trajectories import write_part
from burnqed_core.trajectory_io import read_trajectories
from tests.core.data.pairs.test_mixing import node
from tests.core.data.pairs.test_prepare import make_pairs
from tests.core.search.test_engine import ToyEnv

PREAMBLE = """def frobnicate : Nat → Nat
  | 0 => 0
  | n + 1 => frobnicate n + 3

def wibble (n : Nat) : Nat := n * 7

namespace Zorp
def twist (xs : List Nat) : List Nat := xs.reverse
end Zorp

partial def loopy (n : Nat) : Nat := loopy n
"""


def auto(**kw: object) -> AutomationConfig:
    return AutomationConfig(enabled=True, **kw)  # type: ignore[arg-type]


def test_definition_aware_tactics_name_only_what_the_goal_mentions() -> None:
    a = AutomationCandidates(auto(tactics=["omega"], defaware=["simp [{defs}]", "grind [{defs}]"]), PREAMBLE)
    assert a.definitions == ["frobnicate", "wibble", "Zorp.twist"]  # partial defs have no equations
    goal = "n : Nat\nih : frobnicate n = 3 * n\n⊢ frobnicate (n + 1) = 3 * (n + 1)"
    assert a.tactics(goal) == ["omega", "simp [frobnicate]", "grind [frobnicate]"]
    # the namespace's name in full, by its short name, or in dot notation
    assert a.tactics("xs : List Nat\n⊢ (Zorp.twist xs).length = xs.length")[1] == "simp [Zorp.twist]"
    assert a.tactics("xs : List Nat\n⊢ xs.twist.length = wibble 0")[1] == "simp [wibble, Zorp.twist]"
    # a name inside another identifier is not a mention; a goal naming none gets no template
    assert a.tactics("frobnicate_x wibbles : Nat\n⊢ frobnicate_x = wibbles") == ["omega"]
    assert AutomationCandidates(auto(max_defs=1, defaware=["simp [{defs}]"], tactics=[]), PREAMBLE).tactics(
        "⊢ wibble (frobnicate 1) = 21") == ["simp [frobnicate]"]
    with pytest.raises(ValidationError, match="placeholder"):
        AutomationConfig(defaware=["simp [foo]"])


def test_merge_keeps_one_candidate_per_tactic_marked_by_its_sources() -> None:
    a = AutomationCandidates(auto(tactics=["simp_all", "omega"], defaware=["simp [{defs}]"], prior_logprob=-1.5),
                             PREAMBLE)
    policy = [Candidate(tactic="simp_all", logprob=-3.0, num_tokens=2),
              Candidate(tactic="simp  [frobnicate]", logprob=-0.5, num_tokens=4),
              Candidate(tactic="induction n", logprob=-1.0, num_tokens=3)]
    merged = a.merge(policy, "⊢ frobnicate n = 3 * n", depth=1)
    got = [(m.tactic, m.source, m.logprob) for m in merged]
    assert got == [("simp_all", "both", -1.5),  # the higher of the policy's logprob and the prior
                   ("simp  [frobnicate]", "both", -0.5),  # same tactic up to whitespace: kept once
                   ("induction n", "policy", -1.0),
                   ("omega", "automation", -1.5)]
    root_only = AutomationCandidates(auto(tactics=["omega"], at="root"))
    assert [m.source for m in root_only.merge(policy, "⊢ x", depth=0)][-1] == "automation"
    assert [m.source for m in root_only.merge(policy, "⊢ x", depth=2)] == ["policy"] * 3
    off = AutomationCandidates(AutomationConfig(enabled=False, tactics=["omega"]))
    assert [m.source for m in off.merge(policy, "⊢ x", depth=0)] == ["policy"] * 3


def test_baseline_at_root_adds_baseline_b_at_the_root_only_and_not_when_collecting() -> None:
    """With ``baseline_at_root`` the root expansion tries every tactic of
    baseline (b) (so policy + automation proves what (b) proves); deeper
    nodes and the trajectories' collection search do not."""
    th = Theorem(name="t", preamble=PREAMBLE, statement="(n m : Nat) : frobnicate n + m = m + frobnicate n")
    cfg = auto(tactics=["omega"], defaware=["simp [{defs}]"], baseline_at_root=True)
    a = AutomationCandidates(cfg, theorem=th)
    goal = "n m : Nat\n⊢ frobnicate n + m = m + frobnicate n"
    assert a.tactics(goal, depth=0) == [
        "omega", "simp [frobnicate]", "grind [frobnicate]",
        "induction n <;> simp_all [frobnicate]", "induction n <;> grind [frobnicate]",
        "induction m <;> simp_all [frobnicate]", "induction m <;> grind [frobnicate]"]
    assert a.tactics(goal, depth=1) == ["omega", "simp [frobnicate]"]
    merged = a.merge([Candidate(tactic="induction n <;> simp_all [frobnicate]", logprob=-0.2, num_tokens=9)],
                     goal, depth=0)
    assert [m.source for m in merged].count("both") == 1 and len(merged) == 7  # deduplicated, marked
    assert AutomationCandidates(auto(tactics=[], defaware=[]), theorem=th).tactics(goal, depth=0) == []

    profile = load_profile("tiny", overrides={"search.automation.baseline_at_root": True})
    assert profile.search.automation.baseline_at_root
    collect = trajectories_stage._collection_settings(profile)
    assert not collect.search.automation.baseline_at_root
    assert collect.search.automation.tactics == profile.search.automation.tactics
    assert profile.search.automation.baseline_at_root  # the profile itself is not changed


async def test_engine_marks_every_node_with_its_origin(tmp_path: Path) -> None:
    """The toy counter: the policy only knows `dec`; the automation adds `dec2`
    (and `dec`, which the policy also proposes: one candidate, 'both')."""
    cfg = SearchConfig(max_nodes=20, max_depth=10, frontier_batch=1, concurrency=1,
                       automation=auto(tactics=["dec2", "dec"], defaware=[], prior_logprob=-0.1))
    engine = SearchEngine(FixedTacticsPolicy(["dec"]), ToyEnv(), cfg, check_invariants=True)  # type: ignore[arg-type]
    out = await engine.search(Theorem(name="four", statement="4"))
    r = out.result
    assert r.proved and r.proof == ["dec2", "dec2"] and r.proof_sources == ["automation", "automation"]
    assert r.candidates_max == 2  # dec (both) and dec2: dec was not tried twice
    assert r.automation_tried == r.expansions  # one automation-only candidate per expansion
    sources = {(rec.tactic, rec.source) for rec in out.records}
    assert ("", "") in sources and ("dec", "both") in sources and ("dec2", "automation") in sources
    assert {rec.source for rec in out.records if rec.label == "positive" and rec.parent_id >= 0} == {"automation"}
    # policy alone: the same search without the automation candidates
    no_auto = cfg.model_copy(update={"automation": AutomationConfig()})
    plain = SearchEngine(FixedTacticsPolicy(["dec"]), ToyEnv(), no_auto)  # type: ignore[arg-type]
    p = (await plain.search(Theorem(name="four", statement="4"))).result
    assert p.proof == ["dec"] * 4 and p.proof_sources == ["policy"] * 4 and p.automation_tried == 0

    # through a part file and back; a file written before the column reads as 'policy'
    write_part(tmp_path / "new.traj", 0, [out])
    assert [x.source for x in read_trajectories(tmp_path / "new.traj")] == [x.source for x in out.records]
    table = pq.read_table(tmp_path / "new.traj" / "part-00000.parquet")
    old_dir = tmp_path / "old.traj"
    old_dir.mkdir()
    pq.write_table(table.drop(["source"]), old_dir / "part-00000.parquet")
    old = read_trajectories(old_dir)
    assert len(old) == len(out.records) and {x.source for x in old} == {"policy"}


def traj_with_sources(theorem: str) -> list[TrajectoryRecord]:
    """root -(induction n: policy)-> a -(decide: both)-> b -(grind [f]: automation)-> proved."""
    return [
        node(theorem, 0, -1, f"⊢ {theorem}", "", 0, "positive"),
        node(theorem, 1, 0, f"case zero ⊢ {theorem} z\n\ncase succ ⊢ {theorem} s", "induction n", 1, "positive"),
        node(theorem, 2, 1, f"case succ ⊢ {theorem} s", "decide", 2, "positive").model_copy(update={"source": "both"}),
        node(theorem, 3, 2, "", "grind [f]", 3, "positive").model_copy(update={"source": "automation"}),
    ]


def test_training_mix_includes_or_excludes_automation_steps(tmp_path: Path) -> None:
    recs = traj_with_sources("t1")
    assert [s.tactic for s in positive_steps(recs)] == ["induction n", "decide", "grind [f]"]
    kept = positive_steps(recs, source="trajectory", exclude_sources=("automation",))
    assert [(s.tactic, s.source) for s in kept] == [("induction n", "trajectory"), ("decide", "trajectory:both")]

    from burnqed_core.search.engine import SearchOutcome
    from burnqed_core.trajectory_io import SearchResult

    theorems = [f"searched_{i}" for i in range(30)]
    outcomes = [SearchOutcome(SearchResult(theorem=t, proved=True, stop="proved"), traj_with_sources(t))
                for t in theorems]
    write_part(tmp_path / "search.traj", 0, outcomes)
    base = make_pairs(200)
    counts = {}
    for flag in ("include", "exclude"):
        prof = load_profile("tiny", overrides={"data.automation_steps": flag})
        res = tactic_pairs_stage.tactic_pairs(prof, 1, base, [tmp_path / "search.traj"], tmp_path / flag,
                                              split=base_split(prof, base))
        mix = json.loads((tmp_path / flag / "stats.json").read_text())["mix"]
        counts[flag] = mix["trajectory_steps"]
        train = pq.read_table(tmp_path / flag / "train.parquet").to_pylist()
        tactics = {r["tactic"] for r in train if r["source"].startswith("trajectory")}
        assert ("grind [f]" in tactics) == (flag == "include"), res.summary
        assert {"induction n", "decide"} <= tactics | {r["tactic"] for r in pq.read_table(
            tmp_path / flag / "val.parquet").to_pylist()}
    assert counts == {"include": 90, "exclude": 60}
    assert "30 automation-only proof steps left out" in res.summary


def row(theorem: str, proved: bool, automation: bool, ebm: str = "", nodes: int = 3) -> EvalResult:
    return EvalResult(iteration=0, benchmark="b", theorem=theorem, budget=24, proved=proved,
                      nodes_to_proof=nodes if proved else None, nodes_used=nodes, time_s=1.0,
                      proof=["simp"] if proved else [], ebm=ebm, search_automation=automation)


def test_summary_report_and_verdict_show_both_variants(tmp_path: Path) -> None:
    names = ["a", "b", "c", "d"]
    rows = [row(n, n in "ab", True) for n in names] + [row(n, n == "a", False) for n in names]
    s = summarize_variants(rows, None, SummaryOptions(iteration=1, benchmark="b", budgets=[8, 24]))
    assert s.automation and s.cumulative.solved == 2
    assert s.policy_only is not None and not s.policy_only.automation and s.policy_only.cumulative.solved == 1
    table = format_table(s)
    assert "policy + automation" in table and "policy alone (no automation candidates): 8: 25.0%, 24: 25.0%" in table
    assert "| 24 | 1/4 (25.0%) | 50.0% |" in format_markdown(s)
    prev = summarize_variants([r.model_copy(update={"iteration": 0}) for r in rows if r.theorem == "a"] +
                              [row(n, False, a) for n in "bcd" for a in (True, False)], None,
                              SummaryOptions(iteration=0,
                              benchmark="b", budgets=[8, 24]))
    comp = format_comparison([prev, s])
    assert "policy alone (max, hard)" in comp and "+0.0pp" in comp.splitlines()[-1]
    v = go_no_go(s, prev)  # decided on policy + automation (four clusters: nothing decides); the policy alone reported
    assert [r.code for r in v.reasons if r.blocking] == ["too_few_clusters"]
    assert any(r.code == "policy_only" and "+0.0pp" in r.message for r in v.reasons), v
    # with an EBM: main = EBM + automation; ablation without the EBM; the policy alone with the EBM
    e_rows = rows + [row(n, n in "abc", True, "E") for n in names] + [row(n, n == "b", False, "E") for n in names]
    s2 = summarize_variants(e_rows, None, SummaryOptions(iteration=1, benchmark="b", budgets=[24]))
    assert s2.ebm == "E" and s2.automation and s2.cumulative.solved == 3
    assert s2.without_ebm is not None and s2.without_ebm.cumulative.solved == 2 and s2.without_ebm.automation
    assert s2.policy_only is not None and s2.policy_only.ebm == "E" and s2.policy_only.solved == ["b"]
    from burnqed_core.eval.plot import plot_summaries

    assert plot_summaries([prev, s2], tmp_path / "p.png").stat().st_size > 0


def test_eval_variants_follow_the_profile() -> None:
    on = load_profile("tiny", overrides={"search.automation.enabled": True, "eval.ebm_ablation": True})
    off = load_profile("tiny", overrides={"search.automation.enabled": False, "eval.ebm_ablation": True})
    assert variants(on, None) == [("", True), ("", False)]
    assert variants(on, "E") == [("E", True), ("", True), ("E", False)]
    assert variants(off, None) == [("", False)] and variants(off, "E") == [("E", False), ("", False)]
    rows = [row("a", True, True), row("a", True, False), row("a", True, True, "old-ebm")]
    assert len(variant_rows(rows, on, None)) == 2 and len(variant_rows(rows, off, None)) == 1
    # without the ablation: no run without the EBM, and the report says the EBM's effect is not measured
    no_abl = load_profile("tiny", overrides={"search.automation.enabled": True, "eval.ebm_ablation": False})
    assert variants(no_abl, "E") == [("E", True), ("E", False)] and variants(no_abl, None) == [("", True), ("", False)]
    e_rows = [row(n, n == "a", a, "E") for n in "ab" for a in (True, False)] + [row("a", True, True)]
    s = summarize_variants(variant_rows(e_rows, no_abl, "E"), None,
                           SummaryOptions(iteration=1, benchmark="b", budgets=[24]))
    assert s.ebm == "E" and s.without_ebm is None and "EBM ablation: not run" in format_table(s)


async def test_partial_automation_below_the_root_is_dropped_unless_it_closes_a_goal() -> None:
    """The toy counter from 6: the automation adds `dec2`, the policy knows `dec`. Kept, `dec2` nodes that
    close nothing fill the tree; dropped, below the root a `dec2` is a node only when it closes the goal (from
    2), and otherwise a failed edge (tried, no node), so the policy's `dec` steps carry the search."""
    cfg = SearchConfig(max_nodes=30, max_depth=10, frontier_batch=1, concurrency=1,
                       automation=auto(tactics=["dec2"], defaware=[], prior_logprob=-0.1))
    keep = await SearchEngine(FixedTacticsPolicy(["dec"]), ToyEnv(), cfg, check_invariants=True).search(  # type: ignore[arg-type]
        Theorem(name="six", statement="6"))
    deep_auto = [r for r in keep.records if r.source == "automation" and r.depth >= 2 and r.state]
    assert keep.result.proved and deep_auto  # partial automation nodes below the root

    drop_cfg = cfg.model_copy(update={"automation": cfg.automation.model_copy(update={"partial": "drop"})})
    engine = SearchEngine(FixedTacticsPolicy(["dec"]), ToyEnv(), drop_cfg, check_invariants=True)  # type: ignore[arg-type]
    out = await engine.search(Theorem(name="six", statement="6"))
    r = out.result
    assert r.proved and r.proof[-1] == "dec2" and r.proof_sources[-1] == "automation"  # the finisher is kept
    # every automation node below the root closed the goal: no open state left by one
    assert [x for x in out.records if x.source == "automation" and x.depth >= 2 and x.state] == []
    assert [x for x in out.records if x.source == "automation" and x.depth == 1 and x.state]  # the root keeps all
    assert r.automation_tried > len([x for x in out.records if x.source == "automation"])  # the rest: tried, no node
    with pytest.raises(ValidationError):
        AutomationConfig(partial="sometimes")  # type: ignore[arg-type]
