"""Near-twins: a theorem of one set that is a theorem of another up to more than renaming.

`burnqed_core.data.twins.canonical` finds *twins*: the same statement with the same definitions up to renaming and
numerals, or the same proof script (skeleton). A held-out theorem can be closer to a training theorem than that
without being a twin: ``{n : Nat}`` where the other writes ``(n : Nat) →``, its hypotheses in another order, a
predicate whose constructors are listed in another order, a user ``app`` where the other writes ``++``. This
module puts a theorem in a *near-twin form* that forgets those differences, and measures how close two theorems
are when they are not even near-twins.

The near-twin form (`near_twin_form`) starts from the canonical rendering (`canonical.canonical_parts`: user
names renamed, numerals ``#``) and then

* **binders**: implicit ``{x : T}``, strict implicit ``⦃x : T⦄`` and explicit ``(x : T)`` binders are one kind;
  a group of several names is one binder per name;
* **constructors**: a constructor's binders before its colon become a telescope
  (``| more {x : α} : q x → P (x :: xs)`` reads ``| more : (x : α) → q x → P (x :: xs)``), a named premise no
  later type mentions becomes an arrow, and the constructors are sorted (by their text with every name masked):
  the order in which a type lists its constructors is no part of it; ``where`` after the header and ``deriving``
  clauses are dropped;
* **library equivalents**: a definition whose own near-twin form is that of a library function
  (`LIBRARY_EQUIVALENTS`: list append and length in their usual equation forms) is left out, and its applications
  are written as the library's (``app xs ys`` as ``xs ++ ys``, ``len xs`` as ``xs.length``);
* **the statement as a telescope**: leading ``∀`` binders and the premises of top-level arrows join the
  signature's binders; a binder whose name no type and not the conclusion mentions is a hypothesis and loses its
  name; the variables are numbered in order of first mention in the conclusion, then in their own types, then in
  the hypotheses (sorted by their masked text), and the hypotheses are sorted: binder order is no part of the form;
* **constructor references** ``Tree.leaf`` and ``.leaf`` are the constructor's name alone;
* every name is numbered again by first appearance (definitions in the order the statement first needs them).

Two theorems with the same near-twin form are **strong near-twins** (`find_near_twins`, ``how="near_statement"``):
the held-out one states the training one's fact about isomorphic definitions. So are two theorems whose known
proofs are one script of `MIN_NEAR_SKELETON_STEPS` steps or more with the names numbered from the proof alone
(``near_skeleton``: ``induction xs; simp [f]; simp [f]; assumption`` whatever the statement binds before ``f``).
Weaker relations are reported, never refused (``how``):

* ``statement_only``: the same near-twin statement (every definition name numbered from the statement), over
  definitions that are not isomorphic;
* ``definitions``: every definition the statement needs is isomorphic to a definition of the other set (the
  definitions were seen in training, the fact was not);
* ``similar``: the similarity of the statements with their definitions at least `PARTIAL_SIMILARITY`.

Similarity (`similarity`, `Forms.similarity`) is the Dice coefficient of the multisets of token 1-, 2- and
3-grams of two near-twin forms: 1.0 for equal forms, 0.0 for forms with no token in common. It is measured three
ways: the statement alone (``statement``), the statement with its definitions (``definitions``) and the known
proof's skeleton (``proof``). `burnqed_core.data.twins.similarity` gives each theorem its most similar theorem of a
reference set by each and summarises a set against a reference set (the block every eval report carries).

Reusable on any two sets of `Theorem` records (issue 56 runs it on Lean's own library): `near_twin_groups` groups
the theorems of one set that are twins or strong near-twins of each other (union-find); `find_near_twins` pairs
the theorems of a set with those of a reference set; `Forms` holds one theorem's forms for many comparisons.

Known limits: a lexical normalisation, not Lean's: ``∀ x,`` without a type and ``(x : T)`` are different binders;
a definition by ``match`` and the same one by equations differ; equation order in a definition counts; two
constructors with the same masked text keep their written order; ``¬ P`` and ``P → False`` differ; a library
equivalent is recognised only in the forms `LIBRARY_EQUIVALENTS` lists.
"""

from __future__ import annotations

import logging
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.data.twins.canonical import (
    CanonicalCommand,
    CanonicalForms,
    CanonicalParts,
    PreambleReadings,
    canonical_parts,
)
from burnqed_core.records import Theorem

log = logging.getLogger(__name__)

PARTIAL_SIMILARITY = 0.9
"""Statement-with-definitions similarity from which a theorem is reported as a partial near-twin."""
MIN_SKELETON_STEPS = 2
NGRAMS = (1, 2, 3)

MIN_NEAR_SKELETON_STEPS = 3
"""A proof script numbered from the proof alone is a near-twin from this many steps (two-step scripts such as
``intro h; cases h`` are too generic)."""

