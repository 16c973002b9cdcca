"""Theorem families organised by proof technique: structures, type classes, ``Iff`` and ``funext`` goals.

Each family teaches one technique, in several surface forms (preambles):

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
  `burnqed_core.data.visibility`), then the definition it exposes, ``rfl``,
  ``congrArg``, and do induction over the user type (``induction s`` and
  bullets: its constructors are not printed) where the instance is recursive;
* ``tiff``: ``Iff`` goals between user definitions (a ``Bool``-valued function
  and a ``Prop``, ``f x = true ↔ ...``, membership-like predicates): proved by
  ``constructor`` and ``intro h`` on both sides, ``Iff.intro``, the anonymous
  constructor ``⟨fun h => ..., fun h => ...⟩``, or by induction whose cases are
  ``Iff``s themselves;
* ``tfun``: equalities of functions built from user definitions
  (``f ∘ g = id`` on a user enum or structure, ``(fun x => f (g x)) = h``, map
  fusion for a user list type or tree): ``funext x``, then ``cases x`` /
  ``induction x`` / ``simp [..]`` / ``rfl``, often after ``show`` to restate a
  composition as an application.

Proofs name only what their proof state shows (2026-11-27, see
`burnqed_core.data.visibility`): ``cases d <;> rfl`` and ``induction s`` with
bullets or ``next x s ih =>`` instead of ``with | ctor ...`` alternatives, a
definition reached only through another one named in a later step
(``simp only [qsize, push]``, then ``simp only [lenQ]``), ``show`` only with
names the goal prints.

Like `burnqed_core.data.families`, instances use fixed names and are renamed
per theorem by `burnqed_core.data.renaming` (structure fields, class methods
and named instances are renamed like definitions, a named constructor like a
constructor). Renaming rewrites a dotted name only when its head is renamed,
so a field is projected as ``Pt.px p`` (or ``p.px`` on a statement variable),
never as ``q.px`` on a name bound by a proof or a definition; names avoid
those of core Lean that a proof also uses (``zero``, ``nil``, ``flip``).
The embedded Lean cannot compile a preamble definition that calls a core list
function with a compiled implementation (``++``, ``List.length``,
``List.reverse``: "Unknown constant `List.appendTR._redArg`") or an instance
field that is a bare core function (``combine a b := a + b`` needs
``Nat.add._boxed``), so the preambles define their own (``lenQ``, ``addN``);
statements and proofs may use them freely. No single automation tactic
(``grind``, ``simp_all``, ``omega``, ``decide``, ``rfl``, ``simp``) unfolds the
user definitions: ``rfl`` alone closes the few goals that hold by structure eta
or unfolding, the others close none.
They are in the bundled corpus through `burnqed_core.data.catalogue.ALL_FAMILIES`.
"""

from __future__ import annotations

import random

from burnqed_core.data.families import Family, Instance, _distinct, _pick, namespaced

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


# ---------------------------------------------------------------------------
# tiff: Iff goals between user definitions
# ---------------------------------------------------------------------------

TONES = ("amberT", "cyanT", "limeT", "plumT", "rubyT")


def _tone_defs(marked: list[str], succ: dict[str, str]) -> str:
    alts = "\n".join(f"  | {c} : Tone" for c in TONES)
    mark = "\n".join(f"  | .{c} => {'true' if c in marked else 'false'}" for c in TONES)
    nxt = "\n".join(f"  | .{c} => .{succ[c]}" for c in TONES)
    return f"inductive Tone where\n{alts}\n\ndef mark : Tone → Bool\n{mark}\n\ndef next : Tone → Tone\n{nxt}"


IVM_DEFS = """\
structure Span where
  start : Nat
  stop : Nat

def memB (n : Nat) (s : Span) : Bool := Span.start s ≤ n && n ≤ Span.stop s

def Mem (n : Nat) (s : Span) : Prop := Span.start s ≤ n ∧ n ≤ Span.stop s

def slide (k : Nat) (s : Span) : Span := ⟨Span.start s + k, Span.stop s + k⟩

def Within (s t : Span) : Prop := Span.start t ≤ Span.start s ∧ Span.stop s ≤ Span.stop t"""

BAG_DEFS = """\
inductive Bag where
  | empty : Bag
  | put : Nat → Bag → Bag

def holds (a : Nat) : Bag → Bool
  | .empty => false
  | .put x b => a == x || holds a b

def Has (a : Nat) : Bag → Prop
  | .empty => False
  | .put x b => a = x ∨ Has a b

def toL : Bag → List Nat
  | .empty => []
  | .put x b => x :: toL b

def join : Bag → Bag → Bag
  | .empty, c => c
  | .put x b, c => .put x (join b c)"""

