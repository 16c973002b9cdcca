"""The theorem families behind the bundled theorem sets.

Lean 4.28's built-in automation is strong: on sets of easy core-Lean
theorems a single ``grind`` closed 27/30 and 58/60, and some single tactic
among rfl/trivial/decide/omega/simp/simp_all/grind closed every one. A
benchmark made only of such theorems cannot show what a learned prover adds,
so most families here are *hard*: their statements talk about functions and
inductive types defined in the theorem's preamble (own ``double``, list
functions, trees, expression languages, a stack machine, enums), which the
automation does not unfold, and need induction, case splits or explicit
witnesses in 2-8 tactic steps. The *easy* families (linear arithmetic,
propositional logic, core ``List`` lemmas, ...) keep the sets varied.

A family is a template: `Family.generate` draws parameters from a
``random.Random`` and returns `Instance`s (statement, preamble, known proof).
The templates below use fixed names (``double``, ``Tree.leaf``, ``xs``); the
set generator then renames every instance (`burnqed_core.data.synthetic.renaming`):
types, constructors, definitions and the statement's variables get names of
their own per theorem, consistently in preamble, statement and proof, so that
a policy has to copy the names the goal mentions. Each family's definitions
live in their own ``namespace`` (one per theorem once renamed), closed and
then opened in the preamble, so that theorems never clash when checked in one
file.
Corpus (``train``) and ``benchmark`` families are disjoint and use different
definitions and statement shapes, so the benchmark is not a renaming of
training theorems.

Whether a family is hard is a claim made here (``Family.hard``); the map of
which single automation tactic closes each theorem is measured with Lean by
``burnqed lean baseline`` and stored in ``sets/automation.json``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

SetName = Literal["train", "benchmark"]

Technique = Literal["induction", "cases", "witness", "generalizing", "arith", "logic", "rewriting", "computation",
                    "predicates", "structures", "iff_funext", "have", "prop_cases"]
TECHNIQUES: Mapping[Technique, str] = MappingProxyType({
    "induction": "structural induction on the theorem's own data types (Nat, lists, trees, terms)",
    "cases": "case analysis on an enum, a Bool or a hypothesis (cases, rcases)",
    "witness": "existential goals closed by an explicit witness",
    "generalizing": "induction that generalises a second argument or an accumulator (generalizing, fun_induction)",
    "arith": "linear arithmetic, mod and div (omega)",
    "logic": "propositional and quantifier logic",
    "rewriting": "core library lemmas by simp",
    "computation": "closed terms by evaluation (rfl, decide)",
    "predicates": "Prop-valued inductive predicates: rule induction, inversion, constructors",
    "structures": "structures and type classes with instances: projections, show/unfold, congrArg",
    "iff_funext": "Iff goals (both directions) and function equalities (funext)",
    "have": "a helper lemma stated with have, proved, then used",
    "prop_cases": "case splits on a proposition (by_cases, split on if, Classical.em)",
})
"""Each technique's label and what it teaches (the sets README's techniques table)."""


@dataclass(frozen=True)
class Instance:
    """One generated theorem before it becomes a `Theorem` record."""

    key: str
    statement: str
    proof: tuple[str, ...]
    preamble: str = ""


@dataclass(frozen=True)
class Family:
    """A theorem template: what it is, which set it feeds, and its generator."""

    name: str
    split: SetName
    hard: bool
    description: str
    generate: Callable[[random.Random], list[Instance]]
    technique: Technique  # the proof technique the family teaches (or asks for): see `TECHNIQUES`


def namespaced(ns: str, body: str) -> str:
    """Definitions wrapped in ``namespace ns`` and opened afterwards."""
    return f"namespace {ns}\n{body.strip()}\nend {ns}\nopen {ns}"


def _pick(rng: random.Random, grid: list, k: int) -> list:
    """``k`` distinct parameter tuples from ``grid`` in a seeded, sorted order."""
    return sorted(rng.sample(sorted(grid), min(k, len(grid))))


def _distinct(instances: list[Instance], per_preamble: bool = False) -> list[Instance]:
    """Drop instances whose statement repeats an earlier one (random draws can collide). ``per_preamble``:
    for a family whose instances have several preambles, the same statement over another preamble is
    another theorem, and a repeated key is dropped too."""
    seen: set[tuple[str, str]] = set()
    keys: set[str] = set()
    out = []
    for inst in instances:
        sig = (inst.preamble if per_preamble else "", inst.statement)
        if sig in seen or (per_preamble and inst.key in keys):
            continue
        seen.add(sig)
        keys.add(inst.key)
        out.append(inst)
    return out


# ---------------------------------------------------------------------------
# Corpus (train) families: hard
# ---------------------------------------------------------------------------


def _affine_rec(rng: random.Random) -> list[Instance]:
    """``f 0 = a``, ``f (n+1) = f n + b``: closed forms and bounds by induction."""
    out = []
    grid = [(a, b) for a in range(0, 10) for b in range(2, 10)]
    for a, b in _pick(rng, grid, 14):
        ns = f"BqAff_{a}_{b}"
        pre = namespaced(ns, f"def f : Nat → Nat\n  | 0 => {a}\n  | n + 1 => f n + {b}")
        out.append(Instance(f"closed_{a}_{b}", f"(n : Nat) : f n = {b} * n + {a}",
                            ("induction n", "simp [f]", "simp [f]", "omega"), pre))
    for a in _pick(rng, list(range(1, 10)), 8):
        b = rng.randint(2, 9)
        ns = f"BqAffB_{a}_{b}"
        pre = namespaced(ns, f"def f : Nat → Nat\n  | 0 => {a}\n  | n + 1 => f n + {b}")
        out.append(Instance(f"lower_{a}_{b}", f"(n : Nat) : n + {a} ≤ f n",
                            ("induction n", "simp [f]", "simp [f]", "omega"), pre))
    return out


DOUBLE_DEFS = """\
def double : Nat → Nat
  | 0 => 0
  | n + 1 => double n + 2

def half : Nat → Nat
  | 0 => 0
  | 1 => 0
  | n + 2 => half n + 1

def sumTo : Nat → Nat
  | 0 => 0
  | n + 1 => sumTo n + (n + 1)"""


def _double_half(rng: random.Random) -> list[Instance]:
    """Own ``double``/``half``/``sumTo`` on Nat: lemmas needing induction."""
    pre = namespaced("BqDouble", DOUBLE_DEFS)
    out = [
        Instance("double_eq", "(n : Nat) : double n = 2 * n",
                 ("induction n", "simp [double]", "simp [double]", "omega"), pre),
        Instance("double_add", "(n m : Nat) : double (n + m) = double n + double m",
                 ("induction m", "simp [double]", "rw [← Nat.add_assoc]", "simp [double]", "omega"), pre),
        Instance("half_double", "(n : Nat) : half (double n) = n",
                 ("induction n", "simp [double, half]", "simp [double, half]", "omega"), pre),
        Instance("sumTo_twice", "(n : Nat) : 2 * sumTo n = n * (n + 1)",
                 ("induction n", "simp [sumTo]", "simp [sumTo, Nat.mul_add, Nat.add_mul]", "grind"), pre),
        Instance("sumTo_ge", "(n : Nat) : n ≤ sumTo n",
                 ("induction n", "simp [sumTo]", "simp [sumTo]"), pre),
    ]
    for k in _pick(rng, list(range(1, 12)), 6):
        out.append(Instance(f"double_plus_{k}", f"(n : Nat) : double n + {k} = 2 * n + {k}",
                            ("induction n", "simp [double]", "simp [double]", "omega"), pre))
        out.append(Instance(f"sumTo_ge_{k}", f"(n : Nat) : sumTo (n + {k}) ≥ {k}",
                            ("induction n", "simp [sumTo]", "simp [sumTo]", "omega"), pre))
    return out


LIST_DEFS = """\
def len : List Nat → Nat
  | [] => 0
  | _ :: xs => len xs + 1

def app : List Nat → List Nat → List Nat
  | [], ys => ys
  | x :: xs, ys => x :: app xs ys

def total : List Nat → Nat
  | [] => 0
  | x :: xs => x + total xs

