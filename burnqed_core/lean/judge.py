"""The trusted checker's Python side: the commands that ask it, and its answers.

The checker itself is Lean code (`judge.lean`, the header of every document of
the embedded worker, compiled once per install into the module the header
imports, `checker_module`, before any untrusted text exists). It
elaborates the preamble and the candidate text, given as string literals, with
Lean's own parser and command elaborator on a copy of its environment; replays
every declaration the judged theorem needs that is not the library's (the
preamble's included) through the kernel onto the library's environment;
compares the checked theorem's type with the trusted statement's; applies the
premise rule of a library module; collects the leaves of its axioms; says what
makes a statement mean more than its text; lists what a file declares (names,
ranges, elaborated types); and reads the goals before each tactic from the
same run. Nothing the candidate prints or declares is read as a verdict: the
answer is one message that starts with a fresh nonce (which no text of the
candidate contains) and is made of netstrings. What the answer means for a
user (verdicts, refusals, notes) is `burnqed_core.lean.verdicts`.

Why this design and not two processes (an untrusted one handing an ``.olean``
to a clean one): the embedded worker is 5-6.5 GB and ~20 s to start, a file
worker exits when a document's imports change, and importing ``Init`` afresh
inside a check takes ~9.6 s (measured), so a clean process or environment per
check is out of reach on the CPU machines; see ``docs/trusted-checker.md``.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from burnqed_core.lean.confusables import lookalikes
from burnqed_core.lean.lexer import name_parts
from burnqed_core.lean.types import DeclaredTheorem

JUDGE_PATH = Path(__file__).with_name("judge.lean")
JUDGE_SOURCE = JUDGE_PATH.read_text()
# The trusted Lean sources of the worker's header after `judge.lean`, loaded in
# this order (e.g. a library enumeration module): each may start with its
# `import` lines (hoisted into the header's imports) and must close every
# namespace it opens.
EXTRA_SOURCES: tuple[Path, ...] = (Path(__file__).with_name("library.lean"),)  # Lean's library as a theorem pool
# Every document of the worker: the checker, then a public, exposed section so
# that what follows behaves as in a plain (non-`module`) file.
SECTION = "\n@[expose] public section\n\n"
LOAD_MARKER = "-- burnqed: the header loads what follows"
# The module the checker is compiled into (`checker_module`): imported by every embedded worker's header, it is no
# module of the library (`library.parse_modules` leaves it out).
CHECKER_MODULE = "BurnqedChecker"
NAMESPACE_END = "end BurnqedJudge"
IMPORT_LINE = re.compile(r"^(public\s+)?(meta\s+)?import\s+\S+\s*$")


def _split_imports(text: str) -> tuple[list[str], str]:
    """The leading ``module``/import lines of a Lean source, and the rest."""
    lines = text.split("\n")
    k, imports = 0, []
    while k < len(lines) and (not lines[k].strip() or lines[k].strip() == "module"
                              or IMPORT_LINE.match(lines[k].strip())):
        if IMPORT_LINE.match(lines[k].strip()):
            imports.append(lines[k].strip())
        k += 1
    return imports, "\n".join(lines[k:])


def imports_end(text: str) -> int:
    """Where the line of the last ``public meta import`` of a trusted source ends (hoisted imports go there)."""
    return text.index("\n", text.rindex("public meta import")) + 1


def worker_header(source: str = JUDGE_SOURCE, imports: Sequence[str] = (),
                  extra: Sequence[str] | None = None, compiled: str | None = None) -> str:
    """The header of every document of the embedded worker: ``judge.lean`` up
    to its load marker as it is, the rest as the string of one
    ``burnqed_load`` command (elaborated without info trees: the same
    declarations, but edits of the document stay as cheap as without the
    checker), then each extra trusted source (``extra``, default
    `EXTRA_SOURCES`) as one more ``burnqed_load`` (its import lines hoisted
    into the header's), then `SECTION`. ``imports``: more modules the document
    imports (publicly), after the checker's own (Pantograph's modules, e.g.
    Mathlib). ``compiled``: the name of the module that holds the checker and
    the extra sources compiled (`checker_module`, from ``source`` and
    `EXTRA_SOURCES`): the header imports it and runs ``burnqed_store_init``
    instead of loading their text (``extra`` is then not loaded)."""
    head, marker, rest = source.partition(LOAD_MARKER)
    if not marker:
        raise ValueError("judge.lean has no load marker")
    extras = [p.read_text() for p in EXTRA_SOURCES] if extra is None else list(extra)
    hoisted: list[str] = []
    loads: list[str] = []
    for text in extras:
        if LOAD_MARKER in text:  # a source laid out as the checker: imports, the marker, one namespace
            before = text.partition(LOAD_MARKER)[0]
            imps = [line.strip() for line in before.split("\n") if IMPORT_LINE.match(line.strip())]
            loads.append(trusted_load(text))
        else:
            imps, rest_text = _split_imports(text)
            if rest_text.strip():
                loads.append(f"burnqed_load {lean_string(rest_text.strip())}\n")
        hoisted += [i for i in imps if i not in hoisted and i not in head]
    more = "".join(f"{line}\n" for line in hoisted)
    more += "".join(f"public import {m}\n" for m in imports if m != "Init")
    if more:
        eol = imports_end(head)
        head = head[:eol] + more + head[eol:]
    body = rest.split("\n", 1)[1].rstrip()
    # The scope a command leaves is not carried to the next one by the
    # frontend: the namespace is closed outside the string.
    body, end, _ = body.rpartition(NAMESPACE_END)
    if not end:
        raise ValueError("judge.lean does not end with its namespace's end")
    if compiled is not None:
        opening = head[:head.index("\n") + 1]  # `module`
        import_lines = head[head.index("-/", len(opening)) + 2:imports_end(head)]
        return f"{opening}{import_lines}public meta import {compiled}\nburnqed_store_init\n{SECTION}"
    return f"{head}burnqed_load {lean_string(body)}\n{NAMESPACE_END}\n{''.join(loads)}{SECTION}"


def trusted_load(source: str) -> str:
    """A trusted source laid out as the checker (its imports, the load marker, then one namespace that its
    first line opens and its last closes) for the header: ``namespace N`` / ``burnqed_load "<the rest>"`` /
    ``end N``, the namespace opened and closed outside the string, as the checker's."""
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