BELOW_DEFS = """\
inductive Tree where
  | leaf : Tree
  | node : Tree → Nat → Tree → Tree

def allBelow (k : Nat) : Tree → Bool
  | .leaf => true
  | .node l x r => decide (x < k) && allBelow k l && allBelow k r

def AllBelow (k : Nat) : Tree → Prop
  | .leaf => True
  | .node l x r => x < k ∧ AllBelow k l ∧ AllBelow k r"""


def _iff(rng: random.Random) -> list[Instance]:
    """``Iff`` between Bool functions and Props on a user enum, structure, list-like inductive and tree."""
    marked = sorted(rng.sample(TONES, rng.choice([2, 3])))
    order = list(TONES)
    rng.shuffle(order)
    succ = {order[i]: order[(i + 1) % len(order)] for i in range(len(order))}
    tag = "_".join(c[:2] for c in marked)
    to = namespaced(f"BqTone_{tag}_{''.join(c[0] for c in order)}", _tone_defs(marked, succ))
    sp = namespaced("BqSpan", IVM_DEFS)
    ba = namespaced("BqBag", BAG_DEFS)
    be = namespaced("BqBelow", BELOW_DEFS)
    disj = " ∨ ".join(f"c = Tone.{c}" for c in marked)
    pat = " | ".join("h" for _ in marked)
    preimage = sorted(c for c in TONES if succ[c] in marked)
    out = [
        Instance(f"tone_mark_{tag}", f"(c : Tone) : mark c = true ↔ {disj}",
                 ("constructor", "· intro h\n  cases c <;> simp_all [mark]",
                  f"· rintro ({pat}) <;> subst h <;> rfl"), to),
        Instance(f"tone_next_{tag}", "(c : Tone) : mark (next c) = true ↔ "
                                     + " ∨ ".join(f"c = Tone.{c}" for c in preimage),
                 ("cases c <;> simp [mark, next]",), to),
        Instance("tone_fixed", "(c : Tone) : next c = c ↔ False",
                 ("exact ⟨fun h => by cases c <;> simp [next] at h, fun h => h.elim⟩",), to),
        Instance("span_memB", "(n : Nat) (s : Span) : memB n s = true ↔ Mem n s",
                 ("unfold memB Mem", "simp"), sp),
        Instance("span_nonempty", "(s : Span) : (∃ n, Mem n s) ↔ Span.start s ≤ Span.stop s",
                 ("constructor", "· rintro ⟨n, h₁, h₂⟩\n  omega",
                  "· intro h\n  exact ⟨Span.start s, Nat.le_refl _, h⟩"), sp),
        Instance("span_within", "(s t : Span) (h : Span.start s ≤ Span.stop s) : "
                                "Within s t ↔ ∀ n, Mem n s → Mem n t",
                 ("constructor", "· intro hw n hn\n  simp only [Within, Mem] at *\n  omega",
                  "· intro hm\n  have h₁ := hm (Span.start s) ⟨Nat.le_refl _, h⟩\n"
                  "  have h₂ := hm (Span.stop s) ⟨h, Nat.le_refl _⟩\n  simp only [Within, Mem] at *\n  omega"), sp),
        Instance("bag_holds", "(a : Nat) (b : Bag) : holds a b = true ↔ Has a b",
                 ("induction b", "· simp [holds, Has]", "next x b ih => simp [holds, Has, ih]"), ba),
        Instance("bag_toL", "(a : Nat) (b : Bag) : Has a b ↔ a ∈ toL b",
                 ("induction b", "· simp [Has, toL]", "next x b ih => simp [Has, toL, ih]"), ba),
        Instance("bag_put_ne", "(a x : Nat) (b : Bag) (hne : a ≠ x) : Has a (Bag.put x b) ↔ Has a b",
                 ("apply Iff.intro", "· intro h\n  cases h with\n  | inl h' => exact absurd h' hne\n"
                  "  | inr h' => exact h'", "· intro h\n  exact Or.inr h"), ba),
        Instance("bag_join", "(a : Nat) (b c : Bag) : Has a (join b c) ↔ Has a b ∨ Has a c",
                 ("induction b", "· simp [join, Has]", "next x b ih => simp [join, Has, ih, or_assoc]"), ba),
        Instance("below_zero", "(t : Tree) : AllBelow 0 t ↔ t = Tree.leaf",
                 ("constructor",
                  "· intro h\n  cases t\n  · rfl\n  · exact absurd h.1 (Nat.not_lt_zero _)",
                  "· intro h\n  subst h\n  trivial"), be),
    ]
    k = rng.randint(1, 9)
    out.append(Instance(f"span_slide_{k}", f"(n : Nat) (s : Span) : Mem (n + {k}) (slide {k} s) ↔ Mem n s",
                        ("constructor", "· intro h\n  simp only [Mem, slide] at h ⊢\n  omega",
                         "· intro h\n  simp only [Mem, slide] at h ⊢\n  omega"), sp))
    a, w = rng.randint(0, 9), rng.randint(1, 2)
    rhs = " ∨ ".join(f"n = {a + d}" for d in range(w + 1))
    out.append(Instance(f"span_lit_{a}_{w}", f"(n : Nat) : Mem n ⟨{a}, {a + w}⟩ ↔ {rhs}",
                        ("simp only [Mem]", "constructor", "· intro h\n  omega", "· intro h\n  omega"), sp))
    a, b = rng.sample(range(0, 10), 2)
    out.append(Instance(f"bag_lit_{a}_{b}",
                        f"(n : Nat) : Has n (Bag.put {a} (Bag.put {b} Bag.empty)) ↔ n = {a} ∨ n = {b}",
                        ("simp only [Has, or_false]",), ba))
    k = rng.randint(1, 9)
    out.append(Instance(f"below_bool_{k}", f"(t : Tree) : allBelow {k} t = true ↔ AllBelow {k} t",
                        ("induction t", "· simp [allBelow, AllBelow]",
                         "next l x r ihl ihr => simp [allBelow, AllBelow, ihl, ihr, and_assoc]"), be))
    k = rng.randint(1, 9)
    out.append(Instance(f"below_mono_{k}", f"(t : Tree) : AllBelow {k} t ↔ ∀ j, {k} ≤ j → AllBelow j t",
                        ("constructor", "· intro h j hj\n  induction t\n  · trivial\n"
                         "  · next l x r ihl ihr =>\n    obtain ⟨hx, hl, hr⟩ := h\n"
                         "    exact ⟨by omega, ihl hl, ihr hr⟩",
                         f"· intro h\n  exact h {k} (Nat.le_refl _)"), be))
    return _distinct(out, per_preamble=True)


