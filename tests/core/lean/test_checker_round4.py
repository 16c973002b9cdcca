"""Soundness, round 4, on the real embedded Lean: a statement means what its
text and its `ok` line say. Look-alike names (Greek, Cyrillic in guillemets,
mathematical letters, `ℕ`), an instance through a file abbreviation (`abbrev`
chains, `@[reducible] def`), instances that are gone by the end of the file
(`attribute [local instance]` in a section, `scoped` + `open … in`), a
coercion from a file type and a default instance: each gets a note in
`lean check` whose statement shows the difference, a refusal in search and
evaluation, and no pair from `lean trace`; a file whose statements honestly
use its own definitions gets none. Names are Lean's exact ones; `stop` as a
name, `#v[…]` and `System.Platform.numBits_eq` are judged like any other
text; messages carry the user's names, never a scratch path.

Cases are batched (one judge call per file) to keep the suite's Lean time small."""

from __future__ import annotations

import pytest

from burnqed_core.cli.lean import check_report
from burnqed_core.lean.pool import LeanPool
from burnqed_core.lean.tracing import trace_theorems
from burnqed_core.lean.types import Status
from burnqed_core.records import Theorem

pytestmark = pytest.mark.lean

# (theorem name, what its note must say, what its printed statement must show)
MEANING_FILE = """\
abbrev Νat := Fin 1
theorem greek : (1 : Νat) = 2 := by decide
abbrev «Nаt» := Fin 1
theorem cyrillic : (1 : «Nаt») = 2 := by decide
def 𝔑at := Fin 1
theorem fraktur : ∀ x : 𝔑at, x = x := fun _ => rfl
abbrev ℕ := Fin 1
theorem blackboard : (1 : ℕ) = 2 := by decide
abbrev RNat := Nat
instance (priority := high) : OfNat RNat 2 := ⟨(1 : Nat)⟩
theorem via_abbrev : (2 : Nat) = 1 := rfl
@[reducible] def MyNat := Nat
abbrev MyNat2 := MyNat
instance (priority := high) : OfNat MyNat2 3 := ⟨(1 : Nat)⟩
theorem via_chain : (3 : Nat) = 1 := rfl
def four : OfNat Nat 4 := ⟨1⟩
section
attribute [local instance 20000] four
theorem via_local : (4 : Nat) = 1 := rfl
end
namespace RT
scoped instance (priority := high) five : OfNat Nat 5 := ⟨1⟩
end RT
open RT in
theorem via_scoped : (5 : Nat) = 1 := rfl
structure Wrap where
  v : Nat
def Wrap.toNat (_ : Wrap) : Nat := 0
instance : Coe Wrap Nat := ⟨Wrap.toNat⟩
theorem via_coe (w : Wrap) : (w : Nat) = 0 := rfl
@[default_instance] instance (priority := high) zeroAdd : HAdd Nat Nat Nat := ⟨fun _ _ => 0⟩
theorem via_default (a b : Nat) : a + b = 0 := rfl
"""
EXPECTED = {
    "greek": ("looks like the library's `Nat`", "(1 : Νat) = (2 : Νat)"),
    "cyrillic": ("looks like the library's `Nat`", ""),
    "fraktur": ("looks like the library's `Nat`", ""),
    "blackboard": ("looks like the library's `Nat`", "(1 : ℕ) = (2 : ℕ)"),
    "via_abbrev": ("instance of `OfNat`", ""),
    "via_chain": ("instance of `OfNat`", ""),
    "via_local": ("`four`, an instance of `OfNat`", ""),
    "via_scoped": ("`RT.five`, an instance of `OfNat`", ""),
    "via_coe": ("`Wrap.toNat`, a constant of the file that its text does not show", "w.toNat"),
    "via_default": ("`zeroAdd`, an instance of `HAdd`", ""),
}

HONEST_FILE = """\
namespace Geo
structure Point where
  x : Nat
  y : Nat
instance : Add Point := ⟨fun p q => ⟨p.x + q.x, p.y + q.y⟩⟩
def origin : Point := ⟨0, 0⟩
abbrev Coord := Nat
def shift (p : Point) (d : Coord) : Point := ⟨p.x + d, p.y⟩
theorem add_origin (p : Point) : p + origin = p := by cases p; rfl
theorem origin_add : origin + origin = origin := rfl
theorem shift_x (p : Point) (d : Coord) : (shift p d).x = p.x + d := rfl
theorem mk_x (a b : Nat) : (⟨a, b⟩ : Point).x = a := rfl
end Geo
"""


