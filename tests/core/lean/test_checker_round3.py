"""Soundness, round 3, on the real embedded Lean with the static rules off:
nothing a file supplies is trusted. Preambles are replayed through the kernel
(a lemma made with the kernel check off or by the file's own meta code is
refused, by `check_proof` and by tracing: no pair is written); one
elaboration decides (errors, `sorry`, states and verdict come from the
checked run); names and statements come from Lean (a file where the file
parser and Lean disagree is refused); the batch goal reader cannot be
captured by any focusing tactic, and a step closes a goal only when the
kernel accepts its proof term without a disallowed axiom; meaning changes
get a note in `lean check` and a refusal in search; code a file runs never
reaches the checker's nonce (the process is retired after it).

Cases are batched (many per judge call or per batch document) to keep the
suite's Lean time small."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from burnqed_core.cli.lean import check_report
from burnqed_core.lean import checker, embedded, trust
from burnqed_core.lean import pool as pool_module
from burnqed_core.lean.judge import ReportError
from burnqed_core.lean.pool import LeanPool
from burnqed_core.lean.tracing import trace_theorems
from burnqed_core.lean.types import GoalState, Status
from burnqed_core.records import Theorem

pytestmark = pytest.mark.lean

NEQ = Theorem(name="neq", statement="(n : Nat) : n + 1 = n")
ONE_TWO = ": (1:Nat) = 2"
# A lemma the file's own meta code adds to the environment without the kernel's check.
MKBAD = ("open Lean Elab Command in\n"
         "elab \"#mkbad\" : command => do\n"
         "  let ty := mkApp3 (mkConst ``Eq [1]) (mkConst ``Nat) (mkNatLit 1) (mkNatLit 2)\n"
         "  let decl := Declaration.thmDecl { name := `badm, levelParams := [], type := ty,\n"
         "                                    value := mkApp (mkConst ``lcProof []) ty }\n"
         "  let opts : Options := ({} : Options).setBool `debug.skipKernelTC true\n"
         "  match (← getEnv).addDecl opts decl with\n"
         "  | .ok env => setEnv env\n"
         "  | .error _ => pure ()\n"
         "#mkbad")


@pytest.fixture
def no_static(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Static rules off: every verdict below is the trusted checker's."""
    monkeypatch.setattr(checker, "static_problems", lambda *_: [])
    monkeypatch.setattr(pool_module, "sandbox_module", lambda: None)
    yield


# (why, preamble, statement, proof): each proof is accepted only if the preamble's lemma were trusted.
PREAMBLE_ATTACKS: list[tuple[str, str, str, list[str]]] = [
    ("skipKernelTC in", "set_option debug.skipKernelTC true in\ntheorem bad : (1:Nat) = 2 := lcProof",
     ONE_TWO, ["simp [bad]"]),
    ("skipKernelTC for the rest", "set_option debug.skipKernelTC true\ntheorem bad : (1:Nat) = 2 := lcProof",
     ONE_TWO, ["exact bad"]),
    ("behind a definition", "def helper : Nat := 3\nset_option debug.skipKernelTC true in\n"
                            "theorem h3 : helper = 4 := lcProof", ": (3:Nat) = 4",
     ["have := h3", "simpa [helper] using this"]),
    ("behind another lemma", "set_option debug.skipKernelTC true in\ntheorem bad : False := lcProof\n"
                             "theorem fine : (1:Nat) = 2 := bad.elim", ONE_TWO, ["exact fine"]),
    ("a definition unchecked", "set_option debug.skipKernelTC true in\ndef two : (1:Nat) = 2 := lcProof",
     ONE_TWO, ["exact two"]),
    ("an instance unchecked", "class Bad where\n  pf : (1:Nat) = 2\nset_option debug.skipKernelTC true in\n"
                              "instance : Bad := ⟨lcProof⟩", ONE_TWO, ["exact Bad.pf"]),
    ("added by meta code", MKBAD, ONE_TWO, ["exact badm"]),
    ("a preamble axiom", "axiom cheat : (1:Nat) = 2", ONE_TWO, ["exact cheat"]),
]


