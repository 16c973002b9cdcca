"""Whole-proof re-check: the last word on whether a proof counts.

A found proof, `burnqed lean check`, tracing and evaluation all end here.
On a backend with the trusted checker (`burnqed_core.lean.judge`), the
verdict is computed by Lean code of ours elaborated before any untrusted text
existed: the preamble and the proof text, handed over as strings, are
elaborated by that code; the checked theorem and every declaration it needs
that is not the library's (the preamble's included: a preamble is trusted
only when it is, to the byte, one of the package's own, `trust.is_trusted`)
are replayed through the kernel onto the library's environment; its type
must equal the type of the trusted statement; a theorem posed in a library
module may use only what that module imports (`Theorem.module`); and its
axioms, collected by that code, must be within `ALLOWED_AXIOMS` (an imported
leaf counts when the library's sources declare it an axiom; every other axiom
and unsafe constant fails). Lean must also have processed the text to its
end, with no error and no `sorry` warning, in that same run (its states, for
tracing, too). A preamble that is not the package's own and makes the
statement mean more than its text (a macro, a notation, an instance of a
library class for library types, `open ... renaming`, a shadowing name, code
it runs) is refused. Nothing the proof's own elaboration prints is read as a
verdict (see ``docs/trusted-checker.md``).

Backends without it (Pantograph with the checker off) keep the earlier route:
the theorem with its preamble and proof elaborated as ONE source in a fresh
document, Lean's errors, its parse (exactly the preamble's declarations and
then the checked theorem), completeness and the axioms it reports.

Static rules (`burnqed_core.lean.sandbox`) run first, as a cheap filter and
so that model text never reaches Lean when it holds commands, IO or
line-break tricks; they are never the authority.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol

from burnqed_core.lean import sandbox, trust
from burnqed_core.lean.judge import JudgeReport, ReportError
from burnqed_core.lean.lsp import failures
from burnqed_core.lean.source import INDENT, indent_tactic, preamble_text, proof_text, strict_line
from burnqed_core.lean.types import ALLOWED_AXIOMS, CheckResult, Diagnostic, Elaboration
from burnqed_core.lean.verdicts import meaning_problems, statement_notes, unsafe_problem, verdict_problems
from burnqed_core.records import Theorem

CHECK_NAME = "burnqed_checked"
__all__ = ("CHECK_NAME", "check_proof", "judge", "proof_source", "proof_text", "reads_goals", "static_problems",
           "tactic_positions")


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


class PreambleDeclarations:
    """Declarations of preambles as one backend's Lean reports them, for a backend that gives no line ranges
    (few distinct preambles per run: a small LRU is enough). The backend owns it (its
    ``preamble_declarations`` attribute), so what one Lean reported is never used for another."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._decls: OrderedDict[str, list[str] | None] = OrderedDict()

    async def of(self, backend: Elaborator, preamble: str) -> list[str] | None:
        if preamble in self._decls:
            self._decls.move_to_end(preamble)
            return self._decls[preamble]
        decls = await _preamble_declarations(backend, preamble)
        self._decls[preamble] = decls
        while len(self._decls) > self.size:
            self._decls.popitem(last=False)
        return decls


async def _preamble_declarations(backend: Elaborator, preamble: str) -> list[str] | None:
    elab = await backend.elaborate(preamble_text(preamble))
    return elab.declarations if elab.complete and not any(d.is_error for d in elab.diagnostics) else None


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
                      states: bool = False, meaning: str = "refuse") -> CheckResult:
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
        return await _trusted_check(backend, theorem, tactics, explicit and states, t0, meaning)
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
        known = getattr(backend, "preamble_declarations", None)
        pre_decls = await (known.of(backend, theorem.preamble) if isinstance(known, PreambleDeclarations)
                           else _preamble_declarations(backend, theorem.preamble))
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
    if report.unknown_module is not None:
        return [f"the premise rule's module `{report.unknown_module}` is not a module of Lean's environment"]
    errors = unsafe_problem(report)
    errors += [m.text for m in report.messages if m.severity == "error"]
    errors += [m.text for m in report.messages if m.severity == "warning" and m.text.startswith("declaration uses")
               and "sorry" in m.text]
    if not report.complete:
        errors.append("Lean did not process the whole text (early end: `#exit` ...)")
    errors += verdict_problems(name, report.verdicts.get(name))
    return list(dict.fromkeys(errors))


def candidate_positions(theorem: Theorem, tactics: Sequence[str]) -> list[tuple[int, int]]:
    """Where each tactic of the checked candidate (`proof_text` of `CHECK_NAME`)
    starts: (0-based line, column) of its first character in that text."""
    line = proof_text(CHECK_NAME, theorem.statement, [], strict=False).count("\n")
    out = []
    for t in tactics:
        out.append((line, len(INDENT)))
        line += indent_tactic(t, INDENT).count("\n")
    return out


