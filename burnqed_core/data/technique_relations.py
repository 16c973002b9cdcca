"""Theorem families of the technique "predicates": user relations whose proofs name nothing the goal hides.

Like `burnqed_core.data.technique_families`, each family declares in its preamble an inductive *predicate*
(``... → Prop``) and asks for proofs by

* **rule induction** on a hypothesis ``h : Rel ...`` (``induction h``, then bullets, ``next x y ih =>`` or
  ``all_goals``), the induction hypothesis used in the step cases;
* **inversion**: ``cases h`` (then ``next _ h' => cases h'``), ``nomatch h``, ``rcases h with ...`` on a
  hypothesis whose indices are concrete, so that Lean discards the constructors that cannot apply
  (refutations ``¬ Rel 5 2``, "what must the list have been");
* **construction**: proving ``Rel ...`` with the ``constructor`` tactic (which applies the first constructor whose
  conclusion unifies with the goal: the preambles order their constructors so that this is the right one), side
  goals closed by ``omega``, ``assumption`` or ``exact h``.

The surface forms (family name: relation):

* ``tsub``: the sublist (embedding) relation on ``List Nat``: both empty, keep a common head, drop an element of
  the right list (``keep`` before ``drop``: greedy matching is always right);
* ``tle``: a user "less or equal" on ``Nat`` (``same : R n n``, ``up : R n m → R n (m + 1)``), and a relation
  "reachable by hops of ``k``" next to it: soundness and closure by rule induction, concrete facts by constructors,
  refutations and "what must it have been" by inversion.

The style rule, the point of these families: a prover sees only the proof state (hypotheses and goal as Lean
prints them), never the preamble, and every theorem's constructor and definition names are renamed
(`burnqed_core.data.renaming`). So no proof step names a constructor, inductive type or definition of the preamble
unless that name is printed in the state the step applies to: constructions use ``constructor`` (never
``apply R.up`` / ``exact R.same _``), rule induction and inversion use ``induction h`` / ``cases h`` without
``with | ctor ...`` alternatives, and binders are named by ``next``; ``simp only [f]`` appears only where ``f`` is
in the goal or a hypothesis. Lean core names (``Nat.le_refl``, ``List.length_cons``) are not renamed and are fine.
Constructors avoid names a proof also uses for something else (``left``, ``next``, ``nil``, ``cons``), since
renaming replaces every occurrence of a name.
"""

from __future__ import annotations

import random

from burnqed_core.data.families import Family, Instance, _distinct, _pick, namespaced

# ---------------------------------------------------------------------------
# tsub: the sublist relation on List Nat
# ---------------------------------------------------------------------------

SUB_DEFS = """\
inductive Subl : List Nat → List Nat → Prop where
  | base : Subl [] []
  | keep : (x : Nat) → (xs ys : List Nat) → Subl xs ys → Subl (x :: xs) (x :: ys)
  | drop : (y : Nat) → (xs ys : List Nat) → Subl xs ys → Subl xs (y :: ys)

def wsum (k : Nat) : List Nat → Nat
  | [] => 0
  | x :: xs => x + k + wsum k xs

def keepGe (k : Nat) : List Nat → List Nat
  | [] => []
  | x :: xs => if k ≤ x then x :: keepGe k xs else keepGe k xs"""


def _lit(xs: list[int]) -> str:
    return "[" + ", ".join(map(str, xs)) + "]"


