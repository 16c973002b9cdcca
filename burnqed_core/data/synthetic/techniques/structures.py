"""The technique "structures": user structures and type classes with instances.

The two families, by their preambles:

* ``tstruct``: user ``structure``s (2-D points, intervals, a record with a
  ``Nat`` and a ``Bool`` field and a named constructor, a queue made of two
  lists) and functions on them. Proofs split a value into its fields
  (``cases p``, ``obtain ⟨a, b⟩ := p``, ``rcases``), use the projections
  (``Pt.px p``), structure eta (a value is the constructor of its fields,
  definitionally), ``show`` to restate a goal with the definitions unfolded,
  ``congr 1`` on two constructor applications, and close with ``simp [f]`` /
  ``omega``;
* ``tclass``: a user type ``class`` (a ``weight``, a ``neutral`` element and a
  ``combine``, a ``size``) with named ``instance``s on the user's own types (an
  inductive, a structure) and on ``Nat`` / ``List``. A lemma about a method
  applied to a concrete type is a lemma about the instance's definition: the
  proofs unfold the method with ``simp only [Class.method]`` (the state prints
  the method, never the instance or its definition; since 2026-11-27, see
  `burnqed_core.data.pairs.prepare.visibility`), then the definition it exposes, ``rfl``,
  ``congrArg``, and do induction over the user type (``induction s`` and
  bullets: its constructors are not printed) where the instance is recursive.

How every technique's preamble, names and proofs are written (renaming, what the checker can unfold,
what a proof may name) is said once in `burnqed_core.data.synthetic.techniques`.
"""

from __future__ import annotations

import random

from burnqed_core.data.synthetic.families import Family, Instance, _distinct, _pick, namespaced

# ---------------------------------------------------------------------------
# tstruct: user structures
# ---------------------------------------------------------------------------

PT_DEFS = """\
structure Pt where
  px : Nat
  py : Nat

def swapPt (p : Pt) : Pt := ⟨Pt.py p, Pt.px p⟩

def shiftBy (k : Nat) (p : Pt) : Pt := ⟨Pt.px p + k, Pt.py p⟩

def addPt (p q : Pt) : Pt := ⟨Pt.px p + Pt.px q, Pt.py p + Pt.py q⟩

def norm1 : Pt → Nat
  | ⟨a, b⟩ => a + b"""

IV_DEFS = """\
structure Iv where
  lo : Nat
  hi : Nat

def width (i : Iv) : Nat := Iv.hi i - Iv.lo i

def shiftIv (k : Nat) (i : Iv) : Iv := ⟨Iv.lo i + k, Iv.hi i + k⟩

def widen (k : Nat) : Iv → Iv
  | ⟨a, b⟩ => ⟨a, b + k⟩

def Proper (i : Iv) : Prop := Iv.lo i ≤ Iv.hi i"""

ENTRY_DEFS = """\
structure Entry where
  make ::
  qty : Nat
  flag : Bool

def toggle (e : Entry) : Entry := Entry.make (Entry.qty e) (!Entry.flag e)

def charge (e : Entry) : Nat := if Entry.flag e then 2 * Entry.qty e else Entry.qty e

def restock (k : Nat) (e : Entry) : Entry := Entry.make (Entry.qty e + k) true"""

QUEUE_DEFS = """\
structure Queue where
  front : List Nat
  back : List Nat

def lenQ : List Nat → Nat
  | [] => 0
  | _ :: xs => lenQ xs + 1

def enq (x : Nat) (q : Queue) : Queue := ⟨Queue.front q, x :: Queue.back q⟩

def push (x : Nat) (q : Queue) : Queue := ⟨x :: Queue.front q, Queue.back q⟩

def qsize (q : Queue) : Nat := lenQ (Queue.front q) + lenQ (Queue.back q)"""


