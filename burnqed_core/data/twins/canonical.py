"""Lean-aware canonical forms of theorems: find "twins", a theorem of one set
that is a theorem of another up to renaming and numerals.

`burnqed_core.eval.hygiene` recognises a benchmark theorem restated under
another name with its binders renamed. A generated benchmark can be closer to
the corpus than that: the same inductive type, the same definitions and the
same statement, with every definition, type, constructor and variable renamed
(``fork_tips_forks``, ``mass e₁ = widen e₁ + 1`` over ``inductive Banner``, is
the corpus's ``stk_lits_ops``, ``stretch w = normalize w + 1`` over
``inductive Tile``). This module compares theorems up to such renaming:

* `canonical_form`: the declarations of the preamble that the statement
  needs, then the statement, as tokens of the project's Lean lexer
  (`burnqed_core.lean.lexer.tokenize`: comments, whitespace and layout do not
  count), with every user identifier renamed ``u1, u2, ...`` in order of first
  appearance and every numeral replaced by ``#``;
* `proof_skeleton`: a known proof canonicalised the same way, its names
  numbered from the statement alone (never after the definitions' bound
  names) and continued by the proof;
* `find_twins` (benchmark theorems that are corpus theorems) and
  `twin_clusters` (groups of one set).

How a name is told apart (the Lean side is not run; it is a lexical
analysis):

* **user-declared**: every component of a name the preamble declares
  (``def``/``theorem``/``lemma``/``abbrev``/``opaque``/``axiom``/named
  ``instance``, ``inductive``/``structure``/``class`` and their
  constructors and fields, ``where`` helpers, ``namespace`` names). Renamed
  wherever it stands, also as a part of a dotted name whose head is a user
  name (``Tree.size``) or after a leading dot (``.leaf``). After a value
  (``t.size``, ``(f x).size``) only a member of a user type is renamed
  (``length`` in ``xs.length`` is ``List.length``'s and is kept).
* **bound**: names bound by binder groups of a signature (``(x y : T)``,
  ``{α}``, ``[inst : C]``, ``⦃x⦄``, dependent arrows ``(x : T) → ...``),
  ``∀``/``∃``/``fun``/``λ`` binder lists, ``let``/``have``/``obtain``
  patterns, match arms and equations (``| .cons x xs =>``,
  ``| succ n ih =>``) and the binding tactics (``intro``, ``rintro``,
  ``rcases ... with``, ``cases' ... with``, ``case tag x =>``, ``next``,
  ``rename_i``, ``by_cases h :`` ...). Each binding occurrence gets a fresh
  name, visible until the bracket around it closes (a match arm: until the
  next arm), so shadowing and reused names do not matter.
* **library**: keywords, tactic names, a list of lowercase core names
  (``id``, ``some``, ``min``, ``succ`` ... `LIBRARY_NAMES`), every other
  capitalised name (``Nat``, ``List``, ``Or.inl``) and every dotted name
  whose head is one of them (``Nat.succ``, ``List.length``). Kept as written.
* **free**: any other bare identifier that starts with a lowercase letter or
  looks like a variable (one capital letter with subscripts, digits or
  primes: ``P``, ``L₁``): an auto-bound implicit, a hypothesis introduced by
  a tactic without a name in the text, or a library function missing from
  the list. Renamed (one name per command for each).

Known limits: a lowercase library function missing from `LIBRARY_NAMES` is
renamed like a variable, so two theorems that differ only in such a function
(``gcd`` vs ``lcm`` if they were missing) would be twins; a capitalised name
that is neither declared nor bound is kept, so renaming an undeclared
capitalised constant (an auto-bound ``Foo``) breaks twinhood; user names are
keyed by component (two user ``size`` functions in different namespaces are
one name); the scope of a ``let``/``have`` is the enclosing bracket, not
Lean's exact one; ``open``, ``import``, ``namespace``, ``section``, ``end``,
``set_option`` and ``universe`` commands are left out of the form (``open
Nat`` changes what a bare ``succ`` means, the form does not see it); a
preamble theorem is in the form only if the statement names it.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Literal

from pydantic import BaseModel, ConfigDict

from burnqed_core.lean.lexer import Token, TokKind, tokenize
from burnqed_core.records import Theorem

log = logging.getLogger(__name__)

NUMERAL = "#"
"""What every numeric literal becomes (projections ``h.1`` keep their index)."""
SELF = "‹self›"
"""What the theorem's own name becomes in its proof (a recursive call)."""
USER_PREFIX = "u"

# --- name lists ---------------------------------------------------------------

KEYWORDS = frozenset({
    "fun", "let", "have", "haveI", "letI", "show", "from", "by", "at", "with", "match", "if", "then", "else", "do",
    "return", "where", "in", "forall", "Type", "Sort", "Prop", "deriving", "def", "theorem", "lemma", "abbrev",
    "inductive", "structure", "class", "instance", "extends", "namespace", "section", "end", "open", "import",
    "variable", "universe", "mutual", "private", "protected", "noncomputable", "partial", "unsafe", "opaque",
    "axiom", "example", "termination_by", "decreasing_by", "calc", "this", "nomatch", "nofun", "sorry", "only",
    "using", "generalizing", "says", "to", "mut", "for", "unless", "break", "continue", "try", "catch", "finally",
    "local", "scoped", "attribute", "set_option", "macro", "macro_rules", "syntax", "notation", "infix", "infixl",
    "infixr", "prefix", "postfix", "export", "hiding", "renaming", "suffices", "_", "nonrec", "omit", "include",
    "as", "obtain",
})

