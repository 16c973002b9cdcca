"""Theorem families by proof technique: helper lemmas, case splits, accumulators, polymorphism, recursion.

Each family defines, in its preamble, functions (and sometimes data types) of
its own and asks for proofs by one technique, in several surface forms:

* ``thave``: a **helper lemma** stated with ``have name : stmt := by ...``,
  proved inside by ``induction``, ``cases`` or ``omega``, then used to finish
  (``rw [name]``, ``exact ... name ...``, ``have := name n`` and ``omega``,
  ``simp only [name]``). The goals talk about compositions of user functions
  (``quoK (mulK (mulK n))``, ``sumL (dup (dup xs))``, ``walk (n + m)``) that the
  main goal's own induction would not close: the lemma is the general fact
  about the inner or outer function;
* ``tcase``: **case splits on a proposition**: ``by_cases h : n ≤ K`` (and on
  ``x = y``, ``n % P = 0``, ``f n = 0``), ``rcases Nat.lt_or_ge a b with h | h``,
  ``Nat.lt_trichotomy``, ``Classical.em``, ``split`` on the ``if``/``match`` of
  a user definition, then ``simp [f, h]``/``rw [if_pos h]``/``omega`` per branch;
* ``tacc``: **accumulator** (tail-recursive) user functions (``sumAcc``,
  ``revAcc``, ``lenAcc``, a counter loop on ``Nat``, a two-accumulator loop,
  ``fibAcc``, ``maxAcc``) related to their plain versions: ``induction xs
  generalizing acc`` (one or two arguments generalised), statements that start
  with ``∀ acc`` and need ``intro`` inside each case and ``ih (acc + x)``, and
  corollaries at a literal accumulator that need the generalised lemma as a
  ``have``;
* ``tpoly``: **polymorphic** user containers over ``α : Type`` (an option-like
  ``Maybe α``, a pair ``Duo α β``, a binary tree ``Tr α``, a list wrapper
  ``Bag α``) with user ``map``/``size``/``sum``/``flip`` and a flattening
  ``toL t acc``: functor laws (map id, map composition), size preservation,
  ``toL`` commuting with ``List.map``, length and sum facts, flip laws, by
  ``cases``/``rcases``/``induction t`` with bullets (``generalizing acc`` for
  ``toL``), ``rename_i`` for the hypotheses a case names, and ``simp [defs, *]``:
  the user constructors (``leaf``, ``node``, renamed per theorem) are never
  printed before the split, so no step names them (2026-11-27);
* ``twf``: **well-founded and mutual recursion**: ``def``s with
  ``termination_by``/``decreasing_by`` (digit count, a triangular sum,
  division by repeated subtraction) proved by ``fun_induction`` (with and
  without named cases), by ``induction n using Nat.strongRecOn`` and by one
  unfolding step ``rw [f, if_neg h]``; ``mutual`` structural definitions
  (parity, residues mod 3) by induction that unfolds one function a step
  (``simp only [isEv]``, then ``simp only [isOd]`` once the goal prints it:
  no step names a function its state does not show, 2026-11-27).

Like `burnqed_core.data.families`, instances use fixed names and are renamed
per theorem by `burnqed_core.data.renaming`; the preambles use only the forms
renaming knows (``inductive`` with one ``|`` line per constructor, ``def``
lines, ``match`` alternatives after a ``def`` line), and names that a proof
also uses for something else are avoided (no user ``map``/``length``/``nil``:
``List.map``, ``xs.length`` and ``| nil =>`` must keep theirs). No preamble
``def`` calls a core ``List`` function (``++``, ``List.map``, ``List.length``)
in its body: the trusted checker cannot then realise the definition's
equation lemmas (``simp [f]``/``rw [f]`` fail with "enableRealizationsForConst
must be called"), so the lists are flattened and measured by user functions.
They are in the bundled corpus through `burnqed_core.data.catalogue.ALL_FAMILIES`.
"""

from __future__ import annotations

import random

from burnqed_core.data.families import Family, Instance, _distinct, _pick, namespaced

# ---------------------------------------------------------------------------
# thave: a helper lemma stated with `have`, proved, then used
# ---------------------------------------------------------------------------


def _walk_defs(a: int, b: int) -> str:
    return f"""\
def walk : Nat → Nat
  | 0 => {a}
  | n + 1 => walk n + {b}"""


def _walk_closed(a: int, b: int) -> str:
    """``hw : ∀ k, walk k = b * k + a``, by induction."""
    return (f"have hw : ∀ k, walk k = {b} * k + {a} := by\n  intro k\n  induction k with\n  | zero => rfl\n"
            "  | succ k ih => simp only [walk, ih]; omega")


def _quo_defs(k: int) -> str:
    zeros = "\n".join(f"  | {i} => 0" for i in range(k))
    return f"""\
def mulK : Nat → Nat
  | 0 => 0
  | n + 1 => mulK n + {k}

def quoK : Nat → Nat
{zeros}
  | n + {k} => quoK n + 1"""


