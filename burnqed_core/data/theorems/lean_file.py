"""Parse a Lean 4 source file into a preamble and `Theorem` records.

Users bring theorems as ``.lean`` files (miniF2F style, one problem per file,
or a file of many lemmas with their own definitions). This module finds the
theorems in such a file without running Lean: a small lexer that knows
comments (``--``, nested ``/- -/``, docstrings), strings and brackets splits
the file into top-level commands, and each ``theorem`` / ``lemma`` /
``example`` becomes a `Theorem`.

Rules (what a caller can rely on):

* A command starts at the first token of a line that is a command keyword,
  possibly after a docstring, ``@[...]`` attributes and modifiers
  (``private``, ``protected``, ``noncomputable``, ...). Declaration keywords
  (``theorem``, ``def``, ``inductive``, ``namespace``, ``end``, ...) count at
  any indentation; keywords that are also tactics (``open``, ``set_option``,
  ``attribute``, ...) only at column 0. A command ending in ``in``
  (``open Real in``) belongs to the next one.
* **Preamble.** Every command that is not a theorem is preamble: imports,
  ``open``, ``set_option``, ``namespace`` / ``section`` / ``end``,
  ``variable``, definitions, inductive types, structures, instances,
  attributes, comments. A theorem's preamble is all preamble commands
  *before it* in file order, verbatim; so a definition between two theorems
  is in the preamble of the theorems after it only, and theorems between the
  same two definitions share one preamble string (a Lean backend can reuse
  one elaborated header for all of them). Because ``namespace X`` is kept
  verbatim, the preamble of a theorem inside ``namespace X`` ends inside that
  namespace, exactly as in the file. ``open ... in`` / ``set_option ... in``
  prefixes of a theorem are added to its own preamble without the ``in``.
  Earlier theorems are *not* in later preambles (each theorem is an
  independent problem) unless ``include_theorems=True``; a known proof that
  cites an earlier lemma of the same file needs that option to check.
  ``mutual ... end`` blocks are kept whole as preamble.
* **Names.** ``theorem foo`` inside ``namespace A.B`` is ``A.B.foo``;
  ``_root_.foo`` is ``foo``; an ``example`` is named ``example_<line>``.
* **Statement**: the signature after the name up to the top-level ``:=``
  (one inside brackets, e.g. a default argument, does not count), comments
  removed, original line breaks and indentation kept.
* **Proof**: for ``:= by`` + tactics, the top-level tactics, split by
  indentation: a line at the block's column starts a tactic; more indented
  lines, ``|`` alternatives and ``<;>`` continue it (so ``·`` focused blocks,
  ``case``/``next`` blocks, ``calc`` steps and ``induction ... with`` stay one
  tactic, with their newlines). Each tactic's first line is at column 0 and
  its other lines keep their indentation relative to it. Term proofs and
  proofs that contain ``sorry`` / ``admit`` give ``[]`` (no known proof).

`render_theorem` is the inverse used by the checker and by tracing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.lean.lexer import TokKind
from burnqed_core.lean.lexer import tokenize as lex
from burnqed_core.lean.sandbox import forbidden_words_regex
from burnqed_core.records import Split, Theorem

# Keywords that start a declaration-like command at any indentation.
DECL_KEYWORDS = frozenset({
    "theorem", "lemma", "example", "def", "abbrev", "inductive", "coinductive", "structure", "class",
    "instance", "axiom", "opaque", "namespace", "section", "end", "mutual", "universe", "variable",
    "import", "noncomputable", "deriving",
})
# Keywords that are also tactics (or appear inside terms): a command only at column 0.
COL0_KEYWORDS = frozenset({
    "open", "set_option", "attribute", "export", "macro", "macro_rules", "syntax", "notation", "infix",
    "infixl", "infixr", "prefix", "postfix", "elab", "elab_rules", "initialize", "builtin_initialize",
    "declare_syntax_cat", "add_decl_doc", "local", "scoped", "omit", "include", "register_simp_attr",
    "run_cmd", "assert_not_exists", "suppress_compilation", "alias",
})
MODIFIERS = frozenset({"private", "protected", "noncomputable", "partial", "unsafe", "nonrec", "public", "meta"})
THEOREM_KEYWORDS = frozenset({"theorem", "lemma", "example"})
OPEN_BRACKETS = MappingProxyType({"(": ")", "[": "]", "{": "}", "⟨": "⟩", "⦃": "⦄", "‹": "›", "⁅": "⁆", "⟦": "⟧"})
CLOSE_BRACKETS = frozenset(OPEN_BRACKETS.values())
UNSAFE_PROOF_RE = re.compile(forbidden_words_regex())  # the one list: sandbox.FORBIDDEN_WORDS
BLOCK_ENDERS = ("termination_by", "decreasing_by", "where")


@dataclass(frozen=True)
class Token:
    kind: str  # "ident", "sym", "str", "comment", "doc"
    text: str
    start: int
    end: int
    line: int  # 0-based
    col: int


_KINDS = MappingProxyType({TokKind.IDENT: "ident", TokKind.HASH: "ident", TokKind.STRING: "str",
                           TokKind.COMMENT: "comment", TokKind.DOC: "doc"})
# Multi-character openers of the lexer (`#[1, 2]`, `%[...]`, quotations) close with `]` / `)`.
OPENERS = frozenset(OPEN_BRACKETS) | {"@[", "#[", "%[", "`(", "``("}


def tokenize(text: str) -> list[Token]:
    """Lex Lean source into tokens (whitespace dropped, comments kept): the
    project's one Lean lexer (`burnqed_core.lean.lexer.tokenize`), with
    comments and leniently (an unterminated comment, string or ``«`` runs to
    the end of the file instead of raising: Lean reports it)."""
    return [Token(_KINDS.get(t.kind, "sym"), t.text, t.offset, t.offset + len(t.text), t.line, t.col)
            for t in lex(text, comments=True, strict=False)]


def _blank_comments(text: str, tokens: Sequence[Token]) -> str:
    """The text with every comment replaced by spaces (line breaks kept), so
    that columns stay valid and no comment leaks into a statement or tactic."""
    chars = list(text)
    for t in tokens:
        if t.kind in ("comment", "doc"):
            for k in range(t.start, t.end):
                if chars[k] != "\n":
                    chars[k] = " "
    return "".join(chars)


class ParsedTheorem(BaseModel):
    """A theorem found in a file, with where it was found."""

    model_config = ConfigDict(frozen=True)
    theorem: Theorem
    line: int = Field(description="1-based line of the declaration keyword")
    end_line: int = Field(description="1-based last line of the declaration")
    text: str = Field(description="the declaration as written (docstring and attributes included)")
    keyword: str = Field(description="theorem, lemma or example")


class LeanFile(BaseModel):
    """A parsed Lean file: its preamble and its theorems in file order."""

    model_config = ConfigDict(frozen=True)
    source: str = ""
    preamble: str = Field("", description="the preamble commands before the first theorem (all of them if none)")
    entries: list[ParsedTheorem] = Field(default_factory=list)

    @property
    def theorems(self) -> list[Theorem]:
        return [e.theorem for e in self.entries]

    def line_of(self, name: str) -> int:
        for e in self.entries:
            if e.theorem.name == name:
                return e.line
        raise KeyError(name)


@dataclass
class _Command:
    start: int  # offset in the text (start of its first line when only blanks precede it)
    tokens: list[Token]

    def significant(self) -> list[Token]:
        return [t for t in self.tokens if t.kind not in ("comment", "doc")]


def _skip_attribute(toks: Sequence[Token], k: int) -> int:
    """Index after the ``@[ ... ]`` that starts at ``k``."""
    depth = 1
    k += 1
    while k < len(toks) and depth:
        if toks[k].text in ("[", "@[", "#[", "%["):
            depth += 1
        elif toks[k].text == "]":
            depth -= 1
        k += 1
    return k


def _head(toks: Sequence[Token], k: int = 0) -> int:
    """Index of the head keyword at or after ``k``, past a docstring,
    attributes and modifiers (``len(toks)`` if there is none)."""
    while k < len(toks):
        t = toks[k]
        if t.kind in ("doc", "comment"):
            k += 1
        elif t.text == "@[":
            k = _skip_attribute(toks, k)
        elif t.kind == "ident" and t.text in MODIFIERS and not (
            t.text == "noncomputable" and k + 1 < len(toks) and toks[k + 1].text == "section"
        ):
            k += 1
        else:
            return k
    return k


def _starts_command(tokens: Sequence[Token], idx: int) -> int:
    """If the token ``tokens[idx]`` (first on its line) starts a command, the
    index of the command's head keyword; else -1."""
    first = tokens[idx]
    if first.kind == "comment":
        return -1
    k = _head(tokens, idx)
    if k >= len(tokens) or tokens[k].kind != "ident":
        return -1
    kw = tokens[k].text
    if kw == "deriving":  # `deriving Repr` after an inductive continues it; `deriving instance` is a command
        return k if k + 1 < len(tokens) and tokens[k + 1].text == "instance" else -1
    if kw in DECL_KEYWORDS:
        return k
    if first.col == 0 and (kw in COL0_KEYWORDS or kw.startswith("#")):
        return k
    return -1


