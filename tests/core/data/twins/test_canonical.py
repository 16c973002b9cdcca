"""Canonical forms of theorems and their twins (`burnqed_core.data.twins.canonical`); no Lean."""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError

from burnqed_core.data.synthetic.families import FAMILIES
from burnqed_core.data.synthetic.generate_sets import family_theorems, generate
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.data.twins.canonical import (
    NUMERAL,
    SELF,
    Twin,
    canonical_form,
    find_twins,
    proof_skeleton,
    twin_clusters,
)
from burnqed_core.records import Theorem


def thm(name: str, statement: str, preamble: str = "", proof: list[str] | None = None) -> Theorem:
    return Theorem(name=name, statement=statement, preamble=preamble, proof=proof or [])


# --- one theorem and a copy with every name renamed --------------------------------------------------------

BASE_PREAMBLE = """\
namespace Demo
/-- a binary tree -/
inductive Tree where
  | leaf : Tree
  | node : Tree → Nat → Tree → Tree

def Tree.size : Tree → Nat
  | .leaf => 0
  | .node l _ r => l.size + 1 + r.size

structure Pt where
  x : Nat
  y : Nat

def total (p : Pt) : Nat := p.x + p.y * 2

def unrelated : Nat → Nat := fun n => n + 1
end Demo
open Demo
"""
BASE_STATEMENT = "(t : Tree) (p : Pt) (h : 0 < t.size) : ∀ k, ∃ m, total p + t.size * k ≤ m + (fun z => z + 3) k"
BASE_PROOF = ["intro k", "refine ⟨total p + t.size * k + k + 3, ?_⟩", "omega"]

# Every definition, type, constructor, field, namespace and bound name renamed, other numerals, declarations
# reordered (the structure first), an unrelated definition more, comments (nested ones too) and layout changed.
RENAMED_PREAMBLE = """\
namespace Elsewhere
def helper (a : Nat) : Nat := a * a   -- not used by the statement

structure Vec where
  lo : Nat
  hi : Nat

/- a tree /- with a nested comment -/ of another name -/
inductive Bush where
  | nub : Bush
  | fork : Bush → Nat → Bush → Bush

def Bush.count : Bush → Nat
  | .nub => 7
  | .fork a _ b =>
      a.count + 4 + b.count

def sum2 (v : Vec) : Nat :=
  v.lo + v.hi * 5
end Elsewhere
open Elsewhere
"""
RENAMED_STATEMENT = """(b : Bush) (v : Vec)
    (hb : 1 < b.count) :   -- a comment in the statement
    ∀ j, ∃ w, sum2 v + b.count * j ≤ w + (fun q => q + 10) j"""
RENAMED_PROOF = ["intro j", "refine ⟨sum2 v + b.count * j + j + 10, ?_⟩", "omega"]


def base() -> Theorem:
    return thm("base_thm", BASE_STATEMENT, BASE_PREAMBLE, BASE_PROOF)


def renamed() -> Theorem:
    return thm("renamed_thm", RENAMED_STATEMENT, RENAMED_PREAMBLE, RENAMED_PROOF)


def test_renamed_copy_has_the_same_form_and_skeleton():
    a, b = base(), renamed()
    assert canonical_form(a) == canonical_form(b)
    assert proof_skeleton(a) == proof_skeleton(b)
    form = canonical_form(a)
    # no user name survives; library names, keywords and the structure do; the unused definition is left out
    for user in ("Tree", "leaf", "node", "size", "Pt", "total", "Demo", "unrelated", "base_thm"):
        assert user not in form
    assert "Nat" in form and "fun" in form and "∀" in form and "structure" in form
    assert form.count("\n") == 4   # Tree, Pt, Tree.size, total, then the statement
    assert NUMERAL in form and not any(tok.isdigit() for tok in form.split())