# ---------------------------------------------------------------------------
# tfun: funext goals
# ---------------------------------------------------------------------------

DIR_DEFS = """\
inductive Dir where
  | north : Dir
  | east : Dir
  | south : Dir
  | west : Dir

def turn : Dir → Dir
  | .north => .east
  | .east => .south
  | .south => .west
  | .west => .north

def back : Dir → Dir
  | .north => .west
  | .east => .north
  | .south => .east
  | .west => .south

def opp : Dir → Dir
  | .north => .south
  | .east => .west
  | .south => .north
  | .west => .east"""

SEQ_DEFS = """\
inductive Seq where
  | stop : Seq
  | more : Nat → Seq → Seq

def smap (f : Nat → Nat) : Seq → Seq
  | .stop => .stop
  | .more x s => .more (f x) (smap f s)

def slen : Seq → Nat
  | .stop => 0
  | .more _ s => slen s + 1

def addK (k n : Nat) : Nat := n + k

def dbl : Nat → Nat
  | 0 => 0
  | n + 1 => dbl n + 2"""

PTF_DEFS = """\
structure Pt where
  px : Nat
  py : Nat

def swapPt (p : Pt) : Pt := ⟨Pt.py p, Pt.px p⟩

def shiftBy (k : Nat) (p : Pt) : Pt := ⟨Pt.px p + k, Pt.py p⟩

def diag (n : Nat) : Pt := ⟨n, n⟩"""

TMAP_DEFS = """\
inductive Tree where
  | leaf : Tree
  | node : Tree → Nat → Tree → Tree

def tmap (f : Nat → Nat) : Tree → Tree
  | .leaf => .leaf
  | .node l x r => .node (tmap f l) (f x) (tmap f r)

def mirror : Tree → Tree
  | .leaf => .leaf
  | .node l x r => .node (mirror r) x (mirror l)"""

_TURN_AFTER = {0: "(fun d => d)", 1: "turn", 2: "opp", 3: "back"}