def _split_commands(text: str, tokens: list[Token]) -> list[_Command]:
    """Top-level commands of the file, in order; comments before the first
    command form a command of their own (with no head)."""
    starts: list[int] = []
    prev_line = -1
    in_mutual = False
    skip_until = -1
    for idx, t in enumerate(tokens):
        first_on_line = t.line != prev_line
        if t.kind != "comment":
            prev_line = _last_line(t)
        if idx <= skip_until or not first_on_line:
            continue
        k = _starts_command(tokens, idx)
        if k < 0:
            continue
        kw = tokens[k].text
        skip_until = k
        if in_mutual:
            if kw == "end":
                in_mutual = False  # the `end` of a mutual block stays in it
            continue
        in_mutual = kw == "mutual"
        starts.append(idx)
    cmds: list[_Command] = []
    bounds = ([0] if not starts or starts[0] != 0 else []) + starts
    for a, b in zip(bounds, [*bounds[1:], len(tokens)], strict=True):
        if a >= len(tokens):
            continue
        first = tokens[a]
        line_begin = text.rfind("\n", 0, first.start) + 1
        start = line_begin if not text[line_begin:first.start].strip() else first.start
        cmds.append(_Command(start=start if cmds else 0, tokens=tokens[a:b]))
    # `open X in` / `set_option a b in` / `attribute [..] x in` belong to the next command
    merged: list[_Command] = []
    for c in cmds:
        if merged:
            sig = merged[-1].significant()
            if sig and sig[-1].text == "in" and sig[-1].kind == "ident":
                merged[-1] = _Command(merged[-1].start, merged[-1].tokens + c.tokens)
                continue
        merged.append(c)
    return merged


