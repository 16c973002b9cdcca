"""Theorem families organised by proof technique: Prop-valued user inductive predicates.

Each family defines, in its preamble, an inductive *predicate* (``... → Prop``)
and asks for proofs by one of three techniques, in several surface forms:

* **rule induction** on a hypothesis ``h : Pred ...`` (``induction h with``
  and one alternative per constructor, or ``induction h`` then ``case`` /
  ``all_goals``), the induction hypothesis used in the step cases;
* **inversion**: ``cases h`` / ``cases h with`` / ``rcases h with ...`` on a
  hypothesis whose indices are concrete, so that Lean discards the
  constructors that cannot apply (refutations ``¬ Pred 7``, "what must the
  arguments have been");
* **construction**: proving ``Pred ...`` by chaining constructors
  (``apply Pred.step``, ``exact Pred.step _ (Pred.base ...)``, ``constructor``,
  ``refine ... ?_``), arithmetic side goals closed by ``omega``.

The surface forms (family name: predicate):

* ``tmul``: an evenness-like predicate on ``Nat`` (``a``, then steps of ``k``);
* ``tsort``: sortedness of a ``List Nat`` (three constructors);
* ``treach``: reachability (reflexive-transitive closure) of east/north moves
  on a user type of grid points;
* ``tred``: small-step reduction of a tiny expression language, and its
  multi-step closure;
* ``tocc``: occurrence of a number in a user binary tree;
* ``telem``: polymorphic predicates over ``α : Type``: list membership and
  "every element satisfies ``P``".

The automation (``grind``, ``simp``) neither applies the constructors of a
user predicate nor does rule induction by itself, so the families are
``hard``. Like `burnqed_core.data.families`, instances use fixed names and
are renamed per theorem by `burnqed_core.data.renaming`; constructors of the
predicates avoid names a proof also uses for something else (``left``,
``next``, ``nil``), since renaming replaces every occurrence of a name.
They are in the bundled corpus through `burnqed_core.data.catalogue.ALL_FAMILIES`.
"""

from __future__ import annotations

import random

from burnqed_core.data.families import Family, Instance, _distinct, _pick, namespaced

# ---------------------------------------------------------------------------
# tmul: an evenness-like predicate on Nat
# ---------------------------------------------------------------------------


def _mul_defs(a: int, k: int) -> str:
    return f"""\
inductive Mk : Nat → Prop where
  | base : Mk {a}
  | step : (n : Nat) → Mk n → Mk (n + {k})"""


def _mul_pred(rng: random.Random) -> list[Instance]:
    """``Mk a``, ``Mk n → Mk (n + k)``: residues and bounds by rule induction,
    members by constructors, non-members and predecessors by inversion."""
    out = []
    grid = [(a, k) for k in range(2, 8) for a in range(0, k)]
    pairs = _pick(rng, [p for p in grid if p[0] > 0], 3) + _pick(rng, [p for p in grid if p[0] == 0], 1)
    for a, k in pairs:
        pre = namespaced(f"BqMk_{a}_{k}", _mul_defs(a, k))
        tag = f"{a}_{k}"
        out.append(Instance(f"mod_{tag}", f"(n : Nat) : Mk n → n % {k} = {a}",
                            ("intro h", "induction h with\n| base => rfl\n| step m _ ih => omega"), pre))
        if a > 0:  # ``0 ≤ n`` would need no induction
            out.append(Instance(f"ge_{tag}", f"(n : Nat) (h : Mk n) : {a} ≤ n",
                                ("induction h", "· exact Nat.le_refl _", "· omega"), pre))
        j = rng.randint(2, 4)
        out.append(Instance(f"hit_{tag}_{j}", f": Mk {a + j * k}",
                            ("apply Mk.step",) * j + ("exact Mk.base",), pre))
        b = rng.choice([x for x in range(0, k) if x != a])
        out.append(Instance(f"miss_{tag}_{b}", f": ¬ Mk {b}", ("intro h", "cases h"), pre))
        c = rng.choice([x for x in range(0, k) if x != a])
        out.append(Instance(f"miss2_{tag}_{c}", f": ¬ Mk {k + c}",
                            ("intro h", "cases h with\n| step _ h' => cases h'"), pre))
        out.append(Instance(f"pred_{tag}", f"(n : Nat) (h : Mk (n + {k})) : Mk n",
                            ("cases h with\n| step _ h' => exact h'",), pre))
        if a == 0:
            out.append(Instance(f"add_{tag}", "(n m : Nat) (h₁ : Mk n) (h₂ : Mk m) : Mk (n + m)",
                                ("induction h₂ with\n| base => simpa using h₁\n"
                                 "| step j _ ih => rw [← Nat.add_assoc]; exact Mk.step _ ih",), pre))
    return _distinct(out, per_preamble=True)


