"""What the trusted checker's answer means for the user: each judged name's verdict and the reasons it is refused
(axioms outside the allowed ones, a statement that means more than its text, unsafe code), the notes a `lean
check` line carries, and the `Elaboration` of a listed file. The answer itself, and the commands that ask for it,
are `burnqed_core.lean.judge`'s."""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import MappingProxyType

from burnqed_core.lean.judge import JudgeReport, NameVerdict
from burnqed_core.lean.types import ALLOWED_AXIOMS, LIBRARY_AXIOMS, Diagnostic, Elaboration


def leaf_axioms(leaves: Sequence[str]) -> list[str]:
    """The checker's leaves as the axiom list of `Elaboration.axioms`: an
    imported leaf counts when the library's sources declare it an axiom
    (`LIBRARY_AXIOMS`), else it is a library fact (the exported-level library
    shows theorems as axioms); a local axiom, an unsafe constant, an unknown
    name or an unfinished walk always counts (and is never allowed)."""
    out = []
    for leaf in leaves:
        tag, _, name = leaf.partition(":")
        if tag == "I":
            if name in LIBRARY_AXIOMS:
                out.append(name)
        elif tag == "L":
            out.append(f"local:{name}")
        elif tag == "U":
            out.append(name if name in ALLOWED_AXIOMS else f"unsafe:{name}")
        elif tag == "N":
            out.append(f"unknown:{name}")
        else:
            out.append(f"unfinished:{leaf}")
    return out


def statement_notes(flags: Sequence[str]) -> list[str]:
    """The checker's flags on a theorem's statement, as sentences."""
    out = []
    hidden = {tuple(f.split(" ")[1:3]) for f in flags if f.startswith("hidden ")}
    for f in flags:
        head, _, rest = f.partition(" ")
        if head == "file" or (head == "instance" and tuple(rest.split(" of ", 1)) in hidden):
            continue  # a file constant the statement names (marked in the printed statement, `file_marks`)
        if head == "hidden":
            own, _, cls = rest.partition(" ")
            what = f", an instance of `{cls}`" if cls else ""
            out.append(f"its statement uses `{own}`{what}, a constant of the file that its text does not show")
        elif head == "lookalike":
            own, _, lib = rest.partition(" ")
            out.append(f"its statement uses `{own}`, a constant of the file whose name looks like the library's "
                       f"`{lib}`")
        elif f == "variables":
            out.append("declared with `variable`s in scope: its statement may carry hypotheses its text "
                       "does not show")
        elif head == "instance":
            inst, _, cls = rest.partition(" of ")
            out.append(f"its statement uses `{inst}`, an instance of `{cls}` declared in the file")
        elif head == "renaming":
            out.append(f"declared with `open ... renaming {rest}` in scope: a name in its statement may stand "
                       "for another constant")
        elif head == "shadow":
            own, _, lib = rest.partition(" ")
            out.append(f"its statement uses `{own}`, a constant of the file whose name shadows the library's "
                       f"`{lib}`")
        elif head == "meta":
            out.append(f"the file declares syntax, notation, macros or other meta code before it ({rest}): "
                       "its statement may not mean what its text reads as")
        elif head == "code":
            out.append(f"the file runs commands that execute code before it ({rest})")
        else:
            out.append(f)
    return out


_INCLUDE = re.compile(r"(?m)^\s*include\s")


def file_marks(flags: Sequence[str]) -> list[str]:
    """The file constants a statement names (the checker's ``file`` flags)."""
    return [f.partition(" ")[2] for f in flags if f.startswith("file ")]


