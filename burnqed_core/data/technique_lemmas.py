"""Theorem families of the techniques "have" and "prop_cases", in surface forms of their own.

Like `burnqed_core.data.technique_reasoning` (``thave``, ``tcase``), each family declares its own data types and
functions in its preamble; the forms here are other ones:

* ``tlem`` (technique ``have``): a **helper lemma** stated with ``have name : stmt := by ...``, proved inside
  (by ``induction`` on a user type with ``<;>``, or ``cases``), then used (``rw [h, h]``, ``simp only [h]``,
  ``have := h ...`` and ``omega``). The data: a user binary tree ``Bin`` (a weight, a mirror, a relabelling by
  ``+ k``, fork and tip counts), a user list ``Seq`` with constructors of its own (concatenation, sum, length), a
  record ``Wallet`` moved by a ``Nat``-indexed iterator ``payN``, an option-like ``Slot`` bumped ``n`` times. The
  lemmas are generalised statements (``∀ k u``, ``∀ m v``) that the goal instantiates, invariants (``tips u =
  forks u + 1``), monotonicity steps (``fill d (bumpS u) ≤ fill d u + 1``) used twice, and two lemmas about two
  functions of one goal;
* ``tsplit`` (technique ``prop_cases``): **case splits on a proposition**: ``by_cases`` on a field comparison of a
  user structure (``best``/``cheap`` on ``Item``), ``rcases Nat.lt_or_ge`` and ``Classical.em``, ``split`` on the
  ``if`` of a user filter on lists (``keepBig``) and of a threshold on tree labels (``cap``), a two-bound
  ``clamp``, a ``dite`` definition (``if hb : b ≤ a then ... else ...``, ``dif_pos``/``dif_neg``) and an ``if``
  on a user predicate with its own ``Decidable`` instance; each branch takes a few steps (``rw [f, if_pos h]``,
  ``dsimp only``, ``simp only [g]``, ``omega``), and the list and tree ones split inside an induction step.

The style rule of `burnqed_core.data.technique_relations` holds: a prover sees only the proof state, and every
name of the preamble is renamed per theorem, so no step names a constructor, inductive type or definition that
the state it applies to does not print: inductions are ``induction t`` with bullets, ``rename_i`` or ``<;>``
(never ``with | fork l x r``), a ``have`` states its lemma only with functions the goal shows, and a function
that only an unfolding brings into the goal (``bumpS`` under ``bumpN``, ``Heavy`` under ``trimH``) is named
after that unfolding. Lean core names (``Nat.lt_or_ge``, ``if_pos``) are fine. No preamble definition calls a
core ``List`` function (the trusted checker could not unfold it).
"""

from __future__ import annotations

import random

from burnqed_core.data.families import Family, Instance, _distinct, _pick, namespaced

# ---------------------------------------------------------------------------
# tlem: helper lemmas on user trees, user lists, records and option-like types
# ---------------------------------------------------------------------------

# A user binary tree and its weight, shared by the `tlem` and `tsplit` preambles.
_BIN_CORE = """\
inductive Bin where
  | tip : Bin
  | fork : Bin → Nat → Bin → Bin

def wsum : Bin → Nat
  | .tip => 0
  | .fork l x r => wsum l + x + wsum r
"""

_FORKS = """\
def forks : Bin → Nat
  | .tip => 0
  | .fork l _ r => forks l + forks r + 1
"""

BIN_DEFS = _BIN_CORE + """
def turn : Bin → Bin
  | .tip => .tip
  | .fork l x r => .fork (turn r) x (turn l)

def addK (k : Nat) : Bin → Bin
  | .tip => .tip
  | .fork l x r => .fork (addK k l) (x + k) (addK k r)

def forks : Bin → Nat
  | .tip => 0
  | .fork l _ r => forks l + forks r + 1

def tips : Bin → Nat
  | .tip => 1
  | .fork l _ r => tips l + tips r"""

SEQ_DEFS = """\
inductive Seq where
  | stop : Seq
  | put : Nat → Seq → Seq

def cat : Seq → Seq → Seq
  | .stop, t => t
  | .put x s, t => .put x (cat s t)

def ssum : Seq → Nat
  | .stop => 0
  | .put x s => x + ssum s

def slen : Seq → Nat
  | .stop => 0
  | .put _ s => slen s + 1"""


def _wallet_defs(k: int) -> str:
    return f"""\
structure Wallet where
  coins : Nat
  moves : Nat

def pay (w : Wallet) : Wallet := ⟨Wallet.coins w + {k}, Wallet.moves w + 1⟩

def payN : Nat → Wallet → Wallet
  | 0, w => w
  | n + 1, w => payN n (pay w)"""