# ---------------------------------------------------------------------------
# tsort: sorted lists of naturals
# ---------------------------------------------------------------------------

SORTED_DEFS = """\
inductive Sorted : List Nat → Prop where
  | empty : Sorted []
  | single : (x : Nat) → Sorted [x]
  | link : (x y : Nat) → (ys : List Nat) → x ≤ y → Sorted (y :: ys) → Sorted (x :: y :: ys)

def addEach (k : Nat) : List Nat → List Nat
  | [] => []
  | x :: xs => (x + k) :: addEach k xs

def scale (k : Nat) : List Nat → List Nat
  | [] => []
  | x :: xs => (k * x) :: scale k xs"""


def _lit(xs: list[int]) -> str:
    return "[" + ", ".join(map(str, xs)) + "]"


def _sorted_pred(rng: random.Random) -> list[Instance]:
    """Sortedness: concrete lists by constructors, unsorted ones and tails by
    inversion, preservation under ``addEach``/``scale`` by rule induction."""
    pre = namespaced("BqSorted", SORTED_DEFS)
    out = [
        Instance("tail", "(x : Nat) (xs : List Nat) : Sorted (x :: xs) → Sorted xs",
                 ("intro h", "cases h with\n| single => exact Sorted.empty\n| link _ _ _ _ h' => exact h'"), pre),
        Instance("head_le", "(x y : Nat) (ys : List Nat) (h : Sorted (x :: y :: ys)) : x ≤ y",
                 ("cases h with\n| link _ _ _ hle _ => exact hle",), pre),
    ]
    for n in range(3):
        size = rng.randint(3, 5 if n % 2 == 0 else 4)  # at most 8 steps
        xs = sorted(rng.randint(0, 20) for _ in range(size))
        if n % 2 == 0:
            steps = ("refine Sorted.link _ _ _ (by omega) ?_",) * (size - 1) + ("exact Sorted.single _",)
        else:
            steps = ("constructor", "omega") * (size - 1) + ("constructor",)
        out.append(Instance(f"lit_{'_'.join(map(str, xs))}", f": Sorted {_lit(xs)}", steps, pre))
    for pos in (0, 1):
        xs = sorted(rng.sample(range(0, 20), 3))
        xs[pos], xs[pos + 1] = xs[pos + 1], xs[pos]
        inner = ("| link _ _ _ hle _ => omega" if pos == 0 else
                 "| link _ _ _ _ h' =>\n  cases h' with\n  | link _ _ _ hle _ => omega")
        out.append(Instance(f"unsorted_{'_'.join(map(str, xs))}", f": ¬ Sorted {_lit(xs)}",
                            ("intro h", "cases h with\n" + inner), pre))
    for c in _pick(rng, list(range(0, 10)), 2):
        out.append(Instance(f"cons_{c}", f"(x : Nat) (xs : List Nat) (hx : {c} ≤ x) (h : Sorted (x :: xs)) : "
                                         f"Sorted ({c} :: x :: xs)",
                            ("apply Sorted.link", "· exact hx", "· exact h"), pre))
    for k in _pick(rng, list(range(1, 10)), 2):
        out.append(Instance(f"addEach_{k}", f"(xs : List Nat) (h : Sorted xs) : Sorted (addEach {k} xs)",
                            ("induction h", "case empty => exact Sorted.empty",
                             "case single x => exact Sorted.single _",
                             "case link x y ys hle _ ih =>\n  simp only [addEach] at ih ⊢\n"
                             "  exact Sorted.link _ _ _ (by omega) ih"), pre))
        out.append(Instance(f"scale_{k}", f"(xs : List Nat) (h : Sorted xs) : Sorted (scale {k} xs)",
                            ("induction h with\n| empty => exact Sorted.empty\n| single x => exact Sorted.single _\n"
                             "| link x y ys hle _ ih =>\n  simp only [scale] at ih ⊢\n"
                             "  exact Sorted.link _ _ _ (by omega) ih",), pre))
    return _distinct(out, per_preamble=True)


# ---------------------------------------------------------------------------
# treach: reachability on a grid
# ---------------------------------------------------------------------------

