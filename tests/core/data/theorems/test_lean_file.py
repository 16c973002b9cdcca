"""Parsing Lean files written in the styles users bring (miniF2F, Mathlib-style
lemma files, files with their own inductive types), and rendering back."""

from __future__ import annotations

import pytest

from burnqed_core.data.theorems.lean_file import parse_lean_file, render_file, render_theorem, tokenize
from burnqed_core.errors import DataError

MINIF2F = """import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

/-- The volume of a cone is given by the formula $V = \\frac{1}{3}Bh$, where $B$ is the area
of the base and $h$ is the height. Show that the volume is 65. -/
theorem mathd_algebra_478 (b h v : ℝ) (h₀ : 0 < b ∧ 0 < h ∧ 0 < v) (h₁ : v = 1 / 3 * (b * h))
    (h₂ : b = 30) (h₃ : h = 13 / 2) : v = 65 := by
  rw [h₂, h₃] at h₁
  rw [h₁]
  norm_num
"""

MINIF2F_SORRY = """import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

/-- Show that for any natural number $n$, $7$ does not divide $2^n + 1$. -/
theorem mathd_numbertheory_3 (n : ℕ) : ¬ 7 ∣ 2 ^ n + 1 := by
  sorry
"""

TREES = """/-
  Binary trees with a size function.
  /- nested comment: theorem fake : False := sorry -/
-/

inductive Tree (α : Type) where
  | leaf : Tree α
  | node : Tree α → α → Tree α → Tree α
deriving Repr

namespace Tree

def size {α : Type} : Tree α → Nat
  | leaf => 0
  | node l _ r => l.size + 1 + r.size

def mirror {α : Type} : Tree α → Tree α
  | leaf => leaf
  | node l x r => node r.mirror x l.mirror

@[simp] theorem size_leaf {α : Type} : (leaf : Tree α).size = 0 := rfl

theorem size_mirror {α : Type} (t : Tree α) :
    t.mirror.size = t.size := by
  induction t with
  | leaf => rfl
  | node l x r ihl ihr =>
    simp [mirror, size, ihl, ihr]
    omega

def count {α : Type} (p : α → Bool) : Tree α → Nat
  | leaf => 0
  | node l x r => l.count p + (if p x then 1 else 0) + r.count p

private theorem count_le_size {α : Type} (p : α → Bool) (t : Tree α) : t.count p ≤ t.size := by
  induction t with
  | leaf => simp [count, size]
  | node l x r ihl ihr =>
    simp only [count, size]
    split <;> omega

end Tree

theorem mirror_mirror {α : Type} (t : Tree α) : t.mirror.mirror = t := by
  induction t with
  | leaf => rfl
  | node l x r ihl ihr => simp [Tree.mirror, ihl, ihr]
"""

MATHLIB_STYLE = """import Mathlib.Tactic

/-!
# Small lemmas

Module docs are comments, not theorems.
-/

open Finset

variable {α : Type*} [DecidableEq α]

section Basic

lemma card_le_of_subset' {s t : Finset α} (h : s ⊆ t) :
    s.card ≤ t.card := by
  exact card_le_card h

/-- A focused proof. -/
@[simp]
protected lemma two_goals (p q : Prop) (hp : p) (hq : q) : p ∧ q := by
  constructor
  · exact hp
  · -- the right side
    exact hq

example (a b : ℕ) (h : a ≤ b) : a < b + 1 := by omega

lemma with_default (n : ℕ) (k : ℕ := 2) (h : 0 < n) :
    0 < n * (k + 1) := by
  positivity

end Basic

open Real in
theorem uses_pi : 0 < π := by
  exact pi_pos

set_option maxRecDepth 2000 in
theorem big_decide : 2 ^ 10 = 1024 := by norm_num
"""


def by_name(text: str, **kw):
    f = parse_lean_file(text, **kw)
    return f, {t.name: t for t in f.theorems}


