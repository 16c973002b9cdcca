"""The lexical pieces premise retrieval compares.

A library name reads as words: ``List.map_append`` is ``list``, ``map``, ``append``; ``Nat.succ_le_of_lt`` is
``nat``, ``succ``, ``le``, ``of``, ``lt``; ``getElem?_eq_none`` is ``get``, ``elem``, ``eq``, ``none``. A goal or a
type as Lean prints it reads as the constants it names (``List.map f (l₁ ++ l₂)``: ``list``, ``map``) and its
notation symbols (``++``, ``≤``, ``∈``): a premise whose name or type shares the goal's rarer pieces is a likely
rewrite. Single letters (bound variables, ``f``, ``x``) say nothing and are dropped; so are universe names.
"""

from __future__ import annotations

import re

# An identifier as printed: letters (Greek included), digits, _, ', ! and ? inside, dotted.
_IDENT = re.compile(r"[A-Za-z_\u0370-\u03ff\u1f00-\u1fff][\w'!?\u0370-\u03ff\u1f00-\u1fff\u2080-\u209c]*"
                    r"(?:\.[A-Za-z_\u0370-\u03ff][\w'!?\u0370-\u03ff\u2080-\u209c]*)*")
# Notation symbols worth matching on (longest first so that `++` is not read as two `+`).
SYMBOLS: tuple[str, ...] = (
    "++", "::", "<|>", ">>=", "<$>", "<*>", "∘", "≠", "≤", "≥", "<", ">", "∈", "∉", "⊆", "∩", "∪", "\\",
    "∣", "%", "/", "*", "+", "-", "^", "¬", "∧", "∨", "↔", "→", "∃", "!", "&&", "||", "^^^", "&&&", "|||",
    "<<<", ">>>", "#[]", "[]", "∅", "⟨", "=",
)
_SYMBOL = re.compile("|".join(re.escape(s) for s in sorted(SYMBOLS, key=len, reverse=True)))
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_SUBSCRIPTS = str.maketrans("", "", "₀₁₂₃₄₅₆₇₈₉'!?")
_UNIVERSE = re.compile(r"^u_\d+$|^[uvw]$")
# A whole identifier component, whatever its length, as its own token (pieces drop single letters).
WHOLE = "="
_NOISE = frozenset({"fun", "let", "have", "if", "then", "else", "match", "with", "do", "in", "by", "at", "from",
                    "type", "sort", "prop", "inst"})


def name_pieces(name: str) -> list[str]:
    """The words of a name, lowercased, in order: components split on ``.``, ``_`` and case changes
    (``List.getElem?_map`` -> ``list``, ``get``, ``elem``, ``getelem``, ``map``: a part of several words also
    whole); pieces of one character dropped."""
    out: list[str] = []
    for comp in name.split("."):
        for part in comp.translate(_SUBSCRIPTS).split("_"):
            words = _CAMEL.findall(part) or ([part] if part else [])
            for w in words:
                w = w.lower()
                if len(w) > 1:
                    out.append(w)
            if len(words) > 1:  # the part whole too: `UInt16` is more than `int` and `16`
                out.append(part.lower())
    return out


def text_tokens(text: str, whole: bool = False) -> list[str]:
    """The pieces of a goal or a type as Lean prints it: each identifier's name pieces (universe names and
    keywords dropped), each dotted identifier also whole (``List.map``), the notation symbols, and with
    ``whole`` each component of an identifier whole (``=f``: a user's file names its functions as it likes,
    single letters included; left out for the library, where they are bound variables and only add noise:
    recall@4 on the library premises corpus proofs cite fell from 2.2% to 0.0% with them)."""
    out: list[str] = []
    for m in _IDENT.finditer(text):
        ident = m.group(0)
        if _UNIVERSE.match(ident):
            continue
        pieces = [p for p in name_pieces(ident) if p not in _NOISE]
        out.extend(pieces)
        if "." in ident and ident[0].isupper():
            out.append(ident)
        if whole:
            out.extend(WHOLE + part for part in ident.split(".") if part)
    out.extend(_SYMBOL.findall(_IDENT.sub(" ", text)))
    return out


def premise_tokens(name: str, type_text: str, whole: bool = False) -> list[str]:
    """A premise's document: its name pieces twice (a name is written to say what the lemma is about), the
    pieces of its type, and with ``whole`` (a file's own premises) its last component whole (a file's ``def f``
    is found by a goal that applies ``f``) and its type's identifiers whole."""
    pieces = name_pieces(name)
    last = [WHOLE + name.rsplit(".", 1)[-1]] if whole else []
    return pieces + pieces + last + text_tokens(type_text, whole)
