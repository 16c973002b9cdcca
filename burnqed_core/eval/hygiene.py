"""Held-out hygiene: a benchmark theorem is recognised by what it states, not
by its name.

`statement_key` normalises a statement so that renaming the theorem, its
bound variables, or reformatting it (whitespace, comments) does not change
the key; `goal_key` does the same for a pretty-printed goal (the root state
of a search, the ``state_before`` of a depth-0 tactic pair), so that
training pairs can be checked against the benchmark's root goals as Lean
printed them. `check_training_pairs` fails loudly when a benchmark theorem
occurs in training data, `check_no_twins` when a benchmark theorem is a
corpus theorem up to renaming and numerals (`burnqed_core.data.twins.canonical`) or
a strong near-twin of one (`burnqed_core.data.twins.near_twins`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

from burnqed_core.errors import DataError
from burnqed_core.records import TacticPair, Theorem
from burnqed_core.verdict import CheckVerdict, Figure

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
_BINDER_OPEN = MappingProxyType({"(": ")", "{": "}", "⦃": "⦄", "[": "]"})


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


def find_leaks(
    benchmark: Sequence[Theorem],
    pairs: Iterable[TacticPair],
    root_goals: Mapping[str, str] | None = None,
    sources: Iterable[Theorem] = (),
) -> dict[str, str]:
    """Benchmark theorem name -> how it occurs in ``pairs``: by name; as the state of a depth-0 pair
    (``root_goals``: benchmark name -> its root goal as Lean printed it); or as a pair of a ``sources``
    theorem (the theorems the pairs came from, e.g. the corpus) that states it under another name."""
    names = {t.name for t in benchmark}
    goals = {goal_key(g): n for n, g in (root_goals or {}).items() if g}
    restated = same_statement(sources, benchmark)
    leaks: dict[str, str] = {}
    for p in pairs:
        if p.theorem in names:
            leaks.setdefault(p.theorem, f"{p.theorem} (same name)")
        elif (hit := restated.get(p.theorem)) is not None:
            leaks.setdefault(hit, f"{hit} (same statement as {p.theorem})")
        elif p.depth == 0 and goals and (hit := goals.get(goal_key(p.state_before))) is not None:
            leaks.setdefault(hit, f"{hit} (as {p.theorem})")
    return leaks


def check_training_pairs(
    benchmark: Sequence[Theorem],
    pairs: Iterable[TacticPair],
    root_goals: Mapping[str, str] | None = None,
    where: str = "training pairs",
) -> None:
    """Raise `HeldOutLeakError` if a benchmark theorem occurs in ``pairs``: by
    name, or (``root_goals``: benchmark name -> its root goal as Lean printed
    it) as the state of a depth-0 pair, whatever the pair's theorem is called."""
    leaks = find_leaks(benchmark, pairs, root_goals)
    if leaks:
        shown = ", ".join(sorted(leaks.values())[:10])
        raise HeldOutLeakError(f"{len(leaks)} benchmark theorem(s) occur in the {where}: {shown}"
                               + (" ..." if len(leaks) > 10 else ""))


def find_twins(benchmark: Sequence[Theorem], corpus: Sequence[Theorem]) -> dict[str, str]:
    """The theorems of ``benchmark`` that are twins or strong near-twins of ``corpus`` theorems
    (`burnqed_core.data.twins.near_twins.find_near_twins`: the same canonical form, the same skeleton of a known proof
    of two steps or more, the same statement and definitions up to binder style and order and isomorphic
    definitions, or the same proof script of three steps or more), each with its corpus twins and how, by name.
    Partial near-twins (the same statement over other definitions, definitions seen, similar text) are not."""
    from burnqed_core.data.twins.near_twins import HOW_TEXT, find_near_twins

    by_bench: dict[str, dict[str, list[str]]] = {}
    for tw in find_near_twins(corpus, benchmark, partial=False):
        by_bench.setdefault(tw.theorem, {}).setdefault(tw.how, []).append(tw.other)
    order = ("statement", "skeleton", "near_statement", "near_skeleton")

    def names(cs: list[str]) -> str:
        return ", ".join(cs[:3]) + (f" (+{len(cs) - 3} more)" if len(cs) > 3 else "")

    return {b: "a twin of " + " and ".join(f"corpus theorem{'s' if len(cs) > 1 else ''} {names(cs)} ({HOW_TEXT[h]})"
                                           for h, cs in sorted(hows.items(), key=lambda kv: order.index(kv[0])))
            for b, hows in sorted(by_bench.items())}