QUO_LEMMA = ("have hq : ∀ m, quoK (mulK m) = m := by\n  intro m\n  induction m with\n  | zero => rfl\n"
             "  | succ j ih => simp only [mulK, quoK, ih]")


def _pos_defs(c: int) -> str:
    return f"""\
def pos : Nat → Nat
  | 0 => {c}
  | n + 1 => n + 1"""


DUP_DEFS = """\
def dup : List Nat → List Nat
  | [] => []
  | x :: xs => x :: x :: dup xs

def sumL : List Nat → Nat
  | [] => 0
  | x :: xs => x + sumL xs

def lenL : List Nat → Nat
  | [] => 0
  | _ :: xs => lenL xs + 1

def addAll (k : Nat) : List Nat → List Nat
  | [] => []
  | x :: xs => (x + k) :: addAll k xs"""


def _shunt_defs(c: int) -> str:
    return f"""\
def shunt : Nat → Nat → Nat
  | 0, m => m
  | n + 1, m => shunt n (m + {c})"""


LAMPS = ("dim", "mid", "bright", "blaze")


def _lamp_defs(s: int) -> str:
    ctors = "\n".join(f"  | {c}" for c in LAMPS[:s])
    nxt = "\n".join(f"  | .{LAMPS[i]} => .{LAMPS[(i + 1) % s]}" for i in range(s))
    return f"""\
inductive Lamp where
{ctors}

def nxt : Lamp → Lamp
{nxt}

def spin : Nat → Lamp → Lamp
  | 0, l => l
  | n + 1, l => spin n (nxt l)"""