def test_minif2f_file() -> None:
    f, thms = by_name(MINIF2F, source="mathd_algebra_478.lean", split="test")
    assert list(thms) == ["mathd_algebra_478"]
    t = thms["mathd_algebra_478"]
    assert t.statement.startswith("(b h v : ℝ) (h₀ : 0 < b ∧ 0 < h ∧ 0 < v)")
    assert t.statement.endswith("(h₂ : b = 30) (h₃ : h = 13 / 2) : v = 65")
    assert "\n    (h₂" in t.statement  # multi-line statement keeps its layout
    assert t.proof == ["rw [h₂, h₃] at h₁", "rw [h₁]", "norm_num"]
    assert t.split == "test" and t.source == "mathd_algebra_478.lean"
    # the docstring is part of the declaration, never of the preamble
    assert "volume of a cone" not in t.preamble
    assert t.preamble == f.preamble
    assert t.preamble.startswith("import Mathlib\nimport Aesop\n")
    assert t.preamble.rstrip().endswith("open BigOperators Real Nat Topology Rat")
    assert f.entries[0].line == 10
    assert f.entries[0].end_line == 14


def test_sorry_proof_is_unknown() -> None:
    _, thms = by_name(MINIF2F_SORRY)
    t = thms["mathd_numbertheory_3"]
    assert t.proof == []
    assert t.statement == "(n : ℕ) : ¬ 7 ∣ 2 ^ n + 1"


def test_inductive_types_namespaces_and_comments() -> None:
    f, thms = by_name(TREES)
    assert list(thms) == ["Tree.size_leaf", "Tree.size_mirror", "Tree.count_le_size", "mirror_mirror"]
    # nothing from the nested comment is a theorem; the comment stays in the preamble
    assert "fake" not in thms and "nested comment" in f.preamble
    assert thms["Tree.size_leaf"].proof == []  # term proof
    assert thms["Tree.size_mirror"].proof == [
        "induction t with\n| leaf => rfl\n| node l x r ihl ihr =>\n  simp [mirror, size, ihl, ihr]\n  omega"
    ]
    assert thms["Tree.count_le_size"].proof[-1].endswith("split <;> omega")
    # definitions between theorems belong to the theorems after them only
    assert "def count" not in thms["Tree.size_mirror"].preamble
    assert "def count" in thms["Tree.count_le_size"].preamble
    assert "def mirror" in thms["Tree.size_mirror"].preamble
    assert "deriving Repr" in thms["Tree.size_mirror"].preamble
    # theorems are never in a preamble by default
    assert all("size_leaf" not in t.preamble for t in thms.values())
    # inside the namespace the preamble ends inside it; after `end Tree` it is closed
    assert thms["Tree.size_mirror"].preamble.rstrip().endswith("l.mirror")
    assert thms["mirror_mirror"].preamble.rstrip().endswith("end Tree")
    # theorems between the same two definitions share one preamble string
    assert thms["Tree.size_leaf"].preamble == thms["Tree.size_mirror"].preamble


def test_include_theorems_option() -> None:
    _, thms = by_name(TREES, include_theorems=True)
    assert "theorem size_mirror" in thms["mirror_mirror"].preamble
    assert "theorem size_mirror" not in thms["Tree.size_mirror"].preamble


def test_mathlib_style_lemmas_attributes_examples_and_in_prefixes() -> None:
    f, thms = by_name(MATHLIB_STYLE)
    names = list(thms)
    ex_line = MATHLIB_STYLE.splitlines().index("example (a b : ℕ) (h : a ≤ b) : a < b + 1 := by omega") + 1
    ex = f"example_{ex_line}"
    assert names == ["card_le_of_subset'", "two_goals", ex, "with_default", "uses_pi", "big_decide"]
    assert f.entries[0].keyword == "lemma" and f.entries[2].keyword == "example"
    assert "Module docs" in f.preamble and "variable {α : Type*}" in f.preamble
    assert thms["card_le_of_subset'"].statement == "{s t : Finset α} (h : s ⊆ t) :\n    s.card ≤ t.card"
    # focused blocks stay one tactic each, comments dropped
    assert thms["two_goals"].proof == ["constructor", "· exact hp", "·\n  exact hq"]
    assert f.line_of(ex) == ex_line
    assert thms[ex].proof == ["omega"]
    assert thms[ex].statement == "(a b : ℕ) (h : a ≤ b) : a < b + 1"
    # `:=` inside a binder is not the proof's `:=`
    assert thms["with_default"].statement == "(n : ℕ) (k : ℕ := 2) (h : 0 < n) :\n    0 < n * (k + 1)"
    assert thms["with_default"].proof == ["positivity"]
    # `open Real in` applies to its theorem only, as a preamble line without `in`
    assert thms["uses_pi"].preamble.rstrip().endswith("open Real")
    assert "open Real" not in thms["big_decide"].preamble
    assert thms["big_decide"].preamble.rstrip().endswith("set_option maxRecDepth 2000")
    assert thms["big_decide"].proof == ["norm_num"]
    # sections opened and closed: the lemma after `end Basic` has the full preamble
    assert "end Basic" in thms["uses_pi"].preamble