NearTwinHow = Literal["statement", "skeleton", "near_statement", "near_skeleton", "statement_only", "definitions",
                      "similar"]
STRONG: frozenset[str] = frozenset({"statement", "skeleton", "near_statement", "near_skeleton"})
"""Twins (``statement``, ``skeleton``: `burnqed_core.data.twins.canonical`) and strong near-twins: what hygiene
refuses."""
HOW_TEXT: Mapping[str, str] = MappingProxyType({
    "statement": "same canonical form",
    "skeleton": "same proof skeleton",
    "near_statement": "same statement and definitions up to binder style and order and isomorphic definitions",
    "near_skeleton": "same proof script of three steps or more, names numbered from the proof",
    "statement_only": "same statement over other definitions",
    "definitions": "every definition isomorphic to one of the other set",
    "similar": "statement with definitions at least 0.9 similar",
})
Aspect = Literal["statement", "definitions", "proof"]
ASPECTS: tuple[Aspect, ...] = ("statement", "definitions", "proof")

_UNAME = re.compile(r"^u\d+$")
_VAR = re.compile(r"^x\d+$")
_OPEN = MappingProxyType({"(": ")", "[": "]", "{": "}", "⟨": "⟩", "⦃": "⦄", "‹": "›", "⟦": "⟧", "⌊": "⌋", "⌈": "⌉",
                          "@[": "]", "#[": "]", "%[": "]", "`(": ")", "``(": ")"})
_CLOSE = frozenset(_OPEN.values())
_BINDER_OPEN = MappingProxyType({"{": "}", "⦃": "⦄"})
_ARROWS = frozenset({"→", "->"})
_TYPE_KINDS = frozenset({"inductive", "structure", "class"})


# --- token helpers ------------------------------------------------------------------------------------------------


def _is_name(tok: str) -> bool:
    return bool(_UNAME.match(tok) or _VAR.match(tok))


def _head(tok: str) -> str:
    return tok.split(".", 1)[0]


def _mentions(tokens: Iterable[str], name: str) -> bool:
    return any(t == name or t.startswith(name + ".") for t in tokens)


def _match(tokens: Sequence[str]) -> dict[int, int]:
    """Index of each opener -> its closer (unbalanced ones left out)."""
    out: dict[int, int] = {}
    stack: list[tuple[int, str]] = []
    for k, t in enumerate(tokens):
        if t in _OPEN:
            stack.append((k, _OPEN[t]))
        elif t in _CLOSE:
            while stack and stack[-1][1] != t:
                stack.pop()
            if stack:
                out[stack.pop()[0]] = k
    return out


def _split_top(tokens: Sequence[str], sep: Iterable[str]) -> list[list[str]]:
    """``tokens`` cut at every top-level (bracket depth 0) token of ``sep``, the separators left out."""
    seps = set(sep)
    out: list[list[str]] = [[]]
    depth = 0
    for t in tokens:
        if t in _OPEN:
            depth += 1
        elif t in _CLOSE:
            depth = max(depth - 1, 0)
        if depth == 0 and t in seps:
            out.append([])
            continue
        out[-1].append(t)
    return out


def _top_index(tokens: Sequence[str], wanted: str, start: int = 0) -> int | None:
    depth = 0
    for k in range(start, len(tokens)):
        t = tokens[k]
        if depth == 0 and t == wanted:
            return k
        if t in _OPEN:
            depth += 1
        elif t in _CLOSE:
            depth = max(depth - 1, 0)
    return None


def _mask(tokens: Iterable[str]) -> str:
    """The text with every name masked (a sort key that does not depend on how names were numbered)."""
    return " ".join("·" if _is_name(_head(t)) else t for t in tokens)


def _mask_user(tokens: Iterable[str]) -> str:
    """The text with the user names (``uN``, numbered by appearance) masked and the variables (``xN``, numbered
    canonically) kept."""
    return " ".join("·" if _UNAME.match(_head(t)) else t for t in tokens)


def _strip_parens(tokens: list[str]) -> list[str]:
    """``( T )`` -> ``T`` when the parentheses wrap the whole type."""
    while len(tokens) >= 2 and tokens[0] == "(" and _match(tokens).get(0) == len(tokens) - 1:
        tokens = tokens[1:-1]
    return tokens


def _renumber(lines: Sequence[Sequence[str]]) -> list[list[str]]:
    """Every ``uN`` (alone or as a component of a dotted name) numbered again by first appearance."""
    mapping: dict[str, str] = {}

    def one(comp: str) -> str:
        if not _UNAME.match(comp):
            return comp
        if comp not in mapping:
            mapping[comp] = f"u{len(mapping) + 1}"
        return mapping[comp]

    return [[".".join(one(c) for c in t.split(".")) if "." in t and t != "." else one(t) for t in line]
            for line in lines]