async def test_lean_check_notes_what_a_statement_means(lean_pool: LeanPool) -> None:
    """Every variant gets its note, with the statement that shows the difference; the honest file none."""
    elab = await lean_pool.elaborate(MEANING_FILE, declared=True)
    lines, _, _ = check_report(MEANING_FILE, elab)
    for name, (note, shown) in EXPECTED.items():
        assert any(note in n for n in elab.notes.get(name, [])), (name, elab.notes.get(name), lines)
        if shown:
            head = next(line for line in lines if line.startswith(f"ok {name} :") or line.startswith(f"FAIL {name}"))
            assert shown in head, (name, head)
    greek = next(line for line in lines if line.startswith("ok greek :"))
    assert greek.endswith("[file: Νat]"), greek
    honest = await lean_pool.elaborate(HONEST_FILE, declared=True)
    assert not honest.notes, honest.notes
    assert len(honest.axioms) == 4 and not honest.rejected, honest
    lines, ok, total = check_report(HONEST_FILE, honest)
    assert (ok, total) == (4, 4) and any("[file: Geo.origin, Geo.Point]" in line or "Geo.origin" in line
                                         for line in lines), lines


async def test_the_handwritten_files_get_no_meaning_note(lean_pool: LeanPool) -> None:
    """Human-written files that define their own types, classes and instances: no hidden constant, no
    look-alike (a name that merely shadows the library's, `flip`, keeps its old note)."""
    from pathlib import Path

    import burnqed_core.data as data

    root = Path(data.__file__).parent / "sets" / "handwritten"
    for path in sorted(root.glob("*.lean"))[:3]:
        text = path.read_text(encoding="utf-8")
        elab = await lean_pool.elaborate(text, declared=True, timeout_s=300)
        notes = [n for ns in elab.notes.values() for n in ns if "shadows" not in n]
        assert not notes, (path.name, notes)


ATTACKS = [
    ("abbrev Νat := Fin 1", ": (1 : Νat) = 2", ["decide"]),
    ("abbrev RNat := Nat\ninstance (priority := high) : OfNat RNat 2 := ⟨(1 : Nat)⟩", ": (2 : Nat) = 1", ["rfl"]),
    ("@[reducible] def MyNat := Nat\ninstance (priority := high) : OfNat MyNat 3 := ⟨(1 : Nat)⟩",
     ": (3 : Nat) = 1", ["rfl"]),
    ("structure Wrap where\n  v : Nat\ndef Wrap.toNat (_ : Wrap) : Nat := 0\ninstance : Coe Wrap Nat := ⟨Wrap.toNat⟩",
     "(w : Wrap) : (w : Nat) = 0", ["rfl"]),
    ("def four : OfNat Nat 4 := ⟨1⟩\nattribute [local instance 20000] four", ": (4 : Nat) = 1", ["rfl"]),
]


async def test_search_and_eval_refuse_and_trace_writes_no_pair(lean_pool: LeanPool) -> None:
    """A preamble that is not the package's own and changes what the statement means: the final check
    refuses the proof, a search refuses to start, and tracing writes no pair (an honest one beside it is)."""
    bad = [Theorem(name=f"bad{k}", preamble=pre, statement=stmt, proof=proof)
           for k, (pre, stmt, proof) in enumerate(ATTACKS)]
    for t in bad:
        r = await lean_pool.check_proof(t, t.proof)
        assert not r.ok and any("mean" in e for e in r.errors), (t.preamble, r.errors)
        noted = await lean_pool.check_proof(t, t.proof, meaning="note")
        assert noted.ok and noted.notes, (t.preamble, noted)
        start = await lean_pool.start_proof(t)
        assert start.status is Status.START_ERROR and "mean" in start.message, (t.preamble, start.message)
    good = Theorem(name="good", statement="(a b : Nat) : a + b = b + a", proof=["omega"])
    pairs, report = await trace_theorems(lean_pool, [*bad, good])
    assert {p.theorem for p in pairs} == {"good"}
    assert {f.theorem for f in report.failures} == {t.name for t in bad}


NAMES_FILE = """\
#guard_msgs (drop all) in
theorem q : (1:Nat) = 2 := by decide
where q : True := trivial
theorem r : True := trivial
where r : (1:Nat) = 1 := rfl
"""