def meaning_problems(flags: Sequence[str], preamble: str | None = None) -> list[str]:
    """The flags as reasons to refuse a theorem whose preamble is not one of
    the package's own (search, evaluation and tracing of a set: a preamble
    may not change what the statement means). Section ``variable``s alone are
    how a file states its theorems (Lean adds to a theorem only the variables
    its statement names, and the instances over them): they refuse only when
    ``preamble`` (when given) has an ``include``, which adds a hypothesis the
    statement's text does not show; the note stays either way."""
    if preamble is not None and not _INCLUDE.search(preamble):
        flags = [f for f in flags if f != "variables"]
    return [f"the preamble changes what the statement means: {n}" for n in statement_notes(flags)]


def unsafe_problem(report: JudgeReport) -> list[str]:
    """A text that declares code able to read the checker's own process (its
    memory: the nonce) gets no verdict."""
    if not report.unsafe_code:
        return []
    return ["the text declares code that could read the checker's process (unsafe, implemented_by or "
            f"extern: {'; '.join(report.unsafe_code)[:200]}): no verdict is given"]


def report_verdicts(report: JudgeReport, names: Sequence[str]
                    ) -> tuple[dict[str, list[str]], dict[str, str], dict[str, list[str]]]:
    """A report as `Elaboration` fields: the axioms of each accepted name,
    why each other name is rejected, and the notes on statements."""
    axioms: dict[str, list[str]] = {}
    rejected: dict[str, str] = {}
    unsafe = unsafe_problem(report)
    for name in names:
        v = report.verdicts.get(name)
        if unsafe:
            rejected[name] = unsafe[0]
        elif v is not None and v.status == "ok":
            axioms[name] = leaf_axioms(v.leaves)
        else:
            rejected[name] = verdict_problems(name, v)[0]
    notes = {n: notes for n, f in report.flags.items() if (notes := statement_notes(f))}
    return axioms, rejected, notes


_SEVERITY = MappingProxyType({"error": 1, "warning": 2, "info": 3})


def elaboration_of(report: JudgeReport, names: Sequence[str] | None,
                   positions: Sequence[tuple[int, int]] = ()) -> Elaboration:
    """An `Elaboration` from the trusted checker's report alone (one run
    decides everything): ``names`` judged by name, or None for a report of
    mode ``list`` (every theorem-like declaration, `Elaboration.theorems`)."""
    listed = names is None
    judged = [d.name for d in report.declared] if names is None else list(names)
    axioms, rejected, notes = report_verdicts(report, judged)
    diags = [Diagnostic(severity=_SEVERITY.get(m.severity, 3), line=m.line, end_line=max(m.line, m.end_line),
                        message=m.text) for m in report.messages]
    found = [d for d in report.declared if d.found]
    return Elaboration(
        diagnostics=diags, axioms=axioms, rejected=rejected, notes=notes, complete=report.complete,
        declarations=[d.name for d in found] if listed else None,
        declaration_lines=[(d.start_line, d.end_line) for d in found] if listed else None,
        goals=[report.states.get(i) for i in range(len(positions))] if positions else None,
        theorems=list(report.declared) if listed else None, ran_code=[*report.ran_code, *report.unsafe_code],
        file_constants={n: m for n, f in report.flags.items() if (m := file_marks(f))})


def verdict_problems(name: str, v: NameVerdict | None) -> list[str]:
    """Why the checker's verdict on ``name`` rejects it ([] when accepted)."""
    if v is None:
        return [f"the checker gave no verdict on `{name}`"]
    if v.status != "ok":
        why = {"missing": "Lean's environment has no such declaration",
               "kernel": "the kernel rejects its replay",
               "type_differs": "its type is not the trusted statement's",
               "not_theorem": "it is not a theorem",
               "closure": "its dependencies cannot be replayed",
               "premise": "it uses library constants outside the modules its module imports (premise rule)",
               }.get(v.status, v.status)
        extra = f" ({'; '.join(v.detail)})" if v.detail else ""
        return [f"`{name}`: {why}{extra}"]
    bad = sorted(a for a in leaf_axioms(v.leaves) if a not in ALLOWED_AXIOMS)
    return [f"`{name}` depends on disallowed axioms: {', '.join(bad)}"] if bad else []