# --- binders ------------------------------------------------------------------------------------------------------


@dataclass
class _Binder:
    name: str | None  # None: anonymous (an arrow's premise, an instance, an unmentioned hypothesis)
    type: list[str]


def _binder_group(tokens: Sequence[str]) -> list[_Binder]:
    """The binders of one group's inside (``x y : T``, ``x``, ``inst : C α``, ``C α`` for an instance)."""
    colon = _top_index(tokens, ":")
    if colon is None:
        names = [t for t in tokens if _is_name(t) or t == "_"]
        if names and len(names) == len(tokens):
            return [_Binder(None if n == "_" else n, []) for n in names]
        return [_Binder(None, list(tokens))]
    names = [t for t in tokens[:colon] if t != "_"]
    typ = list(tokens[colon + 1:])
    if not names:
        return [_Binder(None, typ)]
    return [_Binder(n if _is_name(n) else None, typ) for n in names]


def _leading_binders(tokens: Sequence[str], start: int = 0) -> tuple[list[_Binder], int]:
    """The binder groups from ``start`` (``(x : T) {y} [C α]``); the index after them."""
    binders: list[_Binder] = []
    match = _match(tokens)
    k = start
    while k < len(tokens) and tokens[k] in ("(", "{", "⦃", "[") and k in match:
        m = match[k]
        inside = tokens[k + 1:m]
        if tokens[k] == "[":
            colon = _top_index(inside, ":")
            binders.append(_Binder(None, list(inside[colon + 1:] if colon is not None else inside)))
        else:
            binders += _binder_group(inside)
        k = m + 1
    return binders, k


def _normalise_binder_brackets(tokens: list[str]) -> list[str]:
    """``{x y : T}``, ``{α}``, ``⦃x : T⦄`` -> ``( ... )`` (a structure instance ``{ x := 1 }`` is left alone)."""
    out = list(tokens)
    match = _match(out)
    for k, t in enumerate(out):
        if t not in _BINDER_OPEN or k not in match:
            continue
        m = match[k]
        inside = out[k + 1:m]
        names = 0
        while names < len(inside) and (_is_name(inside[names]) or inside[names] == "_"):
            names += 1
        if names and (names == len(inside) or inside[names] == ":"):
            out[k], out[m] = "(", ")"
    return out


def _telescope(binders: Sequence[_Binder], result: Sequence[str]) -> list[str]:
    """``(x : A) → B → C`` from binders and a result type; a named binder no later type mentions is an arrow."""
    out: list[str] = []
    for i, b in enumerate(binders):
        later = [t for bb in binders[i + 1:] for t in bb.type] + list(result)
        if b.name is not None and _mentions(later, b.name):
            out += ["(", b.name, ":", *(b.type or ["_"]), ")", "→"]
        else:
            out += [*(b.type or ["_"]), "→"]
    return out + list(result)


_SCOPE_OPENERS = frozenset({"∃", "∃!", "∀", "forall", "Π", "Σ", "fun", "λ", "let", "have", "match", "if", "show",
                            "by"})


def _premises(tokens: Sequence[str]) -> list[list[str]]:
    """``A → B → C`` cut at its top-level arrows, up to the first token whose scope runs to the end
    (``A → ∃ x, B → C`` is ``A`` and ``∃ x, B → C``)."""
    out: list[list[str]] = [[]]
    depth = 0
    for k, t in enumerate(tokens):
        if t in _OPEN:
            depth += 1
        elif t in _CLOSE:
            depth = max(depth - 1, 0)
        elif depth == 0 and t in _SCOPE_OPENERS:
            out[-1] += tokens[k:]
            return out
        if depth == 0 and t in _ARROWS:
            out.append([])
            continue
        out[-1].append(t)
    return out


def _peel(tokens: Sequence[str]) -> tuple[list[_Binder], list[str]]:
    """A type's leading ``∀`` binders and top-level arrow premises (named ``(x : T) →`` ones too), and what is
    left."""
    binders: list[_Binder] = []
    rest = list(tokens)
    while True:
        rest = _strip_parens(rest)
        if rest and rest[0] in ("∀", "forall", "Π"):
            comma = _top_index(rest, ",")
            if comma is None:
                break
            head = rest[1:comma]
            if head and head[0] in ("(", "{", "⦃", "["):
                bs, end = _leading_binders(head)
                if end != len(head):
                    break
                binders += bs
            else:
                binders += _binder_group(head)
            rest = rest[comma + 1:]
            continue
        parts = _premises(rest)
        if len(parts) > 1 and all(parts):
            for p in parts[:-1]:
                match = _match(p)
                if p[0] in ("(", "{", "⦃") and match.get(0) == len(p) - 1 and _top_index(p[1:-1], ":") is not None:
                    binders += _binder_group(p[1:-1])
                else:
                    binders.append(_Binder(None, _strip_parens(list(p))))
            rest = parts[-1]
            continue
        break
    return binders, rest