TACTICS = frozenset({
    "simp", "simp_all", "simp?", "simpa", "dsimp", "simp_arith", "norm_num", "omega", "decide", "rfl", "exact",
    "apply", "refine", "refine'", "intro", "intros", "introv", "rintro", "cases", "rcases", "obtain", "induction",
    "fun_induction", "fun_cases", "constructor", "left", "right", "exists", "use", "exact?", "apply?",
    "assumption", "contradiction", "exfalso", "trivial", "unfold", "delta", "rw", "rewrite", "rwa", "erw", "split",
    "by_cases", "by_contra", "subst", "subst_vars", "injection", "injections", "funext", "ext", "congr", "gcongr",
    "specialize", "revert", "clear", "rename_i", "rename", "next", "case", "case'", "all_goals", "any_goals",
    "first", "repeat", "repeat'", "iterate", "focus", "skip", "done", "admit", "grind", "linarith", "nlinarith",
    "ring", "ring_nf", "positivity", "aesop", "tauto", "field_simp", "push_neg", "native_decide", "change", "conv",
    "arg", "lhs", "rhs", "enter", "norm_cast", "push_cast", "exact_mod_cast", "interval_cases", "fin_cases",
    "absurd", "generalize", "induction'", "cases'", "symm", "trans", "choose", "set", "and_intros",
    "bv_decide", "ac_rfl", "simp_wf", "decreasing_tactic", "with_reducible", "infer_instance", "on_goal",
    "pick_goal", "rotate_left", "rotate_right", "fail", "guard_hyp", "guard_target", "stop", "replace",
    "contrapose", "apply_fun", "nth_rewrite", "nth_rw", "simp_rw", "rw_mod_cast", "refine_lift",
    "clear_value", "exists_intro", "constructorm", "casesm", "rcases?", "unfold_let", "mono", "bound", "norm_num1",
    "abel", "group", "noncomm_ring", "linear_combination", "polyrith", "fconstructor", "econstructor",
    "solve_by_elim", "apply_assumption", "exacts", "triv", "inhabit", "lift", "zify", "qify", "rify", "push",
})

LIBRARY_NAMES = frozenset({
    # logic and core terms
    "id", "some", "none", "true", "false", "not", "and", "or", "xor", "ite", "dite", "cond", "absurd",
    "congrArg", "congrFun", "congr", "funext", "propext", "cast", "default", "pure", "bind", "decide", "rfl",
    "trivial", "fst", "snd", "mk", "intro", "elim", "refl", "symm", "trans", "mp", "mpr", "inl", "inr", "left",
    "right", "unit", "val", "property", "le_refl", "le_of_lt", "lt_irrefl", "by_contra", "by_cases", "em",
    "nomatch", "panic", "dbg_trace", "toString", "repr", "hash", "compare", "max", "min", "flip", "const",
    "comp", "uncurry", "curry", "show", "inferInstance", "inferInstanceAs", "sorryAx", "Function",
    # constructors and recursors
    "zero", "succ", "pred", "nil", "cons", "ofNat", "negSucc", "up", "down", "head", "tail", "rec", "recOn",
    "casesOn", "brecOn", "below", "induct", "noConfusion", "ofNat_pos",
    # arithmetic
    "add", "sub", "mul", "div", "mod", "neg", "pow", "abs", "natAbs", "toNat", "gcd", "lcm", "sqrt", "log2",
    "log", "exp", "sin", "cos", "tan", "floor", "ceil", "round", "factorial", "choose", "fib", "dist", "norm",
    "le", "lt", "ge", "gt", "eq", "ne", "beq", "bne", "ble", "blt", "land", "lor", "shiftLeft", "shiftRight",
    "testBit", "even", "odd", "sign", "deriv", "card", "sup", "inf",
    # lists, arrays, options
    "length", "sum", "prod", "map", "filter", "filterMap", "foldl", "foldr", "reverse", "append", "get", "getD",
    "getLast", "zip", "zipWith", "unzip", "replicate", "range", "take", "drop", "takeWhile", "dropWhile", "all",
    "any", "contains", "elem", "count", "countP", "find?", "join", "flatten", "flatMap", "iota", "sort",
    "insert", "erase", "dedup", "eraseDups", "last", "isEmpty", "isSome", "isNone", "getLast?", "head?", "tail?",
    "get?", "maximum?", "minimum?", "partition", "span", "lookup", "enum", "iterate", "set", "push",
    "pop", "size", "toList", "toArray", "singleton", "empty", "concat", "intersperse", "rotate", "sum_cons",
})

# Bare names that a match pattern uses as constructors (``| succ n ih =>``), not as variables.
LIBRARY_CONSTRUCTORS = frozenset({
    "zero", "succ", "nil", "cons", "some", "none", "true", "false", "inl", "inr", "intro", "mk", "unit", "refl",
    "ofNat", "negSucc", "isTrue", "isFalse", "step",
})

_NOT_BINDABLE = KEYWORDS | TACTICS | {"rfl", "-", "_"}

# --- token helpers --------------------------------------------------------------

_OPENERS = MappingProxyType({"(": ")", "[": "]", "{": "}", "⟨": "⟩", "⦃": "⦄", "‹": "›", "⟦": "⟧", "⌊": "⌋", "⌈": "⌉",
                             "@[": "]", "#[": "]", "%[": "]", "`(": ")", "``(": ")"})
_CLOSERS = frozenset(_OPENERS.values())


def _opens(t: Token) -> bool:
    return t.kind is TokKind.SYMBOL and t.text in _OPENERS


def _closes(t: Token) -> bool:
    return t.kind is TokKind.SYMBOL and t.text in _CLOSERS
_BINDER_GROUPS = frozenset({"(", "{", "⦃", "["})
_QUANTIFIERS = frozenset({"∀", "∃", "fun", "λ", "Π", "Σ", "forall", "∃!", "∄"})
_LET_LIKE = frozenset({"let", "have", "haveI", "letI", "suffices"})
_INTRO_LIKE = frozenset({"intro", "intros", "introv", "rintro", "rename_i", "ext", "funext", "by_contra"})
_WITH_PATTERNS = frozenset({"rcases", "cases'", "induction'", "injection", "obtain"})
_TACTIC_SEPARATORS = frozenset({";", "<;>"})
_TACTIC_HEAD_AFTER = frozenset({";", "<;>", "·", "•", "by", "=>", "(", "try", "repeat", "all_goals", "any_goals",
                                "focus", "first", "{", "then", "else", "|"})
_ARROWS = frozenset({"→", "->"})
_VARIABLE_LIKE = re.compile(r"^[A-Z][0-9₀-₉'_!?ₐ-ₜᵢ-ᵪ]*$")

