"""The trusted checker's Python side: the command that asks it, and its answer.

The checker itself is Lean code (`judge.lean`, the header of every document of
the embedded worker, elaborated before any untrusted text exists). It
elaborates the candidate text, given as a string literal, with Lean's own
parser and command elaborator on a copy of its environment, replays what the
candidate declared through the kernel onto the trusted preamble's environment,
compares the checked theorem's type with the trusted statement's and collects
the leaves of its axioms. Nothing the candidate prints or declares is read as
a verdict: the answer is one message that starts with a fresh nonce (which no
text of the candidate contains) and is made of netstrings.

Why this design and not two processes (an untrusted one handing an ``.olean``
to a clean one): the embedded worker is 5-6.5 GB and ~20 s to start, a file
worker exits when a document's imports change, and importing ``Init`` afresh
inside a check takes ~9.6 s (measured), so a clean process or environment per
check is out of reach on the CPU machines; see ``docs/trusted-checker.md``.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from burnqed_core.lean.types import ALLOWED_AXIOMS, LIBRARY_AXIOMS

JUDGE_SOURCE = (Path(__file__).with_name("judge.lean")).read_text()
# Trusted sources loaded after the checker, in every header: Lean's library as
# a theorem pool (`burnqed_core.lean.library`: enumeration, `burnqed_type%`).
LIBRARY_SOURCE = (Path(__file__).with_name("library.lean")).read_text()
# Every document of the worker: the checker, then a public, exposed section so
# that what follows behaves as in a plain (non-`module`) file.
SECTION = "\n@[expose] public section\n\n"
LOAD_MARKER = "-- burnqed: the header loads what follows"
NAMESPACE_END = "end BurnqedJudge"


def worker_header(source: str = JUDGE_SOURCE, imports: Sequence[str] = (),
                  extra: Sequence[str] = (LIBRARY_SOURCE,)) -> str:
    """The header of every document of the embedded worker: ``judge.lean`` up
    to its load marker as it is, the rest as the string of one
    ``burnqed_load`` command (elaborated without info trees: the same
    declarations, but edits of the document stay as cheap as without the
    checker), then each of the ``extra`` trusted sources the same way
    (`trusted_load`), then `SECTION`. ``imports``: more modules the document
    imports (publicly), after the checker's own (Pantograph's modules, e.g. Mathlib)."""
    head, marker, rest = source.partition(LOAD_MARKER)
    if imports:
        last = head.rindex("public meta import")
        eol = head.index("\n", last) + 1
        more = "".join(f"public import {m}\n" for m in imports if m != "Init")
        head = head[:eol] + more + head[eol:]
    if not marker:
        raise ValueError("judge.lean has no load marker")
    body = rest.split("\n", 1)[1].rstrip()
    # The scope a command leaves is not carried to the next one by the
    # frontend: the namespace is closed outside the string.
    body, end, _ = body.rpartition(NAMESPACE_END)
    if not end:
        raise ValueError("judge.lean does not end with its namespace's end")
    loaded = "".join(trusted_load(s) for s in extra)
    return f"{head}burnqed_load {lean_string(body)}\n{NAMESPACE_END}\n{loaded}{SECTION}"


def trusted_load(source: str) -> str:
    """A trusted source for the header after the checker: its text after the
    load marker, which opens a namespace on its first line and closes it on
    its last, as ``namespace N`` / ``burnqed_load "<the rest>"`` / ``end N``
    (the namespace is opened and closed outside the string, as the checker's)."""
    _, marker, rest = source.partition(LOAD_MARKER)
    if not marker:
        raise ValueError("a trusted source has no load marker")
    opening, _, body = rest.split("\n", 1)[1].partition("\n")
    if not opening.startswith("namespace "):
        raise ValueError("a trusted source must open a namespace after its load marker")
    ns = opening.removeprefix("namespace ").strip()
    body, end, _ = body.rstrip().rpartition(f"end {ns}")
    if not end:
        raise ValueError(f"a trusted source must end with `end {ns}`")
    return f"namespace {ns}\nburnqed_load {lean_string(body)}\nend {ns}\n"


VERSION = "v1"

_IDENT_PART = re.compile(r"^[A-Za-z_\u00c0-\u1fff\u2100-\uffff][A-Za-z0-9_'!?\u00c0-\u1fff\u2100-\uffff]*$")


def lean_string(text: str) -> str:
    """``text`` as a Lean string literal: quotes, backslashes and every control
    or separator character escaped, so that the outer parser reads one token."""
    out = ['"']
    for ch in text:
        o = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\x{o:02x}")
        elif o in (0x85, 0x2028, 0x2029) or 0xD800 <= o <= 0xDFFF or o == 0xFEFF:
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def lean_ident(name: str) -> str:
    """A dotted name as a Lean identifier (parts outside plain identifier
    characters in guillemets); a name that cannot be written is refused."""
    parts = []
    for part in name.split("."):
        if not part or "«" in part or "»" in part or "\n" in part:
            raise ValueError(f"cannot write {name!r} as a Lean identifier")
        parts.append(part if _IDENT_PART.match(part) else f"«{part}»")
    return ".".join(parts)


def judge_command(nonce: str, preamble: str, expected: str, candidate: str, names: Sequence[str]) -> str:
    idents = " ".join(lean_ident(n) for n in names)
    return (f"burnqed_judge {lean_string(nonce)} {lean_string(preamble)} {lean_string(expected)} "
            f"{lean_string(candidate)} {idents}\n")


def tactics_command(nonce: str, texts: Sequence[str]) -> str:
    """``burnqed_tactics``: whether each text is exactly one tactic sequence
    (after ``by``) by Lean's own parser, in the environment where it stands."""
    return f"burnqed_tactics {lean_string(nonce)} " + " ".join(lean_string(t) for t in texts) + "\n"


def parse_seq_report(message: str, nonce: str, n: int) -> list[bool]:
    """The answer of ``burnqed_tactics`` for ``n`` texts."""
    if not message.startswith(nonce):
        raise ReportError("not this call's answer")
    f = netstrings(message[len(nonce):])
    if len(f) != n + 2 or f[0] != VERSION or f[-1] != "end" or any(x not in ("0", "1") for x in f[1:-1]):
        raise ReportError("not a complete answer")
    return [x == "1" for x in f[1:-1]]


def new_nonce() -> str:
    return "burnqed-" + secrets.token_hex(16)


@dataclass
class NameVerdict:
    """What the checker found for one asked name: ``status`` is ``ok`` (the
    kernel accepted it and its type is the expected one) or why not
    (``missing``, ``kernel``, ``type_differs``, ``not_theorem``, ``closure``);
    ``leaves`` the leaves of its axioms as the checker tags them (``I:`` an
    imported axiom-looking constant, ``L:`` a local axiom, ``U:`` an unsafe
    constant, ``N:`` a name the kernel lacks, ``F:fuel`` an unfinished walk)."""

    status: str
    detail: list[str] = field(default_factory=list)

    @property
    def leaves(self) -> list[str]:
        return self.detail if self.status == "ok" else []


@dataclass
class JudgeMessage:
    severity: str
    line: int
    column: int
    text: str


@dataclass
class JudgeReport:
    complete: bool = False
    preamble_error: list[JudgeMessage] | None = None
    expected_error: bool = False
    verdicts: dict[str, NameVerdict] = field(default_factory=dict)
    messages: list[JudgeMessage] = field(default_factory=list)
    # Per name: what its elaborated statement depends on beyond its text
    # ("variables"; "instance <inst> of <class>"), see `statement_notes`.
    flags: dict[str, list[str]] = field(default_factory=dict)

    def errors(self) -> list[JudgeMessage]:
        return [m for m in self.messages if m.severity == "error"]


class ReportError(ValueError):
    """The answer is not a well-formed report of this call."""


def netstrings(text: str) -> list[str]:
    out, i = [], 0
    while i < len(text):
        colon = text.find(":", i)
        if colon < 0 or not text[i:colon].isdigit():
            raise ReportError(f"bad netstring at {i}")
        n = int(text[i:colon])
        start, i = colon + 1, colon + 1 + n
        if i > len(text):
            raise ReportError("truncated netstring")
        out.append(text[start:i])
    return out


def parse_report(message: str, nonce: str, names: Sequence[str]) -> JudgeReport:
    """The report in ``message`` (the whole text of the checker's message)."""
    if not message.startswith(nonce):
        raise ReportError("not this call's answer")
    f = netstrings(message[len(nonce):])
    if not f or f[0] != VERSION or f[-1] != "end":
        raise ReportError("not a complete report")
    rep = JudgeReport()
    i = 1

    def take() -> str:
        nonlocal i
        if i >= len(f) - 1:
            raise ReportError("report ends early")
        i += 1
        return f[i - 1]

    def message() -> JudgeMessage:
        sev, line, col, text = take(), take(), take(), take()
        return JudgeMessage(severity=sev, line=int(line), column=int(col), text=text)

    while i < len(f) - 1:
        tag = take()
        if tag == "P":
            rep.preamble_error = []
            while i < len(f) - 1:
                if take() != "M":
                    raise ReportError("bad preamble message")
                rep.preamble_error.append(message())
        elif tag == "E":
            rep.expected_error = True
        elif tag == "X":
            rep.complete = take() == "1"
        elif tag == "D":
            idx, status, count = int(take()), take(), int(take())
            if not 0 <= idx < len(names) or names[idx] in rep.verdicts:
                raise ReportError(f"verdict for an unknown name #{idx}")
            rep.verdicts[names[idx]] = NameVerdict(status=status, detail=[take() for _ in range(count)])
        elif tag == "W":
            idx, text = int(take()), take()
            if not 0 <= idx < len(names):
                raise ReportError(f"flag for an unknown name #{idx}")
            rep.flags.setdefault(names[idx], []).append(text)
        elif tag == "M":
            rep.messages.append(message())
        else:
            raise ReportError(f"unknown field {tag!r}")
    return rep


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
    for f in flags:
        if f == "variables":
            out.append("declared with `variable`s in scope: its statement may carry hypotheses its text "
                       "does not show")
        elif f.startswith("instance "):
            inst, _, cls = f.removeprefix("instance ").partition(" of ")
            out.append(f"its statement uses `{inst}`, an instance of `{cls}` declared in the file")
        else:
            out.append(f)
    return out


def report_verdicts(report: JudgeReport, names: Sequence[str]
                    ) -> tuple[dict[str, list[str]], dict[str, str], dict[str, list[str]]]:
    """A report as `Elaboration` fields: the axioms of each accepted name,
    why each other name is rejected, and the notes on statements."""
    axioms: dict[str, list[str]] = {}
    rejected: dict[str, str] = {}
    for name in names:
        v = report.verdicts.get(name)
        if v is not None and v.status == "ok":
            axioms[name] = leaf_axioms(v.leaves)
        else:
            rejected[name] = verdict_problems(name, v)[0]
    notes = {n: statement_notes(f) for n, f in report.flags.items() if f}
    return axioms, rejected, notes


def verdict_problems(name: str, v: NameVerdict | None) -> list[str]:
    """Why the checker's verdict on ``name`` rejects it ([] when accepted)."""
    if v is None:
        return [f"the checker gave no verdict on `{name}`"]
    if v.status != "ok":
        why = {"missing": "Lean's environment has no such declaration",
               "kernel": "the kernel rejects its replay",
               "type_differs": "its type is not the trusted statement's",
               "not_theorem": "it is not a theorem",
               "closure": "its dependencies cannot be replayed"}.get(v.status, v.status)
        extra = f" ({'; '.join(v.detail)})" if v.detail else ""
        return [f"`{name}`: {why}{extra}"]
    bad = sorted(a for a in leaf_axioms(v.leaves) if a not in ALLOWED_AXIOMS)
    return [f"`{name}` depends on disallowed axioms: {', '.join(bad)}"] if bad else []
