"""Per-instance renaming of generated theorems: the policy must copy names from the goal.

A family writes its theorems with fixed names (``double``, ``Tree.leaf``,
``xs``, ``h``). Left that way, every instance of a family says ``simp [double]``
and a policy can memorise the tactic text instead of reading the goal. So each
instance gets its own names: inductive types, constructors, definitions and the
statement's variables (binders and quantified names, hypotheses included) are
replaced by names drawn from the pools below (a ``structure`` or ``class`` is a
type, its fields or methods and every named ``instance`` are definitions, a
named structure constructor ``mk ::`` is a constructor), with a
``random.Random`` seeded by (seed, family, instance key), and the same
replacement is applied to the preamble, the statement and the proof, so the
known proof still proves the theorem. The preamble's namespace becomes one per theorem (``Bq_<family>_<key>``)
so that no two theorems' definitions can clash in one file.

The definition, constructor and type pools of the corpus and of the benchmark
are disjoint: the benchmark asks for names the training data never used. The
variable pools are shared (``n``, ``xs``, ``h₁`` are the names everyone uses).
No pool name exists at the root of Lean core or is a keyword (Lean checks it:
``tests/core/test_renaming_lean.py``); a drawn name is also never one of the
identifiers already in the instance's text, so a renamed name cannot capture or
be captured by a name the instance uses for something else (``Nat.mul_add``, a
proof's own ``intro as bs``).

Renaming works on identifier tokens, dotted names included: a plain or leading-
dot name (``double``, ``.leaf``, ``(f x).size``) is renamed part by part, a
qualified name only when its head is renamed (``Day.next``, ``d.next``,
``addZero.induct``), never when the head is someone else's (``Nat.add_assoc``
keeps its ``add`` even when a constructor ``add`` is renamed). So a field or
method is renamed after a type name or a statement variable (``Pt.px p``,
``p.px``) but not after a name bound in a definition or a proof (``q.px`` with
``fun q => ...``): families project fields through the type name there.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Literal

from burnqed_core.data.synthetic.families import Instance, SetName

# A Lean identifier (letters incl. Greek, digits, _, ', subscripts), dotted parts
# allowed; an optional leading dot (``.leaf``, ``(f x).size``).
IDENT = re.compile(r"\.?(?:[^\W\d]|_)[\w']*(?:\.(?:[^\W\d]|_)[\w']*)*")

# ---------------------------------------------------------------------------
# Pools. Checked against Lean: none is a constant at the root of core Lean or a
# keyword, each works as a definition / inductive type / constructor / variable
# name (def, simp [name], .ctor, cases tags, induction on a variable).
# ---------------------------------------------------------------------------

FUNCTIONS: Mapping[SetName, tuple[str, ...]] = MappingProxyType({
    "train": (
        "twice", "dbl", "grow", "halve", "tally", "sumUp", "accum", "walk", "weigh", "height", "reach", "turnOver",
        "spin", "shift", "lift", "bump", "nudge", "raise", "stretch", "squash", "trim", "prune", "clip", "pack",
        "wrap", "glue", "concat", "snip", "link", "collect", "gather", "score", "grade", "tick", "advance",
        "iterate", "cycle", "rotate", "invert", "compile", "emit", "exec", "interp", "evaluate", "denote",
        "plug", "simplify", "normalize", "sumTo", "lenOf", "countOf", "total", "amount", "bulk", "volume",
        "flatten", "double", "triple", "tri", "square", "fib", "step", "run", "rev", "len", "count", "size",
        "eval", "tsum", "mirror", "swapArgs", "addZero", "addEach", "scaleBy", "g", "F", "φ", "f₁", "f'",
        "aux", "go",
    ),
    "benchmark": (
        "sprout", "bloom", "wilt", "graft", "splice", "braid", "weave", "knit", "stitch", "dup", "snoc", "evens",
        "odds", "interleave", "zigzag", "ripple", "echo", "beval", "mirrorB", "dropNegNeg", "depth", "tips",
        "forks", "incr", "weight", "swap", "G", "ψ", "g₁", "g'", "fn", "op", "helper", "worker", "leafCount",
        "nodeCount", "branchCount", "twigs", "buds", "bumpBy", "liftBy", "raiseBy", "dropBy", "crop", "mow",
        "rake", "shear", "pare", "harvest", "quad", "cube", "lucas", "pell", "negate", "fuse", "strip", "mass",
        "girth", "spread", "widen", "deepen", "fillUp", "heap", "stack", "enqueue", "lengthOf", "nodesOf",
        "leavesOf", "swapSides", "dropZero", "tallyAll", "depthOf", "weightOf", "bumpAll", "shiftAll", "loop",
    ),
})

TYPES: Mapping[SetName, tuple[str, ...]] = MappingProxyType({
    "train": (
        "Tree", "Bush", "Shrub", "Sapling", "Heap", "Shape", "Form", "Term", "Prog", "Cell", "Token", "Glyph",
        "Tile", "Hue", "Tone", "Phase", "Pile", "Rope", "Knot", "Grid", "Block", "Brick", "Piece", "Sign",
        "Weekday", "Season", "Planet", "Gem", "Coin", "Arith", "Calc", "Formula", "Instr", "Op", "Cmd", "Code",
        "Expr", "AExp", "Day", "Stack", "Node", "Step", "Part", "Bit", "Week", "Month", "Mode", "Tag", "Label",
        "Kind", "State",
    ),
    "benchmark": (
        "Fork", "Branch", "Twig", "Vine", "Mesh", "Net", "Frame", "Slot", "Chip", "Rune", "Suit", "Rank",
        "Color", "Shade", "Mood", "BExp", "Bexp", "Cond", "Guard", "Gate", "Wire", "Circuit", "Query", "Clause",
        "Literal", "Bloom", "Arbor", "Grove", "Lattice", "Weave", "Strand", "Thread", "Cord", "Flag", "Banner",
        "Crest", "Emblem", "Badge",
    ),
})

CONSTRUCTORS: Mapping[SetName, tuple[str, ...]] = MappingProxyType({
    "train": (
        "leaf", "node", "tip", "bin", "empty", "cons", "nil", "one", "two", "lit", "num", "var", "const", "plus",
        "times", "neg", "push", "pop", "load", "store", "jump", "halt", "red", "blue", "green", "amber", "violet",
        "north", "south", "east", "west", "up", "down", "low", "high", "small", "big", "base", "wrap", "pair",
        "single", "dot", "dash", "star", "moon", "sun", "rain", "snow", "fog", "wind", "mon", "tue", "wed", "thu",
        "fri", "sat", "first", "second", "third", "fourth", "fifth", "sixth", "seventh",
    ),
    "benchmark": (
        "stub", "fork", "pod", "bud", "twig", "yes", "no", "on", "off", "hi", "lo", "tt", "ff", "conj", "disj",
        "tru", "fls", "spade", "heart", "club", "diamond", "clubs", "diamonds", "hearts", "spades", "alpha",
        "beta", "gamma", "delta", "epsilon", "seed", "sprout", "trunk", "limb", "bough", "frond", "petal", "stem",
        "husk", "core", "rind", "shell", "pit", "hub", "rim", "spoke", "axle", "gear", "cog", "lever", "pulley",
        "ace", "king", "queen", "jack", "knave", "rook", "pawn", "bishop", "knight",
    ),
})

VariableSort = Literal["scalar", "list", "value", "bool", "prop", "typevar", "pred", "fun", "hyp", "elem"]

VARIABLES: Mapping[VariableSort, tuple[str, ...]] = MappingProxyType({
    "scalar": ("n", "m", "k", "i", "j", "a", "b", "c", "d", "x", "y", "z", "u", "v", "w", "N", "M", "K"),
    "list": ("xs", "ys", "zs", "ws", "vs", "us", "ns", "ms", "ks", "ps", "qs", "l", "l₁", "l₂", "L", "L₁", "L₂",
             "xs'", "ys'"),
    "value": ("t", "s", "u", "v", "w", "e", "a", "b", "c", "d", "x", "y", "z", "r", "p", "q", "t₁", "t₂", "e₁",
              "e₂", "x₀"),
    "bool": ("a", "b", "c", "p", "q", "x", "y", "u", "v", "w"),
    "prop": ("p", "q", "r", "s", "P", "Q", "R", "A", "B", "C", "φ", "ψ", "χ"),
    "typevar": ("α", "β", "γ", "δ", "σ", "τ"),
    "pred": ("P", "Q", "R", "S"),
    "fun": ("f", "g", "h", "F", "G", "φ", "ψ"),
    "hyp": ("h", "h₀", "h₁", "h₂", "h₃", "h'", "h''", "hx", "hy", "hz", "hn", "hm", "hk", "ha", "hb", "hc", "H",
            "H₁", "H₂", "hyp", "hab", "hxy", "hle", "hlt", "heq", "hne"),
    "elem": ("x", "y", "z", "a", "b", "c", "n", "m", "k", "u", "v", "w"),
})


# ---------------------------------------------------------------------------
# What an instance declares
# ---------------------------------------------------------------------------

_BASE_TYPES = frozenset({"Nat", "Int", "Bool", "List", "Prop", "Type"})


@dataclass(frozen=True)
class Declared:
    """The renameable names of one instance, in order of first appearance."""

    namespaces: tuple[str, ...]
    types: tuple[str, ...]
    constructors: tuple[str, ...]
    functions: tuple[str, ...]
    variables: tuple[tuple[str, VariableSort], ...]


def identifiers(text: str) -> list[str]:
    """Every identifier part of ``text`` (dotted names split, leading dots dropped)."""
    return [part for tok in IDENT.findall(text) for part in tok.lstrip(".").split(".")]


def _unique(names: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


_NAME = r"(?:[^\W\d]|_)[\w']*"
# A field line of a ``structure``/``class`` body: ``  lo hi : Nat``, ``  (lo hi : Nat)``, ``  size : α → Nat``.
_FIELD_LINE = re.compile(rf"\s+\(?((?:{_NAME}\s+)*{_NAME})\s*:(?!:)")
# A named constructor line: ``  mk ::``.
_CTOR_LINE = re.compile(rf"\s+({_NAME})\s*::\s*$")
# A named instance: ``instance name : C T``, ``instance name {α : Type} [C α] : C (List α)``, and
# ``instance (priority := low) name ...``.
_NAMED_INSTANCE = re.compile(rf"instance\s+(?:\(priority\s*:=[^)]*\)\s*)?({_NAME})(?=\s*[:{{\[(]|\s+where\b)")


def _preamble_names(preamble: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """Namespaces, types, constructors and functions declared by a preamble, line by line: ``inductive``
    types and their ``| ctor`` alternatives; ``structure``/``class`` types (``... where`` on its line), a
    named constructor (``mk ::``) and their fields/methods (indented ``name ... : type`` lines up to the
    first line that is not, which counts as functions); ``def`` names and named ``instance``s (functions)."""
    namespaces, types, ctors, funcs = [], [], [], []
    in_inductive = in_structure = False
    for line in preamble.splitlines():
        if m := re.match(r"namespace\s+(\S+)", line):
            namespaces.append(m.group(1))
        if m := re.match(r"inductive\s+(\S+)", line):
            types.append(m.group(1))
            in_inductive = True
            continue
        if in_inductive and re.match(r"\s+\|", line):
            for alt in line.split("|")[1:]:
                if m := re.match(r"\s*((?:[^\W\d]|_)[\w']*)", alt):
                    ctors.append(m.group(1))
            continue
        in_inductive = False
        if m := re.match(rf"(?:structure|class)\s+({_NAME})", line):
            types.append(m.group(1))
            in_structure = True
            continue
        if in_structure:
            if m := _CTOR_LINE.match(line):
                ctors.append(m.group(1))
                continue
            if m := _FIELD_LINE.match(line):
                funcs.extend(m.group(1).split())
                continue
        in_structure = False
        if m := re.match(r"def\s+(\S+)", line):
            funcs.append(m.group(1).split(".")[-1])
        elif m := _NAMED_INSTANCE.match(line):
            funcs.append(m.group(1))
    return namespaces, types, ctors, funcs


def _binder_groups(statement: str) -> tuple[list[tuple[list[str], str]], str]:
    """The leading ``(a b : T)`` groups of a statement and the rest (``: goal``)."""
    groups = []
    i = 0
    while True:
        while i < len(statement) and statement[i] == " ":
            i += 1
        if i >= len(statement) or statement[i] not in "({[":
            return groups, statement[i:]
        close = {"(": ")", "{": "}", "[": "]"}[statement[i]]
        depth, j = 0, i
        while j < len(statement):
            if statement[j] in "({[":
                depth += 1
            elif statement[j] in ")}]":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        inner = statement[i + 1:j]
        if statement[j:j + 1] == close and " : " in inner:
            names, ty = inner.split(" : ", 1)
            groups.append((names.split(), ty))
        i = j + 1


def _sort(ty: str, types: set[str], typevars: set[str]) -> VariableSort:
    ty = ty.strip()
    if not set(identifiers(ty)) <= _BASE_TYPES | types | typevars:
        return "hyp"
    if ty == "Prop":
        return "prop"
    if ty.startswith("Type"):
        return "typevar"
    if "→" in ty:
        return "pred" if ty.endswith("Prop") else "fun"
    if ty.startswith("List"):
        return "list"
    if ty in ("Nat", "Int"):
        return "scalar"
    if ty == "Bool":
        return "bool"
    return "value"


_QUANTIFIED = re.compile(r"[∀∃]\s*((?:[^\W\d]|_)[\w']*(?:\s+(?:[^\W\d]|_)[\w']*)*)\s*(?::\s*([^,]+?))?\s*,")


def declared(preamble: str, statement: str) -> Declared:
    """The names an instance introduces: its preamble's namespaces, types,
    constructors and definitions, and its statement's variables with their sorts."""
    namespaces, types, ctors, funcs = _preamble_names(preamble)
    user_types = set(types)
    variables: list[tuple[str, VariableSort]] = []
    typevars: set[str] = set()
    groups, _ = _binder_groups(statement)
    for names, ty in groups:
        sort = _sort(ty, user_types, typevars)
        if sort == "typevar":
            typevars.update(names)
        variables.extend((n, sort) for n in names)
    for m in _QUANTIFIED.finditer(statement):
        sort = _sort(m.group(2), user_types, typevars) if m.group(2) else "elem"
        variables.extend((n, sort) for n in m.group(1).split())
    seen: set[str] = set()
    unique_vars = []
    for name, sort in variables:
        if name not in seen:
            seen.add(name)
            unique_vars.append((name, sort))
    return Declared(_unique(namespaces), _unique(types), _unique(ctors), _unique(funcs), tuple(unique_vars))


