"""The technique "generalizing": induction that generalises a second argument or an accumulator.

Each family defines, in its preamble, functions (and sometimes data types) of
its own and asks for proofs by one technique, in several surface forms:

* ``tacc``: **accumulator** (tail-recursive) user functions (``sumAcc``,
  ``revAcc``, ``lenAcc``, a counter loop on ``Nat``, a two-accumulator loop,
  ``fibAcc``, ``maxAcc``) related to their plain versions: ``induction xs
  generalizing acc`` (one or two arguments generalised), statements that start
  with ``∀ acc`` and need ``intro`` inside each case and ``ih (acc + x)``, and
  corollaries at a literal accumulator that need the generalised lemma as a
  ``have``;
* ``twf``: **well-founded and mutual recursion**: ``def``s with
  ``termination_by``/``decreasing_by`` (digit count, a triangular sum,
  division by repeated subtraction) proved by ``fun_induction`` (with and
  without named cases), by ``induction n using Nat.strongRecOn`` and by one
  unfolding step ``rw [f, if_neg h]``; ``mutual`` structural definitions
  (parity, residues mod 3) by induction that unfolds one function a step
  (``simp only [isEv]``, then ``simp only [isOd]`` once the goal prints it:
  no step names a function its state does not show, 2026-11-27);
* ``tgen``: an **accumulator or a second argument generalised** before the induction, on a user binary tree
  ``Twig`` (a total and a node count kept in an accumulator, a flattening into an accumulator list, a running
  maximum threaded through both subtrees, where each subtree's induction hypothesis is used at an accumulator the
  other built), on ``Nat`` loops whose accumulator is multiplied (``acc * k``, a factorial loop) or updated under
  a condition (a count of the list elements above a threshold), and on a countdown that conses onto its list
  accumulator. The same facts come in three statement forms: ``induction t generalizing acc`` on a statement
  with a free accumulator; a ``∀ acc`` statement proved by ``induction`` and ``intro`` inside each case (the
  induction hypothesis applied at the case's new accumulator); and a corollary at a literal accumulator
  (``totA t 0``, ``powA n 1``) that needs the generalised fact as a ``have`` first.

How every technique's preamble, names and proofs are written (renaming, what the checker can unfold,
what a proof may name) is said once in `burnqed_core.data.synthetic.techniques`.

The style rule of `burnqed_core.data.synthetic.techniques.predicates` holds: a prover sees only the proof state, and
every name of the preamble is renamed per theorem, so no step names a constructor, inductive type or definition that
the state it applies to does not print: inductions are ``induction t`` with bullets and ``rename_i`` (never ``with |
knot l x r``), and a ``have`` states its lemma only with functions the goal shows. Lean core names
(``Nat.pow_succ``, ``List.length_cons``) are fine. No preamble definition calls a core ``List`` function (the
trusted checker could not unfold it).
"""

from __future__ import annotations

import random

from burnqed_core.data.synthetic.families import Family, Instance, _distinct, _pick, namespaced

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


GENERALIZING_FAMILIES: tuple[Family, ...] = (
    Family("tacc", "train", True,
           "accumulator functions (sum, reverse, length, counter loops, fib, max) against plain versions: "
           "induction generalizing one or two arguments, ∀-goals with intro and ih (acc + x), literal "
           "corollaries through a have",
           _accumulators, technique="generalizing"),
    Family("twf", "train", True,
           "well-founded recursion (termination_by) by fun_induction, Nat.strongRecOn and one-step unfolding "
           "with rw [f, if_neg h]; mutual recursion (parity, residues mod 3) by induction",
           _wf_mutual, technique="generalizing"),
    Family("tgen", "train", True,
           "accumulators and generalised arguments on a user binary tree (total, node count, flattening into an "
           "accumulator list, running maximum), multiplied and conditional Nat/List accumulators (powers, "
           "factorial, counts above a threshold), a countdown onto a list: induction generalizing, ∀-goals with "
           "intro per case, literal-accumulator corollaries through a have",
           _generalised, technique="generalizing"),
)
