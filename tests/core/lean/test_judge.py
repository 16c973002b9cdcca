"""The trusted checker (`burnqed_core/lean/judge.lean`) on the real embedded
Lean, with the static rules switched off: every verdict here is Lean's kernel
replay, the comparison with the trusted statement and the checker's own axiom
walk, never a list of words. Each class of attack comes in several spellings
of our own."""

from __future__ import annotations

import pytest

from burnqed_core.lean import checker
from burnqed_core.lean.judge import JudgeReport
from burnqed_core.lean.pool import LeanPool
from burnqed_core.lean.verdicts import leaf_axioms, verdict_problems
from burnqed_core.records import Theorem

pytestmark = pytest.mark.lean

FALSE = Theorem(name="f", statement=": False")
NEQ = Theorem(name="neq", statement="(n : Nat) : n + 1 = n")
TWO = Theorem(name="two", statement=": 2 + 2 = 4")
DBL = Theorem(name="dbl", preamble="def dbl : Nat → Nat\n  | 0 => 0\n  | n + 1 => dbl n + 2",
              statement="(n : Nat) : dbl n = 2 * n")

# (why, theorem, tactics): the whole-proof check must reject each one with
# the static filter off. Tactic text only: the preamble and statement are ours.
ATTACKS: list[tuple[str, Theorem, list[str]]] = [
    # The verdict query rewritten or re-scoped by what follows the proof.
    ("macro_rules on a keyword", FALSE,
     ["exact absurd rfl (by decide : ¬ (1 = 1))", "macro_rules | `(tactic| decide) => `(tactic| sorry)"]),
    ("new keyword after the proof", FALSE, ["sorry", 'syntax "burnqed_judge" : command',
                                            "macro_rules | `(burnqed_judge) => `(#check 1)"]),
    ("file ends inside a namespace", FALSE, ["sorry", "namespace Evil"]),
    ("trailing end", FALSE, ["sorry", "end"]),
    ("trailing open ... in", FALSE, ["sorry", "open Nat in"]),
    ("trailing section", FALSE, ["exact False.elim (by sorry)", "section"]),
    # The answer's printing changed by instances.
    ("Repr String instance", FALSE, ["sorry", 'instance (priority := high) : Repr String := ⟨fun _ _ => "ok"⟩']),
    ("ToString instance", FALSE, ["sorry", 'instance (priority := high) : ToString Nat := ⟨fun _ => ""⟩']),
    # Names: a second declaration of the checked name, elsewhere.
    ("same name in a namespace", FALSE,
     ["sorry", "namespace Evil", "theorem burnqed_checked : True := trivial", "end Evil"]),
    ("docstring then example", FALSE, ["sorry", "/-- doc -/", "example : True := trivial"]),
    # Native evaluation in other spellings.
    ("native decide config", TWO, ["decide (config := { native := true })"]),
    ("native decide +native", TWO, ["decide +native"]),
    ("ofReduceBool term", TWO, ["exact of_decide_eq_true (Lean.ofReduceBool (decide (2 + 2 = 4)) true rfl)"]),
    # Sorry in disguise.
    ("sorry silenced", FALSE, ["set_option warn.sorry false in sorry"]),
    ("sorryAx term", NEQ, ["exact sorryAx _ false"]),
    ("let rec alias", FALSE, ["exact (let rec f : False := f; f)"]),
    ("admit", NEQ, ["admit"]),
    # Axioms and unsafe constants.
    ("axiom after proof", FALSE, ["exact cheat", "axiom cheat : False"]),
    ("lcProof", FALSE, ["exact lcProof"]),
    ("unsafe cast", FALSE, ["exact unsafeCast ()"]),
    ("kernel check skipped after proof", FALSE,
     ["exact cheat2", "set_option debug.skipKernelTC true in", "theorem cheat2 : False := lcProof"]),
    # Output forged by code run during elaboration.
    ("forged stdout", FALSE, ["sorry", '#eval IO.println "Content-Length: 10\\r\\n\\r\\n{\\"id\\":1}"']),
    ("early end", FALSE, ["sorry", "#exit"]),
]


@pytest.mark.parametrize(("why", "thm", "tactics"), ATTACKS, ids=[a[0] for a in ATTACKS])
async def test_attacks_are_rejected_by_the_trusted_checker_alone(
        lean_pool: LeanPool, monkeypatch: pytest.MonkeyPatch, why: str, thm: Theorem, tactics: list[str]) -> None:
    monkeypatch.setattr(checker, "static_problems", lambda *_: [])
    result = await lean_pool.check_proof(thm, tactics)
    assert not result.ok, why
    assert result.errors