def _last_line(t: Token) -> int:
    return t.line + t.text.count("\n")


def _find_top_level(toks: Sequence[Token], start: int, texts: set[str]) -> int:
    """Index of the first token in ``texts`` outside brackets, or -1. A
    ``:=`` that belongs to a ``let``/``have`` in the statement is skipped."""
    depth = 0
    pending_binds = 0
    for k in range(start, len(toks)):
        s = toks[k].text
        if toks[k].kind == "sym" and s in OPENERS:
            depth += 1
        elif toks[k].kind == "sym" and s in CLOSE_BRACKETS:
            depth = max(depth - 1, 0)
        elif depth == 0 and toks[k].kind == "ident" and s in ("let", "have"):
            pending_binds += 1
        elif depth == 0 and s == ":=" and pending_binds:
            pending_binds -= 1
        elif depth == 0 and s in texts and toks[k].kind in ("sym", "ident"):
            return k
    return -1


def _clean_lines(s: str) -> str:
    lines = [ln.rstrip() for ln in s.split("\n")]
    return "\n".join(ln for ln in lines if ln.strip()).strip()


def _split_tactics(code: str, by_tok: Token, end: int) -> list[str]:
    """Top-level tactics of the ``by`` block that starts after ``by_tok``."""
    body = code[by_tok.end:end]
    lines = body.split("\n")
    by_line_start = code.rfind("\n", 0, by_tok.end) + 1
    first_col = by_tok.end - by_line_start  # column where `lines[0]` begins
    same_line = bool(lines[0].strip())
    entries: list[tuple[int, str]] = []  # (column, text without indentation)
    for i, raw in enumerate(lines):
        if not raw.strip():
            continue
        stripped = raw.lstrip()
        col = len(raw) - len(stripped) + (first_col if i == 0 else 0)
        entries.append((col, stripped.rstrip()))
    if not entries:
        return []
    block_col = entries[0][0]
    tactics: list[list[tuple[int, str]]] = []
    low: list[tuple[int, str]] = []  # same-line `by`: continuation lines left of the block column
    for col, s in entries:
        starts_new = col == block_col and not s.startswith(("|", "<;>", ")", "]", "}", "⟩"))
        if col < block_col:
            if not same_line or s.startswith(BLOCK_ENDERS):
                break
            tactics[-1].append((col, s))
            low.append((col, s))
            continue
        if starts_new or not tactics:
            tactics.append([(col, s)])
        else:
            tactics[-1].append((col, s))
    low_min = min((c for c, _ in low), default=0)
    out = []
    for tac in tactics:
        lines_out = [tac[0][1]]
        for col, s in tac[1:]:
            indent = col - block_col if col >= block_col else 2 + col - low_min
            lines_out.append(" " * indent + s)
        out.append("\n".join(lines_out))
    return out