def _have_lemma(rng: random.Random) -> list[Instance]:
    """Helper lemmas by induction/cases/omega, used by rw, exact, omega and simp only."""
    out = []
    (a1, b1), (a2, b2) = _pick(rng, [(a, b) for a in range(0, 8) for b in range(2, 8)], 2)
    pre = namespaced(f"BqHvWalk_{a1}_{b1}", _walk_defs(a1, b1))
    out.append(Instance(f"walk_add_{a1}_{b1}", f"(n m : Nat) : walk (n + m) + {a1} = walk n + walk m",
                        (_walk_closed(a1, b1), "rw [hw, hw, hw]", "omega"), pre))
    out.append(Instance(f"walk_mono_{a1}_{b1}", "(n m : Nat) (h : n ≤ m) : walk n ≤ walk m",
                        ("have hw : ∀ k, walk n ≤ walk (n + k) := by\n  intro k\n  induction k with\n"
                         "  | zero => simp\n"
                         "  | succ k ih => rw [← Nat.add_assoc]; simp only [walk]; omega",
                         "obtain ⟨k, rfl⟩ := Nat.exists_eq_add_of_le h", "exact hw k"), pre))
    out.append(Instance(f"walk_twice_{a1}_{b1}", f"(n : Nat) : walk (2 * n) + {a1} = 2 * walk n",
                        (_walk_closed(a1, b1), "rw [hw, hw]", "omega"), pre))
    pre = namespaced(f"BqHvWalk_{a2}_{b2}", _walk_defs(a2, b2))
    out.append(Instance(f"walk_twice_{a2}_{b2}", f"(n : Nat) : walk (2 * n) + {a2} = 2 * walk n",
                        (_walk_closed(a2, b2), "have h₁ := hw (2 * n)", "have h₂ := hw n", "omega"), pre))

    k1, k2 = rng.sample([2, 3, 4], 2)
    pre = namespaced(f"BqHvQuo_{k1}", _quo_defs(k1))
    out.append(Instance(f"quo_exact_{k1}", "(n : Nat) : quoK (mulK (mulK n)) = mulK n",
                        (QUO_LEMMA, "exact hq (mulK n)"), pre))
    out.append(Instance(f"quo_rw_{k1}", "(n : Nat) : mulK (quoK (mulK n)) = mulK n", (QUO_LEMMA, "rw [hq]"), pre))
    pre = namespaced(f"BqHvQuo_{k2}", _quo_defs(k2))
    out.append(Instance(f"quo_simp_{k2}", "(n m : Nat) : quoK (mulK n) + quoK (mulK m) = m + n",
                        (QUO_LEMMA, "simp only [hq]", "omega"), pre))
    out.append(Instance(f"quo_lt_{k2}", "(n m : Nat) (h : quoK (mulK n) < quoK (mulK m)) : n < m",
                        (QUO_LEMMA, "have h₁ := hq n", "have h₂ := hq m", "omega"), pre))

    c = rng.randint(2, 9)
    pre = namespaced(f"BqHvPos_{c}", _pos_defs(c))
    out.append(Instance(f"pos_mul_{c}", "(n m : Nat) : 0 < pos n * pos m",
                        ("have hp : ∀ k, 0 < pos k := by\n  intro k\n  cases k with\n  | zero => simp [pos]\n"
                         "  | succ j => simp [pos]", "exact Nat.mul_pos (hp n) (hp m)"), pre))
    out.append(Instance(f"pos_add_{c}", "(n m : Nat) : 2 ≤ pos n + pos m",
                        ("have hp : ∀ k, 1 ≤ pos k := by\n  intro k\n  cases k <;> simp [pos]",
                         "have h₁ := hp n", "have h₂ := hp m", "omega"), pre))
    out.append(Instance(f"pos_pos_{c}", "(n : Nat) : pos (pos n) = pos n",
                        ("have hp : ∀ k, pos k ≠ 0 := by\n  intro k\n  cases k <;> simp [pos]",
                         "obtain ⟨j, hj⟩ := Nat.exists_eq_succ_of_ne_zero (hp n)", "rw [hj]", "rfl"), pre))

    k = rng.randint(1, 9)
    pre = namespaced("BqHvDup", DUP_DEFS)
    out.append(Instance("dup_dup", "(xs : List Nat) : sumL (dup (dup xs)) = 4 * sumL xs",
                        ("have hd : ∀ ys, sumL (dup ys) = 2 * sumL ys := by\n  intro ys\n  induction ys with\n"
                         "  | nil => rfl\n  | cons y ys ih => simp only [dup, sumL, ih]; omega",
                         "rw [hd, hd]", "omega"), pre))
    out.append(Instance(f"len_addAll_dup_{k}", f"(xs : List Nat) : lenL (addAll {k} (dup xs)) = 2 * lenL xs",
                        (f"have h₁ : ∀ ys, lenL (addAll {k} ys) = lenL ys := by\n  intro ys\n"
                         "  induction ys <;> simp [addAll, lenL, *]",
                         "have h₂ : ∀ ys, lenL (dup ys) = 2 * lenL ys := by\n  intro ys\n"
                         "  induction ys <;> simp [dup, lenL, *] <;> omega",
                         "rw [h₁, h₂]"), pre))

    c = rng.randint(2, 9)
    pre = namespaced(f"BqHvShunt_{c}", _shunt_defs(c))
    out.append(Instance(f"shunt_zero_{c}", f"(n : Nat) : shunt n 0 = {c} * n",
                        (f"have hs : ∀ n m, shunt n m = {c} * n + m := by\n  intro n\n  induction n with\n"
                         "  | zero => simp [shunt]\n  | succ k ih => intro m; simp only [shunt, ih]; omega",
                         "have h := hs n 0", "omega"), pre))

    s = rng.choice([3, 4])
    pre = namespaced(f"BqHvLamp_{s}", _lamp_defs(s))
    cycle = "nxt (" * (s - 1) + "nxt l" + ")" * (s - 1)
    out.append(Instance(f"spin_period_{s}", f"(n : Nat) (l : Lamp) : spin ({s} * n) l = l",
                        (f"have hc : ∀ l, {cycle} = l := by\n  intro l\n  cases l <;> rfl",
                         "induction n generalizing l with\n| zero => rfl\n"
                         "| succ k ih => rw [Nat.mul_succ]; simp only [spin, hc, ih]"), pre))
    out.append(Instance(f"spin_succ_{s}", "(n : Nat) (l : Lamp) : spin (n + 1) l = nxt (spin n l)",
                        ("have hc : ∀ k l, spin k (nxt l) = nxt (spin k l) := by\n  intro k\n  induction k with\n"
                         "  | zero => intro l; rfl\n  | succ j ih => intro l; simp only [spin, ih]",
                         "simp only [spin]", "exact hc n l"), pre))
    return _distinct(out, per_preamble=True)


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
# tacc: accumulator functions and their plain versions
# ---------------------------------------------------------------------------

SUM_ACC_DEFS = """\
def sumAcc : List Nat → Nat → Nat
  | [], acc => acc
  | x :: xs, acc => sumAcc xs (acc + x)

def total : List Nat → Nat
  | [] => 0
  | x :: xs => x + total xs"""


def _sum_acc_k_defs(k: int) -> str:
    return f"""\
def sumAccK : List Nat → Nat → Nat
  | [], acc => acc
  | x :: xs, acc => sumAccK xs (acc + {k} * x)

def total : List Nat → Nat
  | [] => 0
  | x :: xs => x + total xs"""


REV_ACC_DEFS = """\
def revAcc : List Nat → List Nat → List Nat
  | [], acc => acc
  | x :: xs, acc => revAcc xs (x :: acc)

def lenAcc : List Nat → Nat → Nat
  | [], n => n
  | _ :: xs, n => lenAcc xs (n + 1)"""


def _loop_defs(k: int) -> str:
    return f"""\
def loop : Nat → Nat → Nat
  | 0, acc => acc
  | n + 1, acc => loop n (acc + {k})

def loop2 : Nat → Nat → Nat → Nat
  | 0, a, b => a + b
  | n + 1, a, b => loop2 n (a + 1) (b + {k})"""