_DECL_KEYWORDS = frozenset({"def", "theorem", "lemma", "abbrev", "opaque", "axiom", "instance"})
_TYPE_KEYWORDS = frozenset({"inductive", "structure", "class"})
_CONTEXT_COMMANDS = frozenset({"namespace", "section", "end", "open", "import", "set_option", "universe",
                               "mutual", "export"})
_COMMAND_KEYWORDS = _DECL_KEYWORDS | _TYPE_KEYWORDS | _CONTEXT_COMMANDS | frozenset({
    "example", "variable", "attribute", "notation", "infix", "infixl", "infixr", "prefix", "postfix", "macro",
    "macro_rules", "syntax", "elab",
})
_MODIFIERS = frozenset({"noncomputable", "private", "protected", "partial", "unsafe", "nonrec"})
_DROPPED_MODIFIERS = frozenset({"noncomputable", "private"})


def _is_ident(t: Token) -> bool:
    return t.kind is TokKind.IDENT


def _bare(t: Token) -> bool:
    """A single-component identifier (``x``, not ``xs.length``)."""
    return t.kind is TokKind.IDENT and len(t.components) == 1


def _adjacent(a: Token, b: Token) -> bool:
    return a.offset + len(a.text) == b.offset


def _variable_like(name: str) -> bool:
    """A name that reads as a variable when it is neither declared nor known:
    lowercase first letter (``x``, ``xs``, ``α``, ``h₁``) or one capital with
    decorations (``P``, ``L₁``, ``H'``)."""
    return bool(name) and (name[0].islower() or name[0] == "_" or bool(_VARIABLE_LIKE.match(name)))


def _matching(toks: Sequence[Token]) -> dict[int, int]:
    """Index of each opener -> index of its closer (unbalanced ones are left out)."""
    out: dict[int, int] = {}
    stack: list[tuple[int, str]] = []
    for k, t in enumerate(toks):
        if t.kind is not TokKind.SYMBOL:
            continue
        if t.text in _OPENERS:
            stack.append((k, _OPENERS[t.text]))
        elif t.text in _CLOSERS:
            while stack and stack[-1][1] != t.text:
                stack.pop()
            if stack:
                out[stack.pop()[0]] = k
    return out


# --- preamble commands ----------------------------------------------------------


@dataclass
class _Command:
    """One top-level command of a preamble."""

    toks: list[Token]
    kind: str                                   # the command keyword (``def``, ``inductive``, ``open`` ...)
    head: int = 0                               # index of that keyword in ``toks``
    names: list[tuple[str, ...]] = field(default_factory=list)   # declared full names
    keys: set[str] = field(default_factory=set)                  # last components of ``names``
    refs: list[str] = field(default_factory=list)                # user components it mentions, in order


def _split_commands(toks: Sequence[Token]) -> list[list[Token]]:
    """Tokens of a preamble cut at each command keyword (with its modifiers and attributes) at bracket depth 0."""
    out: list[list[Token]] = []
    cur: list[Token] = []
    depth = 0
    only_modifiers = False
    for t in toks:
        starts = False
        if depth == 0:
            if t.kind is TokKind.HASH:
                starts = True
            elif t.kind is TokKind.SYMBOL and t.text == "@[":
                starts = not only_modifiers
            elif _is_ident(t) and (t.text in _COMMAND_KEYWORDS or t.text in _MODIFIERS):
                follows_class = bool(cur) and cur[-1].text == "class" and t.text in ("inductive", "structure")
                starts = not only_modifiers and not follows_class
        if starts:
            if cur:
                out.append(cur)
            cur = []
            only_modifiers = True
        cur.append(t)
        if _opens(t):
            depth += 1
        elif _closes(t):
            depth = max(depth - 1, 0)
        if only_modifiers and depth == 0 and not (
                t.text in _MODIFIERS or t.text == "]" or (t.kind is TokKind.SYMBOL and t.text == "@[")):
            only_modifiers = False
    if cur:
        out.append(cur)
    return out


def _head(toks: Sequence[Token]) -> int:
    """Index of a command's keyword (after its attributes and modifiers)."""
    depth = 0
    for k, t in enumerate(toks):
        if _opens(t):
            depth += 1
        elif _closes(t):
            depth = max(depth - 1, 0)
        elif depth == 0 and t.text not in _MODIFIERS:
            return k
    return len(toks)


def _parse_preamble(preamble: str) -> list[_Command]:
    """The preamble's commands with the names each declares (namespaces applied)."""
    toks = tokenize(preamble, comments=False, strict=False)
    commands: list[_Command] = []
    namespace: list[tuple[str, list[str]]] = []   # (kind, components) of open namespaces/sections

    def prefix() -> list[str]:
        return [c for _, comps in namespace for c in comps]

    for ctoks in _split_commands(toks):
        h = _head(ctoks)
        if h >= len(ctoks):
            continue
        kw = ctoks[h].text
        if kw == "class" and h + 1 < len(ctoks) and ctoks[h + 1].text in ("inductive", "structure"):
            h += 1
            kw = ctoks[h].text
        cmd = _Command(toks=ctoks, kind=kw, head=h)
        nxt = ctoks[h + 1] if h + 1 < len(ctoks) else None
        if kw == "namespace" and nxt is not None and _is_ident(nxt):
            namespace.append(("namespace", nxt.components))
            cmd.names.append(tuple(prefix()))
        elif kw in ("section", "mutual"):
            namespace.append((kw, []))
        elif kw == "end":
            if namespace:
                namespace.pop()
        elif kw in _DECL_KEYWORDS | _TYPE_KEYWORDS and nxt is not None and _is_ident(nxt) \
                and nxt.text not in KEYWORDS:
            full = (*prefix(), *nxt.components)
            cmd.names.append(full)
            if kw in _TYPE_KEYWORDS:
                cmd.names += [(*full, m) for m in _members(ctoks, h, kw)]
            elif kw != "instance":
                cmd.names += [(*full, m) for m in _where_helpers(ctoks, h)]
        cmd.keys = {n[-1] for n in cmd.names} if kw != "namespace" else set()
        commands.append(cmd)
    return commands