def _scope_prefix(scopes: Sequence[tuple[str, str]]) -> str:
    parts = [name for kind, name in scopes if kind == "namespace" and name]
    return ".".join(parts)


def _update_scopes(scopes: list[tuple[str, str]], sig: Sequence[Token], head_k: int) -> None:
    """Track ``namespace`` / ``section`` / ``end`` (for full theorem names)."""
    def arg(k: int) -> str:  # the identifier after sig[k], on the same line
        ok = k + 1 < len(sig) and sig[k + 1].kind == "ident" and sig[k + 1].line == sig[k].line
        return sig[k + 1].text if ok else ""

    if head_k >= len(sig):
        return
    kw = sig[head_k].text
    if kw == "noncomputable" and arg(head_k) == "section":
        kw, head_k = "section", head_k + 1
    if kw == "namespace":
        scopes.extend(("namespace", part) for part in arg(head_k).split(".") if part)
    elif kw == "section":
        scopes.append(("section", arg(head_k)))
    elif kw == "end":
        # `end A.B` closes as many scopes as the name has components
        name = arg(head_k)
        for _ in range(len(name.split(".")) if name else 1):
            if scopes:
                scopes.pop()


def parse_lean_file(
    text: str,
    source: str = "",
    split: Split = "train",
    family: str = "",
    include_theorems: bool = False,
) -> LeanFile:
    """Parse Lean source into its preamble and theorems (see the module doc
    for the rules). ``source``, ``split`` and ``family`` are copied into each
    `Theorem`."""
    text = text.replace("\r\n", "\n")
    tokens = tokenize(text)
    code = _blank_comments(text, tokens)
    commands = _split_commands(text, tokens)
    preamble_parts: list[str] = []
    scopes: list[tuple[str, str]] = []
    entries: list[ParsedTheorem] = []
    first_preamble: str | None = None
    for ci, cmd in enumerate(commands):
        end = commands[ci + 1].start if ci + 1 < len(commands) else len(text)
        chunk = text[cmd.start:end]
        sig = cmd.significant()
        head_k, prefixes = _in_prefixes(text, sig)
        kw = sig[head_k].text if head_k < len(sig) else ""
        if kw not in THEOREM_KEYWORDS:
            if sig:
                _update_scopes(scopes, sig, head_k)
            preamble_parts.append(chunk)
            continue
        theorem = _parse_theorem(code, sig, head_k, kw, end, scopes, source, split, family)
        preamble = _with_prefixes("".join(preamble_parts), prefixes)
        if first_preamble is None:
            first_preamble = preamble
        entries.append(ParsedTheorem(
            theorem=theorem.model_copy(update={"preamble": _tidy_preamble(preamble)}),
            line=sig[head_k].line + 1,
            end_line=_last_line(sig[-1]) + 1,
            text=chunk.strip("\n").rstrip(),
            keyword=kw,
        ))
        if include_theorems:
            preamble_parts.append(chunk)
    whole = _tidy_preamble("".join(preamble_parts)) if first_preamble is None else _tidy_preamble(first_preamble)
    return LeanFile(source=source, preamble=whole, entries=entries)


def _in_prefixes(text: str, sig: Sequence[Token]) -> tuple[int, list[str]]:
    """The index in ``sig`` (a command's significant tokens) of its real head, past its ``open X in`` /
    ``set_option a b in`` / ``attribute [..] x in`` / ``#cmd in`` prefixes, and the text of those prefixes, each
    without its ``in``. ``#guard_msgs in`` and other hash-command prefixes are dropped (not preamble text); the
    theorem after them is still a theorem."""
    k = 0
    prefixes: list[str] = []
    while True:
        head_k = _head(sig, k)
        j = _in_prefix_end(sig, head_k)
        if j is None:
            return head_k, prefixes
        if not sig[head_k].text.startswith("#"):
            prefixes.append(text[sig[head_k].start:sig[j].start].rstrip())
        k = j + 1