def addEach (k : Nat) : List Nat → List Nat
  | [] => []
  | x :: xs => (x + k) :: addEach k xs

def scale (k : Nat) : List Nat → List Nat
  | [] => []
  | x :: xs => (k * x) :: scale k xs

def count (a : Nat) : List Nat → Nat
  | [] => 0
  | x :: xs => (if x = a then 1 else 0) + count a xs

def rev : List Nat → List Nat
  | [] => []
  | x :: xs => app (rev xs) [x]"""


def _own_lists(rng: random.Random) -> list[Instance]:
    """Own list functions (length, append, sum, map-like, count, reverse)."""
    pre = namespaced("BqList", LIST_DEFS)
    ind = ("induction xs", "simp [len, app, total]")
    out = [
        Instance("len_app", "(xs ys : List Nat) : len (app xs ys) = len xs + len ys",
                 (*ind, "simp [len, app]", "omega"), pre),
        Instance("total_app", "(xs ys : List Nat) : total (app xs ys) = total xs + total ys",
                 (*ind, "simp [total, app]", "omega"), pre),
        Instance("app_nil", "(xs : List Nat) : app xs [] = xs",
                 ("induction xs", "simp [app]", "simp [app]", "assumption"), pre),
        Instance("len_rev", "(xs : List Nat) : len (rev xs) = len xs",
                 ("have h : ∀ as bs : List Nat, len (app as bs) = len as + len bs := by\n"
                  "  intro as bs\n  induction as <;> simp [len, app] <;> omega",
                  "induction xs", "simp [rev, len]", "simp [rev, len, h]", "omega"), pre),
        Instance("total_rev", "(xs : List Nat) : total (rev xs) = total xs",
                 ("have h : ∀ as bs : List Nat, total (app as bs) = total as + total bs := by\n"
                  "  intro as bs\n  induction as <;> simp [total, app] <;> omega",
                  "induction xs", "simp [rev, total]", "simp [rev, total, h]", "omega"), pre),
    ]
    for k in _pick(rng, list(range(1, 10)), 5):
        out.append(Instance(f"len_addEach_{k}", f"(xs : List Nat) : len (addEach {k} xs) = len xs",
                            ("induction xs", "simp [len, addEach]", "simp [len, addEach]", "assumption"), pre))
        out.append(Instance(f"total_addEach_{k}",
                            f"(xs : List Nat) : total (addEach {k} xs) = total xs + {k} * len xs",
                            ("induction xs", "simp [total, addEach, len]", "simp [total, addEach, len]",
                             "omega"), pre))
        out.append(Instance(f"total_scale_{k}", f"(xs : List Nat) : total (scale {k} xs) = {k} * total xs",
                            ("induction xs", "simp [total, scale]", "simp [total, scale, Nat.mul_add]",
                             "omega"), pre))
    for a in _pick(rng, list(range(0, 10)), 4):
        out.append(Instance(f"count_app_{a}",
                            f"(xs ys : List Nat) : count {a} (app xs ys) = count {a} xs + count {a} ys",
                            ("induction xs", "simp [count, app]", "simp [count, app]", "omega"), pre))
        out.append(Instance(f"count_le_{a}", f"(xs : List Nat) : count {a} xs ≤ len xs",
                            ("induction xs", "simp [count, len]", "simp [count, len]", "split <;> omega"),
                            pre))
    return out


TREE_DEFS = """\
inductive Tree where
  | leaf : Tree
  | node : Tree → Nat → Tree → Tree

def size : Tree → Nat
  | .leaf => 0
  | .node l _ r => size l + 1 + size r

def leaves : Tree → Nat
  | .leaf => 1
  | .node l _ r => leaves l + leaves r

def mirror : Tree → Tree
  | .leaf => .leaf
  | .node l x r => .node (mirror r) x (mirror l)

def tsum : Tree → Nat
  | .leaf => 0
  | .node l x r => tsum l + x + tsum r

def bump (k : Nat) : Tree → Tree
  | .leaf => .leaf
  | .node l x r => .node (bump k l) (x + k) (bump k r)

def flattenTo : Tree → List Nat → List Nat
  | .leaf, acc => acc
  | .node l x r, acc => flattenTo l (x :: flattenTo r acc)"""


def _trees(rng: random.Random) -> list[Instance]:
    """Binary trees with size, leaves, mirror, sum, bump, flatten."""
    pre = namespaced("BqTree", TREE_DEFS)
    out = [
        Instance("size_mirror", "(t : Tree) : size (mirror t) = size t",
                 ("induction t", "simp [mirror]", "simp [mirror, size]", "omega"), pre),
        Instance("mirror_mirror", "(t : Tree) : mirror (mirror t) = t",
                 ("induction t", "simp [mirror]", "simp [mirror]", "constructor <;> assumption"), pre),
        Instance("tsum_mirror", "(t : Tree) : tsum (mirror t) = tsum t",
                 ("induction t", "simp [mirror]", "simp [mirror, tsum]", "omega"), pre),
        Instance("leaves_size", "(t : Tree) : leaves t = size t + 1",
                 ("induction t", "simp [leaves, size]", "simp [leaves, size]", "omega"), pre),
        Instance("leaves_mirror", "(t : Tree) : leaves (mirror t) = leaves t",
                 ("induction t", "simp [mirror]", "simp [mirror, leaves]", "omega"), pre),
        Instance("flattenTo_length",
                 "(t : Tree) (acc : List Nat) : (flattenTo t acc).length = size t + acc.length",
                 ("induction t generalizing acc", "simp [flattenTo, size]", "simp [flattenTo, size, *]", "omega"),
                 pre),
    ]
    for k in _pick(rng, list(range(1, 10)), 4):
        out.append(Instance(f"size_bump_{k}", f"(t : Tree) : size (bump {k} t) = size t",
                            ("induction t", "simp [bump]", "simp [bump, size]", "omega"), pre))
        out.append(Instance(f"tsum_bump_{k}", f"(t : Tree) : tsum (bump {k} t) = tsum t + {k} * size t",
                            ("induction t", "simp [bump, tsum, size]", "simp [bump, tsum, size]",
                             "simp [Nat.mul_add]", "omega"), pre))
        out.append(Instance(f"mirror_bump_{k}", f"(t : Tree) : mirror (bump {k} t) = bump {k} (mirror t)",
                            ("induction t", "simp [bump, mirror]", "simp [bump, mirror]",
                             "constructor <;> assumption"), pre))
    return out


EXPR_DEFS = """\
inductive Expr where
  | num : Nat → Expr
  | var : Expr
  | add : Expr → Expr → Expr
  | mul : Expr → Expr → Expr

def eval (x : Nat) : Expr → Nat
  | .num n => n
  | .var => x
  | .add a b => eval x a + eval x b
  | .mul a b => eval x a * eval x b

def plug (e : Expr) : Expr → Expr
  | .num n => .num n
  | .var => e
  | .add a b => .add (plug e a) (plug e b)
  | .mul a b => .mul (plug e a) (plug e b)

def swapArgs : Expr → Expr
  | .num n => .num n
  | .var => .var
  | .add a b => .add (swapArgs b) (swapArgs a)
  | .mul a b => .mul (swapArgs b) (swapArgs a)

def addZero : Expr → Expr
  | .num n => .num n
  | .var => .var
  | .add a (.num 0) => addZero a
  | .add a b => .add (addZero a) (addZero b)
  | .mul a b => .mul (addZero a) (addZero b)