def _struct(rng: random.Random) -> list[Instance]:
    """Points, intervals, a Nat/Bool record and a two-list queue: field splits, projections, ``show``, eta."""
    pt = namespaced("BqPt", PT_DEFS)
    iv = namespaced("BqIv", IV_DEFS)
    en = namespaced("BqEntry", ENTRY_DEFS)
    qu = namespaced("BqQueue", QUEUE_DEFS)
    out = [
        Instance("pt_norm_swap", "(p : Pt) : norm1 (swapPt p) = norm1 p",
                 ("obtain ⟨a, b⟩ := p", "show b + a = a + b", "omega"), pt),
        Instance("pt_norm_add", "(p q : Pt) : norm1 (addPt p q) = norm1 p + norm1 q",
                 ("rcases p with ⟨a, b⟩", "rcases q with ⟨c, d⟩", "simp only [addPt, norm1]", "omega"), pt),
        Instance("pt_swap_inj", "(p q : Pt) (h : swapPt p = swapPt q) : p = q",
                 ("cases p", "cases q", "simp only [swapPt] at h", "cases h", "rfl"), pt),
        Instance("pt_swap_swap", "(p : Pt) : swapPt (swapPt p) = p",
                 ("unfold swapPt", "rfl"), pt),
        Instance("en_toggle_toggle", "(e : Entry) : toggle (toggle e) = e",
                 ("obtain ⟨n, b⟩ := e", "cases b <;> rfl"), en),
        Instance("en_charge_ge", "(e : Entry) : Entry.qty e ≤ charge e",
                 ("unfold charge", "split <;> omega"), en),
        Instance("en_charge_sum", "(e : Entry) : charge e + charge (toggle e) = 3 * Entry.qty e",
                 ("rcases e with ⟨n, _ | _⟩", "all_goals simp only [charge, toggle]", "all_goals simp",
                  "all_goals omega"), en),
        Instance("qu_size_push", "(x : Nat) (q : Queue) : qsize (push x q) = qsize q + 1",
                 ("simp only [qsize, push]", "simp only [lenQ]", "omega"), qu),
    ]
    k = rng.randint(1, 9)
    out.append(Instance(f"pt_norm_shift_{k}", f"(p : Pt) : norm1 (shiftBy {k} p) = norm1 p + {k}",
                        ("cases p", "simp only [shiftBy, norm1]", "omega"), pt))
    a, b = rng.sample(range(0, 10), 2)
    out.append(Instance(f"qu_lits_{a}_{b}", f"(q : Queue) : qsize (push {a} (enq {b} q)) = qsize q + 2",
                        ("simp only [qsize, push, enq]", "simp only [lenQ]", "omega"), qu))
    a, b = rng.randint(0, 9), rng.randint(0, 9)
    out.append(Instance(f"pt_eq_{a}_{b}", f"(p : Pt) (h₁ : Pt.px p = {a}) (h₂ : Pt.py p = {b}) : p = ⟨{a}, {b}⟩",
                        ("obtain ⟨x, y⟩ := p", "simp only at h₁ h₂", "rw [h₁, h₂]"), pt))
    k = rng.randint(1, 9)
    out.append(Instance(f"pt_add_shift_{k}", f"(p q : Pt) : addPt (shiftBy {k} p) q = shiftBy {k} (addPt p q)",
                        ("simp only [addPt, shiftBy]", "congr 1", "omega"), pt))
    k = rng.randint(1, 9)
    out.append(Instance(f"iv_width_shift_{k}", f"(i : Iv) : width (shiftIv {k} i) = width i",
                        ("obtain ⟨a, b⟩ := i", f"show b + {k} - (a + {k}) = b - a", "omega"), iv))
    k = rng.randint(1, 9)
    out.append(Instance(f"iv_width_widen_{k}", f"(i : Iv) (h : Proper i) : width (widen {k} i) = width i + {k}",
                        ("cases i", "simp only [Proper] at h", "simp only [widen, width]", "omega"), iv))
    k = rng.randint(1, 9)
    out.append(Instance(f"iv_proper_shift_{k}", f"(i : Iv) (h : Proper i) : Proper (shiftIv {k} i)",
                        ("unfold Proper at h ⊢", f"show Iv.lo i + {k} ≤ Iv.hi i + {k}", "omega"), iv))
    k = rng.randint(1, 9)
    out.append(Instance(f"en_restock_{k}", f"(e : Entry) : charge (restock {k} e) = 2 * Entry.qty e + {2 * k}",
                        ("simp only [charge, restock]", "simp", "omega"), en))
    return _distinct(out, per_preamble=True)