REACH_DEFS = """\
inductive Pt where
  | mk : Nat → Nat → Pt

def px : Pt → Nat
  | .mk x _ => x

def py : Pt → Nat
  | .mk _ y => y

inductive Move : Pt → Pt → Prop where
  | east : (x y : Nat) → Move (Pt.mk x y) (Pt.mk (x + 1) y)
  | north : (x y : Nat) → Move (Pt.mk x y) (Pt.mk x (y + 1))

inductive Reach : Pt → Pt → Prop where
  | base : (p : Pt) → Reach p p
  | hop : (p q r : Pt) → Move p q → Reach q r → Reach p r"""


def _reach_pred(rng: random.Random) -> list[Instance]:
    """Reflexive-transitive closure of grid moves: paths by constructors,
    monotone weights and transitivity by rule induction, moves by inversion."""
    pre = namespaced("BqReach", REACH_DEFS)
    out = [
        Instance("trans", "(p q r : Pt) (h₁ : Reach p q) (h₂ : Reach q r) : Reach p r",
                 ("induction h₁ with\n| base => exact h₂\n| hop u v w hm _ ih => exact Reach.hop _ _ _ hm (ih h₂)",),
                 pre),
        Instance("of_move", "(p q : Pt) (hm : Move p q) : Reach p q",
                 ("apply Reach.hop _ _ _ hm", "exact Reach.base _"), pre),
    ]
    for a, b in _pick(rng, [(a, b) for a in range(0, 4) for b in range(0, 4) if a + b > 0], 3):
        out.append(Instance(f"mono_{a}_{b}",
                            f"(p q : Pt) (h : Reach p q) : {a} * px p + {b} * py p ≤ {a} * px q + {b} * py q",
                            ("induction h with\n| base => exact Nat.le_refl _\n"
                             "| hop u v w hm _ ih => cases hm <;> simp only [px, py] at * <;> omega",), pre))
    for _ in range(3):
        x0, y0 = rng.randint(0, 5), rng.randint(0, 5)
        moves = [rng.choice("EN") for _ in range(rng.randint(2, 4))]
        x1, y1 = x0 + moves.count("E"), y0 + moves.count("N")
        steps = tuple(f"apply Reach.hop _ _ _ (Move.{'east' if m == 'E' else 'north'} _ _)" for m in moves)
        out.append(Instance(f"path_{x0}_{y0}_{''.join(moves)}", f": Reach (Pt.mk {x0} {y0}) (Pt.mk {x1} {y1})",
                            (*steps, "exact Reach.base _"), pre))
    for _ in range(2):
        x, y = rng.randint(0, 9), rng.randint(0, 9)
        out.append(Instance(f"move_sum_{x}_{y}", f"(q : Pt) (h : Move (Pt.mk {x} {y}) q) : px q + py q = {x + y + 1}",
                            ("cases h", "all_goals simp [px, py]"), pre))
    x, y = rng.randint(2, 6), rng.randint(0, 4)
    dx, dy = rng.randint(1, x), rng.randint(1, 3)
    out.append(Instance(f"unreach_{x}_{y}", f": ¬ Reach (Pt.mk {x} {y}) (Pt.mk {x - dx} {y + dy})",
                        ("intro h",
                         "have hm : ∀ p q, Reach p q → px p ≤ px q := by\n  intro p q h\n  induction h with\n"
                         "  | base => exact Nat.le_refl _\n"
                         "  | hop u v w hm _ ih => cases hm <;> simp only [px] at * <;> omega",
                         "have hx := hm _ _ h", "simp [px] at hx"), pre))
    return _distinct(out, per_preamble=True)


# ---------------------------------------------------------------------------
# tred: small-step reduction of a tiny expression language
# ---------------------------------------------------------------------------

RED_DEFS = """\
inductive Tm where
  | lit : Nat → Tm
  | plus : Tm → Tm → Tm

def value : Tm → Nat
  | .lit n => n
  | .plus a b => value a + value b

def ops : Tm → Nat
  | .lit _ => 0
  | .plus a b => ops a + ops b + 1

inductive Red : Tm → Tm → Prop where
  | fold : (a b : Nat) → Red (Tm.plus (Tm.lit a) (Tm.lit b)) (Tm.lit (a + b))
  | inL : (t t' u : Tm) → Red t t' → Red (Tm.plus t u) (Tm.plus t' u)
  | inR : (t u u' : Tm) → Red u u' → Red (Tm.plus t u) (Tm.plus t u')

inductive Reds : Tm → Tm → Prop where
  | refl : (t : Tm) → Reds t t
  | more : (t u v : Tm) → Red t u → Reds u v → Reds t v"""