@pytest.mark.parametrize("what, statement_a, statement_b, preamble_a, preamble_b", [
    ("bound names", "(a b : Nat) (h : a ≤ b) : a < b + 1", "(x y : Nat) (hxy : x ≤ y) : x < y + 1", "", ""),
    ("implicit and instance binders", "{α : Type} [inst : BEq α] (xs : List α) : xs = xs",
     "{β : Type} [i : BEq β] (l : List β) : l = l", "", ""),
    ("quantifiers and lambdas", ": ∀ n : Nat, ∃ m, m = (fun k => k + 1) n",
     ": ∀ a : Nat, ∃ b, b = (fun c => c + 1) a", "", ""),
    ("numerals", "(n : Nat) : 2 * n + 1 ≤ 3 * n + 7", "(n : Nat) : 5 * n + 0 ≤ 9 * n + 12", "", ""),
    ("comments and layout", "(n : Nat) : n + 0 = n", "( n : Nat )  -- why\n  : n /- block -/ + 0\n  = n", "", ""),
    ("definitions and match variables", "(k : Nat) : dbl k = k + k", "(j : Nat) : twice j = j + j",
     "def dbl : Nat → Nat\n  | 0 => 0\n  | n + 1 => dbl n + 2",
     "def twice : Nat → Nat\n  | 0 => 0\n  | m + 1 => twice m + 2"),
    ("types and constructors", "(d : Day) : next (next d) = d", "(c : Coin) : flip' (flip' c) = c",
     "inductive Day where\n  | mon | tue\ndef next : Day → Day\n  | .mon => .tue\n  | .tue => .mon",
     "inductive Coin where\n  | heads | tails\ndef flip' : Coin → Coin\n  | .heads => .tails\n  | .tails => .heads"),
    ("fields", "(p : P2) : p.a + p.b = p.b + p.a", "(q : Pair) : q.fst' + q.snd' = q.snd' + q.fst'",
     "structure P2 where\n  a : Nat\n  b : Nat", "structure Pair where\n  fst' : Nat\n  snd' : Nat"),
    ("dotted user names", "(t : T) : T.sz t = t.sz", "(u : U) : U.weight u = u.weight",
     "inductive T where\n  | e\ndef T.sz : T → Nat\n  | .e => 0",
     "inductive U where\n  | z\ndef U.weight : U → Nat\n  | .z => 0"),
    ("match on lists", "(xs : List Nat) : len xs = xs.length", "(ys : List Nat) : cnt ys = ys.length",
     "def len : List Nat → Nat\n  | [] => 0\n  | _ :: rest => len rest + 1",
     "def cnt : List Nat → Nat\n  | [] => 0\n  | _ :: tl => cnt tl + 1"),
    ("a shadowed name", ": ∀ x : Nat, x = x ∧ ∀ x : Nat, x + 0 = x",
     ": ∀ a : Nat, a = a ∧ ∀ b : Nat, b + 0 = b", "", ""),
    ("the namespace", "(n : Nat) : Ns.f n = n", "(n : Nat) : Other.g n = n",
     "namespace Ns\ndef f (n : Nat) : Nat := n\nend Ns", "namespace Other\ndef g (n : Nat) : Nat := n\nend Other"),
    ("preamble order and unused declarations", "(n : Nat) : f (g n) = n", "(n : Nat) : f2 (g2 n) = n",
     "def g (n : Nat) : Nat := n\ndef f (n : Nat) : Nat := n",
     "def unused : Nat := 3\ndef f2 (n : Nat) : Nat := n\ndef g2 (n : Nat) : Nat := n"),
])
def test_renaming_does_not_change_the_form(what, statement_a, statement_b, preamble_a, preamble_b):
    a = thm("a", statement_a, preamble_a)
    b = thm("b", statement_b, preamble_b)
    assert canonical_form(a) == canonical_form(b), what


TR = "inductive Tr where\n  | lf : Tr\n  | nd : Tr → Tr → Tr\n"


