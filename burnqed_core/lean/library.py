"""Lean's own library read by the worker's trusted header (`library.lean`).

The embedded worker imports every module of ``Init`` and the part of ``Std``
and ``Lean`` that the checker's meta imports pull in; their ``.olean`` data is
in its environment. Two commands of the trusted header read it (Python never
parses ``.olean`` files, and no text of a user or the model is involved):

* `modules_command`: every imported module and its direct imports (the import
  graph, from ``Environment.header``);
* `library_command`: the theorems of some modules, each with its type as Lean
  prints it, its structural skeleton, its size and the modules of the constants
  its type uses (`LibraryConstant`).

A library theorem is posed by `type_statement`: ``: burnqed_type% M X``, the
type stored for ``X``, so ``theorem t : burnqed_type% M X := by ...`` has
exactly the library's statement as its goal (no printed text that might not
read back), and the policy sees Lean's own rendering of it.

In the installed (exported-level) library a theorem is an axiom without its
proof; the enumeration takes theorems and axioms whose type is a proposition,
and the library's true axioms (`LIBRARY_AXIOMS`, from Lean's sources) are left
out here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.lean.judge import CHECKER_MODULE, ReportError, lean_ident, lean_string, netstrings, new_nonce
from burnqed_core.lean.types import LIBRARY_AXIOMS, Diagnostic

log = logging.getLogger(__name__)

VERSION = "v1"
TYPE_TERM = "burnqed_type%"


class SourceChecker(Protocol):
    """What the commands need: a Lean that elaborates a source after the worker's header (`LeanPool`)."""

    async def check_source(self, text: str, timeout_s: float | None = None) -> list[Diagnostic]: ...


class LibraryConstant(BaseModel):
    """One theorem of the library as the worker's environment holds it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str
    module: str
    universes: int = Field(0, ge=0, description="universe parameters of its type")
    size: int = Field(ge=0, description="nodes of its type, a shared subterm counted at each occurrence")
    type: str = Field(description="the type as Lean prints it (display; the goal is posed from the stored type)")
    skeleton: str = Field(description="the type with binder names, universes and namespaces erased, "
                                      "instances as I and inductive types as T (near-twin key)")
    type_modules: list[str] = Field(default_factory=list, description="modules of the constants its type uses")


class ModuleScan(BaseModel):
    """The theorems of one module, and how many constants each rule of the header left out."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    module: str
    constants: int = Field(ge=0, description="constants the module declares")
    theorems: list[LibraryConstant] = Field(default_factory=list)
    skipped: dict[str, int] = Field(default_factory=dict, description="reason -> theorems left out by the header "
                                    "(name: internal, private or numbered; instance; size)")
    error: str = Field("", description="why the module could not be read (then it has no theorems)")


class LibraryError(RuntimeError):
    """The worker gave no usable answer to a library command."""


def type_statement(module: str, name: str) -> str:
    """The statement (`Theorem.statement`) that poses library theorem ``name`` of ``module`` by its stored type."""
    return f": {TYPE_TERM} {lean_ident(module)} {lean_ident(name)}"


def modules_command(nonce: str) -> str:
    return f"burnqed_modules {lean_string(nonce)}\n"


def library_command(nonce: str, modules: Sequence[str], max_size: int) -> str:
    if max_size < 1:
        raise ValueError(f"max_size must be >= 1, got {max_size}")
    return f"burnqed_library {lean_string(nonce)} {int(max_size)} {' '.join(lean_ident(m) for m in modules)}\n"


def _fields(diags: Sequence[Diagnostic], nonce: str) -> list[str]:
    answers = [d.message for d in diags if d.severity == 3 and d.message.startswith(nonce)]
    if len(answers) != 1:
        errors = [d.message for d in diags if d.is_error]
        raise LibraryError(f"the library command answered {len(answers)} times (expected once)"
                           + (f": {errors[0][:300]}" if errors else ""))
    f = netstrings(answers[0][len(nonce):])
    if not f or f[0] != VERSION or f[-1] != "end":
        raise ReportError("not a complete answer")
    return f[1:-1]


def parse_modules(diags: Sequence[Diagnostic], nonce: str) -> dict[str, list[str]]:
    """Module -> its direct imports, in the environment's module order."""
    f = _fields(diags, nonce)
    if len(f) % 3:
        raise ReportError("a module entry is cut")
    out: dict[str, list[str]] = {}
    for i in range(0, len(f), 3):
        if f[i] != "M":
            raise ReportError(f"unknown field {f[i]!r}")
        if f[i + 1] != CHECKER_MODULE:  # the compiled checker: the worker's, not the library's
            out[f[i + 1]] = [m for m in f[i + 2].split() if m != CHECKER_MODULE]
    return out