def _l(n: int) -> str:
    return f"(Tm.lit {n})"


def _p(a: str, b: str) -> str:
    return f"(Tm.plus {a} {b})"


def _red_pred(rng: random.Random) -> list[Instance]:
    """Reduction steps: preservation by rule induction, concrete steps and
    evaluations by constructors, stuck and determined terms by inversion."""
    pre = namespaced("BqRed", RED_DEFS)
    out = [
        Instance("value_pres", "(t u : Tm) (h : Red t u) : value u = value t",
                 ("induction h with\n| fold a b => rfl\n| inL t t' u _ ih => simp only [value, ih]\n"
                  "| inR t u u' _ ih => simp only [value, ih]",), pre),
        Instance("ops_dec", "(t u : Tm) (h : Red t u) : ops u + 1 = ops t",
                 ("induction h", "all_goals simp only [ops] at *", "all_goals omega"), pre),
        Instance("reds_value", "(t u : Tm) (h : Reds t u) : value u = value t",
                 ("have hr : ∀ a b, Red a b → value b = value a := by\n  intro a b h\n"
                  "  induction h <;> simp_all [value]",
                  "induction h with\n| refl => rfl\n| more a b c hab _ ih => rw [ih, hr a b hab]"), pre),
        Instance("lit_stuck", "(n : Nat) (t : Tm) : ¬ Red (Tm.lit n) t", ("intro h", "cases h"), pre),
    ]
    for _ in range(3):
        a, b, c, d = (rng.randint(0, 9) for _ in range(4))
        shape = rng.choice(["L", "R", "RL"])
        if shape == "L":
            src, dst = _p(_p(_l(a), _l(b)), _l(c)), _p(_l(a + b), _l(c))
            steps: tuple[str, ...] = ("apply Red.inL", "exact Red.fold _ _")
        elif shape == "R":
            src, dst = _p(_l(a), _p(_l(b), _l(c))), _p(_l(a), _l(b + c))
            steps = ("apply Red.inR", "exact Red.fold _ _")
        else:
            src, dst = _p(_l(a), _p(_p(_l(b), _l(c)), _l(d))), _p(_l(a), _p(_l(b + c), _l(d)))
            steps = ("apply Red.inR", "apply Red.inL", "exact Red.fold _ _")
        out.append(Instance(f"step_{shape}_{a}_{b}_{c}_{d}", f": Red {src} {dst}", steps, pre))
    for _ in range(2):
        a, b, c = (rng.randint(0, 9) for _ in range(3))
        src = _p(_p(_l(a), _l(b)), _l(c))
        out.append(Instance(f"eval_{a}_{b}_{c}", f": Reds {src} (Tm.lit {a + b + c})",
                            ("apply Reds.more _ _ _ (Red.inL _ _ _ (Red.fold _ _))",
                             "apply Reds.more _ _ _ (Red.fold _ _)", "exact Reds.refl _"), pre))
    for a, b in _pick(rng, [(a, b) for a in range(0, 8) for b in range(0, 8)], 2):
        out.append(Instance(f"fold_inv_{a}_{b}",
                            f"(t : Tm) (h : Red (Tm.plus (Tm.lit {a}) (Tm.lit {b})) t) : t = Tm.lit {a + b}",
                            ("cases h with\n| fold => rfl\n| inL _ _ _ h' => cases h'\n| inR _ _ _ h' => cases h'",),
                            pre))
    return _distinct(out, per_preamble=True)


# ---------------------------------------------------------------------------
# tocc: occurrence in a binary tree
# ---------------------------------------------------------------------------

OCC_DEFS = """\
inductive Bt where
  | tip : Bt
  | bin : Bt → Nat → Bt → Bt

def mirror : Bt → Bt
  | .tip => .tip
  | .bin l x r => .bin (mirror r) x (mirror l)

def bump (k : Nat) : Bt → Bt
  | .tip => .tip
  | .bin l x r => .bin (bump k l) (x + k) (bump k r)

def tsum : Bt → Nat
  | .tip => 0
  | .bin l x r => tsum l + x + tsum r

inductive Occ : Nat → Bt → Prop where
  | here : (l : Bt) → (x : Nat) → (r : Bt) → Occ x (Bt.bin l x r)
  | goL : (x : Nat) → (l : Bt) → (y : Nat) → (r : Bt) → Occ x l → Occ x (Bt.bin l y r)
  | goR : (x : Nat) → (l : Bt) → (y : Nat) → (r : Bt) → Occ x r → Occ x (Bt.bin l y r)"""