# Replay a trusted preamble's declarations with every proof too (True), or stop the kernel's replay at them
# (False: the fast path a preamble of the package's own sets may take, `trust.is_trusted`).
REPLAY_TRUSTED_PREAMBLES = True


async def _trusted_check(backend: object, theorem: Theorem, tactics: Sequence[str], states: bool,
                         t0: float, meaning: str = "refuse") -> CheckResult:
    """The verdict of the trusted checker (`burnqed_core.lean.judge`): the
    statement is ours; the proof text and, unless it is one of the package's
    own (`trust.is_trusted`), the preamble are candidates: every declaration
    of theirs that the proof needs is replayed through the kernel. A preamble
    that is not the package's and makes the statement mean more than its text
    is refused (``meaning="refuse"``: search, evaluation, tracing) or noted
    (``"note"``). ``states``: the goals before each tactic, read from the same
    run, for an accepted proof."""
    candidate = proof_text(CHECK_NAME, theorem.statement, tactics, strict=False)
    preamble = preamble_text(theorem.preamble) + strict_line(theorem.preamble)
    trusted = trust.is_trusted(theorem.preamble)
    positions = candidate_positions(theorem, tactics) if states and reads_goals(backend) else []
    try:
        report = await backend.judge(  # type: ignore[attr-defined]
            preamble, expected_text(theorem), candidate, [CHECK_NAME], module=theorem.module,
            trusted=trusted and not REPLAY_TRUSTED_PREAMBLES, positions=positions)
    except ReportError as e:
        return CheckResult(ok=False, errors=[f"the trusted checker gave no usable answer: {e}"],
                           elapsed_s=time.monotonic() - t0)
    errors = trusted_problems(report)
    flags = report.flags.get(CHECK_NAME, [])
    if flags and not trusted and meaning == "refuse":
        errors += meaning_problems(flags, theorem.preamble)
    read = None
    if positions and not errors:
        got = [report.states.get(i) for i in range(len(positions))]
        if all(got):  # every tactic has goals before it (None: no tactic starts there)
            read = [tuple(g) for g in got if g]
    return CheckResult(ok=not errors, errors=errors, elapsed_s=time.monotonic() - t0, states=read,
                       notes=statement_notes(flags))


async def audit_theorem(backend: object, theorem: Theorem, *, replay: bool = True) -> list[str]:
    """Why the trusted checker refuses ``theorem``'s preamble before a search
    starts on it ([] when it does not): the preamble or the statement does not
    elaborate, the kernel refuses the replay of one of its declarations, it
    declares code that could read the checker's process, or (a preamble that
    is not the package's own) it makes the statement mean more than its text.
    ``replay=False``: all but the replay (mode ``meaning``: the replay depends on
    the preamble alone, and a pool audits it once per preamble, `audit_preamble`).
    [] on a backend without the trusted checker (its final check decides)."""
    if not has_trusted_checker(backend):
        return []
    preamble = preamble_text(theorem.preamble) + strict_line(theorem.preamble)
    try:
        report = await backend.judge(preamble, expected_text(theorem), "", [CHECK_NAME],  # type: ignore[attr-defined]
                                     module=theorem.module, mode="audit" if replay else "meaning")
    except ReportError as e:
        return [f"the trusted checker gave no usable answer: {e}"]
    if report.expected_error and report.preamble_error is None:
        return []  # the statement does not elaborate: the start itself fails, with Lean's error
    if report.preamble_error is not None or report.unknown_module is not None:
        return trusted_problems(report)
    problems = unsafe_problem(report)
    # The compiler's unsafe auxiliary of a recursive definition (`f._unsafe_rec`) is no proof's dependency (the
    # kernel lets no safe declaration use an unsafe one); the judge replays what a proof needs, whatever the audit.
    problems += [f"the kernel refuses the replay of the preamble: {a}" for a in report.audit
                 if not a.rstrip().endswith("._unsafe_rec")]
    if not report.complete:
        problems.append("Lean did not process the whole preamble (`#exit` ...)")
    if not trust.is_trusted(theorem.preamble):
        problems += meaning_problems(report.flags.get(CHECK_NAME, []), theorem.preamble)
    return problems


async def audit_preamble(backend: object, preamble: str, module: str = "") -> list[str]:
    """The preamble's part of `audit_theorem`, once per preamble: it elaborates, the kernel accepts the replay
    of every declaration, it declares no code that could read the checker's process, Lean read it to its
    end."""
    return await audit_theorem(backend, Theorem(name="preamble", preamble=preamble, statement=": True",
                                                module=module))


def has_trusted_checker(backend: object) -> bool:
    """Whether ``backend`` decides by the trusted checker (``backend.judge``)."""
    return bool(getattr(backend, "trusted_checker", False)) and hasattr(backend, "judge")


def reads_goals(backend: object) -> bool:
    """Whether ``backend.elaborate`` answers ``goals_at`` (the embedded backend)."""
    return bool(getattr(backend, "reads_goals", False))