SLOT_DEFS = """\
inductive Slot where
  | hole : Slot
  | full : Nat → Slot

def fill (d : Nat) : Slot → Nat
  | .hole => d
  | .full n => n

def bumpS : Slot → Slot
  | .hole => .hole
  | .full n => .full (n + 1)

def bumpN : Nat → Slot → Slot
  | 0, s => s
  | n + 1, s => bumpS (bumpN n s)"""

TURN_LEMMA = ("have h : ∀ u, wsum (turn u) = wsum u := by\n  intro u\n"
              "  induction u <;> simp only [wsum, turn, *] <;> omega")
ADDK_LEMMA = ("have h : ∀ k u, wsum (addK k u) = wsum u + k * forks u := by\n  intro k u\n"
              "  induction u <;> simp only [wsum, addK, forks, Nat.mul_add, Nat.mul_one, *] <;> omega")
TIPS_LEMMA = ("have h : ∀ u, tips u = forks u + 1 := by\n  intro u\n"
              "  induction u <;> simp only [tips, forks, *] <;> omega")


def _cat_lemma(f: str) -> str:
    return (f"have h : ∀ u v, {f} (cat u v) = {f} u + {f} v := by\n  intro u v\n"
            f"  induction u <;> simp only [cat, {f}, *] <;> omega")


def _coins_lemma(k: int) -> str:
    return (f"have h : ∀ m v, Wallet.coins (payN m v) = Wallet.coins v + {k} * m := by\n  intro m\n"
            "  induction m <;> intro v <;> simp only [payN, pay, *] <;> omega")


MOVES_LEMMA = ("have h : ∀ m v, Wallet.moves (payN m v) = Wallet.moves v + m := by\n  intro m\n"
               "  induction m <;> intro v <;> simp only [payN, pay, *] <;> omega")


def _bump_lemma(d: int) -> str:
    return (f"have h : ∀ u, fill {d} (bumpS u) ≤ fill {d} u + 1 := by\n  intro u\n"
            "  cases u <;> simp only [bumpS, fill] <;> omega")


def _lemmas(rng: random.Random) -> list[Instance]:
    """Helper lemmas on a user tree, a user list, a record moved by a Nat-indexed iterator and an option-like
    type: generalised (``∀ k u``) and instantiated, invariants and monotonicity steps used twice."""
    out = []
    pre = namespaced("BqLmBin", BIN_DEFS)
    out.append(Instance("bin_turn", "(t : Bin) : wsum (turn (turn t)) + wsum (turn t) = 2 * wsum t",
                        (TURN_LEMMA, "simp only [h]", "omega"), pre))
    out.append(Instance("bin_tips", "(t s : Bin) : tips t + tips s = forks t + forks s + 2",
                        (TIPS_LEMMA, "rw [h, h]", "omega"), pre))
    for a, b in _pick(rng, [(i, j) for i in range(1, 8) for j in range(i + 1, 10)], 2):
        out.append(Instance(f"bin_addK_{a}_{b}",
                            f"(t : Bin) : wsum (addK {a} t) + wsum (addK {b} t) = 2 * wsum t + {a + b} * forks t",
                            (ADDK_LEMMA, "rw [h, h]", "omega"), pre))
    for k in _pick(rng, list(range(1, 10)), 2):
        out.append(Instance(f"bin_forks_{k}", f"(t : Bin) : forks (addK {k} (turn t)) = forks t",
                            (f"have h₁ : ∀ u, forks (addK {k} u) = forks u := by\n  intro u\n"
                             f"  induction u <;> simp only [addK, forks, *]",
                             "have h₂ : ∀ u, forks (turn u) = forks u := by\n  intro u\n"
                             "  induction u <;> simp only [turn, forks, *] <;> omega",
                             "rw [h₁, h₂]"), pre))

    pre = namespaced("BqLmSeq", SEQ_DEFS)
    out.append(Instance("seq_len", "(s t : Seq) : slen (cat s t) = slen (cat t s)",
                        (_cat_lemma("slen"), "rw [h, h]", "omega"), pre))
    out.append(Instance("seq_sum", "(s t : Seq) : ssum (cat s (cat t s)) = 2 * ssum s + ssum t",
                        (_cat_lemma("ssum"), "simp only [h]", "omega"), pre))
    out.append(Instance("seq_both", "(s t : Seq) : ssum (cat s t) + slen (cat t s) = ssum t + ssum s + slen (cat s t)",
                        (_cat_lemma("ssum"), _cat_lemma("slen").replace("have h ", "have h' "),
                         "rw [h, h', h']", "omega"), pre))

    for k in _pick(rng, list(range(2, 10)), 2):
        pre = namespaced(f"BqLmWallet_{k}", _wallet_defs(k))
        out.append(Instance(f"wallet_coins_{k}",
                            "(n : Nat) (w : Wallet) : Wallet.coins (payN n (pay w)) = Wallet.coins w + "
                            f"{k} * (n + 1)",
                            (_coins_lemma(k), "rw [h]", "simp only [pay]", "omega"), pre))
    out.append(Instance(f"wallet_moves_{k}",
                        "(n m : Nat) (w : Wallet) : Wallet.moves (payN (n + m) (pay w)) = "
                        "Wallet.moves (payN n w) + m + 1",
                        (MOVES_LEMMA, "rw [h, h]", "simp only [pay]", "omega"), pre))

    pre = namespaced("BqLmSlot", SLOT_DEFS)
    for d in _pick(rng, list(range(0, 10)), 2):
        out.append(Instance(f"slot_twice_{d}", f"(s : Slot) : fill {d} (bumpS (bumpS s)) ≤ fill {d} s + 2",
                            (_bump_lemma(d), "have h₁ := h (bumpS s)", "have h₂ := h s", "omega"), pre))
    for d in _pick(rng, list(range(0, 10)), 2):
        out.append(Instance(f"slot_iter_{d}", f"(n : Nat) (s : Slot) : fill {d} (bumpN n s) ≤ fill {d} s + n",
                            ("induction n", "· simp only [bumpN]\n  omega", "rename_i j ih", "simp only [bumpN]",
                             _bump_lemma(d), "have := h (bumpN j s)", "omega"), pre))
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