def _tree_lit(rng: random.Random, depth: int, pool: list[int]) -> tuple[str, list[tuple[int, str]]]:
    """A tree literal of ``depth`` levels with labels from ``pool`` (consumed), and its labels with paths."""
    if depth == 0:
        return "Bt.tip", []
    left, lp = _tree_lit(rng, depth - 1 if rng.random() < 0.7 else 0, pool)
    x = pool.pop()
    right, rp = _tree_lit(rng, depth - 1 if rng.random() < 0.7 else 0, pool)
    return f"(Bt.bin {left} {x} {right})", [(x, ""), *((y, "L" + p) for y, p in lp), *((y, "R" + p) for y, p in rp)]


def _occ_pred(rng: random.Random) -> list[Instance]:
    """Occurrence in a tree: concrete members by constructors, closure under
    ``mirror``/``bump`` and bounds by rule induction, small trees by inversion."""
    pre = namespaced("BqOcc", OCC_DEFS)
    out = [
        Instance("mirror", "(x : Nat) (t : Bt) (h : Occ x t) : Occ x (mirror t)",
                 ("induction h with\n| here l y r => exact Occ.here _ _ _\n"
                  "| goL y l z r _ ih => exact Occ.goR _ _ _ _ ih\n"
                  "| goR y l z r _ ih => exact Occ.goL _ _ _ _ ih",), pre),
        Instance("le_tsum", "(x : Nat) (t : Bt) (h : Occ x t) : x ≤ tsum t",
                 ("induction h", "all_goals simp only [tsum]", "all_goals omega"), pre),
        Instance("tip", "(x : Nat) : ¬ Occ x Bt.tip", ("intro h", "cases h"), pre),
    ]
    for k in _pick(rng, list(range(1, 10)), 2):
        out.append(Instance(f"bump_{k}", f"(x : Nat) (t : Bt) (h : Occ x t) : Occ (x + {k}) (bump {k} t)",
                            ("induction h with\n| here l y r => exact Occ.here _ _ _\n"
                             "| goL y l z r _ ih => exact Occ.goL _ _ _ _ ih\n"
                             "| goR y l z r _ ih => exact Occ.goR _ _ _ _ ih",), pre))
        out.append(Instance(f"bump_le_{k}", f"(x : Nat) (t : Bt) (h : Occ x t) : x + {k} ≤ tsum (bump {k} t)",
                            ("induction h", "all_goals simp only [bump, tsum] at *", "all_goals omega"), pre))
    for _ in range(3):
        pool = rng.sample(range(0, 30), 7)
        t, labels = _tree_lit(rng, 3, pool)
        x, path = rng.choice(labels)
        steps = (*(f"apply Occ.go{d}" for d in path), "exact Occ.here _ _ _")
        out.append(Instance(f"lit_{x}_{path or 'top'}", f": Occ {x} {t}", steps, pre))
    for y in _pick(rng, list(range(0, 20)), 2):
        out.append(Instance(f"single_{y}", f"(x : Nat) (h : Occ x (Bt.bin Bt.tip {y} Bt.tip)) : x = {y}",
                            ("rcases h with _ | ⟨_, _, _, _, h'⟩ | ⟨_, _, _, _, h'⟩", "· rfl", "· cases h'",
                             "· cases h'"), pre))
    return _distinct(out, per_preamble=True)


# ---------------------------------------------------------------------------
# telem: polymorphic membership and "every element"
# ---------------------------------------------------------------------------

ELEM_DEFS = """\
inductive Elem {α : Type} (a : α) : List α → Prop where
  | head : (zs : List α) → Elem a (a :: zs)
  | tail : (b : α) → (zs : List α) → Elem a zs → Elem a (b :: zs)

inductive Every {α : Type} (P : α → Prop) : List α → Prop where
  | allNil : Every P []
  | allCons : (a : α) → (zs : List α) → P a → Every P zs → Every P (a :: zs)

def app {α : Type} : List α → List α → List α
  | [], ys => ys
  | x :: xs, ys => x :: app xs ys"""