# --- commands -----------------------------------------------------------------------------------------------------


def _strip_type_prefix(tokens: Sequence[str], type_names: frozenset[str]) -> list[str]:
    """``Tree.leaf`` -> ``leaf`` and a leading-dot ``.leaf`` -> ``leaf`` (constructor names are unique after
    renaming); a projection ``(e).f`` keeps its dot."""
    out: list[str] = []
    for i, t in enumerate(tokens):
        if "." in t and t != ".":
            comps = t.split(".")
            while len(comps) > 1 and comps[0] in type_names:
                comps = comps[1:]
            out.append(".".join(comps))
        elif t == "." and i + 1 < len(tokens) and _UNAME.match(_head(tokens[i + 1])) and (
                i == 0 or (tokens[i - 1] not in (")", "]", "⟩") and not _is_name(_head(tokens[i - 1])))):
            continue
        else:
            out.append(t)
    return out


def _inductive(tokens: list[str]) -> list[str]:
    """An inductive's constructors as sorted telescopes; ``where`` and ``deriving`` dropped."""
    if "deriving" in tokens:
        tokens = tokens[:tokens.index("deriving")]
    parts = _split_top(tokens, ("|",))
    header = [t for t in parts[0] if t != "where"]
    # the result type of a constructor without one: the type applied to its explicit parameters
    params, _ = _leading_binders(header, 2) if len(header) > 2 else ([], 2)
    name = header[1] if len(header) > 1 else ""
    default = [name, *(b.name for b in params if b.name is not None)]
    ctors = []
    for part in parts[1:]:
        if not part:
            continue
        cname, rest = part[0], part[1:]
        binders, k = _leading_binders(rest)
        result = rest[k + 1:] if k < len(rest) and rest[k] == ":" else default
        more, result = _peel(result)
        ctors.append([cname, ":", *_telescope([*binders, *more], result)])
    ctors.sort(key=lambda c: _mask(c[1:]))
    out = header
    for c in ctors:
        out += ["|", *c]
    return out


def _command(cmd: CanonicalCommand, type_names: frozenset[str]) -> list[str]:
    tokens = _strip_type_prefix(_normalise_binder_brackets(list(cmd.tokens)), type_names)
    tokens = [t for t in tokens if t not in ("noncomputable", "private", "protected")]
    if cmd.kind == "inductive":
        return _inductive(tokens)
    if "deriving" in tokens and cmd.kind in _TYPE_KINDS:
        tokens = tokens[:tokens.index("deriving")]
    return tokens


# --- library equivalents ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LibraryEquivalent:
    """A library function a user definition can be a copy of: its definitions (Lean text, each declaring the one
    function ``f``) and how an application of the copy is written with the library's notation."""

    name: str
    arity: int
    definitions: tuple[str, ...]
    infix: str = ""  # ``xs ++ ys``: the operator's tokens as the canonical rendering gives them (``+ +``)
    suffix: str = ""  # ``xs.length``: the field after the argument


LIBRARY_EQUIVALENTS: tuple[LibraryEquivalent, ...] = (
    LibraryEquivalent("List.append", 2, (
        "def f {α : Type} : List α → List α → List α\n  | [], ys => ys\n  | x :: xs, ys => x :: f xs ys",
        "def f {α : Type} (xs ys : List α) : List α :=\n  match xs with\n  | [] => ys\n  | x :: xs => x :: f xs ys",
        "def f : List Nat → List Nat → List Nat\n  | [], ys => ys\n  | x :: xs, ys => x :: f xs ys",
    ), infix="+ +"),
    LibraryEquivalent("List.length", 1, (
        "def f {α : Type} : List α → Nat\n  | [] => 0\n  | _ :: xs => f xs + 1",
        "def f {α : Type} : List α → Nat\n  | [] => 0\n  | _ :: xs => 1 + f xs",
        "def f : List Nat → Nat\n  | [] => 0\n  | _ :: xs => f xs + 1",
        "def f : List Nat → Nat\n  | [] => 0\n  | _ :: xs => 1 + f xs",
    ), suffix="length"),
)


def _standalone(tokens: Sequence[str]) -> str:
    return " ".join(_renumber([tokens])[0])


def _library_forms() -> dict[str, LibraryEquivalent]:
    """Standalone near-twin form of each library equivalent's definitions -> the equivalent."""
    forms: dict[str, LibraryEquivalent] = {}
    for eq in LIBRARY_EQUIVALENTS:
        for text in eq.definitions:
            parts = canonical_parts(Theorem(name="library_probe", statement="(x : Nat) : f = f", preamble=text))
            for cmd in parts.commands:
                forms[_standalone(_command(cmd, frozenset()))] = eq
    return forms


