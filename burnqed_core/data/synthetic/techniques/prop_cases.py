"""The technique "prop_cases": case splits on a proposition (``by_cases``, ``split`` on an ``if``, ``Classical.em``).

Each family defines, in its preamble, functions (and sometimes data types) of
its own and asks for proofs by one technique, in several surface forms:

* ``tcase``: **case splits on a proposition**: ``by_cases h : n ≤ K`` (and on
  ``x = y``, ``n % P = 0``, ``f n = 0``), ``rcases Nat.lt_or_ge a b with h | h``,
  ``Nat.lt_trichotomy``, ``Classical.em``, ``split`` on the ``if``/``match`` of
  a user definition, then ``simp [f, h]``/``rw [if_pos h]``/``omega`` per branch;
* ``tsplit``: **case splits on a proposition**: ``by_cases`` on a field comparison of a
  user structure (``best``/``cheap`` on ``Item``), ``rcases Nat.lt_or_ge`` and ``Classical.em``, ``split`` on the
  ``if`` of a user filter on lists (``keepBig``) and of a threshold on tree labels (``cap``), a two-bound
  ``clamp``, a ``dite`` definition (``if hb : b ≤ a then ... else ...``, ``dif_pos``/``dif_neg``) and an ``if``
  on a user predicate with its own ``Decidable`` instance; each branch takes a few steps (``rw [f, if_pos h]``,
  ``dsimp only``, ``simp only [g]``, ``omega``), and the list and tree ones split inside an induction step.

How every technique's preamble, names and proofs are written (renaming, what the checker can unfold,
what a proof may name) is said once in `burnqed_core.data.synthetic.techniques`.

The style rule of `burnqed_core.data.synthetic.techniques.predicates` holds: a prover sees only the proof state, and
every name of the preamble is renamed per theorem, so no step names a constructor, inductive type or definition that
the state it applies to does not print: inductions are ``induction t`` with bullets, ``rename_i`` or ``<;>`` (never
``with | fork l x r``), a ``have`` states its lemma only with functions the goal shows, and a function that only an
unfolding brings into the goal (``bumpS`` under ``bumpN``, ``Heavy`` under ``trimH``) is named after that unfolding.
Lean core names (``Nat.lt_or_ge``, ``if_pos``) are fine. No preamble definition calls a core ``List`` function (the
trusted checker could not unfold it).
"""

from __future__ import annotations

import random

from burnqed_core.data.synthetic.families import Family, Instance, _distinct, _pick, namespaced
from burnqed_core.data.synthetic.techniques.have import BIN_CORE, FORKS

# ---------------------------------------------------------------------------
# tcase: case splits on a proposition
# ---------------------------------------------------------------------------


def _clip_defs(k: int) -> str:
    return f"def clip (n : Nat) : Nat := if n ≤ {k} then n else {k}"


def _swp_defs(a: int, b: int) -> str:
    return f"def swp (n : Nat) : Nat := if n = {a} then {b} else if n = {b} then {a} else n"


def _zap_defs(p: int) -> str:
    return f"""\
def zap (n : Nat) : Nat := if n % {p} = 0 then 0 else n

def cnt : Nat → Nat
  | 0 => 0
  | n + 1 => if n % {p} = 0 then cnt n + 1 else cnt n"""


DIST_DEFS = "def dist (a b : Nat) : Nat := if a < b then b - a else a - b"


def _cap_defs(k: int) -> str:
    return f"""\
def cap (n : Nat) : Nat :=
  match n with
  | 0 => {k}
  | m + 1 => m"""