def _members(toks: Sequence[Token], h: int, kw: str) -> list[str]:
    """Constructors of an ``inductive``; fields (and a named constructor ``mk ::``) of a ``structure``/``class``."""
    out: list[str] = []
    depth = 0
    after_where = False
    for k in range(h + 2, len(toks)):
        t = toks[k]
        if _opens(t):
            depth += 1
            continue
        if _closes(t):
            depth = max(depth - 1, 0)
            continue
        if depth:
            continue
        prev = toks[k - 1]
        if kw == "inductive":
            if prev.text == "|" and _bare(t):
                out.append(t.text)
        elif t.text == "where" and _is_ident(t):
            after_where = True
        elif after_where and _bare(t) and t.text not in KEYWORDS:
            nxt = toks[k + 1].text if k + 1 < len(toks) else ""
            ctor = nxt == ":" and k + 2 < len(toks) and toks[k + 2].text == ":" and _adjacent(toks[k + 1], toks[k + 2])
            starts_field = t.line_start or prev.text == "where" or (prev.kind is TokKind.IDENT and prev.text in out)
            typed = nxt in (":", ":=", "(", "{", "[", "⦃") or (k + 1 < len(toks) and _bare(toks[k + 1]))
            if ctor or (starts_field and typed):
                out.append(t.text)
    return out


def _where_helpers(toks: Sequence[Token], h: int) -> list[str]:
    """Names of the local definitions of a ``where`` clause of a definition."""
    out: list[str] = []
    depth = 0
    after_where = False
    for k in range(h + 2, len(toks)):
        t = toks[k]
        if _opens(t):
            depth += 1
        elif _closes(t):
            depth = max(depth - 1, 0)
        elif depth == 0 and t.text == "where" and _is_ident(t):
            after_where = True
        elif depth == 0 and after_where and _bare(t) and t.text not in KEYWORDS \
                and (t.line_start or toks[k - 1].text == "where"):
            out.append(t.text)
    return out


# --- naming ---------------------------------------------------------------------


@dataclass
class _Frame:
    """Names bound in one scope; popped when the bracket around ``depth`` closes."""

    depth: int
    kind: str    # base | sig | binder | arm | ctor | let
    names: dict[str, str] = field(default_factory=dict)


@dataclass
class _Namer:
    """The names of one theorem: user-declared components -> ``uN``, and the counter."""

    user: frozenset[str]
    members: frozenset[str]
    self_name: str = ""   # the theorem's own name, in its proof
    globals: dict[str, str] = field(default_factory=dict)
    count: int = 0
    file_frame: _Frame = field(default_factory=lambda: _Frame(0, "file"))

    def fresh(self) -> str:
        self.count += 1
        return f"{USER_PREFIX}{self.count}"

    def global_name(self, comp: str) -> str:
        if comp not in self.globals:
            self.globals[comp] = self.fresh()
        return self.globals[comp]