def nodes : Expr → Nat
  | .num _ => 1
  | .var => 1
  | .add a b => nodes a + nodes b + 1
  | .mul a b => nodes a + nodes b + 1"""


def _expr_lang(rng: random.Random) -> list[Instance]:
    """A small arithmetic expression language: evaluation, substitution, rewrites."""
    pre = namespaced("BqExpr", EXPR_DEFS)
    out = [
        Instance("eval_plug", "(x : Nat) (e d : Expr) : eval x (plug d e) = eval (eval x d) e",
                 ("induction e", "all_goals simp [plug, eval]", "all_goals simp [*]"), pre),
        Instance("eval_swapArgs", "(x : Nat) (e : Expr) : eval x (swapArgs e) = eval x e",
                 ("induction e", "all_goals simp only [swapArgs, eval, *]", "all_goals grind"), pre),
        Instance("nodes_swapArgs", "(e : Expr) : nodes (swapArgs e) = nodes e",
                 ("induction e", "all_goals simp [swapArgs, nodes, *]", "all_goals omega"), pre),
        Instance("swapArgs_swapArgs", "(e : Expr) : swapArgs (swapArgs e) = e",
                 ("induction e", "all_goals simp [swapArgs, *]"), pre),
        Instance("eval_addZero", "(x : Nat) (e : Expr) : eval x (addZero e) = eval x e",
                 ("induction e using addZero.induct", "all_goals simp_all [addZero, eval]"), pre),
        Instance("nodes_pos", "(e : Expr) : 0 < nodes e",
                 ("cases e", "all_goals simp [nodes]"), pre),
    ]
    for k in _pick(rng, list(range(2, 10)), 4):
        out.append(Instance(f"eval_twice_{k}",
                            f"(e : Expr) : eval {k} (.add e e) = 2 * eval {k} e",
                            ("simp [eval]", "omega"), pre))
        out.append(Instance(f"eval_plug_num_{k}",
                            f"(x : Nat) (e : Expr) : eval x (plug (.num {k}) e) = eval {k} e",
                            ("induction e", "all_goals simp [plug, eval, *]"), pre))
    return out


STACK_DEFS = """\
inductive AExp where
  | lit : Nat → AExp
  | plus : AExp → AExp → AExp

def aeval : AExp → Nat
  | .lit n => n
  | .plus a b => aeval a + aeval b

inductive Instr where
  | push : Nat → Instr
  | add : Instr

def step : Instr → List Nat → List Nat
  | .push n, s => n :: s
  | .add, b :: a :: s => (a + b) :: s
  | .add, s => s

def run : List Instr → List Nat → List Nat
  | [], s => s
  | i :: is, s => run is (step i s)

def compileTo : AExp → List Instr → List Instr
  | .lit n, k => .push n :: k
  | .plus a b, k => compileTo a (compileTo b (.add :: k))

def lits : AExp → Nat
  | .lit _ => 1
  | .plus a b => lits a + lits b

def ops : AExp → Nat
  | .lit _ => 0
  | .plus a b => ops a + ops b + 1"""


def _stack_machine(rng: random.Random) -> list[Instance]:
    """Compiling sums to a stack machine: correctness and code size."""
    pre = namespaced("BqStack", STACK_DEFS)
    out = [
        Instance("run_append", "(p q : List Instr) (s : List Nat) : run (p ++ q) s = run q (run p s)",
                 ("induction p generalizing s", "simp [run]", "simp [run, *]"), pre),
        Instance("compile_correct",
                 "(e : AExp) (p : List Instr) (s : List Nat) : run (compileTo e p) s = run p (aeval e :: s)",
                 ("induction e generalizing p s", "simp [compileTo, run, step, aeval]",
                  "simp [compileTo, run, step, aeval, *]"), pre),
        Instance("compile_length",
                 "(e : AExp) (p : List Instr) : (compileTo e p).length = lits e + ops e + p.length",
                 ("induction e generalizing p", "all_goals simp [compileTo, lits, ops, *]", "all_goals omega"),
                 pre),
        Instance("lits_ops", "(e : AExp) : lits e = ops e + 1",
                 ("induction e", "simp [lits, ops]", "simp [lits, ops]", "omega"), pre),
        Instance("lits_pos", "(e : AExp) : 0 < lits e",
                 ("induction e", "simp [lits]", "simp [lits]", "omega"), pre),
    ]
    lemma = ("have h : ∀ (e : AExp) p s, run (compileTo e p) s = run p (aeval e :: s) := by\n"
             "  intro e\n  induction e <;> intro p s <;> simp [compileTo, run, step, aeval, *]")
    for stack in _pick(rng, [(a, b) for a in range(0, 9) for b in range(0, 9)], 4):
        lit = f"[{stack[0]}, {stack[1]}]"
        out.append(Instance(f"run_on_{stack[0]}_{stack[1]}",
                            f"(e : AExp) : run (compileTo e []) {lit} = [aeval e, {stack[0]}, {stack[1]}]",
                            (lemma, "rw [h]", "rfl"), pre))
    return out


ENUM_DEFS = """\
inductive Day where
  | mon | tue | wed | thu | fri | sat | sun

def Day.next : Day → Day
  | .mon => .tue | .tue => .wed | .wed => .thu | .thu => .fri
  | .fri => .sat | .sat => .sun | .sun => .mon

def Day.prev : Day → Day
  | .mon => .sun | .tue => .mon | .wed => .tue | .thu => .wed
  | .fri => .thu | .sat => .fri | .sun => .sat

def Day.weekend : Day → Bool
  | .sat => true | .sun => true | _ => false

def Day.iter : Nat → Day → Day
  | 0, d => d
  | n + 1, d => Day.iter n d.next"""


def _enum_days(rng: random.Random) -> list[Instance]:
    """A user enum of weekdays with ``match``-defined functions: case analysis."""
    pre = namespaced("BqDay", ENUM_DEFS)
    out = [
        Instance("prev_next", "(d : Day) : d.next.prev = d", ("cases d", "all_goals rfl"), pre),
        Instance("next_prev", "(d : Day) : d.prev.next = d", ("cases d", "all_goals rfl"), pre),
        Instance("next_ne", "(d : Day) : d.next ≠ d", ("cases d", "all_goals simp [Day.next]"), pre),
        Instance("weekend_next", "(d : Day) (h : d.weekend = true) : d.next.next.weekend = false",
                 ("cases d", "all_goals simp_all [Day.weekend, Day.next]"), pre),
    ]
    for k in _pick(rng, list(range(7, 28)), 10):   # k >= 7: both sides differ, so rfl cannot close it
        out.append(Instance(f"iter_{k}", f"(d : Day) : Day.iter {k} d = Day.iter {k % 7} d",
                            ("cases d", "all_goals rfl"), pre))
    return out


def _enum_weekdays_ex(rng: random.Random) -> list[Instance]:
    """Hypotheses about weekdays split by cases (``cases d`` then contradictions)."""
    pre = namespaced("BqDayH", ENUM_DEFS)
    days = ["mon", "tue", "wed", "thu", "fri"]
    out = []
    for d in days:
        out.append(Instance(f"not_weekend_{d}",
                            f"(d : Day) (h : d.next = .{d}) : d.weekend = {'true' if d == 'mon' else 'false'}",
                            ("cases d", "all_goals simp_all [Day.next, Day.weekend]"), pre))
    for k in _pick(rng, list(range(1, 14)), 5):
        out.append(Instance(f"weekend_iter_{k}",
                            f"(d : Day) (h : d = .sat ∨ d = .sun) : (Day.iter {7 * k} d).weekend = true",
                            ("rcases h with h | h", "all_goals subst h", "all_goals rfl"), pre))
    return out


def _witness_defs(rng: random.Random) -> list[Instance]:
    """Existentials over user definitions: the prover must name a witness."""
    pre = namespaced("BqWit", DOUBLE_DEFS + "\n\n" + "def tri : Nat → Nat\n  | 0 => 0\n  | n + 1 => tri n + n + 1")
    out = []
    for k in _pick(rng, list(range(2, 30)), 8):
        out.append(Instance(f"double_hit_{k}", f": ∃ n, double n = {2 * k}",
                            (f"refine ⟨{k}, ?_⟩", "rfl"), pre))
    for k in _pick(rng, list(range(2, 12)), 6):
        t = k * (k + 1) // 2
        out.append(Instance(f"tri_hit_{k}", f": ∃ n, tri n = {t}", (f"refine ⟨{k}, ?_⟩", "rfl"), pre))
    for k in _pick(rng, list(range(1, 20)), 6):
        out.append(Instance(f"half_hit_{k}", f"(m : Nat) : ∃ n, half n = m + {k}",
                            (f"refine ⟨2 * (m + {k}), ?_⟩",
                             "have h : ∀ j, half (2 * j) = j := by\n"
                             "  intro j\n  induction j <;> simp_all [half, Nat.mul_succ]",
                             "exact h _"), pre))
    return out


def _case_split_rec(rng: random.Random) -> list[Instance]:
    """Hypotheses about recursive functions, refuted or used by case analysis."""
    out = []
    grid = [(a, b) for a in range(1, 8) for b in range(1, 8)]
    for a, b in _pick(rng, grid, 8):
        ns = f"BqPos_{a}_{b}"
        pre = namespaced(ns, f"def g : Nat → Nat\n  | 0 => 0\n  | n + 1 => g n + {a} * n + {b}")
        out.append(Instance(f"zero_of_{a}_{b}", f"(n : Nat) (h : g n + {a} < {a + b}) : n = 0",
                            ("cases n", "rfl", "rw [g] at h", "omega"), pre))
    for a, b in _pick(rng, grid, 6):
        ns = f"BqOr_{a}_{b}"
        pre = namespaced(ns, f"def g : Nat → Nat\n  | 0 => {a}\n  | n + 1 => g n + {b}")
        out.append(Instance(f"or_bound_{a}_{b}", f"(n : Nat) (h : n = 1 ∨ n = 2) : g n ≤ {a} + 2 * {b}",
                            ("rcases h with h | h", "all_goals subst h", "all_goals simp [g]"), pre))
    return out


PAIRWISE_DEFS = """\
def zipAdd : List Nat → List Nat → List Nat
  | x :: xs, y :: ys => (x + y) :: zipAdd xs ys
  | _, _ => []