def _prop_cases(rng: random.Random) -> list[Instance]:
    """``by_cases``/``rcases``/``Classical.em``/``split`` on the conditions of user ``if``/``match`` definitions."""
    out = []
    k = rng.randint(3, 12)
    pre = namespaced(f"BqCsClip_{k}", _clip_defs(k))
    out.append(Instance(f"clip_clip_{k}", "(n : Nat) : clip (clip n) = clip n",
                        (f"by_cases h : n ≤ {k}", "· simp [clip, h]", "· simp [clip, h]"), pre))
    out.append(Instance(f"clip_sub_{k}", f"(n : Nat) : clip n + (n - {k}) = n",
                        (f"rcases Nat.lt_or_ge {k} n with h | h", "· rw [clip, if_neg (Nat.not_le.mpr h)]; omega",
                         "· rw [clip, if_pos h]; omega"), pre))
    out.append(Instance(f"clip_mono_{k}", "(n m : Nat) (h : n ≤ m) : clip n ≤ clip m",
                        ("unfold clip", "split <;> split <;> omega"), pre))
    out.append(Instance(f"clip_or_{k}", f"(n : Nat) : clip n = n ∨ clip n = {k}",
                        (f"rcases Classical.em (n ≤ {k}) with h | h", "· left; simp [clip, h]",
                         "· right; simp [clip, h]"), pre))

    a, b = sorted(rng.sample(range(0, 10), 2))
    pre = namespaced(f"BqCsSwp_{a}_{b}", _swp_defs(a, b))
    out.append(Instance(f"swp_swp_{a}_{b}", "(n : Nat) : swp (swp n) = n",
                        (f"by_cases h₁ : n = {a}", "· subst h₁; simp [swp]", f"by_cases h₂ : n = {b}",
                         "· subst h₂; simp [swp]", "· simp [swp, h₁, h₂]"), pre))
    out.append(Instance(f"swp_cases_{a}_{b}", f"(n : Nat) : swp n = {a} ∨ swp n = {b} ∨ swp n = n",
                        (f"by_cases h₁ : n = {a}", "· simp [swp, h₁]", f"by_cases h₂ : n = {b}",
                         "· simp [swp, h₁, h₂]", "· simp [swp, h₁, h₂]"), pre))

    p = rng.randint(2, 7)
    pre = namespaced(f"BqCsZap_{p}", _zap_defs(p))
    out.append(Instance(f"zap_le_{p}", "(n : Nat) : zap n ≤ n", ("unfold zap", "split <;> omega"), pre))
    out.append(Instance(f"zap_zap_{p}", "(n : Nat) : zap (zap n) = zap n",
                        (f"by_cases h : n % {p} = 0", "· simp [zap, h]", "· simp [zap, h]"), pre))
    out.append(Instance(f"zap_or_{p}", "(n : Nat) : zap n = 0 ∨ zap n = n",
                        ("by_cases h : zap n = 0", "· exact Or.inl h",
                         "· right\n  revert h\n  unfold zap\n  split <;> simp"), pre))
    out.append(Instance(f"cnt_step_{p}", "(n : Nat) : cnt (n + 1) ≤ cnt n + 1",
                        ("simp only [cnt]", "split <;> omega"), pre))
    out.append(Instance(f"cnt_zero_{p}", "(n : Nat) (h : cnt (n + 1) = 0) : cnt n = 0",
                        (f"by_cases h' : n % {p} = 0", "· simp [cnt, h'] at h", "· simp [cnt, h'] at h; exact h"),
                        pre))

    pre = namespaced("BqCsDist", DIST_DEFS)
    out.append(Instance("dist_comm", "(a b : Nat) : dist a b = dist b a",
                        ("unfold dist", "split <;> split <;> omega"), pre))
    out.append(Instance("dist_min_max", "(a b : Nat) : dist a b + min a b = max a b",
                        ("rcases Nat.lt_or_ge a b with h | h", "· rw [dist, if_pos h]; omega",
                         "· rw [dist, if_neg (Nat.not_lt.mpr h)]; omega"), pre))
    out.append(Instance("dist_self", "(a b : Nat) (h : dist a b = 0) : a = b",
                        ("rcases Nat.lt_trichotomy a b with h' | h' | h'", "· simp [dist, h'] at h; omega",
                         "· exact h'", "· simp [dist, Nat.not_lt.mpr (Nat.le_of_lt h')] at h; omega"), pre))

    k = rng.randint(2, 12)
    pre = namespaced(f"BqCsCap_{k}", _cap_defs(k))
    out.append(Instance(f"cap_ge_{k}", "(n : Nat) : n ≤ cap n + 1", ("unfold cap", "split <;> omega"), pre))
    out.append(Instance(f"cap_pos_{k}", "(n : Nat) (h : 0 < n) : cap n + 1 = n",
                        ("unfold cap", "split", "· omega", "· rfl"), pre))
    return _distinct(out, per_preamble=True)

# ---------------------------------------------------------------------------
# tsplit: case splits on a proposition over user structures, lists, trees and predicates
# ---------------------------------------------------------------------------

ITEM_DEFS = """\
structure Item where
  score : Nat
  cost : Nat

def best (p q : Item) : Item := if Item.score p < Item.score q then q else p

def cheap (k : Nat) (p : Item) : Item := if k < Item.cost p then ⟨Item.score p, k⟩ else p"""

CLAMP_DEFS = "def clamp (lo hi x : Nat) : Nat := if x < lo then lo else if hi < x then hi else x"

