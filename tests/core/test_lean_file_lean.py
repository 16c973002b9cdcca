"""The parser's preamble and rendering rules checked by the real Lean: every
theorem of a realistic core-Lean file, rendered alone after its own preamble,
elaborates exactly as it does in the file."""

from __future__ import annotations

import pytest

from burnqed_core.data.lean_file import parse_lean_file, render_theorem

pytestmark = [pytest.mark.lean, pytest.mark.slow]

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


async def test_rendered_theorems_elaborate_alone(lean_pool: object) -> None:
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