FIB_ACC_DEFS = """\
def fib : Nat → Nat
  | 0 => 0
  | 1 => 1
  | n + 2 => fib n + fib (n + 1)

def fibAcc : Nat → Nat → Nat → Nat
  | 0, a, _ => a
  | n + 1, a, b => fibAcc n b (a + b)

def maxAcc : List Nat → Nat → Nat
  | [], m => m
  | x :: xs, m => maxAcc xs (max m x)"""


def _accumulators(rng: random.Random) -> list[Instance]:
    """``induction ... generalizing`` (one and two arguments), ``∀ acc`` goals with ``intro`` per case and
    ``ih (acc + x)``, and literal-accumulator corollaries through a generalised ``have``."""
    out = []
    pre = namespaced("BqAcSum", SUM_ACC_DEFS)
    out.append(Instance("sum_gen", "(xs : List Nat) (acc : Nat) : sumAcc xs acc = acc + total xs",
                        ("induction xs generalizing acc with\n| nil => simp [sumAcc, total]\n"
                         "| cons x xs ih => simp only [sumAcc, total, ih]; omega",), pre))
    out.append(Instance("sum_forall", "(xs : List Nat) : ∀ acc : Nat, sumAcc xs acc = total xs + acc",
                        ("induction xs with\n| nil => intro acc; simp [sumAcc, total]\n"
                         "| cons x xs ih =>\n  intro acc\n  rw [sumAcc, total, ih (acc + x)]\n  omega",), pre))
    c = rng.randint(1, 20)
    out.append(Instance(f"sum_lit_{c}", f"(xs : List Nat) : sumAcc xs {c} = total xs + {c}",
                        ("have h : ∀ ys acc, sumAcc ys acc = total ys + acc := by\n  intro ys\n"
                         "  induction ys <;> intro acc <;> simp [sumAcc, total, *] <;> omega",
                         f"exact h xs {c}"), pre))
    k = rng.randint(2, 9)
    pre = namespaced(f"BqAcSumK_{k}", _sum_acc_k_defs(k))
    out.append(Instance(f"sumk_gen_{k}", f"(xs : List Nat) (acc : Nat) : sumAccK xs acc = acc + {k} * total xs",
                        ("induction xs generalizing acc with\n| nil => simp [sumAccK, total]\n"
                         "| cons x xs ih => simp only [sumAccK, total, ih]; omega",), pre))

    pre = namespaced("BqAcRev", REV_ACC_DEFS)
    out.append(Instance("rev_gen", "(xs acc : List Nat) : revAcc xs acc = xs.reverse ++ acc",
                        ("induction xs generalizing acc with\n| nil => rfl\n| cons x xs ih => simp [revAcc, ih]",),
                        pre))
    out.append(Instance("rev_nil", "(xs : List Nat) : revAcc xs [] = xs.reverse",
                        ("have h : ∀ ys acc, revAcc ys acc = ys.reverse ++ acc := by\n  intro ys\n"
                         "  induction ys <;> intro acc <;> simp [revAcc, *]",
                         "simpa using h xs []"), pre))
    out.append(Instance("rev_length",
                        "(xs acc : List Nat) : (revAcc xs acc).length = xs.length + acc.length",
                        ("induction xs generalizing acc with\n| nil => simp [revAcc]\n"
                         "| cons x xs ih => simp only [revAcc, ih, List.length_cons]; omega",), pre))
    out.append(Instance("len_forall", "(xs : List Nat) : ∀ n : Nat, lenAcc xs n = xs.length + n",
                        ("induction xs with\n| nil => intro n; simp [lenAcc]\n"
                         "| cons x xs ih =>\n  intro n\n  rw [lenAcc, ih (n + 1), List.length_cons]\n  omega",), pre))

    k1, k2 = _pick(rng, list(range(2, 10)), 2)
    pre = namespaced(f"BqAcLoop_{k1}", _loop_defs(k1))
    out.append(Instance(f"loop_gen_{k1}", f"(n acc : Nat) : loop n acc = acc + {k1} * n",
                        ("induction n generalizing acc with\n| zero => simp [loop]\n"
                         "| succ n ih => simp only [loop, ih]; omega",), pre))
    out.append(Instance(f"loop2_gen_{k1}", f"(n a b : Nat) : loop2 n a b = a + b + {k1 + 1} * n",
                        ("induction n generalizing a b with\n| zero => simp [loop2]\n"
                         "| succ n ih => simp only [loop2, ih]; omega",), pre))
    pre = namespaced(f"BqAcLoop_{k2}", _loop_defs(k2))
    out.append(Instance(f"loop_forall_{k2}", f"(n : Nat) : ∀ acc : Nat, loop n acc = {k2} * n + acc",
                        ("induction n with\n| zero => intro acc; simp [loop]\n"
                         f"| succ n ih =>\n  intro acc\n  rw [loop, ih (acc + {k2})]\n  omega",), pre))
    c = rng.randint(1, 20)
    out.append(Instance(f"loop_lit_{k2}_{c}", f"(n : Nat) : loop n {c} = {k2} * n + {c}",
                        (f"have h : ∀ m acc, loop m acc = acc + {k2} * m := by\n  intro m\n"
                         "  induction m <;> intro acc <;> simp [loop, *] <;> omega",
                         "rw [h]", "omega"), pre))

    pre = namespaced("BqAcFib", FIB_ACC_DEFS)
    out.append(Instance("fib_gen", "(n k : Nat) : fibAcc n (fib k) (fib (k + 1)) = fib (n + k)",
                        ("have h : ∀ j, fib j + fib (j + 1) = fib (j + 2) := by simp [fib]",
                         "induction n generalizing k with\n| zero => simp [fibAcc]\n| succ n ih =>\n"
                         "  rw [fibAcc, h, ih (k + 1)]\n  congr 1\n  omega"), pre))
    out.append(Instance("max_ge", "(xs : List Nat) (m : Nat) : m ≤ maxAcc xs m",
                        ("induction xs generalizing m with\n| nil => simp [maxAcc]\n"
                         "| cons x xs ih =>\n  have h := ih (max m x)\n  simp only [maxAcc]\n  omega",), pre))
    out.append(Instance("max_mono", "(xs : List Nat) (m c : Nat) (h : m ≤ c) : maxAcc xs m ≤ maxAcc xs c",
                        ("induction xs generalizing m c with\n| nil => simpa [maxAcc] using h\n"
                         "| cons x xs ih =>\n  simp only [maxAcc]\n  exact ih _ _ (by omega)",), pre))
    return _distinct(out, per_preamble=True)