async def test_preamble_lemmas_are_replayed_through_the_kernel(lean_pool: LeanPool, no_static: None) -> None:
    """A preamble is a candidate like the proof: every declaration of it that
    the proof needs is replayed onto the library's environment, whatever
    options the preamble set or however it was added."""
    for why, pre, stmt, proof in PREAMBLE_ATTACKS:
        thm = Theorem(name="t", preamble=pre, statement=stmt, proof=proof)
        r = await lean_pool.check_proof(thm, proof)
        assert not r.ok and r.errors, why
    # an honest user preamble (not the package's own) is replayed and accepted
    honest = Theorem(name="h", preamble="def twice : Nat → Nat\n  | 0 => 0\n  | n + 1 => twice n + 2\n"
                                        "theorem twice_one : twice 1 = 2 := rfl",
                     statement="(n : Nat) : twice (n + 1) = twice n + 2", proof=["rfl"])
    assert not trust.is_trusted(honest.preamble)
    r = await lean_pool.check_proof(honest, honest.proof)
    assert r.ok, r.errors


async def test_trace_writes_no_pair_from_an_unchecked_preamble(lean_pool: LeanPool, no_static: None) -> None:
    """`lean trace`'s route: a corpus theorem whose proof uses a preamble lemma
    made with the kernel check off (or by meta code) is refused, no pair of it
    written; the honest one next to it is traced."""
    bad = [Theorem(name=f"bad{k}", preamble=pre, statement=stmt, proof=proof)
           for k, (_, pre, stmt, proof) in enumerate(PREAMBLE_ATTACKS[:2] + PREAMBLE_ATTACKS[6:7])]
    good = Theorem(name="good", statement="(a b : Nat) : a + b = b + a", proof=["omega"])
    pairs, report = await trace_theorems(lean_pool, [*bad, good])
    assert {p.theorem for p in pairs} == {"good"}
    assert {f.theorem for f in report.failures} == {t.name for t in bad}
    assert not any("1 = 2" in p.state_before for p in pairs)


async def test_the_package_own_preambles_are_trusted_by_exact_hash(lean_pool: LeanPool) -> None:
    """A bundled preamble is trusted to the byte; the same text with one
    character more is a candidate (replayed and audited)."""
    from burnqed_core.data.theorems.load import load_theorems

    t = next(t for t in load_theorems("bundled:corpus") if t.preamble.strip() and t.proof)
    assert trust.is_trusted(t.preamble) and not trust.is_trusted(t.preamble + " ")
    assert (await lean_pool.check_proof(t, t.proof)).ok
    changed = t.model_copy(update={"preamble": t.preamble + "\n"})
    assert (await lean_pool.check_proof(changed, changed.proof)).ok  # an honest preamble passes the replay too


# --- one elaboration decides; names and statements from Lean ---------------------------------------------------

FILE_NAMES = """\
theorem a : True := trivial
example : 1 = 1 := rfl example : 2 = 2 := rfl
/- c -/ example : 3 = 3 := rfl
theorem «one eq two» : (1:Nat) = 2 := by decide
theorem s : False := sorry
"""


async def test_lean_check_reports_what_lean_declares(lean_pool: LeanPool) -> None:
    """Names, keyword lines and statements come from Lean's own run: two
    examples on one line are two theorems (the file parser sees them as one
    name: the file is refused), a comment before an example does not move
    it, a guillemet name is a FAIL line (no crash), errors and `sorry`
    warnings come from the same run as the verdict."""
    elab = await lean_pool.elaborate(FILE_NAMES, declared=True)
    assert elab.theorems is not None
    names = [t.name for t in elab.theorems]
    assert names == ["a", "example_2", "example_2_23", "example_3", "one eq two", "s"]
    lines, ok, total = check_report(FILE_NAMES, elab)
    assert (ok, total) == (4, 6)
    assert "ok a : True" in lines and "ok example_3 : 3 = 3" in lines
    assert any(line.startswith("FAIL one eq two: ") and "decide" in line for line in lines)
    assert any(line.startswith("FAIL s: ") and "sorry" in line for line in lines)
    assert any(line.startswith("FAIL <file>: the file parser and Lean disagree") for line in lines)