def test_structures_with_defaults_are_not_theorems() -> None:
    text = """structure Config where
  /-- the width -/
  width : Nat := 80
  kind : Type := Nat

instance : Inhabited Config := ⟨{ width := 1 }⟩

theorem width_default : ({} : Config).width = 80 := by
  rfl
"""
    f, thms = by_name(text)
    assert list(thms) == ["width_default"]
    assert "width : Nat := 80" in f.preamble and "instance" in f.preamble
    assert thms["width_default"].statement == ": ({} : Config).width = 80"


def test_tactic_layouts() -> None:
    text = """theorem t1 (p q : Prop) (hp : p) (hq : q) : p ∧ q :=
  by
    constructor
    case left =>
      exact hp
    next =>
      exact hq

theorem t2 (a : Nat) : a + 0 = a := by simp [Nat.add_zero,
  Nat.zero_add]

theorem t3 (a b c : Nat) (h1 : a = b) (h2 : b = c) :
    a = c -- a comment inside the statement
    := by
  calc a = b := by rw [h1]
    _ = c := h2

theorem t4 (a : Nat) : a = a := by
  have h : a = a := by
    rfl  -- a trailing comment
  /- a block
     comment -/

  exact h

theorem t5 (n : Nat) : n = n := by intros; rfl
"""
    _, thms = by_name(text)
    assert thms["t1"].proof == ["constructor", "case left =>\n  exact hp", "next =>\n  exact hq"]
    assert thms["t2"].proof == ["simp [Nat.add_zero,\n  Nat.zero_add]"]
    assert thms["t3"].statement == "(a b c : Nat) (h1 : a = b) (h2 : b = c) :\n    a = c"
    assert thms["t3"].proof == ["calc a = b := by rw [h1]\n  _ = c := h2"]
    assert thms["t4"].proof == ["have h : a = a := by\n  rfl", "exact h"]
    assert thms["t5"].proof == ["intros; rfl"]


def test_stacked_in_prefixes() -> None:
    text = "open Nat in\nset_option maxRecDepth 2000 in\ntheorem p (n : Nat) : succ n > 0 := by omega\n"
    _, thms = by_name(text)
    assert thms["p"].preamble == "open Nat\nset_option maxRecDepth 2000\n"
    assert thms["p"].statement == "(n : Nat) : succ n > 0"


def test_noncomputable_section_and_nested_end() -> None:
    text = """noncomputable section
namespace A.B
theorem x : True := trivial
end A.B
namespace C
section
theorem y : True := trivial
end
end C
theorem z : True := trivial
end
"""
    assert [t.name for t in parse_lean_file(text).theorems] == ["A.B.x", "C.y", "z"]


def test_let_in_statement() -> None:
    _, thms = by_name("theorem lets (n : Nat) : let m := n + 1; m > n := by\n  intro m\n  omega\n")
    assert thms["lets"].statement == "(n : Nat) : let m := n + 1; m > n"
    assert thms["lets"].proof == ["intro m", "omega"]


