"""Which names of a theorem's own definitions a proof step uses that its proof state does not show.

The policy is prompted with the proof state alone (`burnqed_core.data.pairs.prompt`): hypotheses and goals as Lean
prints them, never the preamble. Every corpus theorem has its own names (`burnqed_core.data.synthetic.renaming`), so a
step that names a constructor, type or definition of the preamble that the state does not print
(``exact Sorted.link _ _ _ h ih`` when the state shows ``Sorted`` but never ``link``;
``cases h with | single => ...``) asks the model for a word it cannot see: it can be memorised for the
corpus theorem, never learned for a theorem with other names. Lean's own names (``Nat.le_refl``,
``List.map``, ``omega``) are the same in every theorem and are not counted.

`unseen_names` is that check for one (preamble, state, tactic) triple; `family_rows` and `format_rows`
summarise traced tactic pairs per family (`python -m burnqed_core.data.pairs.visibility PAIRS.parquet`).
The check reads text: an identifier is split at its dots, and a component counts as seen when it is a
token of the state (a case tag such as ``case link`` after ``induction h`` shows ``link``).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from burnqed_core.records import TacticPair, Theorem

# Lean identifiers: a letter or `_` (Unicode letters included), then letters, digits, `_`, `'`, `!`, `?`,
# subscripts; `.` separates components.
_IDENT = re.compile(r"[^\W\d][\w'!?₀-₉ₐ-ₜ]*(?:\.[^\W\d][\w'!?₀-₉ₐ-ₜ]*)*")
_HEADER = re.compile(r"^\s*(?:private\s+|protected\s+|noncomputable\s+|@\[[^\]]*\]\s*)*"
                     r"(inductive|structure|class|def|abbrev|theorem|lemma|instance|opaque|axiom)\b\s*([^\s:({\[]*)")
_CTOR = re.compile(r"^\s*\|\s*([^\W\d][\w'!?₀-₉]*)\s*(?::(?!:)|\(|\{|$)")
_FIELD = re.compile(r"^\s+([^\W\d][\w'!?₀-₉]*)\s*(?::(?!:)|\()")
_STRUCT_CTOR = re.compile(r"^\s+([^\W\d][\w'!?₀-₉]*)\s*::\s*$")


def _components(ident: str) -> list[str]:
    return [c for c in ident.split(".") if c]


def declared_names(preamble: str) -> frozenset[str]:
    """The names a preamble declares (each component of a dotted name): inductive types, structures and
    classes with their constructors and fields, definitions, theorems and named instances. Pattern
    variables of ``match`` alternatives and binders are not declarations and are not included."""
    names: set[str] = set()
    kind = ""
    for line in preamble.splitlines():
        m = _HEADER.match(line)
        if m:
            kind = m.group(1)
            names.update(_components(m.group(2)))
            continue
        if line.strip() and not line[0].isspace() and not line.startswith("|"):
            kind = ""  # `end`, `namespace`, `open`, `mutual`: the declaration is over
            continue
        if kind == "inductive":
            c = _CTOR.match(line)
            if c:
                names.add(c.group(1))
        elif kind in ("structure", "class"):
            c = _STRUCT_CTOR.match(line) or _FIELD.match(line)
            if c:
                names.add(c.group(1))
    names.discard("where")
    return frozenset(names)


def tokens(text: str) -> set[str]:
    """Every identifier component of a text."""
    return {c for ident in _IDENT.findall(text) for c in _components(ident)}


def unseen_names(preamble: str, state: str, tactic: str, declared: frozenset[str] | None = None) -> list[str]:
    """The preamble-declared names the tactic uses that the state does not show, sorted. ``declared``:
    `declared_names(preamble)`, when the caller has it already."""
    declared = declared_names(preamble) if declared is None else declared
    return sorted((tokens(tactic) & declared) - tokens(state))


class FamilyRow(BaseModel):
    """A family's traced steps and how many of them name something their state does not show."""

    model_config = ConfigDict(frozen=True)
    family: str
    steps: int
    unseen_steps: int
    examples: tuple[str, ...] = ()  # a few unseen names, for the reader

    @property
    def share(self) -> float:
        return self.unseen_steps / self.steps if self.steps else 0.0


def family_rows(pairs: Iterable[Mapping[str, object] | TacticPair], theorems: Sequence[Theorem]) -> list[FamilyRow]:
    """Per family of ``theorems``: the traced pairs (``theorem``, ``state_before``, ``tactic``) of its
    theorems, and those with an unseen name. A (theorem, state, tactic) triple counts once; pairs of
    theorems not in ``theorems`` are skipped."""
    by_name = {t.name: t for t in theorems}
    declared: dict[str, frozenset[str]] = {}
    seen: set[tuple[str, str, str]] = set()
    counts: dict[str, list[int]] = {}
    examples: dict[str, set[str]] = {}
    for pair in pairs:
        p = pair.model_dump() if isinstance(pair, TacticPair) else pair
        name, state, tactic = str(p["theorem"]), str(p["state_before"]), str(p["tactic"])
        t = by_name.get(name)
        if t is None or (name, state, tactic) in seen:
            continue
        seen.add((name, state, tactic))
        if name not in declared:
            declared[name] = declared_names(t.preamble)
        fam = t.family or ""
        c = counts.setdefault(fam, [0, 0])
        c[0] += 1
        unseen = unseen_names(t.preamble, state, tactic, declared[name])
        if unseen:
            c[1] += 1
            examples.setdefault(fam, set()).update(unseen)
    return [FamilyRow(family=f, steps=n, unseen_steps=u, examples=tuple(sorted(examples.get(f, ()))[:4]))
            for f, (n, u) in sorted(counts.items())]


def format_rows(rows: Sequence[FamilyRow], only_unseen: bool = False) -> str:
    """The rows as a markdown table (``only_unseen``: the families with an unseen step)."""
    lines = ["| family | traced steps | steps naming what the state does not show | e.g. |", "|---|---|---|---|"]
    for r in rows:
        if only_unseen and not r.unseen_steps:
            continue
        eg = ", ".join(f"`{e}`" for e in r.examples)
        lines.append(f"| `{r.family}` | {r.steps} | {r.unseen_steps} ({100 * r.share:.0f}%) | {eg} |")
    total, unseen = sum(r.steps for r in rows), sum(r.unseen_steps for r in rows)
    lines.append(f"| all | {total} | {unseen} ({100 * unseen / total if total else 0:.0f}%) | |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    import polars as pl

    from burnqed_core.data.theorems.load import load_theorems

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pairs", help="tactic pairs Parquet (`burnqed lean trace -o`)")
    ap.add_argument("-t", "--theorems", default="bundled:corpus", help="the traced theorem set")
    ap.add_argument("--only-unseen", action="store_true", help="list only families with an unseen step")
    args = ap.parse_args(argv)
    rows = family_rows(pl.read_parquet(args.pairs).iter_rows(named=True), load_theorems(args.theorems))
    sys.stdout.write(format_rows(rows, args.only_unseen) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
