"""Soundness and isolation on the real embedded Lean: false or untrusted
proofs stay rejected whatever the spelling, Lean itself (axioms, its own
parse, completeness) is the authority, a batch's verdicts equal each
candidate's alone, and code run by Lean never touches the host."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from burnqed_core.cli.lean import check_report
from burnqed_core.config import LeanConfig
from burnqed_core.lean import checker
from burnqed_core.lean.pool import LeanPool
from burnqed_core.lean.types import ALLOWED_AXIOMS, GoalState
from burnqed_core.records import Theorem

pytestmark = pytest.mark.lean

FALSE = Theorem(name="f", statement=": False")
TWO = Theorem(name="two", statement=": 2 + 2 = 4")
NEQ = Theorem(name="neq", statement="(n : Nat) : n + 1 = n")
IMPL = ("def real (_ : Nat) : Bool := false\n"
        "@[implemented_by real] def fake (_ : Nat) : Bool := true")

# (theorem, tactics): every one must be rejected, by the static filter AND,
# with the filter switched off, by Lean alone.
ADVERSARIAL: list[tuple[str, Theorem, list[str]]] = [
    ("native_decide", TWO, ["native_decide"]),
    ("decide +native", TWO, ["decide +native"]),
    ("decide config native", TWO, ["decide (config := { native := true })"]),
    ("ofReduceBool", TWO, ["exact of_decide_eq_true (Lean.ofReduceBool (decide (2 + 2 = 4)) true rfl)"]),
    ("ofReduceBool guillemets", TWO,
     ["exact of_decide_eq_true («Lean».«ofReduceBool» (decide (2 + 2 = 4)) true rfl)"]),
    ("implemented_by + native", Theorem(name="i", preamble=IMPL, statement=": fake 0 = false"), ["native_decide"]),
    ("sorry", FALSE, ["sorry"]),
    ("sorryAx", FALSE, ["exact sorryAx False"]),
    ("sorryAx guillemets", FALSE, ["exact «sorryAx» False"]),
    ("silenced sorry", FALSE, ["set_option warn.sorry false in sorry"]),
    ("admit", NEQ, ["admit"]),
    ("preamble axiom", Theorem(name="a", preamble="axiom cheat : False", statement=": False"), ["exact cheat"]),
    ("private preamble axiom", Theorem(name="a", preamble="private axiom cheat : False", statement=": False"),
     ["exact cheat"]),
    ("axiom after proof", FALSE, ["exact absurd rfl (by decide : ¬ (1 = 1)) ", "axiom cheat : False"]),
    ("exit", FALSE, ["#exit"]),
    ("unterminated comment", FALSE, ["/- the rest of the document"]),
    ("unterminated guillemet", FALSE, ["exact «False.elim"]),
    ("line separator escape", FALSE, ["skip\u2028theorem t : False := sorry"]),
    ("paragraph separator", FALSE, ["skip\u2029#exit"]),
    ("next line escape", FALSE, ["skip\u0085axiom t : False"]),
    ("macro smuggling", FALSE, ["skip", 'macro "triv" : tactic => `(tactic| sorry)', "triv"]),
    ("eval", FALSE, ['#eval IO.println "x"', "skip"]),
    ("guard_msgs", FALSE, ["#guard_msgs in sorry"]),
    ("unsafe cast", FALSE, ["exact unsafeCast ()"]),
    ("elab command", FALSE, ["skip", "open Lean Elab Command in", "elab \"#x\" : command => pure ()"]),
]


@pytest.mark.parametrize(("why", "thm", "tactics"), ADVERSARIAL, ids=[a[0] for a in ADVERSARIAL])
async def test_adversarial_proofs_are_rejected_by_lean_alone(
        lean_pool: LeanPool, monkeypatch: pytest.MonkeyPatch, why: str, thm: Theorem, tactics: list[str]) -> None:
    assert not (await lean_pool.check_proof(thm, tactics)).ok, why
    monkeypatch.setattr(checker, "static_problems", lambda *_: [])
    result = await lean_pool.check_proof(thm, tactics)
    assert not result.ok, why
    assert result.errors


async def test_axioms_are_the_authority(lean_pool: LeanPool) -> None:
    """What Lean reports, checked directly: native code, a silenced or
    captured sorry and a file's axiom are in the axioms; valid proofs only
    use the allowed ones."""
    src = ("axiom cheat : False\n"
           "theorem nat : 2 + 2 = 4 := by native_decide\n"
           "set_option warn.sorry false in\ntheorem quiet : False := sorry\n"
           "/-- warning: declaration uses `sorry` -/\n#guard_msgs in\ntheorem caught : False := sorry\n"
           "theorem byax : 1 = 2 := cheat.elim\n"
           "theorem em' (p : Prop) : p ∨ ¬p := Classical.em p\n"
           "theorem simp' (n : Nat) : n + 0 = n := by simp\n"
           "theorem plain : 1 = 1 := rfl\n"
           "noncomputable def pick (h : Nonempty Nat) : Nat := Classical.choice h\n"
           "theorem pick_eq : ∃ n : Nat, n = pick ⟨0⟩ := ⟨_, rfl⟩\n"
           "set_option debug.skipKernelTC true in\ntheorem lc : False := lcProof\n")
    names = ["nat", "quiet", "caught", "byax", "em'", "simp'", "plain", "pick_eq", "lc"]
    # Listed as Lean elaborated them, first and without `#guard_msgs` (a command that runs code: the process is
    # retired after it), so that the test retires one process, not two.
    plain = "\n".join(line for line in src.split("\n") if "guard_msgs" not in line and "caught" not in line)
    listed = await lean_pool.elaborate(plain, declared=True)
    assert listed.declarations is not None and "nat" in listed.declarations and "plain" in listed.declarations
    assert not listed.ran_code
    elab = await lean_pool.elaborate(src, axioms_of=names)
    assert elab.complete and not [d for d in elab.diagnostics if d.is_error]
    assert set(names) <= set(elab.axioms) | set(elab.rejected)
    # Native evaluation: its auxiliary lemma is refused by the kernel replay, or its axiom is reported.
    assert "nat" in elab.rejected or "Lean.ofReduceBool" in elab.axioms["nat"]
    assert checker.axiom_problems("nat", elab)
    assert "sorryAx" in elab.axioms["quiet"] and "sorryAx" in elab.axioms["caught"]
    assert any(a.startswith("local:") and a.endswith("cheat") for a in elab.axioms["byax"])
    # An unsafe prelude axiom is neither allowed nor a library fact, whatever its name (the kernel check was off).
    # With the kernel check off in the file, the trusted checker's kernel replay refuses it.
    assert "lc" in elab.rejected or {"lcProof", "unsafe:lcProof"} & set(elab.axioms["lc"])
    assert checker.axiom_problems("lc", elab)
    for ok in ("em'", "simp'", "plain", "pick_eq"):
        assert set(elab.axioms[ok]) <= ALLOWED_AXIOMS, elab.axioms[ok]
    # Library theorems carry no proofs in this build's exported-level .olean
    # files (what `Classical.em` uses is not visible: trusted library); an
    # allowed axiom used directly is reported.
    assert elab.axioms["pick_eq"] == ["Classical.choice"]


async def test_early_end_and_unknown_names_fail_closed(lean_pool: LeanPool) -> None:
    elab = await lean_pool.elaborate("theorem a : True := trivial\n#exit\ntheorem b : True := trivial\n",
                                     axioms_of=["a", "b"])
    assert not elab.complete and "b" not in (elab.declarations or [])
    assert checker.axiom_problems("b", elab)
    elab = await lean_pool.elaborate("theorem a : True := trivial\n", axioms_of=["a", "nope"])
    assert elab.complete and "a" in elab.axioms and "nope" not in elab.axioms


async def test_valid_proofs_still_pass(lean_pool: LeanPool) -> None:
    good = [
        (Theorem(name="Nat.add_comm", statement="(a b : Nat) : a + b = b + a"), ["omega"]),
        (Theorem(name="em", statement="(p : Prop) : p ∨ ¬p"), ["exact Classical.em p"]),
        (Theorem(name="ns", preamble="namespace Foo\ndef dbl (n : Nat) : Nat := n + n\n"
                                     "theorem dbl_zero : dbl 0 = 0 := rfl",
                 statement="(n : Nat) : dbl n = 2 * n"), ["unfold dbl", "omega"]),
        (Theorem(name="twice", preamble="def twice : Nat → Nat\n  | 0 => 0\n  | n + 1 => twice n + 2",
                 statement="(n : Nat) : twice n = 2 * n"),
         ["induction n with\n| zero => rfl\n| succ n ih =>\n  simp [twice, ih]\n  omega"]),
        (TWO, ["decide"]),
    ]
    for thm, tactics in good:
        r = await lean_pool.check_proof(thm, tactics)
        assert r.ok, (thm.name, r.errors)


async def test_batch_verdicts_equal_each_candidate_alone(lean_pool: LeanPool) -> None:
    """Blocks are anonymous: a candidate cannot cite an earlier one (by name
    or `exact?`), so a batch gives the verdicts of one-by-one checks."""
    start = await lean_pool.start_proof(Theorem(name="t", statement="(a b : Nat) : a + b = b + a"))
    assert start.ok and start.state is not None
    state: GoalState = start.state
    cands = ["omega", "exact?", "exact burnqed_goal_0 a b", "simp [Nat.add_comm]", "rfl", "exact Nat.add_comm a b",
             "intro h", "exact?"]
    batch = await lean_pool.apply_many([(state, c) for c in cands])
    alone = [(await lean_pool.apply_many([(state, c)]))[0] for c in cands]
    assert [r.status for r in batch] == [r.status for r in alone]
    assert [r.state.goals if r.state else None for r in batch] == [r.state.goals if r.state else None for r in alone]
    assert not batch[2].ok  # no block is reachable by name


async def test_code_run_by_lean_never_touches_the_host(lean_pool: LeanPool, lean_config: LeanConfig,
                                                       tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    secret = tmp_path / "secret.txt"
    secret.write_text(f"secret-{tag}")
    lib = Path(lean_config.embedded.install_dir) / "lib"
    targets = [Path(f"/tmp/burnqed-escape-{tag}"), Path.home() / f"burnqed-escape-{tag}", lib / f"escape-{tag}.txt",
               Path.cwd() / f"burnqed-escape-{tag}"]
    src = "".join(f'#eval IO.FS.writeFile "{p}" "pwned"\n' for p in targets)
    src += f'#eval IO.FS.readFile "/tmp/burnqed-escape-{tag}"\n'
    src += f'#eval IO.FS.readFile "{secret}"\n'
    elab = await lean_pool.elaborate(src)
    for p in targets:
        assert not p.exists(), f"Lean wrote {p} on the host"
    msgs = [d.message for d in elab.diagnostics]
    # Either the write to /tmp landed in the process's own in-memory file
    # system, or Lean refused to run the code at all (with the trusted
    # checker's header, `#eval` of an `IO` action does not compile in this
    # build); never on the host.
    assert any("pwned" in m for m in msgs) or all(d.is_error for d in elab.diagnostics[:len(targets)]), msgs
    assert not any(f"secret-{tag}" in m for m in msgs), msgs  # host files are not readable either


LEAN_FILE = '''def s := r#"
theorem hidden : False := sorry
"#

private axiom cheat : False

theorem good (a b : Nat) : a + b = b + a := by
  omega

theorem via_axiom : 1 = 2 := cheat.elim

theorem term_native : 2 + 2 = 4 := of_decide_eq_true (Lean.ofReduceBool (decide (2 + 2 = 4)) true rfl)

set_option warn.sorry false in
theorem quiet : False := sorry

/-- warning: declaration uses `sorry` -/
#guard_msgs in
theorem caught : False := sorry

set_option debug.skipKernelTC true in
theorem lc_proof : False := lcProof

example : 1 + 1 = 2 := rfl

#exit

theorem after_exit : False := sorry
'''


async def test_lean_check_file_verdicts(lean_pool: LeanPool) -> None:
    elab = await lean_pool.elaborate(LEAN_FILE, declared=True)
    lines, _, _ = check_report(LEAN_FILE, elab)
    verdicts = {line.split()[1].rstrip(":"): line for line in lines if line.startswith(("ok ", "FAIL "))}
    assert "hidden" not in verdicts and verdicts["example_24"].startswith("ok ")
    for bad in ("via_axiom", "term_native", "quiet", "caught", "lc_proof"):
        assert verdicts[bad].startswith("FAIL"), bad
    assert "after_exit" not in verdicts  # Lean never elaborated it: it is not a declaration of the file
    assert verdicts["<file>"].startswith("FAIL")  # `#exit`: Lean did not process the whole file