LIBRARY_FORMS: Mapping[str, LibraryEquivalent] = MappingProxyType(_library_forms())
"""`_library_forms` of the constant `LIBRARY_EQUIVALENTS`, built once at import (a constant table, no cache)."""


def _atom_end(tokens: Sequence[str], k: int, match: Mapping[int, int]) -> int | None:
    """The index after the argument starting at ``k`` (a name, a numeral or a bracketed group)."""
    if k >= len(tokens):
        return None
    t = tokens[k]
    if t in _OPEN:
        return match[k] + 1 if k in match else None
    if t in _CLOSE or not (re.match(r"^[\w#‹]", t) and t not in ("fun", "if", "then", "else", "match", "with")):
        return None
    return k + 1


def _rewrite_library(tokens: list[str], eq: LibraryEquivalent, fn: str) -> list[str]:
    """Applications ``fn a b`` written with the library's notation (``a ++ b``, ``a.length``)."""
    out = list(tokens)
    changed = True
    while changed:
        changed = False
        match = _match(out)
        for k, t in enumerate(out):
            if t != fn:
                continue
            args: list[list[str]] = []
            end = k + 1
            for _ in range(eq.arity):
                e = _atom_end(out, end, match)
                if e is None:
                    break
                args.append(out[end:e])
                end = e
            if len(args) != eq.arity:
                continue
            if eq.infix:
                expr = [*args[0], *eq.infix.split(), *args[1]]
            elif len(args[0]) == 1:
                expr = [f"{args[0][0]}.{eq.suffix}"]
            else:
                expr = [*args[0], ".", eq.suffix]
            alone = k > 0 and out[k - 1] == "(" and end < len(out) and out[end] == ")" and match.get(k - 1) == end
            in_argument = k > 0 and (out[k - 1] in _CLOSE or _is_name(_head(out[k - 1])))
            wrap = eq.infix and not alone and (in_argument or (end < len(out) and _atom_end(out, end, match)))
            out[k:end] = ["(", *expr, ")"] if wrap else expr
            changed = True
            break
    return out


# --- the form -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NearTwinParts:
    """A theorem's near-twin form in parts: the definitions the statement needs (dependencies first, library
    copies left out), the statement as a telescope, and each definition on its own."""

    definitions: tuple[tuple[str, ...], ...]
    statement: tuple[str, ...]
    definition_forms: tuple[str, ...]  # each definition renumbered on its own (to compare definitions alone)
    statement_only: str  # the statement renumbered on its own

    @property
    def form(self) -> str:
        return "\n".join(" ".join(line) for line in (*self.definitions, self.statement))


def _statement(tokens: Sequence[str], type_names: frozenset[str]) -> tuple[list[_Binder], list[str]]:
    toks = _strip_type_prefix(_normalise_binder_brackets(list(tokens)), type_names)
    binders, k = _leading_binders(toks)
    concl = toks[k + 1:] if k < len(toks) and toks[k] == ":" else toks[k:]
    more, concl = _peel(concl)
    return [*binders, *more], concl


def _order(binders: list[_Binder], concl: list[str]) -> list[str]:
    """The statement as a telescope with variables ``x1, x2, ...`` in a canonical order and sorted hypotheses."""
    names = [b.name for b in binders if b.name is not None]
    everything = [*concl, *(t for b in binders for t in b.type)]
    mentioned = {n for n in names if _mentions(everything, n)}
    variables = {b.name: b for b in binders if b.name is not None and b.name in mentioned}
    hyps = [b for b in binders if b.name is None or b.name not in mentioned]
    order = _variable_order(variables, hyps, concl)
    rename = {n: f"x{i + 1}" for i, n in enumerate(order)}
    out: list[str] = ["theorem"]
    for n in order:
        out += ["(", rename[n], ":", *(_renamed(variables[n].type, rename) or ["_"]), ")"]
    for h in sorted((_renamed(b.type, rename) for b in hyps), key=_mask_user):
        out += ["(", "_", ":", *(h or ["_"]), ")"]
    return [*out, "⊢", *_renamed(concl, rename)]


def _variable_order(variables: Mapping[str, _Binder], hyps: Sequence[_Binder], concl: Sequence[str]) -> list[str]:
    """The canonical order of the ``variables`` (name -> binder): as the conclusion first mentions them, then as
    the types of the variables already ordered mention more, then as the hypotheses (sorted by `_hyp_key`) do;
    a variable none of these reach comes next in binder order."""
    order: list[str] = []
    _scan(concl, variables, order)
    while len(order) < len(variables):
        if any(_scan(variables[n].type, variables, order) for n in list(order)):
            continue
        if any(_scan(b.type, variables, order) for b in sorted(hyps, key=lambda b: _hyp_key(b, variables, order))):
            continue
        order.append(next(n for n in variables if n not in order))
    return order