def _fun(rng: random.Random) -> list[Instance]:
    """Equalities of functions: ``funext`` then ``cases``/``induction``/``simp``/``rfl`` (often ``show`` first)."""
    di = namespaced("BqDir", DIR_DEFS)
    sq = namespaced("BqSeq", SEQ_DEFS)
    pt = namespaced("BqPtF", PTF_DEFS)
    tr = namespaced("BqTmap", TMAP_DEFS)
    out = [
        Instance("dir_turn_back", ": turn ∘ back = id", ("funext d", "cases d <;> rfl"), di),
        Instance("dir_turn_turn", ": (fun d => turn (turn d)) = opp",
                 ("funext d", "cases d <;> rfl"), di),
        Instance("dir_opp_turn", ": opp ∘ turn = back",
                 ("funext d", "show opp (turn d) = back d", "cases d <;> simp [opp, turn, back]"), di),
        Instance("seq_comp", "(f g : Nat → Nat) : smap f ∘ smap g = smap (f ∘ g)",
                 ("funext s", "show smap f (smap g s) = smap (fun x => f (g x)) s",
                  "induction s", "· rfl", "next x s ih => simp only [smap, ih]"), sq),
        Instance("seq_id", ": smap (fun n => n) = id",
                 ("funext s", "induction s", "· rfl", "next x s ih => simp only [smap, ih, id]"), sq),
        Instance("seq_len", "(f : Nat → Nat) : (fun s => slen (smap f s)) = slen",
                 ("funext s", "induction s", "· rfl", "next x s ih => simp [smap, slen, ih]"), sq),
        Instance("seq_dbl", ": dbl = fun n => n + n",
                 ("funext n", "induction n with\n| zero => rfl\n| succ m ih =>\n  simp only [dbl, ih]\n  omega"), sq),
        Instance("pt_swap_swap", ": swapPt ∘ swapPt = id", ("funext p", "cases p", "rfl"), pt),
        Instance("pt_swap_diag", ": swapPt ∘ diag = diag", ("funext n", "rfl"), pt),
        Instance("tree_mirror", ": mirror ∘ mirror = id",
                 ("funext t", "show mirror (mirror t) = t",
                  "induction t", "· rfl", "next l x r ihl ihr => simp [mirror, ihl, ihr]"), tr),
        Instance("tree_mirror_tmap", "(f : Nat → Nat) : mirror ∘ tmap f = tmap f ∘ mirror",
                 ("funext t", "show mirror (tmap f t) = tmap f (mirror t)",
                  "induction t", "· rfl", "next l x r ihl ihr => simp [mirror, tmap, ihl, ihr]"), tr),
    ]
    for k in _pick(rng, list(range(4, 10)), 2):
        lhs = "d"
        for _ in range(k):
            lhs = f"turn ({lhs})" if lhs != "d" else "turn d"
        out.append(Instance(f"dir_iter_{k}", f": (fun d => {lhs}) = {_TURN_AFTER[k % 4]}",
                            ("funext d", "cases d <;> rfl"), di))
    a, b = rng.randint(1, 9), rng.randint(1, 9)
    out.append(Instance(f"seq_fuse_{a}_{b}", f": (fun s => smap (addK {a}) (smap (addK {b}) s)) = smap (addK {a + b})",
                        ("funext s", "induction s", "· rfl",
                         "next x s ih => simp [smap, ih, addK, Nat.add_assoc]"), sq))
    j, k = rng.randint(1, 9), rng.randint(1, 9)
    out.append(Instance(f"pt_shift_{j}_{k}", f": shiftBy {k} ∘ shiftBy {j} = shiftBy {j + k}",
                        ("funext p", "simp only [Function.comp, shiftBy, Nat.add_assoc]"), pt))
    a, b = rng.randint(1, 9), rng.randint(1, 9)
    out.append(Instance(f"tree_fuse_{a}_{b}", f": (fun t => tmap (· + {a}) (tmap (· + {b}) t)) = tmap (· + {a + b})",
                        ("funext t", "induction t", "· rfl",
                         "next l x r ihl ihr => simp [tmap, ihl, ihr, Nat.add_assoc]"), tr))
    return _distinct(out, per_preamble=True)


STRUCTURE_FAMILIES: list[Family] = [
    Family("tstruct", "train", True,
           "user structures (points, intervals, a Nat/Bool record with a named constructor, a two-list queue): "
           "cases/obtain/rcases on a value, projections, show, structure eta, congr 1, simp [f]/omega",
           _struct, technique="structures"),
    Family("tclass", "train", True,
           "user type classes with named instances on user types, Nat and List: simp only [method]/rfl/congrArg, "
           "induction over the user type where the instance is recursive",
           _class, technique="structures"),
    Family("tiff", "train", True,
           "Iff between Bool functions and Props on a user enum, structure, list-like inductive and tree: "
           "constructor + intro, Iff.intro, anonymous constructor, induction with Iff cases",
           _iff, technique="iff_funext"),
    Family("tfun", "train", True,
           "funext goals on user definitions (enum compositions, map fusion on a user list type and tree, "
           "structure maps): "
           "funext, then cases/induction/simp/rfl, show to restate a composition",
           _fun, technique="iff_funext"),
]