# ---------------------------------------------------------------------------
# tpoly: polymorphic user containers
# ---------------------------------------------------------------------------

MAYBE_DEFS = """\
inductive Maybe (A : Type) where
  | nothing : Maybe A
  | just : A → Maybe A

def mmap {A B : Type} (f : A → B) : Maybe A → Maybe B
  | .nothing => .nothing
  | .just a => .just (f a)

def mget {A : Type} (d : A) : Maybe A → A
  | .nothing => d
  | .just a => a

def msize {A : Type} : Maybe A → Nat
  | .nothing => 0
  | .just _ => 1"""

DUO_DEFS = """\
inductive Duo (A B : Type) where
  | mk : A → B → Duo A B

def dswap {A B : Type} : Duo A B → Duo B A
  | .mk a b => .mk b a

def dmap {A B C D : Type} (f : A → C) (g : B → D) : Duo A B → Duo C D
  | .mk a b => .mk (f a) (g b)

def dfst {A B : Type} : Duo A B → A
  | .mk a _ => a"""

TR_DEFS = """\
inductive Tr (A : Type) where
  | leaf : Tr A
  | node : Tr A → A → Tr A → Tr A

def tmap {A B : Type} (f : A → B) : Tr A → Tr B
  | .leaf => .leaf
  | .node l x r => .node (tmap f l) (f x) (tmap f r)

def tsize {A : Type} : Tr A → Nat
  | .leaf => 0
  | .node l _ r => tsize l + 1 + tsize r

def toL {A : Type} : Tr A → List A → List A
  | .leaf, acc => acc
  | .node l x r, acc => toL l (x :: toL r acc)

def tflip {A : Type} : Tr A → Tr A
  | .leaf => .leaf
  | .node l x r => .node (tflip r) x (tflip l)

def tsum {A : Type} (f : A → Nat) : Tr A → Nat
  | .leaf => 0
  | .node l x r => tsum f l + f x + tsum f r"""

BAG_DEFS = """\
inductive Bag (A : Type) where
  | bag : List A → Bag A

def lmap {A B : Type} (f : A → B) : List A → List B
  | [] => []
  | x :: xs => f x :: lmap f xs

def llen {A : Type} : List A → Nat
  | [] => 0
  | _ :: xs => llen xs + 1

def bmap {A B : Type} (f : A → B) : Bag A → Bag B
  | .bag xs => .bag (lmap f xs)

def bsize {A : Type} : Bag A → Nat
  | .bag xs => llen xs

def bput {A : Type} (a : A) : Bag A → Bag A
  | .bag xs => .bag (a :: xs)"""


BAG_INJ = ("cases b", "rename_i xs", "simp only [bmap, Bag.bag.injEq]")


def _tree_ind(step: str) -> tuple[str, ...]:
    """Induction on a user tree, the constructors left unnamed (the state prints none of them), the
    induction hypotheses used through ``*``."""
    return ("induction t", "· rfl", f"· {step}")