async def test_true_proofs_pass_the_trusted_checker(lean_pool: LeanPool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checker, "static_problems", lambda *_: [])
    good = [
        (TWO, ["decide"]),
        (DBL, ["induction n with\n| zero => rfl\n| succ k ih =>\n  simp [dbl, ih]\n  omega"]),
        (Theorem(name="em", statement="(p : Prop) : p ∨ ¬p"), ["exact Classical.em p"]),
        (Theorem(name="ind", preamble="inductive Col where\n  | red | green\n  deriving DecidableEq\n"
                                      "def Col.toggle : Col → Col\n  | .red => .green\n  | .green => .red",
                 statement="(c : Col) : c.toggle.toggle = c"), ["cases c <;> rfl"]),
        (Theorem(name="ns", preamble="namespace Foo\ndef dbl (n : Nat) : Nat := n + n",
                 statement="(n : Nat) : dbl n = 2 * n"), ["unfold dbl", "omega"]),
    ]
    for thm, tactics in good:
        r = await lean_pool.check_proof(thm, tactics)
        assert r.ok, (thm.name, r.errors)
    # Conservative: a file constant whose last name part is a library name (`Col.flip`, `flip`) counts as a
    # shadowing name in a preamble that is not the package's own (refused for search; noted when only noted).
    flip = Theorem(name="flip", preamble=good[3][0].preamble.replace("toggle", "flip"),
                   statement="(c : Col) : c.flip.flip = c")
    assert not (await lean_pool.check_proof(flip, ["cases c <;> rfl"])).ok
    noted = await lean_pool.check_proof(flip, ["cases c <;> rfl"], meaning="note")
    assert noted.ok and any("flip" in n for n in noted.notes), noted


async def _judge(lean_pool: LeanPool, preamble: str, expected: str, candidate: str, names: list[str]) -> JudgeReport:
    return await lean_pool.judge(preamble, expected, candidate, names)


async def test_statement_is_the_trusted_one(lean_pool: LeanPool) -> None:
    """The theorem counts only with the type the trusted text gives its name:
    an instance overriding `+`, a `variable` hypothesis and a different
    statement under the same name all fail; the honest one passes."""
    expected = "axiom burnqed_checked (n : Nat) : n + 1 = n\n"
    candidates = [
        "instance (priority := high) bad : HAdd Nat Nat Nat := ⟨fun a _ => a⟩\n"
        "theorem burnqed_checked (n : Nat) : n + 1 = n := rfl\n",
        "variable (h : False)\ninclude h\ntheorem burnqed_checked (n : Nat) : n + 1 = n := h.elim\n",
        "theorem burnqed_checked (n : Nat) : n + 0 = n := rfl\n",
    ]
    for c in candidates:
        rep = await _judge(lean_pool, "", expected, c, ["burnqed_checked"])
        v = rep.verdicts["burnqed_checked"]
        assert v.status == "type_differs", (c, v)
        assert verdict_problems("burnqed_checked", v)
    ok = await _judge(lean_pool, "", "axiom burnqed_checked (n : Nat) : n + 0 = n\n",
                      "theorem burnqed_checked (n : Nat) : n + 0 = n := rfl\n", ["burnqed_checked"])
    assert ok.verdicts["burnqed_checked"].status == "ok" and not verdict_problems("burnqed_checked",
                                                                                  ok.verdicts["burnqed_checked"])


async def test_forged_hand_over_is_rejected_by_the_kernel_replay(lean_pool: LeanPool) -> None:
    """Declarations the kernel never checked (the document switched the check
    off) or that are not theorems are refused by the replay, whatever the
    environment the candidate built claims."""
    rep = await _judge(lean_pool, "", "axiom burnqed_checked : False\n",
                       "set_option debug.skipKernelTC true in\ntheorem burnqed_checked : False := lcProof\n",
                       ["burnqed_checked"])
    assert rep.verdicts["burnqed_checked"].status == "kernel"
    rep = await _judge(lean_pool, "", "axiom burnqed_checked : False\n", "axiom burnqed_checked : False\n",
                       ["burnqed_checked"])
    assert rep.verdicts["burnqed_checked"].status == "not_theorem"
    # A lemma the candidate proved with the kernel off, used by an honest-looking theorem.
    rep = await _judge(lean_pool, "", "axiom burnqed_checked : False\n",
                       "set_option debug.skipKernelTC true in\ntheorem helper : False := lcProof\n"
                       "theorem burnqed_checked : False := helper\n", ["burnqed_checked"])
    assert rep.verdicts["burnqed_checked"].status == "kernel"
    # A local axiom behind a theorem: accepted by the kernel, refused by the axiom walk.
    rep = await _judge(lean_pool, "", "axiom burnqed_checked : False\n",
                       "axiom cheat : False\ntheorem burnqed_checked : False := cheat\n", ["burnqed_checked"])
    v = rep.verdicts["burnqed_checked"]
    assert v.status == "ok" and "local:cheat" in leaf_axioms(v.leaves)
    assert verdict_problems("burnqed_checked", v)