def check_no_twins(benchmark: Sequence[Theorem], corpus: Sequence[Theorem], *, where: str) -> None:
    """Raise `HeldOutLeakError` if a theorem of ``benchmark`` is a twin or a strong near-twin of a ``corpus``
    theorem (`find_twins`), naming each benchmark theorem, its corpus twins and how (the check of a set the
    package ships; an evaluated file leaves them out of its headline instead, `burnqed_core.eval.plan.check`)."""
    twins = find_twins(benchmark, corpus)
    if not twins:
        return
    lines = [f"{where}: benchmark theorem {b} is {why}" for b, why in twins.items()]
    by_bench = twins
    shown = "; ".join(lines[:10]) + (f" ... ({len(lines)} in all)" if len(lines) > 10 else "")
    raise HeldOutLeakError(f"{shown}: {len(by_bench)} benchmark theorem(s) are corpus theorems up to renaming, "
                           "numerals, binder style and order or isomorphic definitions; remove them from the "
                           "benchmark (or the corpus)")


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


def pairs_verdict(
    train: Sequence[TacticPair],
    val: Sequence[TacticPair],
    benchmark: Sequence[Theorem],
    root_goals: Mapping[str, str] | None = None,
    sources: Iterable[Theorem] = (),
) -> CheckVerdict:
    """The ``tactic_pairs`` check: training data that is non-empty, holds no benchmark theorem
    (`find_leaks` over train and val), is split into train and val by theorem (no theorem on both sides,
    seed 002 gotcha 11), and has no theorem with a ``sorry``/``admit``/``cheat`` step (gotcha 12: the whole
    theorem is rejected)."""
    from burnqed_core.data.pairs.prepare import is_unsafe_tactic

    leaks = find_leaks(benchmark, [*train, *val], root_goals, sources)
    overlap = sorted({p.theorem for p in train} & {p.theorem for p in val})
    unsafe = sorted({p.theorem for p in [*train, *val] if is_unsafe_tactic(p.tactic)})
    figures = [
        Figure(name="train_pairs", value=len(train), op=">", threshold=0),
        Figure(name="val_pairs", value=len(val), op=">", threshold=0, blocking=False,
               note="no validation loss without them"),
        Figure(name="benchmark_theorems_in_pairs", value=len(leaks), op="==", threshold=0),
        Figure(name="theorems_in_both_train_and_val", value=len(overlap), op="==", threshold=0),
        Figure(name="theorems_with_sorry_or_admit", value=len(unsafe), op="==", threshold=0),
    ]
    failures = []
    if leaks:
        failures.append("benchmark theorems in the training pairs: " + _shown(sorted(leaks.values())))
    if overlap:
        failures.append("theorems on both sides of the train/val split: " + _shown(overlap))
    if unsafe:
        failures.append("theorems with a sorry/admit step: " + _shown(unsafe))
    notes = [f"{len(benchmark)} benchmark theorems checked by name"
             + (", by statement against the source theorems" if sources else "")
             + (f", by root goal ({len(root_goals)} goals)" if root_goals else "")]
    return CheckVerdict(check="tactic_pairs", figures=figures, failures=failures, notes=notes)


def _shown(items: Sequence[str], limit: int = 10) -> str:
    return ", ".join(items[:limit]) + (f" ... ({len(items)} in all)" if len(items) > limit else "")