KEEP_DEFS = """\
def keepBig (k : Nat) : List Nat → List Nat
  | [] => []
  | x :: xs => if k < x then x :: keepBig k xs else keepBig k xs

def lsum : List Nat → Nat
  | [] => 0
  | x :: xs => x + lsum xs

def lcnt : List Nat → Nat
  | [] => 0
  | _ :: xs => lcnt xs + 1"""

CAP_DEFS = BIN_CORE + "\n" + FORKS + """
def cap (k : Nat) : Bin → Bin
  | .tip => .tip
  | .fork l x r => .fork (cap k l) (if x ≤ k then x else k) (cap k r)"""

SPEND_DEFS = "def spend (a b : Nat) : Nat := if hb : b ≤ a then a - b else 0"

HEAVY_DEFS = """\
def Heavy (k n : Nat) : Prop := k < n

instance decHeavy (k n : Nat) : Decidable (Heavy k n) := Nat.decLt k n

def trimH (k n : Nat) : Nat := if Heavy k n then k else n"""


def _splits(rng: random.Random) -> list[Instance]:
    """``by_cases``, ``rcases Nat.lt_or_ge``, ``Classical.em`` and ``split`` on user structures, lists, trees, a
    dite definition and a user predicate with a ``Decidable`` instance; a few steps per branch."""
    out = [*_item_splits(rng), *_clamp_splits(rng), *_keep_splits(rng), *_cap_splits(rng), *_spend_heavy_splits(rng)]
    return _distinct(out, per_preamble=True)


def _item_splits(rng: random.Random) -> list[Instance]:
    """The `_splits` of an ``Item`` structure's ``best`` and ``cheap`` (two bounds drawn): ``by_cases`` and
    ``rcases Nat.lt_or_ge``."""
    out: list[Instance] = []
    pre = namespaced("BqSpItem", ITEM_DEFS)
    out.append(Instance("item_max", "(p q : Item) : Item.score (best p q) = max (Item.score p) (Item.score q)",
                        ("by_cases h : Item.score p < Item.score q", "· rw [best, if_pos h]\n  omega",
                         "· rw [best, if_neg h]\n  omega"), pre))
    out.append(Instance("item_ge", "(p q : Item) : Item.score p + Item.score q ≤ 2 * Item.score (best p q)",
                        ("rcases Nat.lt_or_ge (Item.score p) (Item.score q) with h | h",
                         "· rw [best, if_pos h]\n  omega", "· rw [best, if_neg (Nat.not_lt.mpr h)]\n  omega"), pre))
    for k in _pick(rng, list(range(1, 10)), 2):
        out.append(Instance(f"item_cheap_{k}", f"(p : Item) : Item.cost (cheap {k} p) = min {k} (Item.cost p)",
                            (f"by_cases h : {k} < Item.cost p", "· rw [cheap, if_pos h]\n  dsimp only\n  omega",
                             "· rw [cheap, if_neg h]\n  omega"), pre))
    return out


def _clamp_splits(rng: random.Random) -> list[Instance]:
    """The `_splits` of ``clamp`` at three bounds ``lo < hi`` drawn: ``rcases Nat.lt_or_ge``, then ``split``."""
    out: list[Instance] = []
    pre = namespaced("BqSpClamp", CLAMP_DEFS)
    lo_hi = _pick(rng, [(a, b) for a in range(0, 8) for b in range(a + 2, 14)], 3)
    for lo, hi in lo_hi[:2]:
        out.append(Instance(f"clamp_in_{lo}_{hi}", f"(x : Nat) : {lo} ≤ clamp {lo} {hi} x ∧ clamp {lo} {hi} x ≤ {hi}",
                            (f"rcases Nat.lt_or_ge x {lo} with h | h", "· rw [clamp, if_pos h]\n  omega",
                             "· rw [clamp, if_neg (Nat.not_lt.mpr h)]\n  split <;> omega"), pre))
    lo, hi = lo_hi[2]
    out.append(Instance(f"clamp_mono_{lo}_{hi}", f"(x y : Nat) (h : x ≤ y) : clamp {lo} {hi} x ≤ clamp {lo} {hi} y",
                        ("unfold clamp", "repeat' split", "all_goals omega"), pre))
    return out