# ---------------------------------------------------------------------------
# Renaming
# ---------------------------------------------------------------------------


def rename_text(text: str, mapping: Mapping[str, str]) -> str:
    """``text`` with every identifier in ``mapping`` replaced (rules in the module doc)."""
    def sub(m: re.Match[str]) -> str:
        tok = m.group(0)
        lead = tok.startswith(".")
        parts = tok.lstrip(".").split(".")
        if lead or parts[0] in mapping:
            parts = [mapping.get(p, p) for p in parts]
        return ("." if lead else "") + ".".join(parts)

    return IDENT.sub(sub, text)


def draw_mapping(decl: Declared, split: SetName, rng: random.Random, taken: set[str],
                 namespace: str) -> dict[str, str]:
    """Fresh names for every declared name: injective, none in ``taken`` (the
    instance's own identifiers), types/constructors/definitions from ``split``'s pools."""
    used = set(taken)
    mapping: dict[str, str] = {}

    def draw(old: str, pool: Sequence[str]) -> None:
        if old in mapping:
            return
        free = [n for n in pool if n not in used]
        if not free:
            raise ValueError(f"name pool exhausted renaming {old!r}")
        new = rng.choice(free)
        used.add(new)
        mapping[old] = new

    for ns in decl.namespaces:
        mapping[ns] = namespace
        used.add(namespace)
    for t in decl.types:
        draw(t, TYPES[split])
    for c in decl.constructors:
        draw(c, CONSTRUCTORS[split])
    for f in decl.functions:
        draw(f, FUNCTIONS[split])
    for v, sort in decl.variables:
        draw(v, VARIABLES[sort])
    return mapping


def rename_instance(inst: Instance, family: str, split: SetName, seed: int) -> tuple[Instance, dict[str, str]]:
    """The instance with fresh names, and the mapping used (old -> new)."""
    decl = declared(inst.preamble, inst.statement)
    taken = set(identifiers("\n".join((inst.preamble, inst.statement, *inst.proof))))
    rng = random.Random(f"{seed}:{family}:{inst.key}:names")
    mapping = draw_mapping(decl, split, rng, taken, namespace=f"Bq_{family}_{inst.key}")
    renamed = replace(inst, statement=rename_text(inst.statement, mapping),
                      preamble=rename_text(inst.preamble, mapping),
                      proof=tuple(rename_text(step, mapping) for step in inst.proof))
    return renamed, mapping