CAP_DEFS = _BIN_CORE + "\n" + _FORKS + """
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
    out = []
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

    pre = namespaced("BqSpClamp", CLAMP_DEFS)
    lo_hi = _pick(rng, [(a, b) for a in range(0, 8) for b in range(a + 2, 14)], 3)
    for lo, hi in lo_hi[:2]:
        out.append(Instance(f"clamp_in_{lo}_{hi}", f"(x : Nat) : {lo} ≤ clamp {lo} {hi} x ∧ clamp {lo} {hi} x ≤ {hi}",
                            (f"rcases Nat.lt_or_ge x {lo} with h | h", "· rw [clamp, if_pos h]\n  omega",
                             "· rw [clamp, if_neg (Nat.not_lt.mpr h)]\n  split <;> omega"), pre))
    lo, hi = lo_hi[2]
    out.append(Instance(f"clamp_mono_{lo}_{hi}", f"(x y : Nat) (h : x ≤ y) : clamp {lo} {hi} x ≤ clamp {lo} {hi} y",
                        ("unfold clamp", "repeat' split", "all_goals omega"), pre))

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

    pre = namespaced("BqSpCap", CAP_DEFS)
    k1, k2 = _pick(rng, list(range(1, 10)), 2)
    out.append(Instance(f"cap_sum_{k1}", f"(t : Bin) : wsum (cap {k1} t) ≤ wsum t",
                        ("induction t", "· exact Nat.le_refl _", "rename_i l x r ihl ihr", "simp only [cap, wsum]",
                         "split", "· omega", "· omega"), pre))
    out.append(Instance(f"cap_bound_{k2}", f"(t : Bin) : wsum (cap {k2} t) ≤ {k2} * forks t",
                        ("induction t", "· exact Nat.zero_le _", "rename_i l x r ihl ihr",
                         "simp only [cap, wsum, forks]", "split", "· omega", "· omega"), pre))

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
    return _distinct(out, per_preamble=True)


LEMMA_FAMILIES: tuple[Family, ...] = (
    Family("tlem", "train", True,
           "helper lemmas stated with have on user trees, user lists, a record moved by a Nat-indexed iterator and "
           "an option-like type: generalised lemmas (∀ k u) instantiated by the goal, invariants and monotonicity "
           "steps used twice, two lemmas about two functions; used by rw, simp only, have := and omega",
           _lemmas, technique="have"),
    Family("tsplit", "train", True,
           "case splits on propositions over user structures (max/cheap by a field), a two-bound clamp, a list "
           "filter and a tree threshold (split inside an induction step), a dite definition (dif_pos/dif_neg) and "
           "a user predicate with a Decidable instance: by_cases, rcases Nat.lt_or_ge, Classical.em, split",
           _splits, technique="prop_cases"),
)