def diff : Nat → Nat → Nat
  | 0, m => m
  | n + 1, 0 => n + 1
  | n + 1, m + 1 => diff n m

def pairs : List Nat → List Nat
  | x :: y :: rest => (x + y) :: pairs rest
  | xs => xs

def lcut : Nat → Nat → Nat
  | n + 1, m + 1 => lcut n m + 1
  | _, _ => 0

def both : List Nat → List Nat → Nat
  | _ :: xs, _ :: ys => both xs ys + 1
  | _, _ => 0

def addAll : List Nat → List Nat → List Nat
  | [], ys => ys
  | x :: xs, [] => x :: xs
  | x :: xs, y :: ys => (x + y) :: addAll xs ys

inductive Sig where
  | base : Sig
  | inc : Sig → Sig
  | dec : Sig → Sig

def cancel : Sig → Sig
  | .inc (.dec s) => cancel s
  | .inc s => .inc (cancel s)
  | .dec s => .dec (cancel s)
  | .base => .base

def value : Sig → Int
  | .base => 0
  | .inc s => value s + 1
  | .dec s => value s - 1

def steps : Sig → Nat
  | .base => 0
  | .inc s => steps s + 1
  | .dec s => steps s + 1"""


def _pairwise_rec(rng: random.Random) -> list[Instance]:
    """Functions recursing on two arguments at once, two steps at a time, or on nested patterns (a
    simplifier that cancels ``inc (dec s)``): plain ``induction`` on one variable fails, the proof needs
    functional induction (``fun_induction f x y``) or ``induction x generalizing y`` followed by ``cases y``."""
    pre = namespaced("BqPair", PAIRWISE_DEFS)
    return [*_pairwise_fixed(pre), *_pairwise_offsets(rng, pre)]


def _pairwise_fixed(pre: str) -> list[Instance]:
    """The instances of `_pairwise_rec` that draw nothing, over the preamble ``pre``: lemmas of ``zipAdd``,
    ``diff``, ``pairs``, ``lcut``, ``both``, ``addAll`` and ``cancel``."""
    gen = ("all_goals cases {y}", "all_goals simp_all [{f}]")
    return [
        Instance("zip_length", "(xs ys : List Nat) : (zipAdd xs ys).length = min xs.length ys.length",
                 ("induction xs generalizing ys", *(s.format(y="ys", f="zipAdd") for s in gen)), pre),
        Instance("zip_length_le", "(xs ys : List Nat) : (zipAdd xs ys).length ≤ xs.length",
                 ("fun_induction zipAdd xs ys", "all_goals simp_all [zipAdd]"), pre),
        Instance("zip_sum_le", "(xs ys : List Nat) : (zipAdd xs ys).sum ≤ xs.sum + ys.sum",
                 ("fun_induction zipAdd xs ys", "all_goals simp_all [zipAdd]", "all_goals omega"), pre),
        Instance("diff_min_max", "(n m : Nat) : diff n m + min n m = max n m",
                 ("fun_induction diff n m", "all_goals simp_all [diff]", "all_goals omega"), pre),
        Instance("diff_comm", "(n m : Nat) : diff n m = diff m n",
                 ("induction n generalizing m", *(s.format(y="m", f="diff") for s in gen)), pre),
        Instance("diff_le", "(n m : Nat) : diff n m ≤ n + m",
                 ("fun_induction diff n m", "all_goals simp_all [diff]", "all_goals omega"), pre),
        Instance("pairs_sum", "(xs : List Nat) : (pairs xs).sum = xs.sum",
                 ("fun_induction pairs xs", "all_goals simp_all [pairs]", "all_goals omega"), pre),
        Instance("pairs_length", "(xs : List Nat) : (pairs xs).length ≤ xs.length",
                 ("fun_induction pairs xs", "all_goals simp_all [pairs]", "all_goals omega"), pre),
        Instance("lcut_comm", "(n m : Nat) : lcut n m = lcut m n",
                 ("induction n generalizing m", *(s.format(y="m", f="lcut") for s in gen)), pre),
        Instance("lcut_min", "(n m : Nat) : lcut n m = min n m",
                 ("induction n generalizing m", *(s.format(y="m", f="lcut") for s in gen)), pre),
        Instance("lcut_le", "(n m : Nat) : lcut n m ≤ m", ("fun_induction lcut n m", "all_goals simp_all [lcut]"),
                 pre),
        Instance("zip_length_right", "(xs ys : List Nat) : (zipAdd xs ys).length ≤ ys.length",
                 ("induction xs generalizing ys", *(s.format(y="ys", f="zipAdd") for s in gen)), pre),
        Instance("zip_comm", "(xs ys : List Nat) : zipAdd xs ys = zipAdd ys xs",
                 ("induction xs generalizing ys", "all_goals cases ys",
                  "all_goals simp_all [zipAdd, Nat.add_comm]"), pre),
        Instance("both_min", "(xs ys : List Nat) : both xs ys = min xs.length ys.length",
                 ("induction xs generalizing ys", *(s.format(y="ys", f="both") for s in gen)), pre),
        Instance("both_comm", "(xs ys : List Nat) : both xs ys = both ys xs",
                 ("induction xs generalizing ys", *(s.format(y="ys", f="both") for s in gen)), pre),
        Instance("both_le", "(xs ys : List Nat) : both xs ys ≤ xs.length",
                 ("fun_induction both xs ys", "all_goals simp_all [both]"), pre),
        Instance("addAll_length", "(xs ys : List Nat) : (addAll xs ys).length = max xs.length ys.length",
                 ("induction xs generalizing ys", *(s.format(y="ys", f="addAll") for s in gen)), pre),
        Instance("cancel_value", "(s : Sig) : value (cancel s) = value s",
                 ("fun_induction cancel s", "all_goals simp_all [cancel, value]"), pre),
        Instance("cancel_steps", "(s : Sig) : steps (cancel s) ≤ steps s",
                 ("fun_induction cancel s", "all_goals simp_all [cancel, steps]", "all_goals omega"), pre),
    ]


def _pairwise_offsets(rng: random.Random, pre: str) -> list[Instance]:
    """The instances of `_pairwise_rec` at three offsets ``k`` drawn from 1..9, four per offset, over the
    preamble ``pre``."""
    out: list[Instance] = []
    for k in _pick(rng, list(range(1, 10)), 3):
        out.append(Instance(f"diff_add_{k}", f"(n : Nat) : diff n (n + {k}) = {k}",
                            ("induction n", "all_goals simp_all [diff]"), pre))
        out.append(Instance(f"zip_rep_{k}",
                            f"(xs : List Nat) : (zipAdd xs (List.replicate xs.length {k})).sum"
                            f" = xs.sum + {k} * xs.length",
                            ("induction xs", "all_goals simp_all [zipAdd, List.replicate_succ, Nat.mul_succ]",
                             "all_goals omega"), pre))
        out.append(Instance(f"lcut_add_{k}", f"(n : Nat) : lcut (n + {k}) n = n",
                            ("induction n", "all_goals simp_all [lcut]"), pre))
        out.append(Instance(f"both_rep_{k}", f"(n : Nat) (ys : List Nat) : both (List.replicate n {k}) ys"
                            " = min n ys.length",
                            ("induction n generalizing ys", "all_goals cases ys",
                             "all_goals simp_all [both, List.replicate_succ]"), pre))
    return out


def _list_witnesses(rng: random.Random) -> list[Instance]:
    """Existentials over lists: build the witness list from the numbers of the goal, then check it."""
    out = []
    for n, k in _pick(rng, [(n, k) for n in range(2, 7) for k in range(1, 10)], 4):
        out.append(Instance(f"rep_{n}_{k}", f": ∃ xs : List Nat, xs.length = {n} ∧ ∀ x ∈ xs, x = {k}",
                            (f"refine ⟨List.replicate {n} {k}, ?_, ?_⟩", "simp", "simp")))
    for i in range(4):
        a, b, c = (rng.randint(0, 30) for _ in range(3))
        cut = 1 + i % 2
        left, right = [a, b, c][:cut], [a, b, c][cut:]
        out.append(Instance(f"split_{i}", f": ∃ xs ys : List Nat, xs ++ ys = [{a}, {b}, {c}] ∧ xs.length = {cut}",
                            (f"refine ⟨{left}, {right}, ?_, ?_⟩".replace("'", ""), "rfl", "rfl")))
    for i in range(4):
        a, b, k = rng.randint(0, 20), rng.randint(0, 20), rng.randint(1, 9)
        out.append(Instance(f"premap_{i}", f": ∃ xs : List Nat, xs.map (· + {k}) = [{a + k}, {b + k}]",
                            (f"refine ⟨[{a}, {b}], ?_⟩", "rfl")))
    for s in _pick(rng, list(range(3, 40)), 3):
        out.append(Instance(f"nonempty_{s}", f": ∃ xs : List Nat, xs ≠ [] ∧ xs.sum = {s}",
                            (f"refine ⟨[{s}], ?_, ?_⟩", "simp", "rfl")))
    return _distinct(out)


def _list_fill(rng: random.Random) -> list[Instance]:
    """A list with a given length ``n`` and sum ``s`` plus a condition on ``s``: the generic witness built from
    the goal's two numbers, ``s :: List.replicate (n - 1) 0`` (the sum first, then zeros up to the length),
    given with one ``?_`` for all the conditions, which ``simp`` then checks: the step does not depend on
    how many conditions the goal has."""
    out = []
    for i, (n, s) in enumerate(_pick(rng, [(n, s) for n in range(2, 7) for s in range(3, 40)], 8)):
        cond = f"xs.head? = some {s}" if i % 2 == 0 else f"{s} ∈ xs"
        out.append(Instance(f"{n}_{s}", f": ∃ xs : List Nat, xs.length = {n} ∧ xs.sum = {s} ∧ {cond}",
                            (f"refine ⟨{s} :: List.replicate ({n} - 1) 0, ?_⟩", "simp")))
    return _distinct(out)


def _list_sum_exercises(rng: random.Random) -> list[Instance]:
    """Existential lists with a given length and sum plus one more condition, in several shapes. Profiles
    withhold this family's proofs (``data.withhold_families``): the loop must find them by search, with the
    witness recipe of `_list_fill` (``s :: List.replicate (n - 1) 0``)."""
    out = []
    grid = [(n, s) for n in range(2, 7) for s in range(3, 40)]
    for i, (n, s) in enumerate(_pick(rng, grid, 12)):
        shape = i % 3
        if shape == 0:
            st = f": ∃ xs : List Nat, xs.sum = {s} ∧ xs.length = {n} ∧ {s} ∈ xs"
        elif shape == 1:
            st = f": ∃ xs : List Nat, xs.length = {n} ∧ xs.sum = {s} ∧ 0 ∈ xs"
        else:
            st = f": ∃ xs : List Nat, xs.length = {n} ∧ {s} ≤ xs.sum ∧ xs.head? = some {s}"
        out.append(Instance(f"s{shape}_{n}_{s}", st,
                            (f"refine ⟨{s} :: List.replicate ({n} - 1) 0, ?_⟩", "simp")))
    return _distinct(out)


# ---------------------------------------------------------------------------
# Corpus (train) families: easy
# ---------------------------------------------------------------------------


def _omega_nat(rng: random.Random) -> list[Instance]:
    """Linear Nat facts under hypotheses (``omega``)."""
    out = []
    for i in range(40):
        a, b, c = rng.randint(1, 9), rng.randint(1, 9), rng.randint(0, 9)
        shape = i % 4
        if shape == 0:
            st = f"(x y : Nat) (h : x + {a} ≤ y) : x < y + {c}"
        elif shape == 1:
            st = f"(x y : Nat) (h₁ : x ≤ {a}) (h₂ : y ≤ {b}) : x + y ≤ {a + b + c}"
        elif shape == 2:
            st = f"(x : Nat) (h : {a} * x + {b} = {a} * {c} + {b}) : x = {c}"
        else:
            st = f"(x y : Nat) (h : x = y + {a}) : x - y = {a}"
        out.append(Instance(f"s{shape}_{i}", st, ("omega",)))
    return _distinct(out)


def _omega_int(rng: random.Random) -> list[Instance]:
    """Linear Int facts (``omega``), some in two steps."""
    out = []
    for i in range(24):
        a, b = rng.randint(1, 9), rng.randint(-9, 9)
        shape = i % 3
        if shape == 0:
            st = f"(x y : Int) (h : x - y = {a}) : y < x"
            pf: tuple[str, ...] = ("omega",)
        elif shape == 1:
            st = f"(x : Int) (h : {a} * x = {a} * ({b})) : x = {b}"
            pf = ("omega",)
        else:
            st = f"(x y : Int) (h₁ : x ≤ y) (h₂ : y ≤ x + {a}) : y - x ≤ {a} ∧ 0 ≤ y - x"
            pf = ("constructor", "omega", "omega")
        out.append(Instance(f"s{shape}_{i}", st, pf))
    return _distinct(out)


def _prop_logic(rng: random.Random) -> list[Instance]:
    """Propositional tautologies with intro/constructor/cases proofs."""
    shapes = [
        ("(p q : Prop) (hp : p) (hq : q) : {A} ∧ {B}", ("constructor", "exact {a}", "exact {b}")),
        ("(p q : Prop) (h : p ∧ q) : {B} ∧ {A}", ("obtain ⟨hp, hq⟩ := h", "exact ⟨{b}, {a}⟩")),
        ("(p q r : Prop) (h : {A} ∨ {B}) (h₁ : {A} → r) (h₂ : {B} → r) : r",
         ("cases h with\n| inl h => exact h₁ h\n| inr h => exact h₂ h",)),
        ("(p q : Prop) : {A} → ({A} → {B}) → {B}", ("intro h f", "exact f h")),
        ("(p q r : Prop) (f : {A} → {B}) (g : {B} → r) : {A} → r", ("intro h", "exact g (f h)")),
    ]
    out = []
    for i, (st, pf) in enumerate(shapes):
        for flip in (False, True):
            a, b = ("q", "p") if flip else ("p", "q")
            ha, hb = ("hq", "hp") if flip else ("hp", "hq")
            s = st.format(A=a, B=b)
            proof = tuple(t.format(a=ha, b=hb) for t in pf)
            out.append(Instance(f"s{i}_{'qp' if flip else 'pq'}", s, proof))
    extra = [
        ("(p q : Prop) : p ∧ q → q ∨ p", ("intro h", "exact Or.inl h.2")),
        ("(p : Prop) : ¬¬(p ∨ ¬p)", ("intro h", "apply h", "right", "intro hp", "exact h (Or.inl hp)")),
        ("(p q : Prop) (hnq : ¬q) (h : p → q) : ¬p", ("intro hp", "exact hnq (h hp)")),
        ("(p q : Prop) : (p ↔ q) → (q ↔ p)", ("intro h", "exact h.symm")),
        ("(p q r : Prop) : (p → q → r) → (p ∧ q → r)", ("intro h hpq", "exact h hpq.1 hpq.2")),
        ("(α : Type) (P : α → Prop) (a : α) (h : ∀ x, P x) : ∃ x, P x", ("exact ⟨a, h a⟩",)),
    ]
    rng.shuffle(extra)
    for i, (s, pf) in enumerate(extra):
        out.append(Instance(f"x{i}", s, pf))
    return out


def _core_lists(rng: random.Random) -> list[Instance]:
    """Core ``List`` lemmas (``simp``), with concrete lists drawn at random."""
    out = []
    for i in range(18):
        xs = [rng.randint(0, 9) for _ in range(rng.randint(1, 4))]
        lit = "[" + ", ".join(map(str, xs)) + "]"
        shape = i % 6
        if shape == 0:
            st, pf = f"(ys : List Nat) : ({lit} ++ ys).length = ys.length + {len(xs)}", ("simp",)
        elif shape == 1:
            st, pf = f"(ys : List Nat) : ({lit} ++ ys).reverse = ys.reverse ++ {lit[::-1].replace('][', '')}", None
            st = f"(ys : List Nat) : (ys ++ {lit}).reverse.length = {len(xs)} + ys.length"
            pf = ("simp", "omega")
        elif shape == 2:
            st, pf = f"(ys : List Nat) : (List.map (· + {xs[0]}) ys).length = ys.length", ("simp",)
        elif shape == 3:
            st, pf = f"(f : Nat → Nat) : (List.map f {lit}).length = {len(xs)}", ("simp",)
        elif shape == 4:
            st, pf = f"(ys : List Nat) (h : ys = {lit}) : ys.sum = {sum(xs)}", ("subst h", "rfl")
        else:
            st, pf = f"(a : Nat) (ys : List Nat) : (a :: ys ++ {lit}).length = ys.length + {len(xs) + 1}", (
                "simp",)
        out.append(Instance(f"s{shape}_{i}", st, pf))
    return _distinct(out)


def _bool_algebra(rng: random.Random) -> list[Instance]:
    """Bool identities closed by case analysis on the variables."""
    shapes = [
        "(a b : Bool) : (a && b) = (b && a)",
        "(a b : Bool) : (a || b) = (b || a)",
        "(a b c : Bool) : (a && (b || c)) = ((a && b) || (a && c))",
        "(a b : Bool) : (!(a && b)) = (!a || !b)",
        "(a b : Bool) : (!(a || b)) = (!a && !b)",
        "(a : Bool) : (a ^^ a) = false",
        "(a b : Bool) : (a ^^ b) = (b ^^ a)",
        "(a b c : Bool) : ((a || b) || c) = (a || (b || c))",
        "(a b : Bool) : (a && (a || b)) = a",
        "(a b : Bool) : (a || (a && b)) = a",
    ]
    rng.shuffle(shapes)
    out = []
    for i, st in enumerate(shapes):
        out.append(Instance(f"s{i}", st, ("cases a", "all_goals simp")))
    return out


def _nat_mod(rng: random.Random) -> list[Instance]:
    """Remainders and quotients of linear expressions (``omega``)."""
    out = []
    for i, (k, r) in enumerate(_pick(rng, [(k, r) for k in range(2, 10) for r in range(0, 9) if r < k], 14)):
        if i % 2 == 0:
            out.append(Instance(f"mod_{k}_{r}", f"(n : Nat) : ({k} * n + {r}) % {k} = {r}", ("omega",)))
        else:
            out.append(Instance(f"div_{k}_{r}", f"(n : Nat) : ({k} * n + {r}) / {k} = n", ("omega",)))
    return out


def _eval_defs(rng: random.Random) -> list[Instance]:
    """Concrete values of the corpus' own functions (``decide``/``rfl``)."""
    pre = namespaced("BqVal", DOUBLE_DEFS)
    out = []
    for n in _pick(rng, list(range(0, 30)), 6):
        out.append(Instance(f"double_{n}", f": double {n} = {2 * n}", ("rfl",), pre))
    for n in _pick(rng, list(range(0, 30)), 6):
        out.append(Instance(f"half_{n}", f": half {n} = {n // 2}", ("rfl",), pre))
    for n in _pick(rng, list(range(0, 15)), 6):
        out.append(Instance(f"sumTo_{n}", f": sumTo {n} = {n * (n + 1) // 2}", ("rfl",), pre))
    return out


