"""Theorem families of the technique "generalizing", in surface forms of their own.

Like `burnqed_core.data.technique_reasoning` (``tacc``: accumulators over ``List Nat`` and counter loops), the
family declares its own data types and functions in its preamble; the forms here are other ones:

* ``tgen``: an **accumulator or a second argument generalised** before the induction, on a user binary tree
  ``Twig`` (a total and a node count kept in an accumulator, a flattening into an accumulator list, a running
  maximum threaded through both subtrees, where each subtree's induction hypothesis is used at an accumulator the
  other built), on ``Nat`` loops whose accumulator is multiplied (``acc * k``, a factorial loop) or updated under
  a condition (a count of the list elements above a threshold), and on a countdown that conses onto its list
  accumulator. The same facts come in three statement forms: ``induction t generalizing acc`` on a statement
  with a free accumulator; a ``∀ acc`` statement proved by ``induction`` and ``intro`` inside each case (the
  induction hypothesis applied at the case's new accumulator); and a corollary at a literal accumulator
  (``totA t 0``, ``powA n 1``) that needs the generalised fact as a ``have`` first.

The style rule of `burnqed_core.data.technique_relations` holds: a prover sees only the proof state, and every
name of the preamble is renamed per theorem, so no step names a constructor, inductive type or definition that
the state it applies to does not print: inductions are ``induction t`` with bullets and ``rename_i`` (never
``with | knot l x r``), and a ``have`` states its lemma only with functions the goal shows. Lean core names
(``Nat.pow_succ``, ``List.length_cons``) are fine. No preamble definition calls a core ``List`` function (the
trusted checker could not unfold it).
"""

from __future__ import annotations

import random

from burnqed_core.data.families import Family, Instance, _distinct, _pick, namespaced

# ---------------------------------------------------------------------------
# tgen: accumulators and generalised arguments on trees, Nat loops and lists
# ---------------------------------------------------------------------------

TWIG_DEFS = """\
inductive Twig where
  | bud : Twig
  | knot : Twig → Nat → Twig → Twig

def tot : Twig → Nat
  | .bud => 0
  | .knot l x r => tot l + x + tot r

def totA : Twig → Nat → Nat
  | .bud, acc => acc
  | .knot l x r, acc => totA r (totA l acc + x)

def knots : Twig → Nat
  | .bud => 0
  | .knot l _ r => knots l + 1 + knots r

def knotsA : Twig → Nat → Nat
  | .bud, n => n
  | .knot l _ r, n => knotsA r (knotsA l n + 1)

def flatA : Twig → List Nat → List Nat
  | .bud, acc => acc
  | .knot l x r, acc => flatA l (x :: flatA r acc)

def topA : Twig → Nat → Nat
  | .bud, m => m
  | .knot l x r, m => topA r (topA l (max m x))"""


def _pow_defs(k: int) -> str:
    return f"""\
def powA : Nat → Nat → Nat
  | 0, acc => acc
  | n + 1, acc => powA n (acc * {k})"""


def _big_defs(m: int) -> str:
    return f"""\
def bigA : List Nat → Nat → Nat
  | [], c => c
  | x :: xs, c => bigA xs (if {m} < x then c + 1 else c)

def big : List Nat → Nat
  | [] => 0
  | x :: xs => (if {m} < x then 1 else 0) + big xs"""


FAC_DEFS = """\
def fac : Nat → Nat
  | 0 => 1
  | n + 1 => (n + 1) * fac n

def facA : Nat → Nat → Nat
  | 0, acc => acc
  | n + 1, acc => facA n (acc * (n + 1))"""


def _down_defs(k: int) -> str:
    return f"""\
def down : Nat → List Nat → List Nat
  | 0, acc => acc
  | n + 1, acc => down n ((n + {k}) :: acc)"""


TOT_LEMMA = ("have h : ∀ u acc, totA u acc = acc + tot u := by\n  intro u\n"
             "  induction u <;> intro acc <;> simp only [totA, tot, *] <;> omega")