def test_names_modifiers_and_scopes() -> None:
    text = """namespace A.B
section S
variable (m : Nat)
private theorem helper : m + 0 = m := by simp
protected theorem «weird name» : True := by trivial
theorem _root_.top_level : True := by trivial
end S
end A.B
namespace C
theorem c1 : True := by trivial
end C
theorem d : True := by trivial
"""
    _, thms = by_name(text)
    assert list(thms) == ["A.B.helper", "A.B.«weird name»", "top_level", "C.c1", "d"]
    assert thms["A.B.helper"].preamble.rstrip().endswith("variable (m : Nat)")


def test_mutual_blocks_stay_whole() -> None:
    text = """mutual
def isEven : Nat → Bool
  | 0 => true
  | n+1 => isOdd n
def isOdd : Nat → Bool
  | 0 => false
  | n+1 => isEven n
end

theorem even_two : isEven 2 = true := by decide
"""
    _, thms = by_name(text)
    pre = thms["even_two"].preamble
    assert pre.startswith("mutual\n") and pre.rstrip().endswith("end")


def test_theorem_without_name_is_an_error() -> None:
    with pytest.raises(DataError, match=r"bad\.lean:1"):
        parse_lean_file("theorem : True := trivial\n", source="bad.lean")


def test_tokenizer_comments_strings_and_chars() -> None:
    toks = tokenize('def s := "-- not a comment /-" -- real\n/- a /- b -/ c -/ def c := \'x\'')
    kinds = [(t.kind, t.text) for t in toks]
    assert ("str", '"-- not a comment /-"') in kinds
    assert ("comment", "-- real") in kinds
    assert ("comment", "/- a /- b -/ c -/") in kinds
    assert ("str", "'x'") in kinds
    assert [t.line for t in toks if t.text == "c"] == [1]


def test_render_round_trip() -> None:
    """Rendering a parsed theorem and parsing it again gives the same theorem."""
    for text in (MINIF2F, TREES, MATHLIB_STYLE):
        f = parse_lean_file(text)
        for t in f.theorems:
            if not t.proof:
                continue
            again = parse_lean_file(t.preamble + "\n" + render_theorem(t, name=t.name.split(".")[-1])).theorems
            assert again[-1].statement == t.statement
            assert again[-1].proof == t.proof
            assert again[-1].name.split(".")[-1] == t.name.split(".")[-1]


def test_render_theorem_layout() -> None:
    f = parse_lean_file(TREES)
    t = f.theorems[1]
    src = render_theorem(t)
    assert src.startswith("theorem Tree.size_mirror {α : Type} (t : Tree α) :\n    t.mirror.size = t.size := by\n")
    assert "\n  induction t with\n  | leaf => rfl\n" in src
    assert "\n    simp [mirror, size, ihl, ihr]\n    omega\n" in src
    assert render_theorem(t, []).endswith(":= by\n  sorry\n")
    assert render_theorem(t, ["simp"], name="x").startswith("theorem x {α : Type}")
    whole = render_file(f.theorems[:2])
    assert whole.startswith(t.preamble.rstrip())
    assert whole.count("theorem Tree.") == 2


def test_round_trip_on_the_bundled_sets() -> None:
    """Every bundled theorem (written by the set generator, not by this
    parser's author) rendered with its preamble parses back to itself."""
    from burnqed_core.data.theorems.load import load_theorems

    thms = load_theorems("bundled:corpus") + load_theorems("bundled:benchmark")
    assert len(thms) > 300
    for t in thms:
        parsed = parse_lean_file(t.preamble + "\n\n" + render_theorem(t)).theorems
        assert len(parsed) == 1, t.name
        assert parsed[0].statement == t.statement, t.name
        assert parsed[0].proof == [p.strip("\n") for p in t.proof], t.name
        assert parsed[0].preamble.strip() == t.preamble.strip(), t.name