def _exists_nat(rng: random.Random) -> list[Instance]:
    """Existentials over core arithmetic with an explicit witness."""
    out = []
    for i in range(12):
        a, b = rng.randint(1, 9), rng.randint(10, 40)
        if i % 2 == 0:
            out.append(Instance(f"add_{i}", f": ∃ n : Nat, n + {a} = {b}", (f"exact ⟨{b - a}, rfl⟩",)))
        else:
            out.append(Instance(f"mul_{i}", f": ∃ n : Nat, {a} * n = {a * b}", (f"exact ⟨{b}, rfl⟩",)))
    return _distinct(out)


# ---------------------------------------------------------------------------
# Benchmark families: hard (different definitions and shapes from the corpus)
# ---------------------------------------------------------------------------


def _two_step_rec(rng: random.Random) -> list[Instance]:
    """Two-step recursions ``h (n+2) = h n + c``: values at even and odd arguments."""
    out = []
    for i, (x, c) in enumerate(_pick(rng, [(x, c) for x in range(0, 6) for c in range(1, 7)], 10)):
        y = rng.randint(0, 5)
        a, b = (x, y) if i % 2 == 0 else (y, x)
        ns = f"BqTwo_{a}_{b}_{c}"
        pre = namespaced(ns, f"def h : Nat → Nat\n  | 0 => {a}\n  | 1 => {b}\n  | n + 2 => h n + {c}")
        if i % 2 == 0:
            out.append(Instance(f"even_{a}_{b}_{c}", f"(n : Nat) : h (2 * n) = {c} * n + {a}",
                                ("induction n", "simp [h]", "rw [Nat.mul_succ]", "simp [h]", "omega"), pre))
        else:
            out.append(Instance(f"odd_{a}_{b}_{c}", f"(n : Nat) : h (2 * n + 1) = {c} * n + {b}",
                                ("induction n", "simp [h]", "rw [Nat.mul_succ]", "simp [h]", "omega"), pre))
    return out


