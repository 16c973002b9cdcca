"""Tracing, the automation baseline and `burnqed lean check`'s verdicts on the
shared embedded worker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from burnqed_core.cli import app
from burnqed_core.cli.lean import check_lines, check_report
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.eval.baselines.single import automation_baseline, write_automation
from burnqed_core.lean.pool import LeanPool
from burnqed_core.lean.tracing import TraceReport, _replay, trace_theorems
from burnqed_core.record_io import read_parquet, write_parquet
from burnqed_core.records import TacticPair, Theorem

DOUBLE = "def twice : Nat → Nat\n  | 0 => 0\n  | n + 1 => twice n + 2"
THEOREMS = [
    Theorem(name="and_swap", statement="(p q : Prop) : p ∧ q → q ∧ p",
            proof=["intro h", "obtain ⟨hp, hq⟩ := h", "exact ⟨hq, hp⟩"]),
    Theorem(name="twice_eq", preamble=DOUBLE, statement="(n : Nat) : twice n = 2 * n",
            proof=["induction n with\n| zero => rfl\n| succ n ih =>\n  simp [twice, ih]\n  omega"]),
    Theorem(name="Nat.add_comm", statement="(a b : Nat) : a + b = b + a", proof=["omega"]),
    Theorem(name="no_proof", statement="(n : Nat) : n = n"),
]


@pytest.mark.lean
async def test_trace_records_pairs(lean_pool: LeanPool, tmp_path: Path) -> None:
    pairs, report = await trace_theorems(lean_pool, THEOREMS)
    assert report.ok, [f.line() for f in report.failures]
    assert (report.theorems, report.without_proof, report.replayed, report.rechecked) == (4, 1, 3, 3)
    assert len(pairs) == report.pairs == 5
    swap = [p for p in pairs if p.theorem == "and_swap"]
    assert [p.depth for p in swap] == [0, 1, 2]
    assert swap[0].state_before == "p q : Prop\n⊢ p ∧ q → q ∧ p"
    assert swap[0].state_after == swap[1].state_before == "p q : Prop\nh : p ∧ q\n⊢ q ∧ p"
    assert swap[-1].state_after == ""
    # pairs survive a Parquet round trip unchanged
    write_parquet(pairs, tmp_path / "pairs.parquet", TacticPair)
    assert read_parquet(tmp_path / "pairs.parquet", TacticPair) == pairs


ODD_LAYOUTS = [
    Theorem(name="multi_line_statement", preamble=DOUBLE,
            statement="(m n : Nat)\n    (h : m = n) :\n    twice m = twice n",
            proof=["subst h", "rfl"]),
    Theorem(name="bullets", statement="(p q : Prop) (hp : p) (hq : q) : (p ∧ q) ∧ (q ∨ p)",
            proof=["constructor", "· exact ⟨hp, hq⟩", "· right\n  exact hp"]),
    Theorem(name="have_block", preamble=DOUBLE, statement="(n : Nat) : twice (n + 1) = twice n + 2",
            proof=["have h : ∀ k, twice k = 2 * k := by\n  intro k\n  induction k <;> simp [twice, *] <;> omega",
                   "rw [h, h]", "omega"]),
    Theorem(name="all_goals", statement="(a b : Nat) : (a + b = b + a) ∧ (a * 1 = a)",
            proof=["constructor <;> simp [Nat.add_comm]"]),
]


@pytest.mark.lean
async def test_one_pass_trace_equals_the_step_replay(lean_pool: LeanPool) -> None:
    """The states read from the accepting re-check are the states the search
    sees, character for character: same pairs as replaying step by step, on
    hand-written layouts (multi-line statements and tactics, bullets, nested
    ``by``, ``<;>``) and one theorem of every bundled family."""
    from burnqed_core.data.synthetic.families import FAMILIES

    first_families = {f.name for f in FAMILIES}
    firsts: dict[str, Theorem] = {}
    for t in load_theorems("bundled:corpus"):
        if t.family in first_families:
            firsts.setdefault(t.family or t.name, t)
    thms = [*THEOREMS, *ODD_LAYOUTS, *firsts.values()]
    assert lean_pool.reads_goals
    pairs, report = await trace_theorems(lean_pool, thms)
    # the states come from the checked run (the checker's info trees), the step replay's from the batch goal
    # reader: the same text, character for character
    assert report.ok and report.one_pass == report.replayed == len([t for t in thms if t.proof])
    old, rep = await _replay(lean_pool, [t for t in thms if t.proof], True, False, "trace",
                             TraceReport(theorems=len(thms)))
    assert rep.ok
    assert pairs == [p for t in thms for p in old.get(t.name, [])]
    bullets = [p for p in pairs if p.theorem == "bullets"]
    assert bullets[1].state_after.startswith("case right") and bullets[2].state_after == ""
    # the states come only with an accepted proof: a rejected one carries none
    c = await lean_pool.check_proof(ODD_LAYOUTS[1], ["constructor", "· exact ⟨hp, hq⟩"], states=True)
    assert not c.ok and c.states is None


@pytest.mark.lean
async def test_trace_reports_every_kind_of_failure(lean_pool: LeanPool) -> None:
    bad = [
        Theorem(name="wrong_step", statement="(p q : Prop) (hp : p) (hq : q) : p ∧ q",
                proof=["constructor", "exact hq", "exact hp"]),
        Theorem(name="too_short", statement="(p q : Prop) (hp : p) (hq : q) : p ∧ q", proof=["constructor"]),
        Theorem(name="cheat", statement="(n : Nat) : n + 1 = n", proof=["sorry"]),
        Theorem(name="no_start", statement="(n : Nat) : n = undefinedConstant", proof=["rfl"]),
        THEOREMS[0],
    ]
    pairs, report = await trace_theorems(lean_pool, bad)
    by_name = {f.theorem: f for f in report.failures}
    assert set(by_name) == {"wrong_step", "too_short", "cheat", "no_start"}
    assert by_name["wrong_step"].step == 1 and by_name["wrong_step"].status == "tactic_error"
    assert "goals remain" in by_name["too_short"].message
    assert by_name["cheat"].status == "rejected"
    assert by_name["no_start"].step == -1 and by_name["no_start"].status == "start_error"
    # only the theorem that replayed contributes pairs; the failures were located by the step replay
    assert {p.theorem for p in pairs} == {"and_swap"} and report.rechecked == report.one_pass == 1


@pytest.mark.lean
async def test_automation_baseline(lean_pool: LeanPool, tmp_path: Path) -> None:
    thms = [
        Theorem(name="by_rfl", statement="(n : Nat) : n + 0 = n"),
        Theorem(name="by_omega", statement="(a b : Nat) (h : 2 * a < b) : a < b + 1"),
        Theorem(name="by_decide", statement=": 2 ^ 10 = 1024 ∧ 3 ∣ 12"),
        THEOREMS[1],  # needs induction over a user definition
        Theorem(name="broken", statement="(n : Nat) : n = undefinedConstant"),
    ]
    mapping, report = await automation_baseline(lean_pool, thms)
    assert mapping["by_rfl"] == "rfl"
    assert mapping["by_omega"] == "omega"
    assert mapping["by_decide"] in ("decide", "rfl", "trivial")
    assert mapping["twice_eq"] is None and mapping["broken"] is None
    assert report.start_errors == ["broken"]
    assert (report.closed, report.hard) == (3, 1)
    assert "3 closed by automation" in report.summary()
    path = write_automation({"old": None}, tmp_path / "automation.json")
    write_automation(mapping, path)
    data = json.loads(path.read_text())
    assert data["old"] is None and data["by_omega"] == "omega" and list(data) == sorted(data)


LEAN_FILE = """\
def double (n : Nat) : Nat := n + n

