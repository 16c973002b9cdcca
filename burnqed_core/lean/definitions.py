"""The user definitions of a theorem's preamble and what a statement or a goal names of them.

`user_definitions` reads the ``def``/``abbrev`` declarations of a preamble (with their namespaces),
`mentioned_definitions` those a text names, `statement_variables` the variables a statement binds, and
`definition_aware_tactics` the tactic list of baseline (b) built from them (`burnqed_core.eval.baselines.defaware`
measures it; the search's ``baseline_at_root`` tries it at the root, and its automation candidates fill
``{defs}`` with `mentioned_definitions`: `burnqed_core.search.automation`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from burnqed_core.records import Theorem

_IDENT = r"[^\s:()\[\]{}⦃⦄,]+"
_DEF_RE = re.compile(r"^\s*(?:@\[[^\]]*\]\s*)?((?:(?:private|protected|noncomputable|partial|unsafe)\s+)*)"
                     r"(?:def|abbrev)\s+(" + _IDENT + ")", re.MULTILINE)
_NS_RE = re.compile(r"^\s*(namespace|end)\s+(" + _IDENT + r")\s*$", re.MULTILINE)
_STMT_IDENT_RE = re.compile(r"[A-Za-z_\u00c0-\u1fff][\w.'!?\u00c0-\u1fff]*")


def user_definitions(preamble: str) -> list[str]:
    """Full names of the ``def`` / ``abbrev`` declarations of a preamble (in
    order; ``partial``/``unsafe`` ones, which have no equations, left out),
    prefixed with their ``namespace``."""
    events = sorted([(m.start(), "def", m) for m in _DEF_RE.finditer(preamble)]
                    + [(m.start(), "ns", m) for m in _NS_RE.finditer(preamble)], key=lambda e: e[0])
    scope: list[str] = []
    out: list[str] = []
    for _, kind, m in events:
        if kind == "ns":
            if m.group(1) == "namespace":
                scope.append(m.group(2))
            elif scope and scope[-1] == m.group(2):
                scope.pop()
            continue
        if re.search(r"\b(partial|unsafe)\b", m.group(1)):
            continue
        name = m.group(2).removeprefix("_root_.")
        full = ".".join([*scope, name]) if scope and not m.group(2).startswith("_root_.") else name
        if full not in out:
            out.append(full)
    return out


def mentioned_definitions(text: str, definitions: Sequence[str]) -> list[str]:
    """Those of ``definitions`` (full names, e.g. from `user_definitions`) that
    ``text`` (a statement, or a goal state as Lean prints it) names as an
    identifier: by full name, by the name without its namespace, or in dot
    notation (``x.f``, ``x.f.g``). In the order of ``definitions``."""
    idents = set(_STMT_IDENT_RE.findall(text))
    tails = {part for i in idents if "." in i for part in i.split(".")[1:]}  # x.f, x.f.g
    out = []
    for full in definitions:
        short = full.rsplit(".", 1)[-1]
        if full in idents or short in idents or short in tails:
            out.append(full)
    return out


def statement_definitions(theorem: Theorem) -> list[str]:
    """The user definitions of the preamble that the statement names."""
    return mentioned_definitions(theorem.statement, user_definitions(theorem.preamble))


def statement_variables(statement: str) -> list[str]:
    """Names bound by the statement's leading explicit/implicit binders
    (``(a b : T)``, ``{x : T}``, ``⦃x⦄``; instance binders ``[..]`` and type
    variables ``(α : Type)`` skipped)."""
    pairs = {"(": ")", "{": "}", "⦃": "⦄", "[": "]"}
    out: list[str] = []
    i, n = 0, len(statement)
    while True:
        while i < n and statement[i].isspace():
            i += 1
        if i >= n or statement[i] not in pairs:
            break
        open_, depth, j = statement[i], 0, i
        while j < n:
            if statement[j] in pairs:
                depth += 1
            elif statement[j] in pairs.values():
                depth -= 1
                if depth == 0:
                    break
            j += 1
        inner = statement[i + 1:j]
        i = j + 1
        if open_ == "[":
            continue
        head, _, typ = inner.partition(":")
        if re.match(r"\s*(Type|Sort|Prop)\b", typ):  # a type variable: nothing to induct on
            continue
        for name in head.split():
            if re.fullmatch(r"[A-Za-z_\u00c0-\u1fff][\w'\u00c0-\u1fff]*", name) and name not in out:
                out.append(name)
    return out


def definition_aware_tactics(theorem: Theorem) -> list[str]:
    """Baseline (b) for one theorem, in the order tried."""
    defs = statement_definitions(theorem)
    lst = f" [{', '.join(defs)}]" if defs else ""
    out = [f"simp{lst}", f"grind{lst}"]
    for x in statement_variables(theorem.statement):
        out += [f"induction {x} <;> simp_all{lst}", f"induction {x} <;> grind{lst}"]
    return out