@pytest.mark.parametrize("what, statement_a, statement_b, preamble_a, preamble_b", [
    ("another operator", "(a b : Nat) : a + b = b + a", "(a b : Nat) : a * b = b * a", "", ""),
    ("another relation", "(a b : Nat) : a ≤ a + b", "(a b : Nat) : a < a + b", "", ""),
    ("another library function", "(a b : Nat) : min a b ≤ a", "(a b : Nat) : max a b ≤ a", "", ""),
    ("another library field", "(xs : List Nat) : xs.length ≤ xs.length + 1",
     "(xs : List Nat) : xs.sum ≤ xs.sum + 1", "", ""),
    ("another qualified library name", "(xs : List Nat) : List.reverse xs = xs",
     "(xs : List Nat) : List.dropLast xs = xs", "", ""),
    ("another type", "(a b : Nat) : a + b = b + a", "(a b : Int) : a + b = b + a", "", ""),
    ("another structure", "(a b c : Nat) : a + b + c = a + (b + c)", "(a b c : Nat) : a + b + c = a + b + c",
     "", ""),
    ("variables in another order", "(a b : Nat) : a - b ≤ a", "(a b : Nat) : b - a ≤ b + 0 * a", "", ""),
    ("a projection index", "(p : Nat × Nat) : p.1 ≤ p.1 + p.2", "(p : Nat × Nat) : p.2 ≤ p.2 + p.1", "", ""),
    ("another definition body", "(t : Tr) : 0 < f t", "(t : Tr) : 0 < f t",
     TR + "def f : Tr → Nat\n  | .lf => 1\n  | .nd l r => f l + f r",
     TR + "def f : Tr → Nat\n  | .lf => 1\n  | .nd l r => f l * f r"),
    ("constructors in another order", "(d : D) : g d = g d", "(d : D) : g d = g d",
     "inductive D where\n  | a : Nat → D\n  | b : D\ndef g : D → Nat\n  | .a n => n\n  | .b => 0",
     "inductive D where\n  | b : D\n  | a : Nat → D\ndef g : D → Nat\n  | .a n => n\n  | .b => 0"),
    ("one more hypothesis", "(n : Nat) : n ≤ n", "(n : Nat) (h : 0 < n) : n ≤ n", "", ""),
])
def test_different_theorems_are_not_twins(what, statement_a, statement_b, preamble_a, preamble_b):
    a = thm("a", statement_a, preamble_a)
    b = thm("b", statement_b, preamble_b)
    assert canonical_form(a) != canonical_form(b), what
    assert find_twins([a], [b], min_skeleton_steps=1) == []


def test_names_are_told_apart():
    t = thm("t", "(xs : List Nat) (t : Tr) : xs.length + Tr.sz t + t.sz = List.length xs + Nat.succ 0",
            "inductive Tr where\n  | lf\ndef Tr.sz : Tr → Nat\n  | .lf => 0")
    stmt = canonical_form(t).splitlines()[-1]
    # user: the type and its function, also after a value (`t.sz`); library: `length` after a value,
    # `List.length`, `Nat.succ`; bound: xs, t
    assert stmt == "theorem ( u4 : List Nat ) ( u5 : u1 ) : u4.length + u1.u3 u5 + u5.u3 = List.length u4 + Nat.succ #"


def test_proof_skeleton_numbers_names_from_the_statement():
    t = thm("dbl_eq", "(k : Nat) : dbl k = k + k", "def dbl : Nat → Nat\n  | 0 => 0\n  | n + 1 => dbl n + 2",
            ["induction k with\n  | zero => rfl\n  | succ m ih => simp [dbl, ih]; omega", "exact dbl_eq 3"])
    # k is the statement's first name, dbl its second: the definition's bound `n` takes no number
    assert proof_skeleton(t) == ("induction u1 with | zero => rfl | succ u3 u4 => simp [ u2 , u4 ] ; omega\n"
                                 f"exact {SELF} #")
    # a proof given as text, a proof given as steps; none
    assert proof_skeleton(t, "omega") == "omega"
    assert proof_skeleton(t, ["simp [dbl]", "omega"]) == "simp [ u2 ]\nomega"
    assert proof_skeleton(thm("x", "(n : Nat) : n = n")) == ""


def test_proof_skeleton_of_a_renamed_proof():
    a = thm("a", "(P Q : Prop) (h : P ∧ Q) : Q ∧ P",
            proof=["obtain ⟨hp, hq⟩ := h", "exact ⟨hq, hp⟩"])
    b = thm("b", "(A B : Prop) (hab : A ∧ B) : B ∧ A",
            proof=["obtain ⟨x, y⟩ := hab", "exact ⟨y, x⟩"])
    c = thm("c", "(A B : Prop) (hab : A ∧ B) : B ∧ A",
            proof=["obtain ⟨x, y⟩ := hab", "exact ⟨x, y⟩"])
    assert proof_skeleton(a) == proof_skeleton(b) == "obtain ⟨ u4 , u5 ⟩ := u3\nexact ⟨ u5 , u4 ⟩"
    assert proof_skeleton(c) != proof_skeleton(a)
    d = thm("d", "(n : Nat) : ∀ m, n + m = m + n", proof=["intro m", "omega"])
    e = thm("e", "(a : Nat) : ∀ b, a + b = b + a", proof=["intro c", "omega"])
    assert proof_skeleton(d) == proof_skeleton(e)


# --- twins and clusters ---------------------------------------------------------------------------------------

