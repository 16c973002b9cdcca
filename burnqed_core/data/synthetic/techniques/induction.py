"""The technique "induction": structural induction on the theorem's own data types (the later family
``tpoly``; the first induction families are in `burnqed_core.data.synthetic.families`).

Each family defines, in its preamble, functions (and sometimes data types) of
its own and asks for proofs by one technique, in several surface forms:

* ``tpoly``: **polymorphic** user containers over ``α : Type`` (an option-like
  ``Maybe α``, a pair ``Duo α β``, a binary tree ``Tr α``, a list wrapper
  ``Bag α``) with user ``map``/``size``/``sum``/``flip`` and a flattening
  ``toL t acc``: functor laws (map id, map composition), size preservation,
  ``toL`` commuting with ``List.map``, length and sum facts, flip laws, by
  ``cases``/``rcases``/``induction t`` with bullets (``generalizing acc`` for
  ``toL``), ``rename_i`` for the hypotheses a case names, and ``simp [defs, *]``:
  the user constructors (``leaf``, ``node``, renamed per theorem) are never
  printed before the split, so no step names them (2026-11-27).

How every technique's preamble, names and proofs are written (renaming, what the checker can unfold,
what a proof may name) is said once in `burnqed_core.data.synthetic.techniques`.
"""

from __future__ import annotations

import random

from burnqed_core.data.synthetic.families import Family, Instance, _distinct, namespaced

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


INDUCTION_FAMILIES: tuple[Family, ...] = (
    Family("tpoly", "train", True,
           "polymorphic user containers over α : Type (option-like, pair, binary tree, list wrapper): functor "
           "laws, size preservation, flattening commuting with map, length/sum/flip facts, by cases/rcases/"
           "induction (generalizing acc) and simp [defs, *]",
           _polymorphic, technique="induction"),
)