theorem double_two : double 2 = 4 := by decide

theorem good (a b : Nat) : a + b = b + a := by
  omega

theorem wrong (n : Nat) : n + 1 = n := by
  omega

/-- a docstring -/
theorem cheat (n : Nat) : n * 0 = 1 := by
  sorry

theorem native (n : Nat) : n + 0 = n := by
  native_decide
"""


@pytest.mark.lean
async def test_file_verdicts(lean_pool: LeanPool) -> None:
    elab = await lean_pool.elaborate(LEAN_FILE, declared=True)
    lines, ok, total = check_report(LEAN_FILE, elab)
    verdicts = {line.split()[1].rstrip(":"): line for line in lines if line.startswith(("ok ", "FAIL "))}
    assert verdicts["double_two"] == "ok double_two : double 2 = 4  [file: double]"  # the file's constant marked
    assert verdicts["good"] == "ok good : ∀ (a b : Nat), a + b = b + a"
    assert verdicts["wrong"].startswith("FAIL") and "omega" in verdicts["wrong"]
    assert verdicts["cheat"].startswith("FAIL") and "sorry" in verdicts["cheat"]
    assert verdicts["native"].startswith("FAIL")
    assert [line.split()[1].rstrip(":") for line in lines] == ["double_two", "good", "wrong", "cheat", "native"]
    assert (ok, total) == (2, 5)


def test_cli_help_lists_commands() -> None:
    runner = CliRunner()
    out = runner.invoke(app, ["lean", "--help"])
    assert out.exit_code == 0
    for cmd in ("setup", "check", "trace", "baseline"):
        assert cmd in out.output
    for cmd in ("setup", "check", "trace", "baseline"):
        sub = runner.invoke(app, ["lean", cmd, "--help"])
        assert sub.exit_code == 0 and "--profile" in sub.output


def test_missing_install_is_a_clear_error(tmp_path: Path) -> None:
    runner = CliRunner()
    lean = tmp_path / "f.lean"
    lean.write_text("theorem t : 1 = 1 := rfl\n")
    out = runner.invoke(app, ["lean", "check", str(lean)], env={"BURNQED_HOME": str(tmp_path / "home")})
    assert out.exit_code != 0
    assert "burnqed lean setup" in str(out.exception)


def test_check_lines_put_notes_under_their_theorem() -> None:
    lines = check_lines([("a", None), ("b", "an error"), ("c", None)],
                        {"a": ["declared with `variable`s in scope"], "c": ["x", "y"]},
                        {"a": "∀ (n : Nat),\n  n = n", "c": "True"})
    assert lines == ["ok a : ∀ (n : Nat), n = n", "  note a: declared with `variable`s in scope", "FAIL b: an error",
                     "ok c : True", "  note c: x", "  note c: y"]


@pytest.mark.lean
async def test_one_pass_trace_equals_the_step_replay_on_rule_induction(lean_pool: LeanPool) -> None:
    """After `induction hn` on a user predicate, `case one ... => ...` steps: the goals before a `case` step are
    every goal with its case tag, as the step replay (and the search) see them, read from the checked run
    (the outermost tactic that starts there: plainGoal at that character showed the focused goal alone)."""
    t = next(t for t in load_theorems("bundled:corpus") if t.name == "tocc_bump_1")
    pairs, report = await trace_theorems(lean_pool, [t])
    old, rep = await _replay(lean_pool, [t], True, False, "trace", TraceReport(theorems=1))
    assert report.ok and rep.ok and report.one_pass == 1
    assert pairs == old.get(t.name, []) and len(pairs) == 4
    assert pairs[1].tactic.startswith("case one") and pairs[1].state_before.count("case ") >= 2