def checker_fingerprint() -> str:
    """A hash of the checker's Lean sources (the worker's header): caches of
    verdicts and traces are keyed by it, so that a change of the checker never
    serves an answer of the old one."""
    return hashlib.sha256(worker_header().encode("utf-8")).hexdigest()[:24]


VERSION = "v2"

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
    """A dotted name (parts possibly in guillemets) as a Lean identifier:
    parts outside plain identifier characters in guillemets. A name that
    cannot be written (an empty part, a guillemet or line break inside a
    part) raises `ValueError`."""
    out = []
    for part in name_parts(name):
        if not part or "«" in part or "»" in part or "\n" in part:
            raise ValueError(f"cannot write {name!r} as a Lean identifier")
        out.append(part if _IDENT_PART.match(part) else f"«{part}»")
    return ".".join(out)


LOOK_ROOT = "_burnqed_look"


def _quoted(part: str) -> str | None:
    return None if not part or any(c in part for c in "«»\n") else f"«{part}»"


def look_ident(ident: str, skel: str, force: bool) -> str:
    """A confusable identifier (`burnqed_core.lean.confusables`) as the name
    the checker reads among the judged ones (`lookOf` in ``judge.lean``):
    ``_burnqed_look.«1».«Νat».«::».«Nat»``; "" when a part cannot be written."""
    parts = [LOOK_ROOT, "1" if force else "0", *name_parts(ident), "::", *name_parts(skel)]
    quoted = [_quoted(p) for p in parts]
    return "" if any(q is None for q in quoted) else ".".join(q for q in quoted if q)