def _poly_fixed() -> list[Instance]:
    """The parameter-free polymorphic instances (a seeded sample of them is used)."""
    mb = namespaced("BqPoMaybe", MAYBE_DEFS)
    duo = namespaced("BqPoDuo", DUO_DEFS)
    tr = namespaced("BqPoTr", TR_DEFS)
    bag = namespaced("BqPoBag", BAG_DEFS)
    return [
        Instance("maybe_id", "(α : Type) (o : Maybe α) : mmap id o = o",
                 ("cases o", "all_goals rfl"), mb),
        Instance("maybe_comp",
                 "(α β γ : Type) (f : α → β) (g : β → γ) (o : Maybe α) : mmap g (mmap f o) = mmap (fun x => g (f x)) o",
                 ("cases o <;> rfl",), mb),
        Instance("maybe_get", "(α β : Type) (f : α → β) (d : α) (o : Maybe α) : f (mget d o) = mget (f d) (mmap f o)",
                 ("cases o <;> simp [mget, mmap]",), mb),
        Instance("maybe_size", "(α β : Type) (f : α → β) (o : Maybe α) : msize (mmap f o) = msize o",
                 ("cases o", "· rfl", "· rfl"), mb),
        Instance("duo_swap", "(α β : Type) (p : Duo α β) : dswap (dswap p) = p", ("cases p with\n| mk a b => rfl",),
                 duo),
        Instance("duo_map_swap",
                 "(α β γ : Type) (f : α → γ) (g : β → γ) (p : Duo α β) : dswap (dmap f g p) = dmap g f (dswap p)",
                 ("cases p", "rfl"), duo),
        Instance("duo_id", "(α β : Type) (p : Duo α β) : dmap id id p = p", ("rcases p with ⟨a, b⟩", "rfl"), duo),
        Instance("duo_fst", "(α β γ : Type) (f : α → γ) (p : Duo α β) : dfst (dmap f id p) = f (dfst p)",
                 ("rcases p with ⟨a, b⟩", "simp [dmap, dfst]"), duo),
        Instance("tr_id", "(α : Type) (t : Tr α) : tmap id t = t", _tree_ind("simp [tmap, *]"), tr),
        Instance("tr_comp",
                 "(α β γ : Type) (f : α → β) (g : β → γ) (t : Tr α) : tmap g (tmap f t) = tmap (fun x => g (f x)) t",
                 _tree_ind("simp [tmap, *]"), tr),
        Instance("tr_size_map", "(α β : Type) (f : α → β) (t : Tr α) : tsize (tmap f t) = tsize t",
                 ("induction t", "· rfl", "· simp [tmap, tsize, *]"), tr),
        Instance("tr_toL_map",
                 "(α β : Type) (f : α → β) (t : Tr α) (acc : List α) : "
                 "toL (tmap f t) (List.map f acc) = List.map f (toL t acc)",
                 ("induction t generalizing acc", "· rfl",
                  "· rename_i ihl ihr\n  simp only [tmap, toL]\n  rw [ihr, ← List.map_cons, ihl]"), tr),
        Instance("tr_length", "(α : Type) (t : Tr α) (acc : List α) : (toL t acc).length = tsize t + acc.length",
                 ("induction t generalizing acc", "· simp [toL, tsize]",
                  "· simp only [toL, tsize, List.length_cons, *]\n  omega"), tr),
        Instance("tr_flip_flip", "(α : Type) (t : Tr α) : tflip (tflip t) = t", _tree_ind("simp [tflip, *]"),
                 tr),
        Instance("tr_size_flip", "(α : Type) (t : Tr α) : tsize (tflip t) = tsize t",
                 _tree_ind("simp only [tflip, tsize, *]; omega"), tr),
        Instance("tr_map_flip", "(α β : Type) (f : α → β) (t : Tr α) : tmap f (tflip t) = tflip (tmap f t)",
                 _tree_ind("simp [tmap, tflip, *]"), tr),
        Instance("tr_sum_toL",
                 "(α : Type) (f : α → Nat) (t : Tr α) (acc : List α) : "
                 "(List.map f (toL t acc)).sum = tsum f t + (List.map f acc).sum",
                 ("induction t generalizing acc", "· simp [toL, tsum]",
                  "· simp only [toL, tsum, List.map_cons, List.sum_cons, *]\n  omega"), tr),
        Instance("tr_sum_flip", "(α : Type) (f : α → Nat) (t : Tr α) : tsum f (tflip t) = tsum f t",
                 _tree_ind("simp only [tflip, tsum, *]; omega"), tr),
        Instance("bag_size", "(α β : Type) (f : α → β) (b : Bag α) : bsize (bmap f b) = bsize b",
                 ("cases b", "rename_i xs", "simp only [bmap, bsize]", "induction xs <;> simp [lmap, llen, *]"), bag),
        Instance("bag_id", "(α : Type) (b : Bag α) : bmap id b = b",
                 (*BAG_INJ, "induction xs <;> simp [lmap, *]"), bag),
        Instance("bag_comp",
                 "(α β γ : Type) (f : α → β) (g : β → γ) (b : Bag α) : bmap g (bmap f b) = bmap (fun x => g (f x)) b",
                 (*BAG_INJ, "induction xs <;> simp [lmap, *]"), bag),
        Instance("bag_put", "(α β : Type) (f : α → β) (a : α) (b : Bag α) : bmap f (bput a b) = bput (f a) (bmap f b)",
                 ("cases b", "rfl"), bag),
        Instance("bag_put_size", "(α : Type) (a : α) (b : Bag α) : bsize (bput a b) = bsize b + 1",
                 ("cases b", "simp [bput, bsize, llen]"), bag),
    ]


