"""Whole-proof re-check: the last word on whether a proof counts.

A found proof, `burnqed lean check`, tracing and evaluation all end here.
On a backend with the trusted checker (`burnqed_core.lean.judge`, the
embedded backend), the verdict is computed by Lean code of ours elaborated
before any untrusted text existed: the proof text, handed over as a string,
is elaborated after the theorem's trusted preamble; the checked theorem and
what it needs are replayed through the kernel onto the preamble's
environment; its type must equal the type of the trusted statement; and its
axioms, collected by that code, must be within `ALLOWED_AXIOMS` (an imported
leaf counts when the library's sources declare it an axiom; every local
axiom and unsafe constant fails). Lean must also have processed the text to
its end, with no error and no `sorry` warning. Nothing the proof's own
elaboration prints is read as a verdict (see ``docs/trusted-checker.md``).

Backends without it (Pantograph) keep the earlier route: the theorem with its
preamble and proof elaborated as ONE source in a fresh document, Lean's
errors, its parse (exactly the preamble's declarations and then the checked
theorem), completeness and the axioms it reports.

Static rules (`burnqed_core.lean.sandbox`) run first, as a cheap filter and
so that model text never reaches Lean when it holds commands, IO or
line-break tricks; they are never the authority.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol

from burnqed_core.lean import sandbox
from burnqed_core.lean.judge import JudgeReport, ReportError, verdict_problems
from burnqed_core.lean.lsp import failures
from burnqed_core.lean.source import INDENT, indent_tactic, preamble_text, proof_text, strict_line
from burnqed_core.lean.types import ALLOWED_AXIOMS, CheckResult, Diagnostic, Elaboration
from burnqed_core.records import Theorem

CHECK_NAME = "burnqed_checked"
__all__ = ["CHECK_NAME", "check_proof", "judge", "proof_source", "proof_text", "reads_goals", "static_problems",
           "tactic_positions"]


class Elaborator(Protocol):
    async def elaborate(self, text: str, axioms_of: Sequence[str] = ()) -> Elaboration: ...


def sandbox_module() -> object:
    """The static rules module (kept for callers of the former lazy import)."""
    return sandbox


def static_problems(theorem: Theorem, source: str) -> list[str]:
    """Problems of a proof text found without Lean (a first filter)."""
    return list(sandbox.check_proof_source(theorem.statement, source))


def proof_source(theorem: Theorem, tactics: Sequence[str], name: str = CHECK_NAME) -> str:
    """The theorem with its preamble and proof as one Lean source. A fresh
    declaration name: the theorem's own may already exist (``Nat.add_comm``).
    Auto-bound implicits are off (`STRICT_LINE`, a command of its own: the
    declaration must be a plain declaration command for Lean's symbols) unless the preamble sets them itself
    (`strict_line`)."""
    return (preamble_text(theorem.preamble) + strict_line(theorem.preamble)
            + proof_text(name, theorem.statement, tactics or ["skip"], strict=False))


def verdict(diags: Sequence[Diagnostic]) -> list[str]:
    """Messages that reject a source: every error and every `sorry` warning."""
    return [d.message for d in failures(diags)]


def axiom_problems(name: str, elab: Elaboration) -> list[str]:
    """Why the axioms Lean reports for ``name`` reject it ([] if allowed)."""
    if name in elab.rejected:
        return [elab.rejected[name]]
    if name not in elab.axioms:
        return [f"Lean did not report the axioms of `{name}` (not elaborated, or the query was cut off)"]
    bad = sorted(a for a in elab.axioms[name] if a not in ALLOWED_AXIOMS)
    return [f"`{name}` depends on disallowed axioms: {', '.join(bad)}"] if bad else []


def _is_name(reported: str, expected: str) -> bool:
    return reported == expected or reported.endswith("." + expected)


# Declarations of a preamble as Lean reports them, for backends that give no
# line ranges (few distinct preambles per run: a small LRU is enough).
_PREAMBLE_DECLS: OrderedDict[str, list[str] | None] = OrderedDict()


async def _preamble_declarations(backend: Elaborator, preamble: str) -> list[str] | None:
    if preamble in _PREAMBLE_DECLS:
        _PREAMBLE_DECLS.move_to_end(preamble)
        return _PREAMBLE_DECLS[preamble]
    elab = await backend.elaborate(preamble_text(preamble))
    decls = elab.declarations if elab.complete and not any(d.is_error for d in elab.diagnostics) else None
    _PREAMBLE_DECLS[preamble] = decls
    while len(_PREAMBLE_DECLS) > 256:
        _PREAMBLE_DECLS.popitem(last=False)
    return decls


def declaration_problems(elab: Elaboration, name: str, start_line: int, end_line: int,
                         preamble_decls: list[str] | None = None) -> list[str]:
    """Lean's parse against what the document must hold: the checked
    declaration ``name`` is the only declaration at or after ``start_line``
    and its command reaches ``end_line`` (the last line of the proof)."""
    if elab.declarations is None:
        return _command_problems(elab, name, start_line, end_line)
    decls = elab.declarations
    if elab.declaration_lines is not None:
        mine = [(d, r) for d, r in zip(decls, elab.declaration_lines, strict=True) if r[1] >= start_line]
        if [d for d, _ in mine if not _is_name(d, name)]:
            extra = ", ".join(d for d, _ in mine if not _is_name(d, name))
            return [f"the proof declares something else: {extra}"]
        if len(mine) != 1:
            return [f"Lean found {len(mine)} declarations `{name}` (expected exactly one)"]
        if mine[0][1][0] < start_line:
            return ["the checked declaration starts inside the preamble"]
        if mine[0][1][1] < end_line:
            return ["the checked declaration ends before the proof does (a command follows it)"]
        return []
    if preamble_decls is None:
        return ["the declarations of the preamble are unknown"]
    k = len(preamble_decls)
    if decls[:k] != preamble_decls or len(decls) != k + 1 or not _is_name(decls[k], name):
        return [f"Lean's declarations differ from the expected ones: {decls[k:]} (expected `{name}` only)"]
    return []


def _command_problems(elab: Elaboration, name: str, start_line: int, end_line: int) -> list[str]:
    """For a backend that reports commands but not declaration names (e.g.
    Pantograph 0.2.x): exactly one command after the preamble, from the
    theorem's line to the end of the proof, and Lean answered the axioms of
    ``name`` (so a declaration of that name exists)."""
    if elab.command_lines is None:
        return ["the Lean backend did not report the declarations of the document"]
    mine = [r for r in elab.command_lines if r[1] >= start_line]
    if len(mine) != 1:
        return [f"Lean parsed {len(mine)} commands after the preamble (expected the checked theorem only)"]
    if mine[0][0] != start_line or mine[0][1] < end_line:
        return ["the checked theorem's command does not span exactly the proof"]
    if name not in elab.axioms:
        return [f"Lean did not confirm a declaration `{name}`"]
    return []


def judge(elab: Elaboration, name: str, start_line: int, end_line: int,
          preamble_decls: list[str] | None = None) -> list[str]:
    """Every reason Lean's report rejects the checked declaration."""
    errors = verdict(elab.diagnostics)
    if not elab.complete:
        errors.append("Lean did not process the whole text (early end: `#exit`, an unterminated comment ...)")
    errors += declaration_problems(elab, name, start_line, end_line, preamble_decls)
    errors += axiom_problems(name, elab)
    return list(dict.fromkeys(errors))


def tactic_positions(theorem: Theorem, tactics: Sequence[str]) -> list[tuple[int, int]]:
    """Where each tactic of `proof_source` starts: (0-based line, character)
    of its first character, at the top level of the ``by`` block."""
    line = (preamble_text(theorem.preamble) + strict_line(theorem.preamble)).count("\n") \
        + proof_text(CHECK_NAME, theorem.statement, [], strict=False).count("\n")  # the header may span lines
    out = []
    for t in tactics:
        out.append((line, len(INDENT)))
        line += indent_tactic(t, INDENT).count("\n")
    return out


async def check_proof(backend: Elaborator, theorem: Theorem, tactics: Sequence[str],
                      states: bool = False) -> CheckResult:
    """Elaborate the theorem with the proof as one source in a fresh
    document; accepted only if the static filter and Lean (errors, parse,
    completeness, axioms) find nothing. ``states``: also read, in the same
    document, the goals before each tactic (`CheckResult.states`, for an
    accepted proof on a backend that `reads_goals`): a trace of the proof
    from the very elaboration that accepted it."""
    t0 = time.monotonic()
    explicit = bool(tactics)
    tactics = list(tactics) or ["skip"]
    body = proof_text(CHECK_NAME, theorem.statement, tactics, strict=False)
    problems = static_problems(theorem, body)
    if problems:
        return CheckResult(ok=False, errors=problems, elapsed_s=time.monotonic() - t0)
    if has_trusted_checker(backend):
        return await _trusted_check(backend, theorem, tactics, explicit and states, t0)
    source = proof_source(theorem, tactics)
    start = (preamble_text(theorem.preamble) + strict_line(theorem.preamble)).count("\n")
    end = len(source.rstrip().split("\n")) - 1
    positions = tactic_positions(theorem, tactics) if states and explicit and reads_goals(backend) else []
    if positions:
        elab = await backend.elaborate(source, axioms_of=[CHECK_NAME], goals_at=positions)  # type: ignore[call-arg]
    else:
        elab = await backend.elaborate(source, axioms_of=[CHECK_NAME])
    pre_decls = None
    if elab.declaration_lines is None and elab.declarations is not None:
        pre_decls = await _preamble_declarations(backend, theorem.preamble)
    errors = judge(elab, CHECK_NAME, start, end, pre_decls)
    read = None
    if positions and not errors and elab.goals is not None and len(elab.goals) == len(positions) \
            and all(g for g in elab.goals):  # every tactic has goals before it (None: no proof state there)
        read = [tuple(g) for g in elab.goals if g is not None]
    return CheckResult(ok=not errors, errors=errors, elapsed_s=time.monotonic() - t0, states=read)


def expected_text(theorem: Theorem, name: str = CHECK_NAME) -> str:
    """The trusted declaration of the statement: its type is what the checked
    theorem's must equal."""
    return strict_line(theorem.preamble) + f"axiom {name} {theorem.statement.strip()}\n"


def trusted_problems(report: JudgeReport, name: str = CHECK_NAME) -> list[str]:
    """Every reason the trusted checker's report rejects ``name``."""
    if report.preamble_error is not None:
        first = report.preamble_error[0].text.strip().splitlines()[0] if report.preamble_error else "?"
        return [f"the preamble does not elaborate: {first}"]
    if report.expected_error:
        return ["the statement does not elaborate after its preamble"]
    errors = [m.text for m in report.messages if m.severity == "error"]
    errors += [m.text for m in report.messages if m.severity == "warning" and m.text.startswith("declaration uses")
               and "sorry" in m.text]
    if not report.complete:
        errors.append("Lean did not process the whole text (early end: `#exit` ...)")
    errors += verdict_problems(name, report.verdicts.get(name))
    return list(dict.fromkeys(errors))


async def _trusted_check(backend: object, theorem: Theorem, tactics: Sequence[str], states: bool,
                         t0: float) -> CheckResult:
    """The verdict of the trusted checker (`burnqed_core.lean.judge`): the
    preamble and the statement are ours, only the proof text is the
    candidate's. ``states``: the goals before each tactic, read from a
    separate elaboration of the same source (data, not a verdict), for an
    accepted proof."""
    candidate = proof_text(CHECK_NAME, theorem.statement, tactics, strict=False)
    preamble = preamble_text(theorem.preamble) + strict_line(theorem.preamble)
    try:
        report = await backend.judge(preamble, expected_text(theorem), candidate, [CHECK_NAME])  # type: ignore[attr-defined]
    except ReportError as e:
        return CheckResult(ok=False, errors=[f"the trusted checker gave no usable answer: {e}"],
                           elapsed_s=time.monotonic() - t0)
    errors = trusted_problems(report)
    if theorem.module and not errors:  # a library theorem: the premise rule (`Theorem.module`)
        from burnqed_core.lean.library import premise_problems

        errors = await premise_problems(backend, theorem.module, preamble, candidate, CHECK_NAME)  # type: ignore[arg-type]
    read = None
    if states and not errors and reads_goals(backend):
        positions = tactic_positions(theorem, tactics)
        elab = await backend.elaborate(proof_source(theorem, tactics), goals_at=positions,  # type: ignore[attr-defined]
                                        trusted=False)
        if elab.goals is not None and len(elab.goals) == len(positions) and all(g for g in elab.goals):
            read = [tuple(g) for g in elab.goals if g is not None]
    return CheckResult(ok=not errors, errors=errors, elapsed_s=time.monotonic() - t0, states=read)


def has_trusted_checker(backend: object) -> bool:
    """Whether ``backend`` decides by the trusted checker (``backend.judge``)."""
    return bool(getattr(backend, "trusted_checker", False)) and hasattr(backend, "judge")


def reads_goals(backend: object) -> bool:
    """Whether ``backend.elaborate`` answers ``goals_at`` (the embedded backend)."""
    return bool(getattr(backend, "reads_goals", False))
