"""The technique "iff_funext": ``Iff`` goals (both directions) and function equalities (``funext``).

The two families, by their preambles:

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

How every technique's preamble, names and proofs are written (renaming, what the checker can unfold,
what a proof may name) is said once in `burnqed_core.data.synthetic.techniques`.
"""

from __future__ import annotations

import random
from types import MappingProxyType

from burnqed_core.data.synthetic.families import Family, Instance, _distinct, _pick, namespaced

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
    out = _tone_iffs(rng)
    sp = namespaced("BqSpan", IVM_DEFS)
    ba = namespaced("BqBag", BAG_DEFS)
    be = namespaced("BqBelow", BELOW_DEFS)
    out += _fixed_iffs(sp, ba, be)
    out += _drawn_iffs(rng, sp, ba, be)
    return _distinct(out, per_preamble=True)


def _tone_iffs(rng: random.Random) -> list[Instance]:
    """The `_iff` instances of a ``Tone`` enum whose marked tones (two or three) and successor order are drawn."""
    marked = sorted(rng.sample(TONES, rng.choice([2, 3])))
    order = list(TONES)
    rng.shuffle(order)
    succ = {order[i]: order[(i + 1) % len(order)] for i in range(len(order))}
    tag = "_".join(c[:2] for c in marked)
    to = namespaced(f"BqTone_{tag}_{''.join(c[0] for c in order)}", _tone_defs(marked, succ))
    disj = " ∨ ".join(f"c = Tone.{c}" for c in marked)
    pat = " | ".join("h" for _ in marked)
    preimage = sorted(c for c in TONES if succ[c] in marked)
    return [
        Instance(f"tone_mark_{tag}", f"(c : Tone) : mark c = true ↔ {disj}",
                 ("constructor", "· intro h\n  cases c <;> simp_all [mark]",
                  f"· rintro ({pat}) <;> subst h <;> rfl"), to),
        Instance(f"tone_next_{tag}", "(c : Tone) : mark (next c) = true ↔ "
                                     + " ∨ ".join(f"c = Tone.{c}" for c in preimage),
                 ("cases c <;> simp [mark, next]",), to),
        Instance("tone_fixed", "(c : Tone) : next c = c ↔ False",
                 ("exact ⟨fun h => by cases c <;> simp [next] at h, fun h => h.elim⟩",), to),
    ]


def _fixed_iffs(sp: str, ba: str, be: str) -> list[Instance]:
    """The `_iff` instances that draw nothing, over the preambles of ``Span`` (``sp``), ``Bag`` (``ba``) and the
    ``AllBelow`` trees (``be``)."""
    return [
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


def _drawn_iffs(rng: random.Random, sp: str, ba: str, be: str) -> list[Instance]:
    """The `_iff` instances at drawn constants, over the preambles of `_fixed_iffs`."""
    out: list[Instance] = []
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
    return out

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

_TURN_AFTER = MappingProxyType({0: "(fun d => d)", 1: "turn", 2: "opp", 3: "back"})


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


IFF_FUNEXT_FAMILIES: tuple[Family, ...] = (
    Family("tiff", "train", True,
           "Iff between Bool functions and Props on a user enum, structure, list-like inductive and tree: "
           "constructor + intro, Iff.intro, anonymous constructor, induction with Iff cases",
           _iff, technique="iff_funext"),
    Family("tfun", "train", True,
           "funext goals on user definitions (enum compositions, map fusion on a user list type and tree, "
           "structure maps): "
           "funext, then cases/induction/simp/rfl, show to restate a composition",
           _fun, technique="iff_funext"),
)
