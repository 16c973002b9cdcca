"""Held-out hygiene: a benchmark theorem is recognised by what it states, not
by its name.

`statement_key` normalises a statement so that renaming the theorem, its
bound variables, or reformatting it (whitespace, comments) does not change
the key; `goal_key` does the same for a pretty-printed goal (the root state
of a search, the ``state_before`` of a depth-0 tactic pair), so that
training pairs can be checked against the benchmark's root goals as Lean
printed them. `check_training_pairs` fails loudly when a benchmark theorem
occurs in training data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from burnqed_core.errors import DataError
from burnqed_core.records import TacticPair, Theorem

# identifiers (dotted, unicode letters, subscripts, primes), numbers, strings, or one other char
_TOKEN_RE = re.compile(
    r'"(?:[^"\\]|\\.)*"'
    r"|«[^»]*»"
    r"|[A-Za-z_\u00c0-\u02ff\u0370-\u03ff\u1d00-\u1dbf\u1f00-\u1fff\u2100-\u214f𝒜-𝔷][\w'!?\u00c0-\u02ff\u0370-\u03ff"
    r"\u1d00-\u1dbf\u1f00-\u1fff\u2080-\u209c\u2100-\u214f.]*"
    r"|\d+(?:\.\d+)?"
    r"|\S"
)
_COMMENT_RE = re.compile(r"/-.*?-/|--[^\n]*", re.DOTALL)
_BINDER_OPEN = {"(": ")", "{": "}", "⦃": "⦄", "[": "]"}


class HeldOutLeakError(DataError):
    """A benchmark theorem occurs in data it must be held out of."""


def _tokens(text: str) -> list[str]:
    return _TOKEN_RE.findall(_COMMENT_RE.sub(" ", text))


def _binder_names(tokens: Sequence[str]) -> list[str]:
    """Names bound by the leading binder groups of a statement's tokens
    (instance binders ``[inst : C]`` only when named)."""
    names: list[str] = []
    i = 0
    while i < len(tokens) and tokens[i] in _BINDER_OPEN:
        depth, j = 0, i
        while j < len(tokens):
            if tokens[j] in _BINDER_OPEN:
                depth += 1
            elif tokens[j] in _BINDER_OPEN.values():
                depth -= 1
                if depth == 0:
                    break
            j += 1
        group = tokens[i + 1:j]
        head = group[:group.index(":")] if ":" in group else [] if tokens[i] == "[" else group
        names += [t for t in head if t[0].isalpha() or t[0] == "_"]
        i = j + 1
    return names


def _rename(tokens: Sequence[str], names: Sequence[str]) -> str:
    """Tokens joined by spaces, bound names replaced (also as the head of a
    dotted name: ``xs.reverse``)."""
    mapping = {n: f"x{k}" for k, n in enumerate(dict.fromkeys(names))}

    def sub(t: str) -> str:
        if t in mapping:
            return mapping[t]
        head, dot, rest = t.partition(".")
        return f"{mapping[head]}.{rest}" if dot and head in mapping else t

    return " ".join(sub(t) for t in tokens)


def statement_key(statement: str) -> str:
    """A statement with whitespace and comments collapsed and its leading
    binders' names replaced by ``x0, x1, ...`` in order of binding."""
    toks = _tokens(statement)
    return _rename(toks, _binder_names(toks))


def goal_key(goal: str) -> str:
    """A pretty-printed goal (``a b : Nat\\n⊢ ...``) with whitespace collapsed
    and its hypothesis names replaced by ``x0, x1, ...``."""
    names: list[str] = []
    for line in goal.splitlines():
        if line.lstrip().startswith("⊢"):
            break
        head, sep, _ = line.partition(" : ")
        if sep:
            names += head.split()
    return _rename(_tokens(goal), names)


def statement_keys(theorems: Iterable[Theorem]) -> dict[str, str]:
    """key -> name of the first theorem with that statement."""
    out: dict[str, str] = {}
    for t in theorems:
        out.setdefault(statement_key(t.statement), t.name)
    return out


def same_statement(theorems: Iterable[Theorem], held_out: Iterable[Theorem]) -> dict[str, str]:
    """name of each theorem of ``theorems`` that states a held-out theorem ->
    the held-out theorem's name (renamed copies included)."""
    keys = statement_keys(held_out)
    return {t.name: keys[k] for t in theorems if (k := statement_key(t.statement)) in keys}


def check_training_pairs(
    benchmark: Sequence[Theorem],
    pairs: Iterable[TacticPair],
    root_goals: Mapping[str, str] | None = None,
    where: str = "training pairs",
) -> None:
    """Raise `HeldOutLeakError` if a benchmark theorem occurs in ``pairs``: by
    name, or (``root_goals``: benchmark name -> its root goal as Lean printed
    it) as the state of a depth-0 pair, whatever the pair's theorem is called."""
    names = {t.name for t in benchmark}
    goals = {goal_key(g): n for n, g in (root_goals or {}).items() if g}
    leaks: dict[str, str] = {}
    for p in pairs:
        if p.theorem in names:
            leaks.setdefault(p.theorem, f"{p.theorem} (same name)")
        elif p.depth == 0 and goals and (hit := goals.get(goal_key(p.state_before))) is not None:
            leaks.setdefault(hit, f"{hit} (as {p.theorem})")
    if leaks:
        shown = ", ".join(sorted(leaks.values())[:10])
        raise HeldOutLeakError(f"{len(leaks)} benchmark theorem(s) occur in the {where}: {shown}"
                               + (" ..." if len(leaks) > 10 else ""))


PAIR_FILES = ("train.parquet", "val.parquet", "valid.parquet", "pairs.parquet", "train.jsonl", "val.jsonl")


def load_training_pairs(paths: Iterable[str | Path]) -> list[TacticPair]:
    """Tactic pairs of Parquet/JSONL files or directories holding them (a
    prepared-pairs directory, a traced corpus). A path that does not exist or
    holds no pair file is an error naming it."""
    from burnqed_core.record_io import read_records

    out: list[TacticPair] = []
    for p in map(Path, paths):
        if p.is_dir():
            files = [p / n for n in PAIR_FILES if (p / n).exists()]
            if not files:
                raise DataError(f"{p}: no tactic pairs ({', '.join(PAIR_FILES)})")
        elif p.exists():
            files = [p]
        else:
            raise DataError(f"{p}: no such file or directory (training pairs to check against the benchmark)")
        for f in files:
            out.extend(read_records(f, TacticPair))
    return out