def judge_command(nonce: str, preamble: str, expected: str, candidate: str, names: Sequence[str],
                  module: str = "", mode: str = "names", trusted: bool = False,
                  positions: Sequence[tuple[int, int]] = ()) -> str:
    """``burnqed_judge``. ``mode``: ``names`` judges ``names``; ``list`` judges
    every theorem-like declaration of the candidate (listed with its range and
    elaborated type); ``meaning`` reports what makes ``expected``'s statement
    mean more than its text (no replay); ``audit`` also replays every declaration of the preamble and
    reports what makes ``expected``'s statement mean more than its text.
    ``module``: the library module a theorem is posed in (`Theorem.module`):
    the checker then refuses (status ``premise``) a proof that uses a library
    constant outside the modules it imports. ``trusted``: the preamble is one
    of the package's own (`burnqed_core.lean.trust`): the replay stops at its
    declarations. ``positions``: 0-based (line, column) in ``candidate`` where
    to read the goals (before the tactic that starts there), from the same run."""
    if mode not in ("names", "list", "audit", "meaning"):
        raise ValueError(f"unknown judge mode {mode!r}")
    idents = " ".join([*(lean_ident(n) for n in names),
                       *(look_ident(w, sk, force) for w, sk, force in lookalikes(preamble, expected, candidate))])
    nums = " ".join(f"{line} {col}" for line, col in positions)
    return (f"burnqed_judge {lean_string(nonce)} {lean_string(mode)} {lean_string('trusted' if trusted else 'replay')} "
            f"{lean_string(module)} {lean_string(preamble)} {lean_string(expected)} {lean_string(candidate)} "
            f"{nums} {idents}\n")


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


def store_stats_command(nonce: str) -> str:
    """``burnqed_store_stats``: what the checker's preamble store of this process holds (`judge.lean`)."""
    return f"burnqed_store_stats {lean_string(nonce)}\n"


@dataclass(frozen=True)
class StoreStats:
    """The checker's preamble store in one worker process: the preambles it keeps (elaborated, and their
    declarations replayed through the kernel, once) and how many requests started from one of them."""

    entries: int
    hits: int


def parse_store_stats(message: str, nonce: str) -> StoreStats | None:
    """The answer of ``burnqed_store_stats`` (None: the process has no store)."""
    if not message.startswith(nonce):
        raise ReportError("not this call's answer")
    f = netstrings(message[len(nonce):])
    if f[:1] != [VERSION] or f[-1:] != ["end"]:
        raise ReportError("not a complete answer")
    if f[1:-1] == ["none"]:
        return None
    if len(f) != 4 or not f[1].isdigit() or not f[2].isdigit():
        raise ReportError("not a complete answer")
    return StoreStats(entries=int(f[1]), hits=int(f[2]))


def new_nonce() -> str:
    return "burnqed-" + secrets.token_hex(16)


@dataclass
class NameVerdict:
    """What the checker found for one judged name: ``status`` is ``ok`` (the
    kernel accepted it and its type is the expected one) or why not
    (``missing``, ``kernel``, ``type_differs``, ``not_theorem``, ``closure``,
    ``premise``: a premise rule's module does not import what it uses, ``detail``
    lists ``name (module)``); ``leaves`` the leaves of its axioms as the
    checker tags them (``I:`` an imported axiom-looking constant, ``L:`` an
    axiom not from the library, ``U:`` an unsafe constant, ``N:`` a name the
    kernel lacks, ``F:fuel`` an unfinished walk)."""

    status: str
    detail: list[str] = field(default_factory=list)

    @property
    def leaves(self) -> list[str]:
        return self.detail if self.status == "ok" else []


@dataclass
class JudgeMessage:
    severity: str
    line: int  # 0-based, in the candidate text
    column: int
    text: str
    end_line: int = -1
    end_column: int = 0


@dataclass
class JudgeReport:
    complete: bool = False
    preamble_error: list[JudgeMessage] | None = None
    expected_error: bool = False
    # The module of a premise rule (`Theorem.module`) that the environment does not have.
    unknown_module: str | None = None
    verdicts: dict[str, NameVerdict] = field(default_factory=dict)
    messages: list[JudgeMessage] = field(default_factory=list)
    # Per name: what its elaborated statement depends on beyond its text, see `statement_notes`.
    flags: dict[str, list[str]] = field(default_factory=dict)
    # mode "list": the candidate's theorem-like declarations, in order (their names are the verdicts' keys)
    declared: list[DeclaredTheorem] = field(default_factory=list)
    # goals at each asked position (None: no tactic starts there)
    states: dict[int, list[str] | None] = field(default_factory=dict)
    # the text ran code of its own (a command that runs code, meta-level declarations): the process
    # that elaborated it is recycled before the next request
    ran_code: list[str] = field(default_factory=list)
    # declarations that could read the process's memory (unsafe, implemented_by, extern): no verdict
    unsafe_code: list[str] = field(default_factory=list)
    # mode "audit": declarations of the preamble that the kernel's replay refuses
    audit: list[str] = field(default_factory=list)

    def errors(self) -> list[JudgeMessage]:
        return [m for m in self.messages if m.severity == "error"]