def _keep_splits(rng: random.Random) -> list[Instance]:
    """The `_splits` of a list filter ``keepBig`` (thresholds drawn): ``split`` in an induction step, and
    ``Classical.em``."""
    out: list[Instance] = []
    pre = namespaced("BqSpKeep", KEEP_DEFS)
    for k in _pick(rng, list(range(1, 10)), 2):
        out.append(Instance(f"keep_sum_{k}", f"(xs : List Nat) : lsum (keepBig {k} xs) ≤ lsum xs",
                            ("induction xs", "· exact Nat.le_refl _", "rename_i x xs ih", "simp only [keepBig]",
                             "split", "· simp only [lsum]\n  omega", "· simp only [lsum]\n  omega"), pre))
    k = rng.randint(1, 9)
    out.append(Instance(f"keep_big_{k}", f"(xs : List Nat) : {k + 1} * lcnt (keepBig {k} xs) ≤ lsum (keepBig {k} xs)",
                        ("induction xs", "· exact Nat.le_refl _", "rename_i x xs ih", "simp only [keepBig]",
                         "split", "· simp only [lcnt, lsum]\n  omega", "· exact ih"), pre))
    out.append(Instance(f"keep_cons_{k}",
                        f"(x : Nat) (xs : List Nat) : lcnt (keepBig {k} (x :: xs)) ≤ lcnt (keepBig {k} xs) + 1",
                        (f"rcases Classical.em ({k} < x) with h | h",
                         "· simp only [keepBig, if_pos h, lcnt]\n  omega",
                         "· simp only [keepBig, if_neg h]\n  omega"), pre))
    return out


def _cap_splits(rng: random.Random) -> list[Instance]:
    """The `_splits` of a tree map ``cap`` (two caps drawn): ``split`` in an induction step."""
    out: list[Instance] = []
    pre = namespaced("BqSpCap", CAP_DEFS)
    k1, k2 = _pick(rng, list(range(1, 10)), 2)
    out.append(Instance(f"cap_sum_{k1}", f"(t : Bin) : wsum (cap {k1} t) ≤ wsum t",
                        ("induction t", "· exact Nat.le_refl _", "rename_i l x r ihl ihr", "simp only [cap, wsum]",
                         "split", "· omega", "· omega"), pre))
    out.append(Instance(f"cap_bound_{k2}", f"(t : Bin) : wsum (cap {k2} t) ≤ {k2} * forks t",
                        ("induction t", "· exact Nat.zero_le _", "rename_i l x r ihl ihr",
                         "simp only [cap, wsum, forks]", "split", "· omega", "· omega"), pre))
    return out


def _spend_heavy_splits(rng: random.Random) -> list[Instance]:
    """The `_splits` of a dite definition ``spend`` and of ``trimH`` over a user predicate ``Heavy`` with a
    ``Decidable`` instance (its bound drawn): ``by_cases``."""
    out: list[Instance] = []
    pre = namespaced("BqSpSpend", SPEND_DEFS)
    out.append(Instance("spend_min", "(a b : Nat) : spend a b + min a b = a",
                        ("by_cases h : b ≤ a", "· rw [spend, dif_pos h]\n  omega", "· rw [spend, dif_neg h]\n  omega"),
                        pre))

    k = rng.randint(2, 12)
    pre = namespaced("BqSpHeavy", HEAVY_DEFS)
    out.append(Instance(f"heavy_add_{k}", f"(n : Nat) : trimH {k} n + (n - {k}) = n",
                        ("unfold trimH", f"by_cases h : Heavy {k} n", "· rw [if_pos h]\n  unfold Heavy at h\n  omega",
                         "· rw [if_neg h]\n  unfold Heavy at h\n  omega"), pre))
    out.append(Instance(f"heavy_le_{k}", f"(n : Nat) : trimH {k} n ≤ n",
                        ("unfold trimH", f"by_cases h : Heavy {k} n", "· rw [if_pos h]\n  unfold Heavy at h\n  omega",
                         "· rw [if_neg h]\n  exact Nat.le_refl _"), pre))
    return out


PROP_CASES_FAMILIES: tuple[Family, ...] = (
    Family("tcase", "train", True,
           "case splits on propositions: by_cases (≤, =, %, f n = 0), rcases Nat.lt_or_ge/lt_trichotomy, "
           "Classical.em, split on the if/match of user definitions, simp/rw [if_pos]/omega per branch",
           _prop_cases, technique="prop_cases"),
    Family("tsplit", "train", True,
           "case splits on propositions over user structures (max/cheap by a field), a two-bound clamp, a list "
           "filter and a tree threshold (split inside an induction step), a dite definition (dif_pos/dif_neg) and "
           "a user predicate with a Decidable instance: by_cases, rcases Nat.lt_or_ge, Classical.em, split",
           _splits, technique="prop_cases"),
)