INTERLEAVE_DEFS = """\
def dup : List Nat → List Nat
  | [] => []
  | x :: xs => x :: x :: dup xs

def snoc : List Nat → Nat → List Nat
  | [], a => [a]
  | x :: xs, a => x :: snoc xs a

def weave : List Nat → List Nat → List Nat
  | [], ys => ys
  | xs, [] => xs
  | x :: xs, y :: ys => x :: y :: weave xs ys

def evens : List Nat → List Nat
  | [] => []
  | [x] => [x]
  | x :: _ :: xs => x :: evens xs"""


def _weave_lists(rng: random.Random) -> list[Instance]:
    """Duplicating, snoc and interleaving lists (core List length/sum)."""
    pre = namespaced("BqWeave", INTERLEAVE_DEFS)
    out = [
        Instance("dup_length", "(xs : List Nat) : (dup xs).length = 2 * xs.length",
                 ("induction xs", "simp [dup]", "simp [dup]", "omega"), pre),
        Instance("dup_sum", "(xs : List Nat) : (dup xs).sum = 2 * xs.sum",
                 ("induction xs", "simp [dup]", "simp [dup]", "omega"), pre),
        Instance("snoc_length", "(xs : List Nat) (a : Nat) : (snoc xs a).length = xs.length + 1",
                 ("induction xs", "simp [snoc]", "simp [snoc]", "assumption"), pre),
        Instance("snoc_eq", "(xs : List Nat) (a : Nat) : snoc xs a = xs ++ [a]",
                 ("induction xs", "simp [snoc]", "simp [snoc]", "assumption"), pre),
        Instance("weave_length", "(xs ys : List Nat) : (weave xs ys).length = xs.length + ys.length",
                 ("induction xs generalizing ys", "simp [weave]", "cases ys", "simp [weave]",
                  "simp [weave, *]", "omega"), pre),
        Instance("weave_sum", "(xs ys : List Nat) : (weave xs ys).sum = xs.sum + ys.sum",
                 ("induction xs generalizing ys", "simp [weave]", "cases ys", "simp [weave]",
                  "simp [weave, *]", "omega"), pre),
        Instance("weave_nil", "(xs : List Nat) : weave xs [] = xs",
                 ("cases xs", "all_goals simp [weave]"), pre),
        Instance("evens_dup", "(xs : List Nat) : evens (dup xs) = xs",
                 ("induction xs", "simp [dup, evens]", "simp [dup, evens]", "assumption"), pre),
    ]
    for k in _pick(rng, list(range(1, 10)), 3):
        out.append(Instance(f"dup_map_{k}",
                            f"(xs : List Nat) : dup (xs.map (· + {k})) = (dup xs).map (· + {k})",
                            ("induction xs", "simp [dup]", "simp [dup]", "assumption"), pre))
    return out