class _Renderer:
    """Renders one token stream (a command, the statement, a proof step) with its scopes."""

    def __init__(self, toks: Sequence[Token], namer: _Namer, frames: list[_Frame], *, kind: str = "term",
                 sig_start: int | None = None, decl_kind: str = "") -> None:
        self.toks = list(toks)
        self.namer = namer
        self.frames = frames
        self.kind = kind
        self.decl_kind = decl_kind
        self.match = _matching(self.toks)
        self.bind: set[int] = set()       # token indices that bind a name
        self.pattern: set[int] = set()    # token indices inside a match arm's pattern
        self.keep: set[int] = set()       # tag positions (``case tag``) rendered as references
        self.sig_start = sig_start
        self.sig_end = len(self.toks)

    # -- marking binding sites --------------------------------------------------
    def _group(self, k: int, m: int) -> None:
        """Binding sites of a binder group ``toks[k] .. toks[m]`` (``(x y : T)``, ``{α}``, ``⟨a, b⟩``)."""
        opener = self.toks[k].text
        if opener == "⟨":
            self._mark_all(k + 1, m)
            return
        colon = self._colon(k, m)
        if colon is None and opener == "[":
            return
        end = m if colon is None else colon
        for j in range(k + 1, end):
            t = self.toks[j]
            if _bare(t) and t.text not in _NOT_BINDABLE:
                self.bind.add(j)

    def _colon(self, k: int, m: int) -> int | None:
        """The ``:`` (or ``:=``) at the top level of the group ``toks[k] .. toks[m]``; never one of the two
        colons of ``::`` (the lexer gives ``x :: xs`` as ``x``, ``:``, ``:``, ``xs``: ``(x :: xs)`` binds
        nothing)."""
        depth = 0
        for j in range(k + 1, m):
            t = self.toks[j]
            if _opens(t):
                depth += 1
            elif _closes(t):
                depth -= 1
            elif depth == 0 and t.text in (":", ":=") and not self._cons(j):
                return j
        return None

    def _cons(self, j: int) -> bool:
        """Whether the ``:`` at ``j`` is one of the two of ``::``."""
        t = self.toks[j]
        if t.text != ":":
            return False
        before = self.toks[j - 1] if j > 0 else None
        after = self.toks[j + 1] if j + 1 < len(self.toks) else None
        return bool((before is not None and before.text == ":" and _adjacent(before, t))
                    or (after is not None and after.text == ":" and _adjacent(t, after)))

    def _mark_all(self, start: int, end: int) -> None:
        """Every bare identifier of a pattern region binds (``⟨x, hx⟩ | h``), except after ``:`` in a group."""
        skip_to = -1
        for j in range(start, end):
            t = self.toks[j]
            if j < skip_to:
                continue
            if t.text == ":" and t.kind is TokKind.SYMBOL and not self._cons(j):
                # a type ascription: skip to the end of the enclosing group
                skip_to = self._group_end(j, end)
                continue
            if _bare(t) and t.text not in _NOT_BINDABLE and not self._after_dot(j):
                self.bind.add(j)

    def _group_end(self, j: int, limit: int) -> int:
        depth = 0
        for q in range(j, limit):
            t = self.toks[q]
            if _opens(t):
                depth += 1
            elif _closes(t):
                if depth == 0:
                    return q
                depth -= 1
        return limit

    def _binder_list(self, start: int) -> int:
        """Binding sites of a binder list (``x y (z : T) {α}``) from ``start``; where it stops."""
        k = start
        while k < len(self.toks):
            t = self.toks[k]
            if _bare(t):
                if t.text in KEYWORDS and t.text != "_":
                    break
                if t.text != "_":
                    self.bind.add(k)
                k += 1
                continue
            if t.kind is TokKind.SYMBOL and (t.text in _BINDER_GROUPS or t.text == "⟨") and k in self.match:
                self._group(k, self.match[k])
                k = self.match[k] + 1
                continue
            break
        return k

    def _tactic_end(self, i: int) -> int:
        """Index just after the tactic starting at ``i``."""
        depth = 0
        line = self.toks[i].line
        for k in range(i + 1, len(self.toks)):
            t = self.toks[k]
            if _opens(t):
                depth += 1
            elif _closes(t):
                depth -= 1
                if depth < 0:
                    return k
            elif depth == 0 and (t.text in _TACTIC_SEPARATORS or t.text == "=>"
                                 or (t.line != line and t.line_start and _is_ident(t)
                                     and t.text in TACTICS)):
                return k
        return len(self.toks)

    def _find(self, start: int, end: int, texts: Iterable[str]) -> int | None:
        """First index in [start, end) at this depth whose text is one of ``texts``."""
        wanted = set(texts)
        depth = 0
        for k in range(start, end):
            t = self.toks[k]
            if depth == 0 and t.text in wanted:
                return k
            if _opens(t):
                depth += 1
            elif _closes(t):
                depth -= 1
                if depth < 0:
                    return None
        return None

    def _arm_end(self, i: int) -> int | None:
        """If the ``|`` at ``i`` starts a match arm, the index of its ``=>`` (never for ``||``, ``|>``, ``<|``)."""
        bar = self.toks[i]
        if i > 0 and self.toks[i - 1].text in ("|", "<") and _adjacent(self.toks[i - 1], bar):
            return None
        if i + 1 < len(self.toks) and self.toks[i + 1].text in ("|", ">") and _adjacent(bar, self.toks[i + 1]):
            return None
        depth = 0
        for k in range(i + 1, len(self.toks)):
            t = self.toks[k]
            if _opens(t):
                depth += 1
            elif _closes(t):
                depth -= 1
                if depth < 0:
                    return None
            elif depth == 0:
                if t.text == "=>":
                    return k
                if t.text in ("|", ":=", ";", "<;>") or (_is_ident(t) and t.text in ("where", "with")):
                    return None
        return None

    def _pattern(self, start: int, end: int) -> None:
        """Binding sites of a match pattern: bare names that are no constructor."""
        for j in range(start, end):
            self.pattern.add(j)
            t = self.toks[j]
            if not _bare(t) or self._after_dot(j) or t.text in _NOT_BINDABLE:
                continue
            name = t.text
            if name in self.namer.user or name in LIBRARY_CONSTRUCTORS or not _variable_like(name):
                continue
            self.bind.add(j)

    def _after_dot(self, j: int) -> bool:
        prev = self.toks[j - 1] if j > 0 else None
        return prev is not None and prev.kind is TokKind.SYMBOL and prev.text == "." and _adjacent(prev, self.toks[j])

    def _tactic_head(self, i: int) -> bool:
        if i == 0 or self.toks[i].line_start:
            return True
        prev = self.toks[i - 1]
        return prev.text in _TACTIC_HEAD_AFTER

    def _tactic_binders(self, i: int) -> None:
        """Binding sites of a binding tactic at ``i`` (``intro x``, ``obtain ⟨x, hx⟩ := h`` ...)."""
        name = self.toks[i].text
        end = self._tactic_end(i)
        if name in _INTRO_LIKE:
            self._mark_all(i + 1, end)
        elif name == "obtain":
            stop = self._find(i + 1, end, (":=", ":"))
            self._mark_all(i + 1, end if stop is None else stop)
        elif name in _WITH_PATTERNS:
            w = self._find(i + 1, end, ("with",))
            if w is not None and not (w + 1 < len(self.toks) and self.toks[w + 1].text == "|"):
                self._mark_all(w + 1, end)
        elif name in ("case", "case'", "next"):
            arrow = self._find(i + 1, len(self.toks), ("=>",))
            if arrow is not None:
                first = i + 2 if name != "next" else i + 1
                if name != "next":
                    self.keep.add(i + 1)
                self._mark_all(first, arrow)
        elif name in ("by_cases", "generalize", "set"):
            if i + 2 < len(self.toks) and _bare(self.toks[i + 1]) and self.toks[i + 2].text in (":", ":="):
                self.bind.add(i + 1)
            if name == "set":
                w = self._find(i + 1, end, ("with",))
                if w is not None:
                    self._mark_all(w + 1, end)
        elif name == "choose":
            stop = self._find(i + 1, end, ("using",))
            self._mark_all(i + 1, end if stop is None else stop)

    # -- rendering --------------------------------------------------------------
    def _lookup(self, name: str) -> str | None:
        for fr in reversed(self.frames):
            if name in fr.names:
                return fr.names[name]
        return self.namer.file_frame.names.get(name)

    def _push(self, kind: str, depth: int) -> _Frame:
        fr = _Frame(depth, kind)
        self.frames.append(fr)
        return fr

    def _pop_arm(self, depth: int, kind: str) -> None:
        """Close the previous arm (or constructor) at ``depth`` and every scope opened after it."""
        for q in range(len(self.frames) - 1, 0, -1):
            fr = self.frames[q]
            if fr.depth < depth:
                return
            if fr.kind == kind and fr.depth == depth:
                del self.frames[q:]
                return

    def _ident(self, j: int, binds: bool) -> str:
        t = self.toks[j]
        comps = t.components
        namer = self.namer
        if binds and len(comps) == 1:
            fresh = namer.fresh()
            self.frames[-1].names[comps[0]] = fresh
            return fresh
        if self._after_dot(j):
            dot = self.toks[j - 1]
            before = self.toks[j - 2] if j >= 2 else None
            leading = before is None or not _adjacent(before, dot) or (
                before.kind is TokKind.SYMBOL and before.text not in _CLOSERS)
            pool = namer.user if leading else namer.members
            return ".".join(namer.global_name(c) if c in pool else c for c in comps)
        head, rest = comps[0], comps[1:]
        local = self._lookup(head)
        if local is not None:
            out, pool = local, namer.members
        elif head in namer.user:
            out, pool = namer.global_name(head), namer.user
        elif namer.self_name and t.text == namer.self_name:
            return SELF
        elif head in KEYWORDS or head in TACTICS or head in LIBRARY_NAMES or not _variable_like(head) \
                or j in self.keep:
            return t.text if not comps else ".".join(comps)
        else:
            fresh = namer.fresh()
            self.frames[0].names[head] = fresh
            out, pool = fresh, namer.members
        return ".".join([out, *(namer.global_name(c) if c in pool else c for c in rest)])

    def render(self) -> list[str]:
        """The tokens with every name renamed (`_ident`), numerals as `NUMERAL` and dropped modifiers left out,
        scopes opened by `_open_scope` and closed by their closing bracket."""
        out: list[str] = []
        depth = 0
        if self.sig_start is not None:
            self._push("sig", 0)
            self.sig_end = self._binder_list(self.sig_start)
        in_body = self.sig_start is None
        for i, t in enumerate(self.toks):
            text = t.text
            if i == self.sig_end:
                in_body = True
            if t.kind is TokKind.SYMBOL and text in _CLOSERS:
                depth = max(depth - 1, 0)
                while len(self.frames) > 1 and self.frames[-1].depth > depth:
                    self.frames.pop()
                out.append(text)
                continue
            if t.kind is TokKind.NUMBER:
                out.append(text if self._after_dot(i) else NUMERAL)
                continue
            self._open_scope(i, depth, in_body)
            if t.kind is TokKind.SYMBOL and text in _OPENERS:
                depth += 1
                out.append(text)
            elif not _is_ident(t):
                out.append(text)
            elif text not in _DROPPED_MODIFIERS:
                out.append(self._ident(i, i in self.bind))
        return out

    def _open_scope(self, i: int, depth: int, in_body: bool) -> None:
        """The scope token ``i`` opens at bracket depth ``depth``, if any, with the names it binds: an arm or a
        constructor (``|``), a quantifier's binders, a ``let``/``have``, a tactic's binders, a dependent arrow's
        binder group."""
        toks = self.toks
        t = toks[i]
        text = t.text
        if t.kind is TokKind.SYMBOL and text == "|" and i not in self.bind:
            self._bar(i, depth, in_body)
        elif (text in _QUANTIFIERS) and i not in self.bind:
            self._push("binder", depth)
            bang = i + 1 < len(toks) and toks[i + 1].text == "!" and _adjacent(t, toks[i + 1])
            self._binder_list(i + 2 if bang else i + 1)
        elif _is_ident(t) and text in _LET_LIKE and i not in self.pattern:
            if not (self.kind == "tactic" and depth == 0):
                self._push("let", depth)   # a tactic's `have` stays for the rest of the proof
            self._binder_list(i + 1)
        elif self._binds_by_tactic(i):
            self._tactic_binders(i)
        elif t.kind is TokKind.SYMBOL and text in _BINDER_GROUPS and i in self.match and in_body:
            m = self.match[i]
            # a dependent arrow ``(x : T) → ...`` binds; a parenthesised term before an arrow
            # (``(P x) → Q``, ``(x :: xs) → ...``) does not
            if m + 1 < len(toks) and toks[m + 1].text in _ARROWS and self._colon(i, m) is not None:
                self._push("binder", depth)
                self._group(i, m)

    def _bar(self, i: int, depth: int, in_body: bool) -> None:
        """A ``|``: a constructor of an inductive type (top level of its body), or a match arm."""
        toks = self.toks
        if self.decl_kind == "inductive" and depth == 0 and in_body:
            self._pop_arm(0, "ctor")
            self._push("ctor", 0)
            if i + 1 < len(toks) and _bare(toks[i + 1]):
                self._binder_list(i + 2)
        elif i not in self.pattern and (arrow := self._arm_end(i)) is not None:
            self._pop_arm(depth, "arm")
            self._push("arm", depth)
            self._pattern(i + 1, arrow)

    def _binds_by_tactic(self, i: int) -> bool:
        """Whether token ``i`` is a tactic that binds names (``intro``, ``cases ... with``, ``obtain`` ...)."""
        t = self.toks[i]
        text = t.text
        return (_is_ident(t) and i not in self.pattern and i not in self.bind and self._tactic_head(i)
                and (text in _INTRO_LIKE or text in _WITH_PATTERNS or text in (
                    "case", "case'", "next", "by_cases", "generalize", "set", "choose", "obtain")))