def _sub_pred(rng: random.Random) -> list[Instance]:
    """Sublists: reflexivity and ``[]`` below everything by induction on the list, length/weight monotonicity,
    appends and transitivity by rule induction, filters by induction and ``split``, concrete sublists by
    ``constructor``, non-sublists and the shape of a sublist by inversion."""
    pre = namespaced("BqSubl", SUB_DEFS)
    out = [
        Instance("refl", "(xs : List Nat) : Subl xs xs",
                 ("induction xs", "· constructor", "· constructor\n  assumption"), pre),
        Instance("nil_sub", "(xs : List Nat) : Subl [] xs",
                 ("induction xs", "· constructor", "· constructor\n  assumption"), pre),
        Instance("len_le", "(xs ys : List Nat) (h : Subl xs ys) : xs.length ≤ ys.length",
                 ("induction h", "all_goals simp only [List.length_cons, List.length_nil] at *", "all_goals omega"),
                 pre),
        Instance("app", "(xs ys us vs : List Nat) (h₁ : Subl xs ys) (h₂ : Subl us vs) : Subl (xs ++ us) (ys ++ vs)",
                 ("induction h₁",
                  "· simpa using h₂",
                  "· next _ _ _ _ ih =>\n  simp only [List.cons_append]\n  constructor\n  exact ih",
                  "· next _ _ _ _ ih =>\n  simp only [List.cons_append]\n  constructor\n  exact ih"), pre),
        Instance("trans", "(xs ys zs : List Nat) (h₁ : Subl xs ys) (h₂ : Subl ys zs) : Subl xs zs",
                 ("induction h₂ generalizing xs",
                  "· exact h₁",
                  "· next _ _ _ _ ih =>\n  cases h₁\n  · constructor\n    exact ih _ ‹_›\n"
                  "  · constructor\n    exact ih _ ‹_›",
                  "· next _ _ _ _ ih =>\n  constructor\n  exact ih _ h₁"), pre),
    ]
    for k in _pick(rng, list(range(1, 10)), 2):
        out.append(Instance(f"wsum_{k}", f"(xs ys : List Nat) (h : Subl xs ys) : wsum {k} xs ≤ wsum {k} ys",
                            ("induction h", "all_goals simp only [wsum] at *", "all_goals omega"), pre))
    for k in _pick(rng, list(range(1, 10)), 2):
        out.append(Instance(f"keepGe_{k}", f"(xs : List Nat) : Subl (keepGe {k} xs) xs",
                            ("induction xs", "· simp only [keepGe]\n  constructor",
                             "· simp only [keepGe]\n  split\n  · constructor\n    assumption\n"
                             "  · constructor\n    assumption"), pre))
    for _ in range(3):
        size = rng.randint(4, 7)
        ys = [rng.randint(0, 9) for _ in range(size)]
        mask = [rng.random() < 0.5 for _ in ys]
        xs = [y for y, kept in zip(ys, mask, strict=True) if kept]
        out.append(Instance(f"lit_{'_'.join(map(str, ys))}_{''.join('1' if m else '0' for m in mask)}",
                            f": Subl {_lit(xs)} {_lit(ys)}",
                            ("constructor",) * (size + 1), pre))
    a, b = _pick(rng, list(range(0, 10)), 2)
    if rng.random() < 0.5:
        a, b = b, a
    out.append(Instance(f"not_swap_{a}_{b}", f": ¬ Subl [{a}, {b}] [{b}, {a}]",
                        ("intro h", "cases h", "rename_i h'", "cases h'", "all_goals next h'' => cases h''"), pre))
    c = rng.randint(0, 9)
    out.append(Instance(f"not_longer_{c}", f"(x y : Nat) : ¬ Subl [x, y] [{c}]",
                        ("intro h", "cases h", "all_goals next h' => cases h'"), pre))
    for a in _pick(rng, list(range(0, 10)), 2):
        out.append(Instance(f"shape_{a}", f"(xs : List Nat) (h : Subl xs [{a}]) : xs = [] ∨ xs = [{a}]",
                            ("cases h", "· next _ h' =>\n  cases h'\n  exact Or.inr rfl",
                             "· next h' =>\n  cases h'\n  exact Or.inl rfl"), pre))
    return _distinct(out)


# ---------------------------------------------------------------------------
# tle: a user "less or equal" on Nat, and hops of k
# ---------------------------------------------------------------------------

LQ_DEFS = """\
inductive Lq : Nat → Nat → Prop where
  | same : (n : Nat) → Lq n n
  | up : (n m : Nat) → Lq n m → Lq n (m + 1)"""


def _hop_defs(k: int) -> str:
    return f"""\
{LQ_DEFS}

inductive Hop : Nat → Nat → Prop where
  | stay : (n : Nat) → Hop n n
  | jump : (n m : Nat) → Hop n m → Hop n (m + {k})"""


