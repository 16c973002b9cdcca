"""Whole-proof re-check: the last word on whether a proof counts.

Step-by-step tactic checking has accepted proofs that the compiler rejects
(users of every REPL report it), so a found proof is accepted only when the
theorem with its preamble and the whole proof, elaborated as ONE piece of
source, gives no error and no "declaration uses `sorry`" warning, and the
sandbox's static rules find nothing (no sorry/admit/native_decide, no new
axiom, no implemented_by/extern/unsafe, the statement exactly the one asked).

Axioms: ``#print axioms`` is refused in the embedded build ("cannot use
`#print axioms` in a `module`"), so axiom use is checked statically (no
``axiom`` declaration and no ``sorryAx``/``native_decide`` text in the proof)
plus Lean's own sorry warning.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from burnqed_core.lean.embedded import preamble_text, proof_text
from burnqed_core.lean.lsp import failures
from burnqed_core.lean.types import CheckResult, Diagnostic
from burnqed_core.records import Theorem

log = logging.getLogger(__name__)

CHECK_NAME = "burnqed_checked"
_warned_no_sandbox = False


class SourceChecker(Protocol):
    async def check_source(self, text: str) -> list[Diagnostic]: ...


def sandbox_module() -> Any | None:
    """`burnqed_core.lean.sandbox`, imported lazily (None if absent)."""
    global _warned_no_sandbox
    try:
        from burnqed_core.lean import sandbox
    except ImportError:
        if not _warned_no_sandbox:
            log.warning("burnqed_core.lean.sandbox is missing: tactics and proofs are not statically filtered")
            _warned_no_sandbox = True
        return None
    return sandbox


# Used when the sandbox module is not there: the minimal rules a proof must pass.
_FORBIDDEN = re.compile(r"\b(sorry|admit|native_decide|sorryAx|implemented_by|extern|unsafe|axiom)\b")


def static_problems(theorem: Theorem, source: str) -> list[str]:
    """Problems of a proof text found without Lean."""
    sb = sandbox_module()
    if sb is not None:
        return list(sb.check_proof_source(theorem.statement, source))
    return [f"forbidden: `{m}`" for m in sorted(set(_FORBIDDEN.findall(source)))]


def proof_source(theorem: Theorem, tactics: Sequence[str], name: str = CHECK_NAME) -> str:
    """The theorem with its preamble and proof as one Lean source. A fresh
    declaration name: the theorem's own may already exist (``Nat.add_comm``)."""
    return preamble_text(theorem.preamble) + proof_text(name, theorem.statement, tactics or ["skip"])


def verdict(diags: Sequence[Diagnostic]) -> list[str]:
    """Messages that reject a source: every error and every `sorry` warning."""
    return [d.message for d in failures(diags)]


async def check_proof(backend: SourceChecker, theorem: Theorem, tactics: Sequence[str]) -> CheckResult:
    """Elaborate the theorem with the proof as one source; accepted only if
    Lean and the static rules find nothing."""
    t0 = time.monotonic()
    body = proof_text(CHECK_NAME, theorem.statement, tactics or ["skip"], strict=False)
    problems = static_problems(theorem, body)
    if problems:
        return CheckResult(ok=False, errors=problems, elapsed_s=time.monotonic() - t0)
    diags = await backend.check_source(proof_source(theorem, tactics))
    errors = verdict(diags)
    return CheckResult(ok=not errors, errors=errors, elapsed_s=time.monotonic() - t0)


_DECL = re.compile(
    r"^(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable|nonrec)\s+)*"
    r"(theorem|lemma|example|def|abbrev|instance|inductive|structure)\b\s*([^\s:({\[]*)")


@dataclass(frozen=True)
class Declaration:
    """A top-level declaration of a file and what Lean said about it."""

    line: int
    kind: str
    name: str
    errors: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.errors


def per_declaration(text: str, diags: Sequence[Diagnostic]) -> tuple[list[Declaration], list[str]]:
    """Attribute rejecting diagnostics to the top-level declarations of a
    file by line range; also the rejecting messages outside any declaration."""
    lines = text.splitlines()
    starts = [(i, m.group(1), m.group(2) or f"<{m.group(1)} line {i + 1}>")
              for i, ln in enumerate(lines) if (m := _DECL.match(ln))]
    bad = failures(diags)
    bounds = [s[0] for s in starts[1:]] + [len(lines) + 1]
    decls = []
    for (a, kind, name), b in zip(starts, bounds, strict=True):
        errs = tuple(d.message for d in bad if a <= d.line < b)
        decls.append(Declaration(line=a, kind=kind, name=name, errors=errs))
    first = starts[0][0] if starts else len(lines) + 1
    outside = [d.message for d in bad if d.line < first]
    return decls, outside