# ---------------------------------------------------------------------------
# tclass: user type classes and their instances
# ---------------------------------------------------------------------------

WEIGH_DEFS = """\
class Weigh (α : Type) where
  weight : α → Nat

inductive Shape where
  | dot : Nat → Shape
  | pair : Shape → Shape → Shape

def Shape.wt : Shape → Nat
  | .dot n => n + 1
  | .pair a b => Shape.wt a + Shape.wt b

def Shape.dots : Shape → Nat
  | .dot _ => 1
  | .pair a b => Shape.dots a + Shape.dots b

def Shape.mirror : Shape → Shape
  | .dot n => .dot n
  | .pair a b => .pair (Shape.mirror b) (Shape.mirror a)

def Shape.bump (k : Nat) : Shape → Shape
  | .dot n => .dot (n + k)
  | .pair a b => .pair (Shape.bump k a) (Shape.bump k b)

instance weighShape : Weigh Shape := ⟨Shape.wt⟩

instance weighNat : Weigh Nat := ⟨fun n => n⟩

def sumW {α : Type} [Weigh α] : List α → Nat
  | [] => 0
  | x :: xs => Weigh.weight x + sumW xs

instance weighList {α : Type} [Weigh α] : Weigh (List α) := ⟨sumW⟩"""

MERGE_DEFS = """\
class Merge (α : Type) where
  neutral : α
  combine : α → α → α

structure Pt where
  px : Nat
  py : Nat

instance mergePt : Merge Pt where
  neutral := ⟨0, 0⟩
  combine p q := ⟨Pt.px p + Pt.px q, Pt.py p + Pt.py q⟩

def addN (a b : Nat) : Nat := a + b

instance mergeNat : Merge Nat where
  neutral := 0
  combine := addN

def mergeAll {α : Type} [Merge α] : List α → α
  | [] => Merge.neutral
  | x :: xs => Merge.combine x (mergeAll xs)"""

SIZED_DEFS = """\
class Sized (α : Type) where
  size : α → Nat

inductive Tree where
  | leaf : Tree
  | node : Tree → Nat → Tree → Tree

def nodes : Tree → Nat
  | .leaf => 0
  | .node l _ r => nodes l + 1 + nodes r

def graft (s : Tree) : Tree → Tree
  | .leaf => s
  | .node l x r => .node (graft s l) x (graft s r)

instance sizedTree : Sized Tree where
  size := nodes"""