def _le_pred(rng: random.Random) -> list[Instance]:
    """User ``≤``: soundness and closure under ``+ k`` by rule induction, completeness from ``Nat.le`` and
    transitivity, concrete facts by ``constructor``, refutations and predecessors by inversion; hops of ``k``:
    residues and ``Lq`` by rule induction."""
    pre = namespaced("BqLq", LQ_DEFS)
    out = [
        Instance("sound", "(a b : Nat) (h : Lq a b) : a ≤ b",
                 ("induction h", "· exact Nat.le_refl _", "· omega"), pre),
        Instance("of_le", "(a b : Nat) (h : a ≤ b) : Lq a b",
                 ("induction h", "· constructor", "· constructor\n  assumption"), pre),
        Instance("trans", "(a b c : Nat) (h₁ : Lq a b) (h₂ : Lq b c) : Lq a c",
                 ("induction h₂", "· exact h₁", "· next _ _ ih =>\n  constructor\n  exact ih"), pre),
        Instance("zero", "(n : Nat) (h : Lq n 0) : n = 0", ("cases h", "rfl"), pre),
        Instance("pred", "(n m : Nat) (h : Lq n (m + 1)) : n = m + 1 ∨ Lq n m",
                 ("cases h", "· exact Or.inl rfl", "· right\n  assumption"), pre),
    ]
    for k in _pick(rng, list(range(2, 10)), 2):
        out.append(Instance(f"sound_mul_{k}", f"(a b : Nat) (h : Lq a b) : {k} * a ≤ {k} * b",
                            ("induction h", "· exact Nat.le_refl _", "· omega"), pre))
    for k in _pick(rng, list(range(1, 10)), 2):
        out.append(Instance(f"shift_{k}", f"(a b : Nat) (h : Lq a b) : Lq (a + {k}) (b + {k})",
                            ("induction h", "· constructor",
                             f"· next m _ ih =>\n  rw [show m + 1 + {k} = (m + {k}) + 1 by omega]\n"
                             "  constructor\n  exact ih"), pre))
    for _ in range(3):
        a, d = rng.randint(0, 20), rng.randint(2, 6)
        out.append(Instance(f"lit_{a}_{a + d}", f": Lq {a} {a + d}", ("constructor",) * (d + 1), pre))
    for b in _pick(rng, [0, 1, 2], 2):
        a = b + rng.randint(1, 6)
        out.append(Instance(f"not_{a}_{b}", f": ¬ Lq {a} {b}",
                            ("intro h", "cases h", *("rename_i h", "cases h") * (b - 1),
                             *("next h => cases h",) * min(b, 1)), pre))
    k = rng.randint(2, 5)
    hop = namespaced(f"BqHop_{k}", _hop_defs(k))
    out += [
        Instance(f"hop_mod_{k}", f"(a b : Nat) (h : Hop a b) : b % {k} = a % {k}",
                 ("induction h", "· rfl", "· omega"), hop),
        Instance(f"hop_lq_{k}", "(a b : Nat) (h : Hop a b) : Lq a b",
                 ("induction h", "· constructor",
                  "· next _ _ ih =>\n" + "  constructor\n" * k + "  exact ih"), hop),
        Instance(f"hop_not_{k}", f": ¬ Hop 0 {k + 1}",
                 ("intro h", "cases h", "next h => cases h"), hop),
    ]
    return _distinct(out, per_preamble=True)


RELATION_FAMILIES: list[Family] = [
    Family("tsub", "train", True,
           "sublist relation on List Nat: induction on the list (reflexivity, [] below all, filters), rule induction "
           "(length, weights, appends, transitivity), constructor chains (concrete sublists), inversion "
           "(non-sublists, sublists of a singleton)", _sub_pred, technique="predicates"),
    Family("tle", "train", True,
           "user ≤ on Nat and hops of k: rule induction (soundness, shift, transitivity, residues), constructor "
           "chains (concrete facts, from Nat.le), inversion (refutations, zero, predecessor)",
           _le_pred, technique="predicates"),
]