# Statements `rfl` closes alone (a value of a one-constructor type is that constructor applied to its parts,
# and these maps unfold to it): measured with the embedded Lean (automation.json), left out of the sample.
_DEFINITIONAL = frozenset({"duo_swap", "duo_map_swap", "duo_id", "duo_fst", "bag_put", "bag_put_size"})


def _polymorphic(rng: random.Random) -> list[Instance]:
    """Functor laws, size and ``toL`` facts for polymorphic user containers: a seeded sample of the
    parameter-free statements and a few over ``Nat`` with drawn constants."""
    fixed = [i for i in _poly_fixed() if i.key not in _DEFINITIONAL]
    out = [fixed[i] for i in sorted(rng.sample(range(len(fixed)), 10))]
    mb = namespaced("BqPoMaybe", MAYBE_DEFS)
    j, k = rng.randint(1, 9), rng.randint(1, 9)
    out.append(Instance(f"maybe_add_{j}_{k}",
                        f"(o : Maybe Nat) : mmap (fun x => x + {j}) (mmap (fun x => x + {k}) o) = "
                        f"mmap (fun x => x + {j + k}) o",
                        ("cases o", "· rfl", "· simp [mmap]"), mb))
    tr = namespaced("BqPoTr", TR_DEFS)
    k1, k2, k3 = rng.randint(2, 9), rng.randint(1, 9), rng.randint(2, 9)
    out.append(Instance(f"tr_const_{k1}", f"(t : Tr Nat) : tsum (fun _ => {k1}) t = {k1} * tsize t",
                        _tree_ind("simp only [tsum, tsize, *]; omega"), tr))
    out.append(Instance(f"tr_shift_{k2}",
                        f"(t : Tr Nat) : tsum id (tmap (fun x => x + {k2}) t) = tsum id t + {k2} * tsize t",
                        _tree_ind("simp only [tsum, tmap, tsize, id, *]; omega"), tr))
    out.append(Instance(f"tr_scale_{k3}", f"(t : Tr Nat) : tsum (fun x => {k3} * x) t = {k3} * tsum id t",
                        _tree_ind("simp only [tsum, id, *]; omega"), tr))
    return _distinct(out, per_preamble=True)


# ---------------------------------------------------------------------------
# twf: well-founded and mutual recursion
# ---------------------------------------------------------------------------


def _digs_defs(b: int) -> str:
    return f"""\
def digs (n : Nat) : Nat :=
  if n < {b} then 1 else digs (n / {b}) + 1
termination_by n
decreasing_by omega"""


SUM_DOWN_DEFS = """\
def sumDown (n : Nat) : Nat :=
  if h : n = 0 then 0 else n + sumDown (n - 1)
termination_by n
decreasing_by omega"""


STEPS_DEFS = """\
def steps (b a : Nat) : Nat :=
  if a < b ∨ b = 0 then 0 else steps b (a - b) + 1
termination_by a
decreasing_by omega"""

PARITY_DEFS = """\
mutual
def isEv : Nat → Bool
  | 0 => true
  | n + 1 => isOd n
def isOd : Nat → Bool
  | 0 => false
  | n + 1 => isEv n
end"""

MOD3_DEFS = """\
mutual
def r0 : Nat → Bool
  | 0 => true
  | n + 1 => r2 n
def r1 : Nat → Bool
  | 0 => false
  | n + 1 => r0 n
def r2 : Nat → Bool
  | 0 => false
  | n + 1 => r1 n
end"""


def _mod3_proof(i: int) -> tuple[str, ...]:
    """``r{i} (3 * (k + 1) + j)`` unfolds in three steps (``r{i}``, then ``r{i - 1}``, ``r{i - 2}`` mod 3: each
    step names only the function the goal shows) to the induction hypothesis ``r{i} (3 * k + j)``."""
    return ("induction n", "· rfl", "rename_i k ih", "rw [Nat.mul_succ]",
            *(f"simp only [r{(i - d) % 3}]" for d in range(3)), "exact ih")