CORE_FILE = """/-
  Definitions, inductive types, namespaces, sections and lemmas, in the
  style users write. /- a nested comment -/
-/
set_option autoImplicit false

inductive Tree where
  | leaf : Tree
  | node : Tree → Nat → Tree → Tree
deriving Repr

namespace Tree

def size : Tree → Nat
  | leaf => 0
  | node l _ r => l.size + 1 + r.size

def mirror : Tree → Tree
  | leaf => leaf
  | node l x r => node r.mirror x l.mirror

@[simp] theorem size_leaf : leaf.size = 0 := rfl

/-- Mirroring keeps the size. -/
theorem size_mirror (t : Tree) :
    t.mirror.size = t.size := by
  induction t with
  | leaf => rfl
  | node l x r ihl ihr =>
    simp only [mirror, size, ihl, ihr]
    omega

end Tree

namespace Arith

inductive Expr where
  | num : Nat → Expr
  | add : Expr → Expr → Expr

def eval : Expr → Nat
  | .num n => n
  | .add a b => eval a + eval b

def swap : Expr → Expr
  | .num n => .num n
  | .add a b => .add (swap b) (swap a)

private theorem eval_swap (e : Expr) : eval (swap e) = eval e := by
  induction e with
  | num n => rfl
  | add a b iha ihb =>
    simp only [swap, eval, iha, ihb]
    exact Nat.add_comm _ _

end Arith

section Lists
variable (xs ys : List Nat)

theorem length_append' : (xs ++ ys).length = xs.length + ys.length := by
  induction xs with
  | nil => simp
  | cons x xs ih =>
    simp only [List.cons_append, List.length_cons, ih]
    omega

end Lists

theorem and_swap' (p q : Prop) (h : p ∧ q) : q ∧ p := by
  constructor
  · exact h.2
  · -- the left conjunct
    exact h.1

open Nat in
theorem succ_pos' (n : Nat) : 0 < succ n := by
  exact Nat.succ_pos n

theorem calc_demo (a b c : Nat) (h1 : a = b) (h2 : b = c) :
    a = c := by
  calc a = b := h1
    _ = c := h2

theorem two_cases (n : Nat) : n = 0 ∨ 0 < n := by
  cases n
  case zero => exact Or.inl rfl
  case succ m =>
    right
    exact Nat.succ_pos m

example (a b : Nat) (h : a ≤ b) : a < b + 1 := by omega
"""


async def check(pool: object, text: str) -> list[str]:
    from burnqed_core.lean.lsp import failures

    diags = await pool.check_source(text)  # type: ignore[attr-defined]
    return [d.message for d in failures(diags)]


@pytest.mark.lean
@pytest.mark.slow
async def test_rendered_theorems_elaborate_alone_in_lean(lean_pool: object) -> None:
    """The preamble and rendering rules checked by the real Lean: every
    theorem of a realistic core-Lean file, rendered alone after its own
    preamble, elaborates as it does in the file."""
    assert await check(lean_pool, CORE_FILE) == []  # the file itself is valid Lean
    f = parse_lean_file(CORE_FILE)
    with_proof = [t for t in f.theorems if t.proof]
    example_line = CORE_FILE.splitlines().index("example (a b : Nat) (h : a ≤ b) : a < b + 1 := by omega") + 1
    assert [t.name for t in with_proof] == [
        "Tree.size_mirror", "Arith.eval_swap", "length_append'", "and_swap'", "succ_pos'", "calc_demo",
        "two_cases", f"example_{example_line}",
    ]
    # every theorem on its own after its preamble: the same verdict as in the file
    for t in with_proof:
        src = t.preamble + "\n" + render_theorem(t)
        assert await check(lean_pool, src) == [], src
    # and a wrong proof is rejected in the same setting
    bad = with_proof[0]
    assert await check(lean_pool, bad.preamble + "\n" + render_theorem(bad, ["rfl"]))


def test_raw_strings_hide_no_theorem() -> None:
    text = ('def s := r#"\ntheorem hidden : False := sorry\n"#\n'
            'def t := r"theorem hidden2 : False := sorry"\n'
            "theorem real : True := trivial\n")
    assert [t.name for t in parse_lean_file(text).theorems] == ["real"]


def test_hash_command_prefixes_do_not_hide_a_theorem() -> None:
    text = "/-- warning: declaration uses `sorry` -/\n#guard_msgs in\ntheorem caught : False := sorry\n"
    f = parse_lean_file(text)
    assert [e.theorem.name for e in f.entries] == ["caught"]
    assert "#guard_msgs" not in f.entries[0].theorem.preamble