_PRIVATE = re.compile(r"_private\.\S*?\.0\.")
_SCRATCH = re.compile(r"(?:file://)?/\S*?burnqed-lean-scratch-[^\s/]*/")
# The worker's document as Lean names a module-specific auxiliary (`instHAddNat_external:burnqed-1-2.lean`).
_DOCUMENT = re.compile(r"_?external:(?:file://)?[^\s`]*?burnqed-\d+-\d+\.lean")


def user_text(text: str) -> str:
    """A message of Lean's with the user's names: a private declaration's
    ``_private.<document>.0.`` prefix (the document is a scratch file of the
    worker) and scratch paths removed."""
    return _DOCUMENT.sub("", _SCRATCH.sub("", _PRIVATE.sub("", text)))


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


class _Fields:
    """The fields of a report after its version, read in order up to (not including) its final ``end``."""

    def __init__(self, fields: list[str]) -> None:
        self.fields = fields
        self.i = 1

    def more(self) -> bool:
        return self.i < len(self.fields) - 1

    def take(self) -> str:
        if self.i >= len(self.fields) - 1:
            raise ReportError("report ends early")
        self.i += 1
        return self.fields[self.i - 1]

    def num(self) -> int:
        x = self.take()
        if not x.isdigit():
            raise ReportError(f"not a number: {x[:20]!r}")
        return int(x)

    def message(self) -> JudgeMessage:
        sev, line, col, eline, ecol, text = self.take(), self.num(), self.num(), self.num(), self.num(), self.take()
        return JudgeMessage(severity=sev, line=line, column=col, text=user_text(text), end_line=eline,
                            end_column=ecol)


def parse_report(message: str, nonce: str, names: Sequence[str] | None) -> JudgeReport:
    """The report in ``message`` (the whole text of the checker's message).
    ``names``: the judged names (mode ``names``); None in mode ``list``, where
    the names are the listed declarations'."""
    if not message.startswith(nonce):
        raise ReportError("not this call's answer")
    f = netstrings(message[len(nonce):])
    if not f or f[0] != VERSION or f[-1] != "end":
        raise ReportError("not a complete report")
    rep = JudgeReport()
    judged: list[str] = list(names) if names is not None else []
    fields = _Fields(f)
    while fields.more():
        tag = fields.take()
        if tag in ("T", "D", "W"):
            _read_name_field(tag, fields, rep, judged, listed=names is None)
        else:
            _read_field(tag, fields, rep)
    return rep


def judged(answer: Callable[[], str], nonce: str, names: Sequence[str] | None,
           retire: Callable[[str], None]) -> JudgeReport:
    """The report of one judge call: `parse_report` of ``answer()`` (which raises `ReportError` when the checker
    gave no single answer). ``retire`` gets the reason when the process that answered must take no further
    request: its answer was unusable, or the text ran code of its own (a task the text left there could read the
    next request, with its nonce, or write a forged answer)."""
    try:
        report = parse_report(answer(), nonce, names)
    except ReportError as e:
        retire(f"the checker's answer to a text was unusable ({e})")
        raise
    if report.ran_code or report.unsafe_code:
        retire("a text ran code of its own in it (" + "; ".join([*report.ran_code, *report.unsafe_code]) + ")")
    return report