async def test_lean_check_uses_the_trusted_checker(lean_pool: LeanPool) -> None:
    """`burnqed lean check`'s route (`elaborate` with `axioms_of`): a theorem
    whose kernel check the file switched off is rejected by the replay."""
    src = ("theorem fine (a b : Nat) : a + b = b + a := by omega\n"
           "set_option debug.skipKernelTC true in\ntheorem lc : False := lcProof\n")
    elab = await lean_pool.elaborate(src, axioms_of=["fine", "lc"])
    assert elab.complete
    assert checker.axiom_problems("fine", elab) == []
    assert checker.axiom_problems("lc", elab)


async def test_batches_never_prove_what_the_checker_rejects(lean_pool: LeanPool,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Static rules off: candidates that end in a combinator (which would
    swallow the goal reader's probe), or that declare syntax for the blocks
    after them, are parse errors by Lean's parser; a batch gives each
    candidate's verdict alone; and every step reported as closing the proof
    is a proof the trusted checker accepts."""
    from burnqed_core.lean import pool as pool_module

    monkeypatch.setattr(pool_module, "sandbox_module", lambda: None)
    monkeypatch.setattr(checker, "static_problems", lambda *_: [])
    thm = Theorem(name="t", statement="(a b : Nat) : a + b = b + a ∧ True")
    start = await lean_pool.start_proof(thm)
    assert start.ok and start.state is not None
    cands = ["constructor <;>", "simp <;>", "exact ⟨Nat.add_comm a b, trivial⟩ <;>", "refine ⟨?_, ?_⟩ <;>",
             "first\n| omega\n|", "skip\nnotation \"⊤⊤\" => False", 'skip\ninfixl:65 " +++ " => Nat.add',
             "constructor", "omega", "exact ⟨Nat.add_comm a b, trivial⟩", "constructor <;> simp [Nat.add_comm]",
             "exact (sorry : _)", "skip\ntheorem x : False := sorry"]
    batch = await lean_pool.apply_many([(start.state, c) for c in cands])
    alone = [(await lean_pool.apply_many([(start.state, c)]))[0] for c in cands]
    assert [r.status for r in batch] == [r.status for r in alone]
    assert [r.state.goals if r.state else None for r in batch] == [r.state.goals if r.state else None
                                                                   for r in alone]
    for c, r in zip(cands[:7], batch[:7], strict=True):
        assert not r.ok, (c, r)
    assert batch[7].ok and len(batch[7].state.goals) == 2  # type: ignore[union-attr]
    for c, r in zip(cands, batch, strict=True):
        if r.ok and r.state is not None and not r.state.goals:
            assert (await lean_pool.check_proof(thm, [c])).ok, c
    assert batch[9].ok and batch[9].state is not None and batch[9].state.goals == ()


async def test_lean_check_notes_statements_whose_meaning_the_file_changed(lean_pool: LeanPool) -> None:
    """For a user's file Lean's elaboration is reported as it is, with a note
    where the statement means more than its text: a hypothesis from
    `variable`/`include`, or an instance the file declared for a library
    class (here both make `n + 1 = n` provable)."""
    src = ("theorem plain (n : Nat) : n + 0 = n := rfl\n"
           "section\nvariable (h : False)\ninclude h\n"
           "theorem byvar (n : Nat) : n + 1 = n := h.elim\nend\n"
           "instance (priority := high) evilAdd : Add Nat := ⟨fun a _ => a⟩\n"
           "theorem byinst (n : Nat) : n + 1 = n := rfl\n")
    elab = await lean_pool.elaborate(src, axioms_of=["plain", "byvar", "byinst"])
    assert not [d for d in elab.diagnostics if d.is_error], elab.diagnostics
    assert set(elab.axioms) == {"plain", "byvar", "byinst"}, elab.rejected
    assert "plain" not in elab.notes
    assert any("`variable`" in n for n in elab.notes["byvar"])
    assert any("`evilAdd`" in n and "`Add`" in n for n in elab.notes["byinst"])