# (why, file): the file parser and Lean disagree on the declarations: the file is refused
DISAGREEMENTS = [
    ("letter-like start ℘", "theorem ℘foo : True := trivial\n"),
    ("command after a term", "theorem a1 : True := trivial theorem a2 : (1:Nat) = 1 := rfl\n"),
    ("mutual decoy", "mutual\ntheorem dec : (1:Nat) = 1 := rfl\nend\n"),
    ("two examples on a line", "example : True := trivial example : 1 = 1 := rfl\n"),
    ("Coptic start", "theorem ⲁx : True := trivial\n"),
]


@pytest.mark.parametrize(("why", "text"), DISAGREEMENTS, ids=[d[0] for d in DISAGREEMENTS])
async def test_a_file_the_parser_reads_otherwise_is_refused(lean_pool: LeanPool, why: str, text: str) -> None:
    elab = await lean_pool.elaborate(text, declared=True)
    lines, _, _ = check_report(text, elab)
    assert any(line.startswith("FAIL") for line in lines), (why, lines)


# --- the goal reader ----------------------------------------------------------------------------------------------

# (prefix, candidate) on `n + 1 = n`: every focusing and structuring tactic at the reader's old column.
FOCUS = [
    (["have h : False := ?_"], "focus\nexact h.elim"),
    (["have h : False := ?_", "focus"], "exact h.elim"),
    (["have h : False := ?_"], "next =>\nexact h.elim"),
    (["have h : False := ?_", "next =>"], "exact h.elim"),
    (["refine ?_"], "case _ =>\nexact absurd rfl (by decide : ¬ (1 = 1))"),
    (["have h : False := ?_", "case _ =>"], "exact h.elim"),
    (["have h : False := ?_"], "· exact h.elim"),
    (["have h : False := ?_"], "on_goal 1 => exact h.elim"),
    (["have h : False := ?_"], "all_goals try exact h.elim"),
    (["have h : False := ?_"], "any_goals exact h.elim"),
    (["have h : False := ?_"], "first | exact h.elim | skip"),
    (["have h : False := ?_"], "try exact h.elim"),
    (["have h : False := ?_"], "repeat exact h.elim"),
    (["have h : False := ?_"], "(exact h.elim)"),
    (["have h : False := ?_"], "skip <;> exact h.elim"),
    (["have h : False := ?_"], "case' _ => exact h.elim"),
    (["have h : False := ?_"], "iterate 1 exact h.elim"),
    (["have h : False := ?_"], "rotate_left\nexact h.elim"),
    (["have h : False := ?_"], "pick_goal 1\nexact h.elim"),
    (["have h : False := ?_"], "swap\nexact h.elim"),
    (["have h : False := ?_"], "focus\n  exact h.elim"),
    (["have h : False := ?_"], "· skip\n  exact h.elim"),
    (["have h : False := ?_", "focus", "exact h.elim"], "skip"),
    (["have h : False := ?_", "next =>", "exact h.elim"], "skip"),
]
NATIVE = [
    "decide (config := { native := true })",
    "open Bool renaming true → native in decide (config := { native })",
    "decide +native",
    "exact of_decide_eq_true (Lean.ofReduceBool _ true rfl)",
]


async def test_no_focusing_tactic_turns_a_false_step_into_proved(lean_pool: LeanPool, no_static: None) -> None:
    """The candidate is a nested tactic sequence of the reader: whatever it
    does, the goals reported are those left after it, at the top of the
    proof. Nothing proves `n + 1 = n`; a step that reports no goal left is a
    proof the whole-proof checker accepts."""
    start = await lean_pool.start_proof(NEQ)
    assert start.ok and start.state is not None
    items = [(GoalState(theorem=NEQ, tactics=tuple(pre), goals=start.state.goals), cand) for pre, cand in FOCUS]
    results = await lean_pool.apply_many(items)
    for (pre, cand), r in zip(FOCUS, results, strict=True):
        assert not (r.ok and r.state is not None and not r.state.goals), (pre, cand, r)
    # the reader sees the goal a focusing block left, not the block's own
    first = results[0]
    assert first.ok and first.state is not None and any("False" in g for g in first.state.goals)