COMM = thm("comm", "(a b : Nat) : a + b = b + a", proof=["omega"])
COMM_RENAMED = thm("comm_renamed", "(x y : Nat) : x + y = y + x", proof=["induction x", "all_goals omega"])
MUL_SAME_PROOF = thm("mul_same_proof", "(m n : Nat) : m * n = n * m", proof=["induction m", "all_goals omega"])
OTHER = thm("other", "(p : Prop) (hp : p) : p", proof=["exact hp"])
REV = thm("rev", "(xs : List Nat) : xs.reverse.reverse = xs", proof=["simp"])
REV_RENAMED = thm("rev_renamed", "(l : List Nat) : l.reverse.reverse = l", proof=["simp"])
LE = thm("le", "(u v : Nat) : u ≤ u + v", proof=["omega"])


def test_find_twins_by_statement_and_by_skeleton():
    twins = find_twins([COMM, MUL_SAME_PROOF, OTHER, REV], [COMM_RENAMED, REV_RENAMED, LE])
    assert twins == [
        Twin(benchmark="comm_renamed", corpus="comm", how="statement"),
        Twin(benchmark="comm_renamed", corpus="mul_same_proof", how="skeleton"),
        Twin(benchmark="rev_renamed", corpus="rev", how="statement"),
    ]
    # one-step proofs (`omega`) make skeleton twins only when asked for
    loose = find_twins([COMM], [LE], min_skeleton_steps=1)
    assert loose == [Twin(benchmark="le", corpus="comm", how="skeleton")]
    assert find_twins([COMM], [LE]) == []


def test_twin_is_a_frozen_record():
    tw = Twin(benchmark="a", corpus="b", how="statement")
    with pytest.raises(ValidationError):
        tw.how = "skeleton"
    with pytest.raises(ValidationError):
        Twin(benchmark="a", corpus="b", how="name")


def test_clusters_are_transitive_and_deterministic():
    theorems = [COMM, COMM_RENAMED, MUL_SAME_PROOF, OTHER, REV, REV_RENAMED]
    # comm ~ comm_renamed by statement, comm_renamed ~ mul_same_proof by skeleton: one cluster of three,
    # though comm and mul_same_proof share neither
    assert canonical_form(COMM) != canonical_form(MUL_SAME_PROOF)
    assert proof_skeleton(COMM) != proof_skeleton(MUL_SAME_PROOF)
    expected = [["comm", "comm_renamed", "mul_same_proof"], ["rev", "rev_renamed"]]
    assert twin_clusters(theorems) == expected
    for seed in range(5):
        shuffled = theorems[:]
        random.Random(seed).shuffle(shuffled)
        assert twin_clusters(shuffled) == expected
    assert twin_clusters([OTHER, LE]) == []


# --- the bundled sets ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bundled() -> tuple[list[Theorem], list[Theorem]]:
    """The bundled corpus and the generator's benchmark families before its twin filter."""
    bench = [t for f in FAMILIES if f.split == "benchmark" for t in family_theorems(f)]
    return load_theorems("bundled:corpus"), bench


def test_known_bundled_twins_are_found(bundled):
    corpus, benchmark = bundled
    twins = find_twins(corpus, benchmark)
    assert Twin(benchmark="fork_tips_forks", corpus="stk_lits_ops", how="statement") in twins
    assert Twin(benchmark="fork_tips_pos", corpus="stk_lits_pos", how="statement") in twins
    # the benchmark's own definitions are all different names from the corpus's, and the corpus preambles hold
    # more definitions: only the canonical form sees the twins
    b = {t.name: t for t in benchmark}
    c = {t.name: t for t in corpus}
    assert b["fork_tips_forks"].preamble != c["stk_lits_ops"].preamble
    assert proof_skeleton(b["fork_tips_pos"]) == proof_skeleton(c["stk_lits_pos"])
    # the generator drops them: the bundled benchmark has none
    assert not {tw.benchmark for tw in twins} & {t.name for t in load_theorems("bundled:benchmark")}


def test_generator_renaming_keeps_every_form():
    """Each family's theorems with their per-theorem names and with the templates' fixed names: the same
    canonical form and skeleton (two theorems of every family)."""
    renamed, fixed = generate(), generate(rename=False)
    for split in renamed:
        by_name = {t.name: t for t in fixed[split]}
        seen: dict[str, int] = {}
        for t in renamed[split]:
            if seen.get(t.family, 0) >= 2:
                continue
            seen[t.family] = seen.get(t.family, 0) + 1
            other = by_name[t.name]
            assert canonical_form(t) == canonical_form(other), t.name
            assert proof_skeleton(t) == proof_skeleton(other), t.name