def parse_library(diags: Sequence[Diagnostic], nonce: str) -> tuple[list[ModuleScan], list[str]]:
    """The scans of the modules asked, and the names of those the worker lacks."""
    f = _fields(diags, nonce)
    scans: list[ModuleScan] = []
    missing: list[str] = []
    i = 0
    module: str | None = None
    constants = 0
    theorems: list[LibraryConstant] = []
    skipped: dict[str, int] = {}

    def flush() -> None:
        if module is not None:
            scans.append(ModuleScan(module=module, constants=constants, theorems=theorems, skipped=skipped))

    def take(n: int) -> list[str]:
        nonlocal i
        if i + n > len(f):
            raise ReportError("the answer ends inside an entry")
        i += n
        return f[i - n:i]

    while i < len(f):
        tag = take(1)[0]
        if tag == "M":
            flush()
            module, count = take(2)
            constants, theorems, skipped = int(count), [], {}
        elif tag == "N":
            missing.append(take(1)[0])
        elif tag == "T" and module is None:
            raise ReportError("a theorem before its module")
        elif tag == "T":
            name, universes, size, typ, skeleton, mods = take(6)
            assert module is not None
            theorems.append(LibraryConstant(name=name, module=module, universes=int(universes), size=int(size),
                                            type=typ, skeleton=skeleton, type_modules=sorted(mods.split())))
        elif tag == "C":
            reason, count = take(2)
            if module is None:
                raise ReportError("a count before its module")
            if int(count):
                skipped[reason] = skipped.get(reason, 0) + int(count)
        else:
            raise ReportError(f"unknown field {tag!r}")
    flush()
    return scans, missing


# One module per document takes up to minutes (Init.Data.Array.Lemmas: thousands of theorems, each printed) on a
# loaded 2-core machine: far above a tactic's timeout.
SCAN_TIMEOUT_S = 900.0


async def module_graph(lean: SourceChecker) -> dict[str, list[str]]:
    """Every module the worker imported -> its direct imports."""
    nonce = new_nonce()
    return parse_modules(await lean.check_source(modules_command(nonce), timeout_s=SCAN_TIMEOUT_S), nonce)


class MissingModules(LibraryError):
    """The worker does not import a module asked for."""


async def _scan(lean: SourceChecker, part: Sequence[str], max_size: int) -> list[ModuleScan]:
    nonce = new_nonce()
    diags = await lean.check_source(library_command(nonce, part, max_size), timeout_s=SCAN_TIMEOUT_S)
    scans, missing = parse_library(diags, nonce)
    if missing:
        raise MissingModules(f"the Lean worker does not import {', '.join(missing)}")
    return [s.model_copy(update={"theorems": [t for t in s.theorems if t.name not in LIBRARY_AXIOMS]})
            for s in scans]


async def scan_modules(lean: SourceChecker, modules: Sequence[str], max_size: int, *, chunk: int = 4,
                       progress: Callable[[int], None] | None = None) -> list[ModuleScan]:
    """The theorems of ``modules`` (``chunk`` modules per document), in the order asked; the library's true
    axioms left out. A module the worker lacks is an error naming it. A chunk that gets no usable answer (a
    timeout or a crash: the pool restarts the worker) is read again one module per document, and a module that
    still gets none is returned with its `ModuleScan.error` (counted, never silently dropped)."""
    from burnqed_core.lean.pool import InfraFailure

    failures = (InfraFailure, ReportError, LibraryError)

    def failed(m: str, e: BaseException) -> ModuleScan:
        log.warning("module %s could not be read: %s", m, e)
        return ModuleScan(module=m, constants=0, error=str(e)[:300] or type(e).__name__)

    out: list[ModuleScan] = []
    for k in range(0, len(modules), chunk):
        part = list(modules[k:k + chunk])
        try:
            out.extend(await _scan(lean, part, max_size))
        except MissingModules:
            raise
        except failures as e:
            if len(part) == 1:
                out.append(failed(part[0], e))
            else:
                log.warning("no answer for modules %s (%s): read one by one", ", ".join(part), e)
                for m in part:
                    try:
                        out.extend(await _scan(lean, [m], max_size))
                    except MissingModules:
                        raise
                    except failures as e1:
                        out.append(failed(m, e1))
        if progress is not None:
            progress(len(part))
    return out