async def test_a_step_closes_a_goal_only_when_its_proof_is_clean(lean_pool: LeanPool, no_static: None) -> None:
    """Native evaluation (in any spelling) never closes a goal, even a true
    one; `sorry` neither; an honest step does, with the same goals as Lean."""
    thm = Theorem(name="two", statement=": (2:Nat) + 2 = 4")
    start = await lean_pool.start_proof(thm)
    assert start.ok and start.state is not None
    results = await lean_pool.apply_many([(start.state, c) for c in [*NATIVE, "sorry", "decide"]])
    for c, r in zip([*NATIVE, "sorry"], results, strict=False):
        assert not r.ok, (c, r)
    assert results[-1].ok and results[-1].state is not None and results[-1].state.goals == ()


# --- meaning ------------------------------------------------------------------------------------------------------

MEANING_FILE = """\
macro_rules | `($a + $b) => `($a * $b)
theorem m : (2:Nat) + 2 = 4 := rfl
namespace Foo
abbrev Nat := Fin 1
theorem t (n : Nat) : n = n := rfl
end Foo
open Nat renaming mul → add
theorem r (a : Nat) : a.add 1 = a := Nat.mul_one a
"""
NOTATION_FILE = """\
local notation "False" => True
theorem f : False := trivial
"""


async def test_lean_check_notes_every_meaning_change(lean_pool: LeanPool) -> None:
    """A macro on `+`, a shadowing `Nat`, `open … renaming` and a notation:
    each theorem gets a note; a notation cannot print `True` as `False` (the
    statement is printed without the file's notations)."""
    elab = await lean_pool.elaborate(MEANING_FILE, declared=True)
    assert set(elab.notes) >= {"m", "Foo.t", "r"}, elab.notes
    assert any("macro" in n for n in elab.notes["m"])
    assert any("shadows" in n and "`Nat`" in n for n in elab.notes["Foo.t"])
    assert any("renaming" in n for n in elab.notes["r"])
    elab = await lean_pool.elaborate(NOTATION_FILE, declared=True)
    lines, _, _ = check_report(NOTATION_FILE, elab)
    assert "ok f : True" in lines and any(line.startswith("  note f:") for line in lines)


async def test_a_preamble_that_changes_the_meaning_is_refused_in_search(lean_pool: LeanPool) -> None:
    """`instance (priority := high) : OfNat Nat 2 := ⟨1⟩` makes the trusted
    statement `(2:Nat) = 1` mean `1 = 1`: refused by the checker's default
    (search, evaluation, tracing), noted when only noted, and refused when a
    search starts."""
    evil = Theorem(name="evil", preamble="instance (priority := high) : OfNat Nat 2 := ⟨1⟩",
                   statement=": (2:Nat) = 1", proof=["rfl"])
    r = await lean_pool.check_proof(evil, evil.proof)
    assert not r.ok and any("meaning" in e or "means" in e for e in r.errors), r.errors
    noted = await lean_pool.check_proof(evil, evil.proof, meaning="note")
    assert noted.ok and any("OfNat" in n for n in noted.notes)
    start = await lean_pool.start_proof(evil)
    assert start.status is Status.START_ERROR and "mean" in start.message
    for pre in ("open Nat renaming mul → add", "notation \"two\" => (1:Nat)", "namespace Foo\nabbrev Nat := Fin 1"):
        t = Theorem(name="x", preamble=pre, statement=": (1:Nat) = 1", proof=["rfl"])
        assert not (await lean_pool.check_proof(t, t.proof)).ok, pre


# --- the nonce's channel ------------------------------------------------------------------------------------------

# The file's messages are thrown errors built from constructors: `logInfo`/`throwError`/`getRef` reach
# helpers the exported-level library lacks (`appendDescriptionWidgetIfNamed`, `getRef._redArg`).
CODE_FILE = """\
open Lean Elab Command in
elab "#leak" : command => do
  let fm ← getFileMap
  let msg := "LEAK " ++ (← read).fileName ++ " " ++ fm.source
  throw (Exception.error Syntax.missing (MessageData.ofFormat (Std.Format.text msg)))
#leak
open Lean Elab Command in
elab "#forge" : command => do
  let msg := "burnqed-00000000000000000000000000000000" ++ "2:v21:X1:1" ++ "3:end"
  throw (Exception.error Syntax.missing (MessageData.ofFormat (Std.Format.text msg)))
#forge
theorem after : (1:Nat) = 2 := by decide
"""