def _generalised(rng: random.Random) -> list[Instance]:
    """A tree's accumulators (free, ``∀``, literal), a flattening and a running maximum; multiplied,
    conditional and list accumulators of ``Nat`` and ``List Nat`` loops."""
    out = []
    pre = namespaced("BqGnTwig", TWIG_DEFS)
    out.append(Instance("twig_tot_gen", "(t : Twig) (acc : Nat) : totA t acc = acc + tot t",
                        ("induction t generalizing acc", "· simp only [totA, tot]; omega", "rename_i l x r ihl ihr",
                         "simp only [totA, tot, ihl, ihr]", "omega"), pre))
    out.append(Instance("twig_tot_zero", "(t : Twig) : totA t 0 = tot t",
                        (TOT_LEMMA, "have h₁ := h t 0", "omega"), pre))
    out.append(Instance("twig_knots_forall", "(t : Twig) : ∀ n : Nat, knotsA t n = knots t + n",
                        ("induction t", "· intro n; simp only [knotsA, knots]; omega", "rename_i l x r ihl ihr",
                         "intro n", "rw [knotsA, knots, ihr, ihl]", "omega"), pre))
    out.append(Instance("twig_flat_length",
                        "(t : Twig) (acc : List Nat) : (flatA t acc).length = knots t + acc.length",
                        ("induction t generalizing acc", "· simp only [flatA, knots]; omega",
                         "rename_i l x r ihl ihr", "simp only [flatA, knots, ihl, ihr, List.length_cons]", "omega"),
                        pre))
    out.append(Instance("twig_flat_sum", "(t : Twig) (acc : List Nat) : (flatA t acc).sum = tot t + acc.sum",
                        ("induction t generalizing acc", "· simp only [flatA, tot]; omega",
                         "rename_i l x r ihl ihr", "simp only [flatA, tot, ihl, ihr, List.sum_cons]", "omega"),
                        pre))
    out.append(Instance("twig_flat_append", "(t : Twig) (acc : List Nat) : flatA t acc = flatA t [] ++ acc",
                        ("induction t generalizing acc", "· simp only [flatA]; rfl", "rename_i l x r ihl ihr",
                         "rw [flatA, flatA, ihl, ihl (x :: flatA r []), ihr]", "simp"), pre))
    out.append(Instance("twig_top_le", "(t : Twig) (m : Nat) : m ≤ topA t m",
                        ("induction t generalizing m", "· simp only [topA]; omega", "rename_i l x r ihl ihr",
                         "simp only [topA]", "have h₁ := ihl (max m x)", "have h₂ := ihr (topA l (max m x))",
                         "omega"), pre))

    for k in _pick(rng, list(range(2, 8)), 2):
        pre = namespaced(f"BqGnPow_{k}", _pow_defs(k))
        out.append(Instance(f"pow_gen_{k}", f"(n acc : Nat) : powA n acc = acc * {k} ^ n",
                            ("induction n generalizing acc", "· simp only [powA]; omega", "rename_i n ih",
                             "rw [powA, ih, Nat.pow_succ]", "ac_rfl"), pre))
    k = rng.randint(2, 9)
    pre = namespaced(f"BqGnPow_{k}", _pow_defs(k))
    out.append(Instance(f"pow_one_{k}", f"(n : Nat) : powA n 1 = {k} ^ n",
                        (f"have h : ∀ m acc, powA m acc = acc * {k} ^ m := by\n  intro m\n"
                         "  induction m <;> intro acc <;> simp only [powA, Nat.pow_succ, *] <;> ac_rfl",
                         "rw [h n 1]", "omega"), pre))

    m1, m2 = _pick(rng, list(range(1, 10)), 2)
    pre = namespaced(f"BqGnBig_{m1}", _big_defs(m1))
    out.append(Instance(f"big_gen_{m1}", "(xs : List Nat) (c : Nat) : bigA xs c = c + big xs",
                        ("induction xs generalizing c", "· simp only [bigA, big]; omega", "rename_i x xs ih",
                         "simp only [bigA, big, ih]", "split <;> omega"), pre))
    pre = namespaced(f"BqGnBig_{m2}", _big_defs(m2))
    out.append(Instance(f"big_zero_{m2}", "(xs : List Nat) : bigA xs 0 = big xs",
                        ("have h : ∀ ys c, bigA ys c = c + big ys := by\n  intro ys\n"
                         "  induction ys\n  · intro c; simp only [bigA, big]; omega\n"
                         "  · intro c; simp only [bigA, big, *]; split <;> omega",
                         "have h₁ := h xs 0", "omega"), pre))

    pre = namespaced("BqGnFac", FAC_DEFS)
    out.append(Instance("fac_gen", "(n acc : Nat) : facA n acc = acc * fac n",
                        ("induction n generalizing acc", "· simp only [facA, fac]; omega", "rename_i n ih",
                         "rw [facA, fac, ih]", "ac_rfl"), pre))
    out.append(Instance("fac_forall", "(n : Nat) : ∀ acc : Nat, facA n acc = fac n * acc",
                        ("induction n", "· intro acc; simp only [facA, fac]; omega", "rename_i n ih", "intro acc",
                         "rw [facA, fac, ih (acc * (n + 1))]", "ac_rfl"), pre))
    out.append(Instance("fac_one", "(n : Nat) : facA n 1 = fac n",
                        ("have h : ∀ m acc, facA m acc = acc * fac m := by\n  intro m\n"
                         "  induction m <;> intro acc <;> simp only [facA, fac, *] <;> ac_rfl",
                         "rw [h n 1]", "omega"), pre))

    k = rng.randint(0, 5)
    pre = namespaced(f"BqGnDown_{k}", _down_defs(k))
    out.append(Instance(f"down_length_{k}", "(n : Nat) : ∀ acc : List Nat, (down n acc).length = n + acc.length",
                        ("induction n", "· intro acc; simp only [down]; omega", "rename_i n ih", "intro acc",
                         "rw [down, ih, List.length_cons]", "omega"), pre))
    return _distinct(out, per_preamble=True)


GENERALIZING_FAMILIES: list[Family] = [
    Family("tgen", "train", True,
           "accumulators and generalised arguments on a user binary tree (total, node count, flattening into an "
           "accumulator list, running maximum), multiplied and conditional Nat/List accumulators (powers, "
           "factorial, counts above a threshold), a countdown onto a list: induction generalizing, ∀-goals with "
           "intro per case, literal-accumulator corollaries through a have",
           _generalised, technique="generalizing"),
]