def _class(rng: random.Random) -> list[Instance]:
    """Methods of user classes at concrete instances: ``show``/``rfl``/``congrArg``/``simp [inst]``/``unfold``,
    induction over the user type where the instance is recursive."""
    we = namespaced("BqWeigh", WEIGH_DEFS)
    me = namespaced("BqMerge", MERGE_DEFS)
    si = namespaced("BqSized", SIZED_DEFS)
    out = [
        Instance("we_pos", "(s : Shape) : 0 < Weigh.weight s",
                 ("simp only [Weigh.weight]", "induction s", "· simp [Shape.wt]",
                  "· simp only [Shape.wt]\n  omega"), we),
        Instance("we_mirror", "(s : Shape) : Weigh.weight (Shape.mirror s) = Weigh.weight s",
                 ("simp only [Weigh.weight]", "induction s", "· rfl",
                  "· simp only [Shape.mirror, Shape.wt] at *\n  omega"), we),
        Instance("we_append", "(xs ys : List Shape) : Weigh.weight (xs ++ ys) = Weigh.weight xs + Weigh.weight ys",
                 ("simp only [Weigh.weight]",
                  "induction xs with\n| nil => simp [sumW]\n| cons x xs ih =>\n"
                  "  simp only [List.cons_append, sumW, ih]\n  omega"), we),
        Instance("we_map_succ", "(xs : List Nat) : Weigh.weight (xs.map (· + 1)) = Weigh.weight xs + xs.length",
                 ("conv => lhs; simp only [Weigh.weight]",
                  "induction xs with\n| nil => rfl\n| cons x xs ih =>\n"
                  "  simp only [List.map, sumW, List.length, Weigh.weight] at ih ⊢\n  omega"), we),
        Instance("me_neutral_left", "(p : Pt) : Merge.combine Merge.neutral p = p",
                 ("obtain ⟨a, b⟩ := p", "simp [Merge.combine, Merge.neutral]"), me),
        Instance("me_comm", "(p q : Pt) : Merge.combine p q = Merge.combine q p",
                 ("simp only [Merge.combine]", "simp only [Nat.add_comm]"), me),
        Instance("me_zero", "(p q : Pt) (h : Merge.combine p q = Merge.neutral) : Pt.px p = 0",
                 ("have h' : Pt.px p + Pt.px q = 0 := congrArg Pt.px h", "omega"), me),
        Instance("me_append", "(xs ys : List Nat) : mergeAll (xs ++ ys) = mergeAll xs + mergeAll ys",
                 ("induction xs", "simp only [List.nil_append, mergeAll]", "simp only [Merge.neutral]", "omega",
                  "simp only [List.cons_append, mergeAll]", "simp only [Merge.combine]", "simp only [addN]", "omega"),
                 me),
        Instance("si_graft", "(s t : Tree) : Sized.size t ≤ Sized.size (graft s t)",
                 ("simp only [Sized.size]", "induction t", "· simp [nodes]",
                  "· simp only [graft, nodes]\n  omega"), si),
        Instance("si_node", "(l r : Tree) (x : Nat) : Sized.size (Tree.node l x r) = Sized.size l + Sized.size r + 1",
                 ("simp only [Sized.size]", "simp only [nodes]", "omega"), si),
    ]
    for k in _pick(rng, list(range(1, 10)), 2):
        out.append(Instance(f"we_bump_{k}",
                            f"(s : Shape) : Weigh.weight (Shape.bump {k} s) = Weigh.weight s + {k} * Shape.dots s",
                            ("simp only [Weigh.weight]", "induction s",
                             "all_goals simp only [Shape.bump, Shape.wt, Shape.dots] at * <;> omega"), we))
    k = rng.randint(2, 5)
    out.append(Instance(f"me_replicate_{k}", f"(n : Nat) : mergeAll (List.replicate {k} n) = {k} * n",
                        ("simp only [List.replicate, mergeAll]", "simp only [Merge.combine, Merge.neutral]",
                         "simp only [addN]", "omega"), me))
    a, b = rng.randint(1, 9), rng.randint(1, 9)
    out.append(Instance(f"me_shift_{a}_{b}",
                        f"(p : Pt) : Pt.px (Merge.combine p ⟨{a}, {b}⟩) + Pt.py (Merge.combine p ⟨{a}, {b}⟩) = "
                        f"Pt.px p + Pt.py p + {a + b}",
                        ("simp only [Merge.combine]", "omega"), me))
    return _distinct(out, per_preamble=True)


STRUCTURE_FAMILIES: tuple[Family, ...] = (
    Family("tstruct", "train", True,
           "user structures (points, intervals, a Nat/Bool record with a named constructor, a two-list queue): "
           "cases/obtain/rcases on a value, projections, show, structure eta, congr 1, simp [f]/omega",
           _struct, technique="structures"),
    Family("tclass", "train", True,
           "user type classes with named instances on user types, Nat and List: simp only [method]/rfl/congrArg, "
           "induction over the user type where the instance is recursive",
           _class, technique="structures"),
)