# A task that reads the worker's stdin, where the next request would arrive.
STEAL_FILE = """\
open Lean Elab Command in
elab "#steal" : command => do
  let _ ← IO.asTask (do let h ← IO.getStdin; let l ← h.getLine; IO.println ("STOLE " ++ l))
#steal
theorem after : (1:Nat) = 2 := by decide
"""


async def test_code_a_file_runs_never_reaches_the_nonce(lean_pool: LeanPool, no_static: None) -> None:
    """The file's own elaborators run in the checker's run: they see their own
    text only (never the request with the nonce), a report they forge is not
    the call's, and the process is retired after the file: the next check runs
    on a fresh one and its verdicts are right."""
    before = list(lean_pool.pids)
    elab = await lean_pool.elaborate(CODE_FILE, declared=True)
    texts = [d.message for d in elab.diagnostics]
    assert any(t.startswith("LEAK ") for t in texts), texts
    seen = {m for t in texts for m in re.findall(r"burnqed-[0-9a-f]{32}", t)}
    assert seen <= {"burnqed-" + "0" * 32}, seen  # the file's own forged one only, never the call's nonce
    assert elab.ran_code
    _, ok, _ = check_report(CODE_FILE, elab)
    assert ok == 0  # the false `after` gets no verdict of ok, whatever the file's code wrote
    r = await lean_pool.check_proof(Theorem(name="f", statement=ONE_TWO), ["decide"])
    assert not r.ok
    assert lean_pool.pids != before  # retired after the file
    assert (await lean_pool.check_proof(Theorem(name="g", statement=": (1:Nat) = 1"), ["rfl"])).ok


async def test_a_task_reading_stdin_never_reads_a_request(lean_pool: LeanPool, no_static: None) -> None:
    """A file whose code starts a task reading the worker's stdin: the embedded worker may answer the file (the
    task then waits for the next request, which goes to a fresh process: the worker is retired after the file),
    answer without the checker's answer (the task took a message of the protocol: no verdict, and the process
    retired as well), or hang on the read (no answer in time: an infrastructure failure, the process replaced).
    Each way the false `after` is not ok, and the next checks run on a fresh process with right verdicts. One
    attempt with a short limit: every outcome passes, so a slow answer on a loaded box cannot fail the test, and
    a hang costs one limit and one restart, not two of each at the default (the outcome is a race: all three
    were seen, the second on a box running three test processes)."""
    one = Theorem(name="g", statement=": (1:Nat) = 1")
    assert (await lean_pool.check_proof(one, ["rfl"])).ok  # a warm process: the limit below is the file's alone
    before = list(lean_pool.pids)
    retries = lean_pool.stats().retries
    try:
        elab = await lean_pool.elaborate(STEAL_FILE, declared=True, timeout_s=10.0, retry=False)
    except pool_module.InfraFailure:
        assert lean_pool.stats().retries == retries  # one attempt, as asked
    else:
        unusable = any("no usable answer" in d.message for d in elab.diagnostics)
        assert elab.ran_code or unusable, elab.diagnostics
        assert check_report(STEAL_FILE, elab)[1] == 0
        assert not any("STOLE" in d.message for d in elab.diagnostics)
    r = await lean_pool.check_proof(Theorem(name="f", statement=ONE_TWO), ["decide"])
    assert not r.ok and not r.infra, r.errors
    assert lean_pool.pids != before
    assert (await lean_pool.check_proof(one, ["rfl"])).ok