# --- canonical forms ---------------------------------------------------------------


@dataclass(frozen=True)
class CanonicalCommand:
    """One preamble command of a canonical form: its keyword, its rendered tokens, the canonical names it
    declares (its own name, constructors, fields, ``where`` helpers) and whether it declares a type."""

    kind: str
    tokens: tuple[str, ...]
    declares: frozenset[str]
    is_type: bool


@dataclass(frozen=True)
class CanonicalParts:
    """`canonical_form` before it is joined: the commands the statement needs (dependencies first) and the
    statement's tokens. `burnqed_core.data.twins.near_twins` normalises these further."""

    commands: tuple[CanonicalCommand, ...]
    statement: tuple[str, ...]


@dataclass
class _Canonical:
    text: str
    namer: _Namer
    frames: list[_Frame]
    parts: CanonicalParts


def _refs(toks: Iterable[Token], user: frozenset[str]) -> list[str]:
    """User components an identifier of ``toks`` mentions, in order of first appearance."""
    seen: dict[str, None] = {}
    for t in toks:
        if t.kind in (TokKind.IDENT, TokKind.NAME):
            comps = t.components if t.kind is TokKind.IDENT else t.text.lstrip("`").split(".")
            for c in comps:
                if c in user:
                    seen.setdefault(c, None)
    return list(seen)