def _wf_mutual(rng: random.Random) -> list[Instance]:
    """Well-founded recursion (``termination_by``) proved by ``fun_induction`` and ``Nat.strongRecOn``, one
    unfolding step by ``rw [f, if_neg h]``, and mutual structural recursion by induction over both functions."""
    out = []
    b = rng.randint(2, 9)
    pre = namespaced(f"BqWfDigs_{b}", _digs_defs(b))
    out.append(Instance(f"digs_pos_{b}", "(n : Nat) : 1 ≤ digs n", ("fun_induction digs n <;> omega",), pre))
    out.append(Instance(f"digs_le_{b}", "(n : Nat) : digs n ≤ n + 1",
                        ("induction n using Nat.strongRecOn with\n| ind n ih =>\n  rw [digs]\n  split\n  · omega\n"
                         f"  · have := ih (n / {b}) (by omega); omega",), pre))
    out.append(Instance(f"digs_le_self_{b}", "(n : Nat) (h : 0 < n) : digs n ≤ n",
                        ("fun_induction digs n with\n| case1 n h' => omega\n"
                         "| case2 n h' ih => have := ih (by omega); omega",), pre))
    out.append(Instance(f"digs_step_{b}", f"(n : Nat) : digs ({b} * n + {b}) = digs (n + 1) + 1",
                        (f"have h : ¬ {b} * n + {b} < {b} := by omega", "rw [digs, if_neg h]", "congr 2", "omega"),
                        pre))
    out.append(Instance(f"digs_small_{b}", f"(n : Nat) (h : n < {b * b}) : digs n ≤ 2",
                        ("rw [digs]", "split", "· omega",
                         f"· have h₂ : n / {b} < {b} := by omega\n  rw [digs, if_pos h₂]\n  omega"), pre))

    pre = namespaced("BqWfSum", SUM_DOWN_DEFS)
    out.append(Instance("sum_ge", "(n : Nat) : n ≤ sumDown n", ("fun_induction sumDown n <;> omega",), pre))
    out.append(Instance("sum_closed", "(n : Nat) : 2 * sumDown n = n * (n + 1)",
                        ("fun_induction sumDown n", "case case1 => simp",
                         "case case2 n h ih =>\n  rw [Nat.mul_add, ih]\n  cases n with\n  | zero => omega\n"
                         "  | succ m => simp [Nat.add_mul, Nat.mul_add]; omega"), pre))

    k = rng.randint(2, 9)
    pre = namespaced("BqWfSteps", STEPS_DEFS)
    out.append(Instance(f"steps_div_{k}", f"(a : Nat) : steps {k} a = a / {k}",
                        (f"fun_induction steps {k} a with\n| case1 a h => omega\n| case2 a h ih => omega",), pre))
    out.append(Instance(f"steps_mul_{k}", f"(a : Nat) : steps {k} a * {k} ≤ a",
                        (f"fun_induction steps {k} a <;> omega",), pre))
    out.append(Instance(f"steps_add_{k}", f"(a : Nat) : steps {k} (a + {k}) = steps {k} a + 1",
                        (f"have h : ¬ (a + {k} < {k} ∨ {k} = 0) := by omega", "rw [steps, if_neg h]", "simp"), pre))

    pre = namespaced("BqWfParity", PARITY_DEFS)
    out.append(Instance("ev_not_od", "(n : Nat) : isEv n = !isOd n",
                        ("induction n with\n| zero => rfl\n| succ k ih => simp [isEv, isOd, ih]",), pre))
    out.append(Instance("ev_double", "(n : Nat) : isEv (2 * n) = true",
                        ("induction n", "· rfl", "rename_i k ih", "rw [Nat.mul_succ]", "simp only [isEv]",
                         "simp only [isOd]", "exact ih"), pre))
    out.append(Instance("od_double", "(n : Nat) : isOd (2 * n + 1) = true",
                        ("induction n", "· rfl", "rename_i k ih", "rw [Nat.mul_succ]", "simp only [isOd]",
                         "simp only [isEv]", "exact ih"), pre))

    pre = namespaced("BqWfMod3", MOD3_DEFS)
    for i, j in _pick(rng, [(i, j) for i in range(3) for j in range(3)], 3):
        out.append(Instance(f"mod3_{i}_{j}", f"(n : Nat) : r{i} (3 * n + {j}) = {'true' if i == j else 'false'}",
                            _mod3_proof(i), pre))
    return _distinct(out, per_preamble=True)


REASONING_FAMILIES: list[Family] = [
    Family("thave", "train", True,
           "helper lemmas stated with have (proved by induction, cases or omega) and used by rw, exact, omega or "
           "simp only: compositions of user functions on Nat and List Nat, an enum cycled by an iterator",
           _have_lemma, technique="have"),
    Family("tcase", "train", True,
           "case splits on propositions: by_cases (≤, =, %, f n = 0), rcases Nat.lt_or_ge/lt_trichotomy, "
           "Classical.em, split on the if/match of user definitions, simp/rw [if_pos]/omega per branch",
           _prop_cases, technique="prop_cases"),
    Family("tacc", "train", True,
           "accumulator functions (sum, reverse, length, counter loops, fib, max) against plain versions: "
           "induction generalizing one or two arguments, ∀-goals with intro and ih (acc + x), literal "
           "corollaries through a have",
           _accumulators, technique="generalizing"),
    Family("tpoly", "train", True,
           "polymorphic user containers over α : Type (option-like, pair, binary tree, list wrapper): functor "
           "laws, size preservation, flattening commuting with map, length/sum/flip facts, by cases/rcases/"
           "induction (generalizing acc) and simp [defs, *]",
           _polymorphic, technique="induction"),
    Family("twf", "train", True,
           "well-founded recursion (termination_by) by fun_induction, Nat.strongRecOn and one-step unfolding "
           "with rw [f, if_neg h]; mutual recursion (parity, residues mod 3) by induction",
           _wf_mutual, technique="generalizing"),
]