def _elem_pred(rng: random.Random) -> list[Instance]:
    """Polymorphic ``Elem``/``Every``: closure under ``app`` and weakening by
    rule induction, members by constructors, small lists by inversion."""
    pre = namespaced("BqElem", ELEM_DEFS)
    out = [
        Instance("app_left", "(α : Type) (x : α) (xs ys : List α) (h : Elem x xs) : Elem x (app xs ys)",
                 ("induction h with\n| head zs => exact Elem.head _\n"
                  "| tail b zs _ ih => exact Elem.tail _ _ ih",), pre),
        Instance("app_right", "(α : Type) (x : α) (xs ys : List α) (h : Elem x ys) : Elem x (app xs ys)",
                 ("induction xs with\n| nil => exact h\n| cons z zs ih => exact Elem.tail _ _ ih",), pre),
        Instance("every_mono",
                 "(α : Type) (P Q : α → Prop) (hPQ : ∀ a, P a → Q a) (xs : List α) (h : Every P xs) : Every Q xs",
                 ("induction h with\n| allNil => exact Every.allNil\n"
                  "| allCons a zs ha _ ih => exact Every.allCons _ _ (hPQ a ha) ih",), pre),
        Instance("every_elem",
                 "(α : Type) (P : α → Prop) (x : α) (xs : List α) (h : Every P xs) (hx : Elem x xs) : P x",
                 ("induction hx with\n| head zs =>\n  cases h with\n  | allCons _ _ hp _ => exact hp\n"
                  "| tail b zs _ ih =>\n  cases h with\n  | allCons _ _ _ h' => exact ih h'",), pre),
        Instance("every_app",
                 "(α : Type) (P : α → Prop) (xs ys : List α) (h₁ : Every P xs) (h₂ : Every P ys) : "
                 "Every P (app xs ys)",
                 ("induction h₁ with\n| allNil => exact h₂\n"
                  "| allCons a zs ha _ ih => exact Every.allCons _ _ ha ih",), pre),
        Instance("nil", "(α : Type) (x : α) : ¬ Elem x []", ("intro h", "cases h"), pre),
    ]
    for _ in range(3):
        size = rng.randint(2, 4)
        if rng.random() < 0.7:
            xs = [str(v) for v in rng.sample(range(0, 20), size)]
        else:
            xs = [rng.choice(["true", "false"]) for _ in range(size - 1)]
            xs.append("false" if all(v == "true" for v in xs) else "true")
        pos = rng.randrange(size) if xs[0].isdigit() else size - 1
        pos = xs.index(xs[pos])
        steps = ("apply Elem.tail",) * pos + ("exact Elem.head _",)
        out.append(Instance(f"lit_{xs[pos]}_{'_'.join(xs)}", f": Elem {xs[pos]} [{', '.join(xs)}]", steps, pre))
    for a, b in _pick(rng, [(a, b) for a in range(0, 10) for b in range(0, 10) if a != b], 2):
        out.append(Instance(f"pair_{a}_{b}", f"(x : Nat) (h : Elem x [{a}, {b}]) : x = {a} ∨ x = {b}",
                            ("cases h with\n| head => exact Or.inl rfl\n| tail _ _ h' =>\n"
                             "  cases h' with\n  | head => exact Or.inr rfl\n  | tail _ _ h'' => cases h''",),
                            pre))
    return _distinct(out, per_preamble=True)


TECHNIQUE_FAMILIES: list[Family] = [
    Family("tmul", "train", True,
           "evenness-like predicate on Nat: rule induction (residue, bound, closure under +), "
           "constructors (members), inversion (non-members, predecessor)", _mul_pred, technique="predicates"),
    Family("tsort", "train", True,
           "sorted List Nat: constructors/constructor tactic (concrete lists), inversion (tail, head, unsorted), "
           "rule induction with case alternatives (addEach, scale)", _sorted_pred, technique="predicates"),
    Family("treach", "train", True,
           "reachability of grid moves on a user type: constructor chains (paths), rule induction "
           "(transitivity, monotone weights, unreachability), inversion (one move)",
           _reach_pred, technique="predicates"),
    Family("tred", "train", True,
           "small-step reduction of a tiny expression language: rule induction (value/size preservation), "
           "constructors (steps, evaluations), inversion (stuck and determined terms)",
           _red_pred, technique="predicates"),
    Family("tocc", "train", True,
           "occurrence in a user binary tree: constructors (paths), rule induction (mirror, bump, bounds), "
           "inversion with cases/rcases (empty and one-node trees)", _occ_pred, technique="predicates"),
    Family("telem", "train", True,
           "polymorphic Elem/Every over α : Type: rule induction (app, weakening, Every+Elem), "
           "constructors (concrete lists), inversion (empty list, two-element list)",
           _elem_pred, technique="predicates"),
]