def _closure(commands: Sequence[_Command], statement_refs: Sequence[str]) -> list[_Command]:
    """The commands the statement needs, dependencies first (a post-order walk from the statement's names in
    order of appearance, so the preamble's order of independent declarations does not matter), then the
    instances and attributes about them and every ``variable``."""
    declaring: dict[str, list[int]] = defaultdict(list)
    for k, c in enumerate(commands):
        for key in c.keys:
            declaring[key].append(k)
    order: list[int] = []
    visited: set[int] = set()

    def visit(k: int) -> None:
        visited.add(k)
        for r in commands[k].refs:
            for d in declaring.get(r, []):
                if d not in visited:
                    visit(d)
        order.append(k)

    def walk(refs: Iterable[str]) -> None:
        for r in refs:
            for d in declaring.get(r, []):
                if d not in visited:
                    visit(d)

    walk(statement_refs)
    changed = True
    while changed:
        changed = False
        covered = {key for k in order for key in commands[k].keys}
        for k, c in enumerate(commands):
            if k in visited:
                continue
            implicit = c.kind in ("instance", "attribute") or (
                c.kind not in _DECL_KEYWORDS | _TYPE_KEYWORDS | _CONTEXT_COMMANDS
                and c.kind not in ("example", "variable") and not c.kind.startswith("#") and not c.names)
            if implicit and set(c.refs) & covered:
                visit(k)
                changed = True
    variables = [commands[k] for k, c in enumerate(commands) if c.kind == "variable" and k not in visited]
    return variables + [commands[k] for k in order]


@dataclass(frozen=True)
class _Preamble:
    """A preamble as `_canonicalize` reads it (read once, never changed after): its commands with the user
    components each mentions, the user components and the members of user types."""

    commands: list[_Command]
    user: frozenset[str]
    members: frozenset[str]


def _read_preamble(preamble: str) -> _Preamble:
    commands = _parse_preamble(preamble)
    user = frozenset(c for cmd in commands for n in cmd.names for c in n)
    type_names = {n[-1] for cmd in commands if cmd.kind in _TYPE_KEYWORDS for n in cmd.names[:1]}
    members = frozenset(n[-1] for cmd in commands for n in cmd.names if len(n) >= 2 and n[-2] in type_names)
    for cmd in commands:
        cmd.refs = [r for r in _refs(cmd.toks, user) if r not in cmd.keys]
    return _Preamble(commands=commands, user=user, members=members)


def _canonicalize(theorem: Theorem, *, definitions: bool = True, preamble: _Preamble | None = None) -> _Canonical:
    """The canonical rendering of ``theorem``; ``definitions`` off: the statement alone, its user names numbered
    from the statement (what a proof skeleton continues), the preamble only telling user names apart
    (``preamble``: the theorem's, already read)."""
    pre = _read_preamble(theorem.preamble) if preamble is None else preamble
    commands, user, members = pre.commands, pre.user, pre.members
    stmt_toks = tokenize(theorem.statement, comments=False, strict=False)
    kept = _closure(commands, _refs(stmt_toks, user)) if definitions else []
    log.debug("%s: %d of %d preamble commands in the canonical form", theorem.name, len(kept), len(commands))
    namer = _Namer(user=user, members=members)
    lines: list[str] = []
    rendered_commands: list[tuple[_Command, list[str]]] = []
    for cmd in kept:
        h = cmd.head
        frames = [_Frame(0, "base")]
        if cmd.kind == "variable":
            rendered = _Renderer(cmd.toks, namer, frames, sig_start=h + 1).render()
            for fr in frames:
                namer.file_frame.names.update(fr.names)
        else:
            sig: int | None = None
            if cmd.kind in _DECL_KEYWORDS | _TYPE_KEYWORDS:
                sig = h + 2 if cmd.names else h + 1
            rendered = _Renderer(cmd.toks, namer, frames, sig_start=sig, decl_kind=cmd.kind).render()
        lines.append(" ".join(rendered))
        rendered_commands.append((cmd, rendered))
    frames = [_Frame(0, "base")]
    rendered = _Renderer(stmt_toks, namer, frames, sig_start=0).render()
    lines.append(" ".join(["theorem", *rendered]))
    parts = CanonicalParts(
        commands=tuple(CanonicalCommand(
            kind=cmd.kind, tokens=tuple(toks),
            declares=frozenset(namer.globals[n[-1]] for n in cmd.names if n and n[-1] in namer.globals
                               and cmd.kind != "namespace"),
            is_type=cmd.kind in _TYPE_KEYWORDS) for cmd, toks in rendered_commands),
        statement=tuple(rendered))
    return _Canonical(text="\n".join(lines), namer=namer, frames=frames, parts=parts)


def canonical_parts(theorem: Theorem) -> CanonicalParts:
    """The parts `canonical_form` joins (for forms that normalise further: `burnqed_core.data.twins.near_twins`)."""
    return _canonicalize(theorem).parts


def canonical_form(theorem: Theorem) -> str:
    """The theorem up to renaming and numerals: the preamble declarations its statement needs (dependencies
    first, in an order the preamble's layout does not change) and the statement, one command a line, tokens
    joined by spaces, every user identifier renamed ``u1, u2, ...`` in order of first appearance, every
    numeral ``#``. The theorem's name is not part of it. Two theorems with the same form state the same thing
    about isomorphic definitions (see the module doc for how names are classified and the limits)."""
    return _canonicalize(theorem).text