def _scan(tokens: Iterable[str], variables: Mapping[str, _Binder], order: list[str]) -> bool:
    """Append to ``order`` each of the ``variables`` that ``tokens`` mention and ``order`` lacks, in the order
    mentioned; whether any was."""
    added = False
    for t in tokens:
        h = _head(t)
        if h in variables and h not in order:
            order.append(h)
            added = True
    return added


def _hyp_key(b: _Binder, variables: Mapping[str, _Binder], order: Sequence[str]) -> str:
    """A hypothesis' type with the variables ordered so far as ``x<i>``, the others as ``?``, other names as
    ``·``: the key the hypotheses are scanned in."""
    return " ".join(f"x{order.index(_head(t)) + 1}" if _head(t) in order else
                    ("?" if _head(t) in variables else ("·" if _is_name(_head(t)) else t)) for t in b.type)


def _renamed(tokens: Iterable[str], rename: Mapping[str, str]) -> list[str]:
    """``tokens`` with each variable of ``rename`` (a token's head before a ``.``) renamed."""
    return [rename[_head(t)] + t[len(_head(t)):] if _head(t) in rename else t for t in tokens]


def near_twin_parts(theorem: Theorem) -> NearTwinParts:
    """The near-twin form of ``theorem`` in parts (see the module docstring)."""
    return _near_twin_parts(canonical_parts(theorem))


def _near_twin_parts(parts: CanonicalParts) -> NearTwinParts:
    type_names = frozenset(n for c in parts.commands if c.is_type for n in c.declares)
    commands = [(c, _command(c, type_names)) for c in parts.commands if c.kind not in ("variable",)]
    copies, kept = _library_copies(commands)
    binders, concl = _statement(parts.statement, type_names)
    statement = _order(binders, concl)
    for fn, eq in copies.items():
        statement = _rewrite_library(statement, eq, fn)
        kept = [(c, _rewrite_library(toks, eq, fn)) for c, toks in kept]
    order = _definition_order(kept, statement)
    lines = _renumber([*(kept[i][1] for i in order), statement])
    return NearTwinParts(definitions=tuple(tuple(line) for line in lines[:-1]), statement=tuple(lines[-1]),
                         definition_forms=tuple(sorted({_standalone(kept[i][1]) for i in order})),
                         statement_only=_standalone(statement))


def _library_copies(commands: Sequence[tuple[CanonicalCommand, list[str]]]
                    ) -> tuple[dict[str, LibraryEquivalent], list[tuple[CanonicalCommand, list[str]]]]:
    """The definitions of ``commands`` (command, its tokens) that copy a library function (`LIBRARY_FORMS`):
    defined name -> its library equivalent; and the other commands, kept in order."""
    copies: dict[str, LibraryEquivalent] = {}
    kept: list[tuple[CanonicalCommand, list[str]]] = []
    for c, toks in commands:
        eq = LIBRARY_FORMS.get(_standalone(toks)) if c.kind in ("def", "abbrev") and len(c.declares) == 1 else None
        if eq is not None:
            copies[next(iter(c.declares))] = eq
        else:
            kept.append((c, toks))
    return copies, kept


def _definition_order(kept: Sequence[tuple[CanonicalCommand, list[str]]], statement: Sequence[str]) -> list[int]:
    """The indices of the definitions ``kept`` in the order the statement first needs them (dependencies
    first), the rest after in their own order."""
    declaring: dict[str, int] = {}
    for i, (c, _) in enumerate(kept):
        for d in c.declares:
            declaring.setdefault(d, i)
    order: list[int] = []
    seen: set[int] = set()
    _visit_needed(statement, kept, declaring, seen, order)
    return order + [i for i in range(len(kept)) if i not in seen]


def _visit_needed(tokens: Sequence[str], kept: Sequence[tuple[CanonicalCommand, list[str]]],
                  declaring: Mapping[str, int], seen: set[int], order: list[int]) -> None:
    """Depth first: append to ``order`` each definition (an index of ``kept``) that ``tokens`` name (a dotted
    name by any of its components, through ``declaring``) and not yet ``seen``, after the ones it needs."""
    for t in tokens:
        for comp in t.split("."):
            j = declaring.get(comp)
            if j is not None and j not in seen:
                seen.add(j)
                _visit_needed(kept[j][1], kept, declaring, seen, order)
                order.append(j)


def near_twin_form(theorem: Theorem) -> str:
    """The theorem up to renaming, numerals, binder style and order, constructor order and library copies: the
    definitions its statement needs, then the statement as a telescope, one a line (see the module docstring)."""
    return near_twin_parts(theorem).form


# --- similarity ---------------------------------------------------------------------------------------------------