def _in_prefix_end(sig: Sequence[Token], head_k: int) -> int | None:
    """The index of the top-level ``in`` that ends a prefix (``open``, ``set_option``, ``attribute`` or a hash
    command) whose head is ``sig[head_k]``; None when no prefix starts there (or its ``in`` ends the command)."""
    if head_k < len(sig) and (sig[head_k].text in ("open", "set_option", "attribute")
                              or sig[head_k].text.startswith("#")):
        j = _find_top_level(sig, head_k + 1, {"in"})
        if 0 < j < len(sig) - 1 and sig[j].kind == "ident":
            return j
    return None


def _with_prefixes(preamble: str, prefixes: Sequence[str]) -> str:
    """A theorem's preamble with its ``in`` prefixes (without their ``in``) appended, one a line."""
    if not prefixes:
        return preamble
    return (preamble.rstrip("\n") + "\n" if preamble.strip() else "") + "\n".join(prefixes) + "\n"


def _tidy_preamble(s: str) -> str:
    """Trailing blank space removed, one final newline (empty stays empty)."""
    s = s.rstrip()
    return s + "\n" if s else ""


def _parse_theorem(
    code: str,
    sig: Sequence[Token],
    head_k: int,
    kw: str,
    end: int,
    scopes: Sequence[tuple[str, str]],
    source: str,
    split: Split,
    family: str,
) -> Theorem:
    kw_tok = sig[head_k]
    if kw == "example":
        name = f"example_{kw_tok.line + 1}"
        sig_start = head_k + 1
    else:
        if head_k + 1 >= len(sig) or sig[head_k + 1].kind != "ident":
            from burnqed_core.errors import DataError

            raise DataError(f"{source or '<text>'}:{kw_tok.line + 1}: {kw} without a name")
        name = sig[head_k + 1].text
        sig_start = head_k + 2
    if name.startswith("_root_."):
        name = name[len("_root_."):]
    else:
        prefix = _scope_prefix(scopes)
        name = f"{prefix}.{name}" if prefix else name
    assign = _find_top_level(sig, sig_start, {":="})
    if assign < 0:
        # equation-compiler style (`| 0 => ...`) or `where`: no tactic proof
        stop = _find_top_level(sig, sig_start, {"|", "where"})
        stmt_end = sig[stop].start if stop >= 0 else end
        proof: list[str] = []
    else:
        stmt_end = sig[assign].start
        proof = []
        if assign + 1 < len(sig) and sig[assign + 1].text == "by":
            proof = _split_tactics(code, sig[assign + 1], end)
    stmt_start = sig[sig_start].start if sig_start < len(sig) else stmt_end
    statement = _clean_lines(code[stmt_start:stmt_end]) if stmt_start < stmt_end else ""
    if any(UNSAFE_PROOF_RE.search(t) for t in proof):
        proof = []
    return Theorem(name=name, statement=statement, split=split, source=source, family=family, proof=proof)


def render_tactics(tactics: Sequence[str], indent: int = 2) -> str:
    """Tactics as a ``by`` block body: each line indented by ``indent``
    (continuation lines keep their relative indentation)."""
    pad = " " * indent
    lines: list[str] = []
    for tac in tactics:
        for ln in tac.strip("\n").split("\n"):
            lines.append(pad + ln if ln.strip() else "")
    return "\n".join(lines)


def render_theorem(thm: Theorem, tactics: Sequence[str] | None = None, name: str | None = None) -> str:
    """Lean source of the theorem with a tactic proof (without the preamble):
    ``theorem <name> <statement> := by`` and one tactic per line, indented by
    two spaces. ``tactics`` defaults to the theorem's known proof; an empty
    proof renders as ``sorry`` (a statement-only declaration, e.g. to start a
    proof search; the checker rejects it)."""
    tacs = list(thm.proof if tactics is None else tactics)
    body = render_tactics(tacs) if tacs else "  sorry"
    return f"{thm.declaration(name)} := by\n{body}\n"


def render_file(theorems: Sequence[Theorem], proofs: Sequence[Sequence[str] | None] | None = None) -> str:
    """Several theorems sharing one preamble (that of the first) as one file."""
    if not theorems:
        return ""
    pre = theorems[0].preamble
    parts = [pre.rstrip() + "\n\n"] if pre.strip() else []
    for i, thm in enumerate(theorems):
        parts.append(render_theorem(thm, None if proofs is None else proofs[i]) + "\n")
    return "".join(parts)