def proof_skeleton(theorem: Theorem, proof: Sequence[str] | str | None = None) -> str:
    """A proof of ``theorem`` (``proof``: its tactic steps, or one text; default the theorem's known proof)
    canonicalised like `canonical_form`, its names numbered from the statement alone, then continued by the
    proof (``induction u1`` names the statement's first name, whatever the definitions bind), numerals ``#``,
    the theorem's own name ``‹self›``; one step a line. ``""`` when there is no proof.

    Numbering from the statement alone (not after the definitions, as `canonical_form` does) makes two proofs
    that are one script over definitions with a different number of bound names one skeleton: ``induction ws;
    simp [lucas]; simp [lucas]; omega`` over a list function and ``induction j; simp [rotate]; simp [rotate];
    omega`` over a recursion on ``Nat`` both read ``induction u1; simp [ u2 ]; simp [ u2 ]; omega``."""
    return _proof_skeleton(theorem, proof)


def _proof_skeleton(theorem: Theorem, proof: Sequence[str] | str | None, preamble: _Preamble | None = None) -> str:
    steps = [proof] if isinstance(proof, str) else list(theorem.proof if proof is None else proof)
    steps = [s for s in steps if s.strip()]
    if not steps:
        return ""
    canon = _canonicalize(theorem, definitions=False, preamble=preamble)
    canon.namer.self_name = theorem.name
    frames = canon.frames
    frames.append(_Frame(0, "proof"))
    kept = len(frames)
    lines = []
    for step in steps:
        toks = tokenize(step, comments=False, strict=False)
        lines.append(" ".join(_Renderer(toks, canon.namer, frames, kind="tactic").render()))
        del frames[kept:]   # a step's arms and binders end with it; what it introduces stays in "proof"
    return "\n".join(lines)


class PreambleReadings:
    """Preambles as `CanonicalForms` reads them, each read once however many theorems share it (a family's
    theorems often do)."""

    def __init__(self) -> None:
        self._read: dict[str, _Preamble] = {}

    def read(self, preamble: str) -> _Preamble:
        if preamble not in self._read:
            self._read[preamble] = _read_preamble(preamble)
        return self._read[preamble]


class CanonicalForms:
    """One theorem's `canonical_form`, `canonical_parts` and `proof_skeleton` of its known proof, each made at
    most once, all from one reading of its preamble (``readings``: shared with other theorems' forms)."""

    def __init__(self, theorem: Theorem, readings: PreambleReadings | None = None) -> None:
        self.theorem = theorem
        self.readings = readings

    @cached_property
    def _preamble(self) -> _Preamble:
        if self.readings is None:
            return _read_preamble(self.theorem.preamble)
        return self.readings.read(self.theorem.preamble)

    @cached_property
    def _form_and_parts(self) -> tuple[str, CanonicalParts]:
        canon = _canonicalize(self.theorem, preamble=self._preamble)
        return canon.text, canon.parts  # not its namer and frames: a set's forms may be kept a while

    @property
    def form(self) -> str:
        return self._form_and_parts[0]

    @property
    def parts(self) -> CanonicalParts:
        return self._form_and_parts[1]

    @cached_property
    def skeleton(self) -> str:
        """`proof_skeleton` of the known proof (``""`` without one)."""
        return _proof_skeleton(self.theorem, None, self._preamble)


# --- twins ---------------------------------------------------------------------------

TwinHow = Literal["statement", "skeleton"]


class Twin(BaseModel):
    """A benchmark theorem that is a corpus theorem up to renaming and numerals: ``statement`` when their
    canonical forms are equal, ``skeleton`` when only their known proofs' skeletons are."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    benchmark: str
    corpus: str
    how: TwinHow


@dataclass(frozen=True)
class _Keys:
    form: str
    skeleton: str | None


def _keys(theorems: Iterable[Theorem], min_skeleton_steps: int) -> dict[str, _Keys]:
    out: dict[str, _Keys] = {}
    for t in theorems:
        skel = proof_skeleton(t) if len(t.proof) >= max(min_skeleton_steps, 1) else None
        out[t.name] = _Keys(canonical_form(t), skel or None)
    return out


def find_twins(corpus: Iterable[Theorem], benchmark: Iterable[Theorem], *,
               min_skeleton_steps: int = 2) -> list[Twin]:
    """Every (benchmark theorem, corpus theorem) pair that are twins: ``how="statement"`` when the canonical
    forms are equal, else ``"skeleton"`` when both have a known proof of at least ``min_skeleton_steps``
    steps and their skeletons are equal (one-step proofs such as ``omega`` say nothing about a theorem).
    Sorted by benchmark name, then corpus name."""
    corpus_keys = _keys(corpus, min_skeleton_steps)
    by_form: dict[str, list[str]] = defaultdict(list)
    by_skel: dict[str, list[str]] = defaultdict(list)
    for name, k in corpus_keys.items():
        by_form[k.form].append(name)
        if k.skeleton is not None:
            by_skel[k.skeleton].append(name)
    twins: list[Twin] = []
    for name, k in _keys(benchmark, min_skeleton_steps).items():
        found: dict[str, TwinHow] = {c: "statement" for c in by_form.get(k.form, [])}
        if k.skeleton is not None:
            for c in by_skel.get(k.skeleton, []):
                found.setdefault(c, "skeleton")
        twins += [Twin(benchmark=name, corpus=c, how=how) for c, how in found.items()]
    twins.sort(key=lambda tw: (tw.benchmark, tw.corpus))
    log.info("%d twin pairs (%d by statement) involving %d benchmark theorems", len(twins),
             sum(tw.how == "statement" for tw in twins), len({tw.benchmark for tw in twins}))
    return twins


def twin_clusters(theorems: Iterable[Theorem], *, min_skeleton_steps: int = 2) -> list[list[str]]:
    """Theorems of one set grouped by equal canonical form or equal skeleton (as in `find_twins`), closed
    transitively; only groups of two or more, each sorted by name, the groups sorted by their first name."""
    from burnqed_core.data.twins.union_find import UnionFind

    keys = _keys(theorems, min_skeleton_steps)
    uf = UnionFind(keys)
    first: dict[tuple[str, str], str] = {}
    for name, k in keys.items():
        for key in (("form", k.form), ("skeleton", k.skeleton)):
            if key[1] is None:
                continue
            if key in first:
                uf.union(first[key], name)
            else:
                first[key] = name
    return sorted((sorted(g) for g in uf.groups().values() if len(g) > 1), key=lambda g: g[0])