FORK_DEFS = """\
inductive Fork where
  | tip : Nat → Fork
  | fork : Fork → Fork → Fork

def tips : Fork → Nat
  | .tip _ => 1
  | .fork l r => tips l + tips r

def forks : Fork → Nat
  | .tip _ => 0
  | .fork l r => forks l + forks r + 1

def swap : Fork → Fork
  | .tip n => .tip n
  | .fork l r => .fork (swap r) (swap l)

def weight : Fork → Nat
  | .tip n => n
  | .fork l r => weight l + weight r

def incr (k : Nat) : Fork → Fork
  | .tip n => .tip (n + k)
  | .fork l r => .fork (incr k l) (incr k r)"""


def _fork_trees(rng: random.Random) -> list[Instance]:
    """Leaf-labelled binary trees: tips vs forks, swap, weights."""
    pre = namespaced("BqFork", FORK_DEFS)
    out = [
        Instance("tips_forks", "(t : Fork) : tips t = forks t + 1",
                 ("induction t", "simp [tips, forks]", "simp [tips, forks]", "omega"), pre),
        Instance("swap_swap", "(t : Fork) : swap (swap t) = t",
                 ("induction t", "simp [swap]", "simp [swap]", "constructor <;> assumption"), pre),
        Instance("weight_swap", "(t : Fork) : weight (swap t) = weight t",
                 ("induction t", "simp [swap, weight]", "simp [swap, weight]", "omega"), pre),
        Instance("tips_swap", "(t : Fork) : tips (swap t) = tips t",
                 ("induction t", "simp [swap, tips]", "simp [swap, tips]", "omega"), pre),
        Instance("tips_pos", "(t : Fork) : 0 < tips t",
                 ("induction t", "simp [tips]", "simp [tips]", "omega"), pre),
    ]
    for k in _pick(rng, list(range(1, 10)), 3):
        out.append(Instance(f"weight_incr_{k}", f"(t : Fork) : weight (incr {k} t) = weight t + {k} * tips t",
                            ("induction t", "simp [incr, weight, tips]", "simp [incr, weight, tips]",
                             "simp [Nat.mul_add]", "omega"), pre))
        out.append(Instance(f"swap_incr_{k}", f"(t : Fork) : swap (incr {k} t) = incr {k} (swap t)",
                            ("induction t", "simp [incr, swap]", "simp [incr, swap]",
                             "constructor <;> assumption"), pre))
    return out


BEXP_DEFS = """\
inductive BExp where
  | tt : BExp
  | ff : BExp
  | neg : BExp → BExp
  | conj : BExp → BExp → BExp

def beval : BExp → Bool
  | .tt => true
  | .ff => false
  | .neg b => !beval b
  | .conj a b => beval a && beval b

def dropNegNeg : BExp → BExp
  | .neg (.neg b) => dropNegNeg b
  | .neg b => .neg (dropNegNeg b)
  | .conj a b => .conj (dropNegNeg a) (dropNegNeg b)
  | b => b

def mirrorB : BExp → BExp
  | .conj a b => .conj (mirrorB b) (mirrorB a)
  | .neg b => .neg (mirrorB b)
  | b => b

def depth : BExp → Nat
  | .neg b => depth b + 1
  | .conj a b => max (depth a) (depth b) + 1
  | _ => 0"""


def _bool_exprs(rng: random.Random) -> list[Instance]:
    """A Boolean expression language: evaluation preserved by rewrites."""
    pre = namespaced("BqBExp", BEXP_DEFS)
    out = [
        Instance("beval_mirrorB", "(b : BExp) : beval (mirrorB b) = beval b",
                 ("induction b", "all_goals simp [mirrorB, beval, *]", "all_goals exact Bool.and_comm _ _"), pre),
        Instance("mirrorB_mirrorB", "(b : BExp) : mirrorB (mirrorB b) = b",
                 ("induction b", "all_goals simp [mirrorB, *]"), pre),
        Instance("depth_mirrorB", "(b : BExp) : depth (mirrorB b) = depth b",
                 ("induction b", "all_goals simp [mirrorB, depth, *]", "all_goals omega"), pre),
        Instance("beval_dropNegNeg", "(b : BExp) : beval (dropNegNeg b) = beval b",
                 ("induction b using dropNegNeg.induct", "all_goals simp_all [dropNegNeg, beval]"), pre),
    ]
    for n in _pick(rng, list(range(1, 6)), 4):
        e = "b"
        for _ in range(2 * n):
            e = f".neg ({e})" if e != "b" else ".neg b"
        out.append(Instance(f"neg_tower_{2 * n}", f"(b : BExp) : beval ({e}) = beval b",
                            ("simp only [beval]", "simp"), pre))
    return out


SUIT_DEFS = """\
inductive Suit where
  | clubs | diamonds | hearts | spades

def Suit.red : Suit → Bool
  | .diamonds => true | .hearts => true | _ => false

def Suit.turn : Suit → Suit
  | .clubs => .diamonds | .diamonds => .hearts | .hearts => .spades | .spades => .clubs

def Suit.rank : Suit → Nat
  | .clubs => 0 | .diamonds => 1 | .hearts => 2 | .spades => 3"""


def _suits(rng: random.Random) -> list[Instance]:
    """A four-valued enum: rotations, colours and ranks by case analysis."""
    pre = namespaced("BqSuit", SUIT_DEFS)
    out = [
        Instance("turn4", "(s : Suit) : s.turn.turn.turn.turn = s", ("cases s", "all_goals rfl"), pre),
        Instance("red_turn", "(s : Suit) (h : s.red = true) : s.turn.red = false ∨ s.turn.turn.red = false",
                 ("cases s", "all_goals simp_all [Suit.red, Suit.turn]"), pre),
        Instance("rank_lt", "(s : Suit) : s.rank < 4", ("cases s", "all_goals simp [Suit.rank]"), pre),
        Instance("rank_inj", "(s t : Suit) (h : s.rank = t.rank) : s = t",
                 ("cases s", "all_goals cases t", "all_goals simp_all [Suit.rank]"), pre),
        Instance("turn_rank", "(s : Suit) (h : s ≠ .spades) : s.turn.rank = s.rank + 1",
                 ("cases s", "all_goals simp_all [Suit.turn, Suit.rank]"), pre),
    ]
    for k in _pick(rng, list(range(1, 4)), 2):
        out.append(Instance(f"red_{k}", f"(s : Suit) (h : s.rank = {k}) : s.red = {'true' if k in (1, 2) else 'false'}",
                            ("cases s", "all_goals simp_all [Suit.rank, Suit.red]"), pre))
    return out