async def test_a_process_whose_answer_was_unusable_takes_no_further_request(
        lean_pool: LeanPool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second outcome above on demand: the checker's answer to a file is missing (as when a task of the
    file's took the message that carried it). The file gets no verdict, and the process is retired: what the
    file started there never sees another request, and the next checks run on a fresh process."""
    warm = Theorem(name="warm", statement=": (2:Nat) = 2")
    assert (await lean_pool.check_proof(warm, ["rfl"])).ok
    before = list(lean_pool.pids)
    real, missed = embedded._one_answer, []

    def missing_once(diags: object, nonce: str) -> str:
        if not missed:
            missed.append(nonce)
            raise ReportError("the checker answered 0 times (expected once)")
        return real(diags, nonce)  # type: ignore[arg-type]

    monkeypatch.setattr(embedded, "_one_answer", missing_once)
    text = "theorem fine : (3:Nat) = 3 := rfl\n"
    elab = await lean_pool.elaborate(text, declared=True)
    assert missed and any("no usable answer" in d.message for d in elab.diagnostics), elab.diagnostics
    assert check_report(text, elab)[1] == 0
    assert (await lean_pool.check_proof(Theorem(name="f", statement=ONE_TWO), ["decide"])).ok is False
    assert lean_pool.pids != before
    assert (await lean_pool.check_proof(Theorem(name="g", statement=": (4:Nat) = 4"), ["rfl"])).ok


async def test_unsafe_code_gets_no_verdict(lean_pool: LeanPool) -> None:
    text = "unsafe def peek : Nat := 1\ntheorem w : True := trivial\n"
    elab = await lean_pool.elaborate(text, declared=True)
    lines, ok, _ = check_report(text, elab)
    assert ok == 0 and any("no verdict" in line for line in lines)


# --- the premise rule (issue 56) ----------------------------------------------------------------------------------

async def test_premise_rule_of_a_library_module(lean_pool: LeanPool, no_static: None) -> None:
    """`Nat.zero_add` lives in `Init.Data.Nat.Basic`: posed there, a proof
    that names it, or uses omega's lemmas (a later module) or `simp` with its
    own module's lemmas, is refused with the constants outside; an honest
    proof from the module's imports is accepted."""
    t = Theorem(name="Nat.zero_add", statement="(n : Nat) : 0 + n = n", module="Init.Data.Nat.Basic")
    honest = await lean_pool.check_proof(t, ["exact Nat.rec rfl (fun k ih => congrArg Nat.succ ih) n"])
    assert honest.ok, honest.errors
    for proof in (["exact Nat.zero_add n"], ["omega"], ["induction n with\n| zero => rfl\n| succ k ih => omega"]):
        r = await lean_pool.check_proof(t, proof)
        assert not r.ok and any("outside the modules" in e for e in r.errors), (proof, r.errors)
    unknown = await lean_pool.check_proof(t.model_copy(update={"module": "No.Such.Module"}), ["rfl"])
    assert not unknown.ok and "No.Such.Module" in unknown.errors[0]


# A candidate that reads the batch document's nonce from its own file map and forges the goal reader's answer
# "no goals left, kernel ok" for every block index, then ends with an error placed outside every block (line 1
# of the document), or leaves its goals (a second answer for its block). (One that aborts without a message
# after forging is not caught: docs/trusted-checker.md, residual risks; the static rules keep `run_tac` out.)
_FORGE = ("run_tac do\n"
          "  let src := (← Lean.getFileMap).source\n"
          "  let nonce := (((src.splitOn \"burnqed_step \\\"\").getD 1 \"\").splitOn \"\\\"\").getD 0 \"\"\n"
          "  let net (s : String) : String := toString s.length ++ \":\" ++ s\n"
          "  for k in List.range 8 do\n"
          "    Lean.logInfo (nonce ++ String.join ([\"v2\", toString k, \"ok\", \"0\", \"ok\", \"\", \"0\", \"end\"]"
          ".map net))\n")
FORGED_STEPS = [
    _FORGE + "  throwErrorAt (Lean.Syntax.atom (.original \"\".toSubstring 0 \"\".toSubstring 0) \"x\") \"elsewhere\"",
    _FORGE,
]


async def test_a_forged_goal_reader_answer_proves_nothing(lean_pool: LeanPool, no_static: None) -> None:
    """Meta code in a step that knows the document's nonce (it is in the text) and forges the reader's answer
    for every block: no step of the batch (the forger or an honest neighbour on a false goal) is PROVED."""
    start = await lean_pool.start_proof(NEQ)
    assert start.ok and start.state is not None
    items = [(start.state, c) for c in [*FORGED_STEPS, "skip", "simp"]]
    results = await lean_pool.apply_many(items)
    for (_, c), r in zip(items, results, strict=True):
        assert not (r.ok and r.state is not None and not r.state.goals), (c, r)
    assert results[2].ok and results[2].state is not None and results[2].state.goals  # `skip`: the goal is left