def _grams(tokens: Sequence[str]) -> Counter[tuple[str, ...]]:
    c: Counter[tuple[str, ...]] = Counter()
    for n in NGRAMS:
        for i in range(len(tokens) - n + 1):
            c[tuple(tokens[i:i + n])] += 1
    return c


def dice(a: Counter[tuple[str, ...]], b: Counter[tuple[str, ...]]) -> float:
    """The Dice coefficient of two multisets (1.0 for two empty ones)."""
    total = a.total() + b.total()
    if total == 0:
        return 1.0
    if len(a) > len(b):
        a, b = b, a
    common = sum(min(v, w) for k, v in a.items() if (w := b.get(k)))
    return 2 * common / total


@dataclass
class Forms:
    """One theorem's canonical, near-twin and skeleton forms and their n-grams, computed once."""

    theorem: Theorem
    min_skeleton_steps: int = MIN_SKELETON_STEPS
    _grams: dict[Aspect, Counter[tuple[str, ...]]] = field(default_factory=dict, repr=False)
    readings: PreambleReadings | None = field(default=None, repr=False, compare=False)  # shared by `forms_of`

    @cached_property
    def _canonical(self) -> CanonicalForms:
        """The canonical form, its parts and the proof skeleton, from one reading of the preamble."""
        return CanonicalForms(self.theorem, self.readings)

    @cached_property
    def canonical(self) -> str:
        return self._canonical.form

    @cached_property
    def parts(self) -> NearTwinParts:
        return _near_twin_parts(self._canonical.parts)

    @property
    def _proof_skeleton(self) -> str:
        return self._canonical.skeleton

    @cached_property
    def skeleton(self) -> str | None:
        """The known proof's skeleton when it has ``min_skeleton_steps`` steps or more."""
        if len([s for s in self.theorem.proof if s.strip()]) < max(self.min_skeleton_steps, 1):
            return None
        return self._proof_skeleton or None

    @property
    def near(self) -> str:
        return self.parts.form

    @cached_property
    def near_skeleton(self) -> str | None:
        """The known proof's skeleton with its names numbered from the proof alone, when it has
        `MIN_NEAR_SKELETON_STEPS` steps or more."""
        if len([s for s in self.theorem.proof if s.strip()]) < MIN_NEAR_SKELETON_STEPS:
            return None
        sk = self._proof_skeleton
        return "\n".join(" ".join(line) for line in _renumber([line.split(" ") for line in sk.split("\n")])) or None

    def grams(self, aspect: Aspect) -> Counter[tuple[str, ...]]:
        if aspect not in self._grams:
            if aspect == "statement":
                tokens = self.parts.statement_only.split()
            elif aspect == "definitions":
                tokens = self.near.split()
            else:
                tokens = self._proof_skeleton.split()
            self._grams[aspect] = _grams(tokens)
        return self._grams[aspect]

    def similarity(self, other: Forms, aspect: Aspect) -> float | None:
        """Dice similarity of the two theorems' ``aspect`` forms; None for ``proof`` when either has no proof."""
        if aspect == "proof" and (not self.theorem.proof or not other.theorem.proof):
            return None
        return dice(self.grams(aspect), other.grams(aspect))


def forms_of(theorems: Iterable[Theorem], *, min_skeleton_steps: int = MIN_SKELETON_STEPS) -> list[Forms]:
    """The `Forms` of each theorem (computed here: a caller that compares one corpus with several sets computes
    the corpus's forms once and passes them on, `find_near_twins` and `similarity_report` take `Forms`); a
    preamble several of them share is read once."""
    readings = PreambleReadings()
    return [Forms(t, min_skeleton_steps, readings=readings) for t in theorems]


def similarity(a: Theorem, b: Theorem, aspect: Aspect = "definitions") -> float | None:
    """How close two theorems are, from 0.0 to 1.0 (the module docstring): by their ``statement`` alone, their
    statement with its ``definitions``, or their known ``proof`` (None when either has none)."""
    return Forms(a).similarity(Forms(b), aspect)


# --- near-twins ---------------------------------------------------------------------------------------------------