def _witness_lists(rng: random.Random) -> list[Instance]:
    """Existentials over lists and pairs: name a witness, then check it."""
    out = []
    for i in range(8):
        n, s = rng.randint(2, 5), rng.randint(5, 30)
        xs = [s // n] * (n - 1) + [s - (s // n) * (n - 1)]
        lit = "[" + ", ".join(map(str, xs)) + "]"
        out.append(Instance(f"len_sum_{i}", f": ∃ xs : List Nat, xs.length = {n} ∧ xs.sum = {s}",
                            (f"refine ⟨{lit}, ?_, ?_⟩", "rfl", "rfl")))
    return _distinct(out)


# ---------------------------------------------------------------------------
# Benchmark families: easy
# ---------------------------------------------------------------------------


def _bench_arith(rng: random.Random) -> list[Instance]:
    """Linear facts with min/max and chains of inequalities (``omega``)."""
    out = []
    for i in range(12):
        a, b = rng.randint(1, 9), rng.randint(1, 9)
        shape = i % 3
        if shape == 0:
            st = f"(x y : Nat) : min x y + {a} ≤ max x y + {a}"
        elif shape == 1:
            st = f"(x y z : Nat) (h₁ : x < y) (h₂ : y + {a} < z) : x + {a + 1} < z"
        else:
            st = f"(x : Int) (h : {a} ≤ x) : {b} ≤ x * {b} - {a - 1} * {b}"
        out.append(Instance(f"s{shape}_{i}", st, ("omega",)))
    return _distinct(out)


def _bench_logic(rng: random.Random) -> list[Instance]:
    """Propositional and quantifier facts in different shapes from the corpus."""
    items = [
        ("(p q r : Prop) (h : p ∧ (q ∨ r)) : (p ∧ q) ∨ (p ∧ r)",
         ("obtain ⟨hp, hq | hr⟩ := h", "exact Or.inl ⟨hp, hq⟩", "exact Or.inr ⟨hp, hr⟩")),
        ("(p q : Prop) (h : p ∨ q) (hnp : ¬p) : q", ("cases h", "contradiction", "assumption")),
        ("(α : Type) (P Q : α → Prop) (h : ∀ x, P x ∧ Q x) : ∀ x, Q x", ("intro x", "exact (h x).2")),
        ("(α : Type) (P : α → Prop) (h : ¬∃ x, P x) : ∀ x, ¬P x", ("intro x hx", "exact h ⟨x, hx⟩")),
        ("(p q : Prop) : (p → q) → (¬q → ¬p)", ("intro h hnq hp", "exact hnq (h hp)")),
        ("(p q r : Prop) : (p ∨ q) ∧ r → (p ∧ r) ∨ (q ∧ r)",
         ("intro ⟨hpq, hr⟩", "cases hpq with\n| inl hp => exact Or.inl ⟨hp, hr⟩\n| inr hq => exact Or.inr ⟨hq, hr⟩")),
        ("(p q : Prop) : (p ↔ q) → (p → q) ∧ (q → p)", ("intro h", "exact ⟨h.mp, h.mpr⟩")),
        ("(α : Type) (P : α → Prop) (a b : α) (hab : a = b) (ha : P a) : P b", ("subst hab", "exact ha")),
    ]
    rng.shuffle(items)
    return [Instance(f"s{i}", st, pf) for i, (st, pf) in enumerate(items)]


def _bench_lists(rng: random.Random) -> list[Instance]:
    """Core List facts about map, filter, replicate and reverse (``simp``)."""
    out = []
    for i in range(10):
        k = rng.randint(1, 9)
        shape = i % 5
        if shape == 0:
            st, pf = f"(xs : List Nat) : (xs.map (· * {k})).reverse.length = xs.length", ("simp",)
        elif shape == 1:
            st, pf = f"(xs : List Nat) : (xs.filter (· < {k})).length ≤ xs.length", (
                "exact List.length_filter_le _ _",)
        elif shape == 2:
            st, pf = f"(a : Nat) : (List.replicate {k} a).length = {k}", ("simp",)
        elif shape == 3:
            st, pf = f"(xs ys : List Nat) : (xs ++ ys).length + {k} = xs.length + (ys.length + {k})", (
                "simp", "omega")
        else:
            st, pf = f"(xs : List Nat) : xs.reverse.reverse ++ [{k}] = xs ++ [{k}]", ("simp",)
        out.append(Instance(f"s{shape}_{i}", st, pf))
    return _distinct(out)


FAMILIES: tuple[Family, ...] = (
    Family("aff", "train", True, "affine recursions f 0 = a, f (n+1) = f n + b: closed forms and bounds",
           _affine_rec, technique="induction"),
    Family("dbl", "train", True, "own double/half/sumTo on Nat: lemmas by induction",
           _double_half, technique="induction"),
    Family("lst", "train", True, "own list functions len/app/total/addEach/scale/count/rev",
           _own_lists, technique="induction"),
    Family("tree", "train", True, "binary trees: size, leaves, mirror, sum, bump, flatten",
           _trees, technique="induction"),
    Family("expr", "train", True, "arithmetic expression language: eval, plug, swapArgs, nodes",
           _expr_lang, technique="induction"),
    Family("stk", "train", True, "stack-machine compiler for sums: correctness and code size",
           _stack_machine, technique="induction"),
    Family("day", "train", True, "weekday enum: next/prev/iter by case analysis", _enum_days, technique="cases"),
    Family("dayh", "train", True, "weekday hypotheses split by cases and rcases", _enum_weekdays_ex, technique="cases"),
    Family("wit", "train", True, "existential witnesses for own double/tri/half", _witness_defs, technique="witness"),
    Family("csr", "train", True, "hypotheses on recursive functions: cases and rcases",
           _case_split_rec, technique="cases"),
    Family("pair", "train", True, "two-argument and two-step recursions: fun_induction, induction ... generalizing",
           _pairwise_rec, technique="generalizing"),
    Family("lwit", "train", True, "existential list witnesses built from the goal's numbers",
           _list_witnesses, technique="witness"),
    Family("lfill", "train", True, "a list of given length, sum and head: the witness s :: List.replicate (n - 1) 0",
           _list_fill, technique="witness"),
    Family("lsum", "train", True, "list length and sum with a third condition (exercises: proofs withheld)",
           _list_sum_exercises, technique="witness"),
    Family("onat", "train", False, "linear Nat arithmetic under hypotheses (omega)", _omega_nat, technique="arith"),
    Family("oint", "train", False, "linear Int arithmetic (omega)", _omega_int, technique="arith"),
    Family("prop", "train", False, "propositional logic (intro/constructor/cases/exact)",
           _prop_logic, technique="logic"),
    Family("clst", "train", False, "core List length/map/sum lemmas (simp)", _core_lists, technique="rewriting"),
    Family("bool", "train", False, "Bool algebra by case analysis", _bool_algebra, technique="cases"),
    Family("nmod", "train", False, "mod/div of linear expressions (omega)", _nat_mod, technique="arith"),
    Family("val", "train", False, "concrete values of own double/half/sumTo (rfl)",
           _eval_defs, technique="computation"),
    Family("exn", "train", False, "existentials over Nat with explicit witnesses", _exists_nat, technique="witness"),
    Family("two", "benchmark", True, "two-step recursions h (n+2) = h n + c at even arguments",
           _two_step_rec, technique="induction"),
    Family("weave", "benchmark", True, "dup/snoc/weave/evens on lists with core length/sum",
           _weave_lists, technique="induction"),
    Family("fork", "benchmark", True, "leaf-labelled trees: tips, forks, swap, weight, incr",
           _fork_trees, technique="induction"),
    Family("bexp", "benchmark", True, "Boolean expression language: beval, mirrorB, dropNegNeg",
           _bool_exprs, technique="induction"),
    Family("suit", "benchmark", True, "four-valued suit enum: turn, red, rank by cases", _suits, technique="cases"),
    Family("wlst", "benchmark", True, "existential list witnesses with given length and sum",
           _witness_lists, technique="witness"),
    Family("barith", "benchmark", False, "min/max and inequality chains (omega)", _bench_arith, technique="arith"),
    Family("blogic", "benchmark", False, "propositional and quantifier logic, other shapes",
           _bench_logic, technique="logic"),
    Family("blist", "benchmark", False, "core List map/filter/replicate/reverse facts",
           _bench_lists, technique="rewriting"),
)