def _read_name_field(tag: str, fields: _Fields, rep: JudgeReport, judged: list[str], listed: bool) -> None:
    """A field about one judged name into ``rep``: a listed declaration (``T``, mode ``list`` only: its name
    appended to ``judged``), a verdict (``D``) or a flag (``W``) of the name at an index of ``judged``."""
    if tag == "T":
        if not listed:
            raise ReportError("a listed declaration in a report of named ones")
        idx = fields.num()
        name, kind, found, line, col, start, end, stmt = (fields.take(), fields.take(), fields.take(), fields.num(),
                                                          fields.num(), fields.num(), fields.num(), fields.take())
        if idx != len(judged) or name in judged:
            raise ReportError(f"listed declaration #{idx} out of order or twice: {name!r}")
        judged.append(name)
        rep.declared.append(DeclaredTheorem(name=name, kind=kind, found=found == "1", line=line, column=col,
                                            start_line=start, end_line=end, statement=stmt))
    elif tag == "D":
        idx, status, count = fields.num(), fields.take(), fields.num()
        name = _name_at(judged, idx)
        if name in rep.verdicts:
            raise ReportError(f"two verdicts for `{name}`")
        detail = [fields.take() for _ in range(count)]
        rep.verdicts[name] = NameVerdict(status=status,
                                         detail=detail if status == "ok" else [user_text(d) for d in detail])
    else:
        idx, text = fields.num(), fields.take()
        rep.flags.setdefault(_name_at(judged, idx), []).append(user_text(text))


def _name_at(judged: list[str], idx: int) -> str:
    if not 0 <= idx < len(judged):
        raise ReportError(f"a field for an unknown name #{idx}")
    return judged[idx]


def _read_field(tag: str, fields: _Fields, rep: JudgeReport) -> None:
    """A field of the report as a whole into ``rep``: the preamble's errors (``P``, the rest of the report),
    the expected-error mark, an unknown module, completeness, the goals at a position, code that ran, unsafe
    code, audit lines, a message."""
    if tag == "P":
        rep.preamble_error = []
        while fields.more():
            if fields.take() != "M":
                raise ReportError("bad preamble message")
            rep.preamble_error.append(fields.message())
    elif tag == "E":
        rep.expected_error = True
    elif tag == "U":
        rep.unknown_module = fields.take()
    elif tag == "X":
        rep.complete = fields.take() == "1"
    elif tag == "S":
        idx, count = fields.num(), fields.take()
        if idx in rep.states:
            raise ReportError(f"two states at position #{idx}")
        rep.states[idx] = None if count == "none" else [fields.take() for _ in range(int(count))]
    elif tag == "R":
        rep.ran_code.append(fields.take())
    elif tag == "Z":
        rep.unsafe_code.append(fields.take())
    elif tag == "A":
        rep.audit.append(fields.take())
    elif tag == "M":
        rep.messages.append(fields.message())
    else:
        raise ReportError(f"unknown field {tag!r}")


@dataclass
class StepReport:
    """What the goal reader (``burnqed_step``) of one batch block reported:
    ``status`` ``ok`` (the candidate ran; ``goals`` are what it left) or
    ``error``; for a step that left no goal, ``verdict`` is the kernel's replay
    of its proof term (``ok``, ``kernel``, ``closure``) with ``detail``, else
    ``open``; ``leaves`` the leaves of the axioms of its (partial) proof term."""

    status: str
    goals: list[str] = field(default_factory=list)
    verdict: str = ""
    detail: str = ""
    leaves: list[str] = field(default_factory=list)


def step_command(nonce: str, index: int) -> str:
    """The line that wraps a block's candidate (indented under it by `STEP_INDENT`)."""
    return f"burnqed_step {lean_string(nonce)} {index}"


def parse_step_reports(messages: Sequence[str], nonce: str) -> dict[int, StepReport | None]:
    """The goal readers' answers of one document by block index (None: a
    block answered more than once, or not well-formed: no verdict)."""
    out: dict[int, StepReport | None] = {}
    for m in messages:
        if not m.startswith(nonce):
            continue
        try:
            f = netstrings(m[len(nonce):])
            if len(f) < 4 or f[0] != VERSION or f[-1] != "end" or not f[1].isdigit():
                raise ReportError("malformed")
            idx, body = int(f[1]), f[2:-1]
            rep: StepReport | None
            if body == ["error"]:
                rep = StepReport(status="error")
            else:
                if body[0] != "ok" or not body[1].isdigit():
                    raise ReportError("malformed")
                n = int(body[1])
                goals, rest = body[2:2 + n], body[2 + n:]
                if len(goals) != n or len(rest) < 3 or not rest[2].isdigit() or len(rest) != 3 + int(rest[2]):
                    raise ReportError("malformed")
                rep = StepReport(status="ok", goals=goals, verdict=rest[0], detail=rest[1], leaves=rest[3:])
        except (ReportError, IndexError):
            continue
        out[idx] = None if idx in out else rep
    return out