async def test_names_are_lean_exact_ones(lean_pool: LeanPool) -> None:
    """A `where` helper named like its theorem is a helper: the theorem is `q` (false: FAIL), never `q.q`."""
    elab = await lean_pool.elaborate(NAMES_FILE, declared=True)
    assert elab.theorems is not None and [t.name for t in elab.theorems] == ["q", "r"]
    lines, ok, total = check_report(NAMES_FILE, elab)
    assert (ok, total) == (1, 2), lines
    assert any(line.startswith("FAIL q") for line in lines) and "ok r : True" in lines, lines
    assert not any("q.q" in line for line in lines), lines


TEXT_FILE = """\
theorem stops (start stop : Nat) (h : start ≤ stop) : start ≤ stop + 1 := Nat.le_succ_of_le h
theorem vec : (#v[1, 2] : Vector Nat 2).size = 2 := rfl
theorem bits : System.Platform.numBits = 32 ∨ System.Platform.numBits = 64 := by
  cases System.Platform.numBits_eq with
  | inl h => exact Or.inl h
  | inr h => exact Or.inr h
theorem tactic_stop : (1:Nat) = 1 := by
  stop
  rfl
"""


async def test_text_rules_leave_names_and_literals_to_lean(lean_pool: LeanPool) -> None:
    """`stop` as a binder, core's `#v[…]` literal and `System.Platform.numBits_eq` are accepted, in
    `lean check` and in the search's final re-check alike; the `stop` tactic and a command stay refused."""
    elab = await lean_pool.elaborate(TEXT_FILE, declared=True)
    lines, ok, total = check_report(TEXT_FILE, elab)
    assert (ok, total) == (3, 4), lines
    assert any(line.startswith("FAIL tactic_stop") for line in lines), lines
    cases = [
        (Theorem(name="s", statement="(start stop : Nat) (h : start ≤ stop) : start ≤ stop + 1"),
         ["exact Nat.le_succ_of_le h"], True),
        (Theorem(name="v", statement=": (#v[1, 2] : Vector Nat 2).size = 2"), ["rfl"], True),
        (Theorem(name="b", statement=": System.Platform.numBits = 32 ∨ System.Platform.numBits = 64"),
         ["rcases System.Platform.numBits_eq with h | h <;> simp [h]"], True),
        (Theorem(name="t", statement=": (1:Nat) = 1"), ["stop", "rfl"], False),
        (Theorem(name="e", statement=": (1:Nat) = 1"), ["#eval 1", "rfl"], False),
    ]
    for t, proof, want in cases:
        r = await lean_pool.check_proof(t, proof)
        assert r.ok is want, (t.statement, proof, r.errors)


PRIVATE_FILE = """\
def secret : Nat := 3
structure Box where
  v : Nat
  pos : 0 < v + 1 := by omega
instance : Coe Box Nat := ⟨fun b => b.v + secret⟩
theorem boxed (b : Box) : (b : Nat) = b.v + 3 := rfl
private theorem hidden_fact : secret = 3 := rfl
theorem wrong : secret = 4 := by decide
"""


def test_user_text_drops_scratch_names() -> None:
    """A replay message as Lean prints a private auxiliary declaration of the worker's scratch document."""
    from burnqed_core.lean.judge import user_text

    raw = ("the kernel rejects _private.external:file:///tmp/burnqed-lean-scratch-12-ab/x.lean.0.f02._proof_1; "
           "uses `instHAddNat_external:burnqed-8007-140672717583056.lean`")
    assert user_text(raw) == "the kernel rejects f02._proof_1; uses `instHAddNat`"


async def test_messages_name_the_users_declarations(lean_pool: LeanPool) -> None:
    """Notes, errors and verdicts on a file's declarations name them as the user wrote them."""
    elab = await lean_pool.elaborate(PRIVATE_FILE, declared=True)
    lines, _, _ = check_report(PRIVATE_FILE, elab)
    text = "\n".join(lines + [d.message for d in elab.diagnostics] + list(elab.rejected.values()))
    for scratch in ("_private", "burnqed-lean-scratch", "external:", "file://"):
        assert scratch not in text, (scratch, text)
    assert any(line.startswith("ok hidden_fact") for line in lines), lines
    assert any(line.startswith("FAIL wrong") for line in lines), lines
    assert any("Box" in n for n in elab.notes.get("boxed", [])) or elab.notes.get("boxed"), (lines, elab.notes)