class NearTwin(BaseModel):
    """A theorem of a set that is a twin or near-twin of a theorem of a reference set."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    theorem: str
    other: str = Field(description="the reference set's theorem (for ``definitions``: one whose definitions hold "
                                   "one of the theorem's)")
    how: NearTwinHow
    similarity: float = Field(description="statement-with-definitions similarity of the two")

    @property
    def strong(self) -> bool:
        """A twin or a strong near-twin: what hygiene refuses."""
        return self.how in STRONG


HOW_ORDER = MappingProxyType({h: i for i, h in enumerate(("statement", "skeleton", "near_statement", "near_skeleton",
                                          "statement_only", "definitions", "similar"))})


@dataclass
class _Index:
    by_canonical: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    by_skeleton: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    by_near: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    by_near_skeleton: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    by_statement: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    by_definition: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))


def _index(forms: Sequence[Forms]) -> _Index:
    ix = _Index()
    for i, f in enumerate(forms):
        ix.by_canonical[f.canonical].append(i)
        if f.skeleton is not None:
            ix.by_skeleton[f.skeleton].append(i)
        ix.by_near[f.near].append(i)
        if f.near_skeleton is not None:
            ix.by_near_skeleton[f.near_skeleton].append(i)
        ix.by_statement[f.parts.statement_only].append(i)
        for d in f.parts.definition_forms:
            ix.by_definition[d].append(i)
    return ix


def find_near_twins(
    reference: Iterable[Theorem] | Sequence[Forms],
    theorems: Iterable[Theorem] | Sequence[Forms],
    *,
    partial: bool = True,
    partial_similarity: float = PARTIAL_SIMILARITY,
    min_skeleton_steps: int = MIN_SKELETON_STEPS,
) -> list[NearTwin]:
    """Every (theorem of ``theorems``, theorem of ``reference``) pair that are twins or near-twins, the strongest
    relation of each pair (``how``, in the order of `NearTwinHow`); ``partial`` off: twins and strong near-twins
    only. A ``definitions`` near-twin names one reference theorem per definition it holds (the first by name).
    Sorted by theorem, then ``how``, then the other's name."""
    ref = as_forms(reference, min_skeleton_steps)
    mine = as_forms(theorems, min_skeleton_steps)
    ix = _index(ref)
    out: list[NearTwin] = []
    for f in mine:
        found: dict[int, NearTwinHow] = {}

        def add(idx: Iterable[int], how: NearTwinHow, _found: dict[int, NearTwinHow] = found) -> None:
            for i in idx:
                if i not in _found or HOW_ORDER[how] < HOW_ORDER[_found[i]]:
                    _found[i] = how

        add(ix.by_canonical.get(f.canonical, []), "statement")
        if f.skeleton is not None:
            add(ix.by_skeleton.get(f.skeleton, []), "skeleton")
        add(ix.by_near.get(f.near, []), "near_statement")
        if f.near_skeleton is not None:
            add(ix.by_near_skeleton.get(f.near_skeleton, []), "near_skeleton")
        if partial:
            add(ix.by_statement.get(f.parts.statement_only, []), "statement_only")
            defs = f.parts.definition_forms
            if defs and all(ix.by_definition.get(d) for d in defs):
                add({min(ix.by_definition[d], key=lambda i: ref[i].theorem.name) for d in defs}, "definitions")
            for i, r in enumerate(ref):
                if i not in found and f.similarity(r, "definitions") >= partial_similarity:  # type: ignore[operator]
                    found[i] = "similar"
        for i, how in found.items():
            out.append(NearTwin(theorem=f.theorem.name, other=ref[i].theorem.name, how=how,
                                similarity=round(f.similarity(ref[i], "definitions") or 0.0, 4)))
    out.sort(key=lambda n: (n.theorem, HOW_ORDER[n.how], n.other))
    log.info("%d near-twin pairs (%d twins or strong) involving %d theorems", len(out),
             sum(n.strong for n in out), len({n.theorem for n in out}))
    return out


def as_forms(items: Iterable[Theorem] | Sequence[Forms], min_skeleton_steps: int) -> list[Forms]:
    items = list(items)
    made = iter(forms_of([x for x in items if not isinstance(x, Forms)], min_skeleton_steps=min_skeleton_steps))
    return [x if isinstance(x, Forms) else next(made) for x in items]


def near_twin_groups(theorems: Iterable[Theorem] | Sequence[Forms], *,
                     min_skeleton_steps: int = MIN_SKELETON_STEPS) -> list[list[str]]:
    """The theorems of one set grouped by twinhood or strong near-twinhood (equal canonical form, skeleton,
    near-twin form or near-twin skeleton), closed transitively: only groups of two or more, each sorted by name,
    the groups sorted by their first name. The order of ``theorems`` does not change the result."""
    from burnqed_core.data.twins.union_find import UnionFind

    forms = as_forms(theorems, min_skeleton_steps)
    uf = UnionFind([f.theorem.name for f in forms])
    first: dict[tuple[str, str], str] = {}
    for f in forms:
        for key in (("form", f.canonical), ("skeleton", f.skeleton), ("near", f.near),
                    ("near_skeleton", f.near_skeleton)):
            if key[1] is None:
                continue
            if key in first:
                uf.union(first[key], f.theorem.name)  # type: ignore[index]
            else:
                first[key] = f.theorem.name  # type: ignore[index]
    return sorted((sorted(g) for g in uf.groups().values() if len(g) > 1), key=lambda g: g[0])
