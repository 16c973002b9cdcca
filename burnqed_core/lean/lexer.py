"""The project's one Lean lexer and its one splitter of Lean names.

A light lexer (not Lean's parser: Lean's own parse is the authority wherever a verdict depends on it): tokens
with their kind, offset, line and column, comments and string literals skipped (or kept as tokens), dotted
identifiers with their guillemet-quoted parts. Used strictly by the static rules (`burnqed_core.lean.sandbox`)
and leniently by the file parser (`burnqed_core.data.theorems.lean_file`), the canonical forms
(`burnqed_core.data.twins.canonical`), the look-alike names (`burnqed_core.lean.confusables`) and the file check.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum


class TokKind(StrEnum):
    IDENT = "ident"      # a (dotted) identifier or keyword: `simp`, `Nat.succ`, `decide!`, `«x y»`
    NUMBER = "number"
    STRING = "string"    # string or char literal (content is never inspected)
    NAME = "name"        # a name literal: `` `foo `` or ``` ``foo ```
    HASH = "hash"        # a hash command: `#eval`, `#exit`, `#print`
    SYMBOL = "symbol"    # anything else: `:=`, `(`, `@[`, `<;>`, `⟨` ...
    COMMENT = "comment"  # `-- ...` or `/- ... -/` (only with ``comments=True``)
    DOC = "doc"          # a docstring `/-- ... -/` (only with ``comments=True``)


def name_parts(name: str) -> list[str]:
    """The parts of a dotted name as Lean reads it: ``«one eq two».x`` is ``["one eq two", "x"]`` (a dot inside
    guillemets belongs to its part; the guillemets are not part of it)."""
    parts, cur, quoted = [], [], False
    for ch in name:
        if ch == "«" and not quoted:
            quoted = True
        elif ch == "»" and quoted:
            quoted = False
        elif ch == "." and not quoted:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def plain_name(name: str) -> str:
    """A name as Lean prints it in messages (parts joined by dots, no guillemets)."""
    return ".".join(name_parts(name))


@dataclass(frozen=True)
class Token:
    kind: TokKind
    text: str
    offset: int
    line: int      # 0-based
    col: int       # 0-based, in characters
    line_start: bool  # first token of its line

    @property
    def components(self) -> list[str]:
        """Dotted components of an identifier (``«»`` escapes removed)."""
        if self.kind is not TokKind.IDENT:
            return []
        return name_parts(self.text)


class LexError(ValueError):
    """Unterminated comment or string literal."""


_SUBSCRIPTS = frozenset("₀₁₂₃₄₅₆₇₈₉ₐₑₒₓₔₕₖₗₘₙₚₛₜᵢᵣᵤᵥⱼᵦᵧᵨᵩᵪ")
# Multi-character symbols the rules care about, longest first (`#v[` is core's vector literal, a bracket).
SYMBOLS = ("<;>", ":=", "=>", "@[", "#v[", "#[", "%[", "`(", "``(")


def is_id_first(ch: str) -> bool:
    # Lean's isLetterLike excludes λ, Π and Σ, which are notation.
    return ch == "_" or (ch.isalpha() and ch not in "λΠΣ")


def is_id_rest(ch: str) -> bool:
    return is_id_first(ch) or ch.isdigit() or ch in "'!?" or ch in _SUBSCRIPTS


@dataclass
class _Scan:
    """One pass over a text: where it is, and what an unterminated token does."""

    text: str
    strict: bool

    def unterminated(self, what: str) -> int:
        if self.strict:
            raise LexError(f"unterminated {what}")
        return len(self.text)

    def line_comment(self, i: int) -> int:
        j = self.text.find("\n", i)
        return len(self.text) if j < 0 else j

    def block_comment(self, i: int) -> int:
        text, n = self.text, len(self.text)
        depth, j = 1, i + 2
        while j < n and depth:
            if text.startswith("/-", j):
                depth, j = depth + 1, j + 2
            elif text.startswith("-/", j):
                depth, j = depth - 1, j + 2
            else:
                j += 1
        return self.unterminated("comment `/-`") if depth else j

    def raw_string(self, i: int, hashes: str) -> int:
        close = '"' + hashes
        end = self.text.find(close, i + 2 + len(hashes))
        return self.unterminated("raw string literal") if end < 0 else end + len(close)

    def string(self, i: int) -> int:
        text, n = self.text, len(self.text)
        j = i + 1
        while j < n and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        return self.unterminated("string literal") if j >= n else j + 1

    def number(self, i: int) -> int:
        text, n = self.text, len(self.text)
        while i < n and (text[i].isalnum() or text[i] == "_"):
            i += 1
        if i + 1 < n and text[i] == "." and text[i + 1].isdigit():
            i += 1
            while i < n and text[i].isdigit():
                i += 1
        return i

    def ident(self, i: int) -> int:
        """End of the dotted identifier starting at ``i``."""
        text, n = self.text, len(self.text)
        while True:
            if i < n and text[i] == "«":
                j = text.find("»", i + 1)
                if j < 0:
                    return self.unterminated("`«` identifier")
                i = j + 1
            else:
                while i < n and is_id_rest(text[i]):
                    i += 1
            if i + 1 < n and text[i] == "." and (is_id_first(text[i + 1]) or text[i + 1] == "«"):
                i += 1
                continue
            return i

    def symbol(self, i: int) -> int:
        for sym in SYMBOLS:
            if self.text.startswith(sym, i):
                return i + len(sym)
        return i + 1


_CHAR = re.compile(r"'(\\(u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'\n])'")
_RAW = re.compile(r'r(#*)"')


def _comment(s: _Scan, i: int) -> tuple[TokKind, int] | None:
    text = s.text
    if text.startswith("--", i):
        return TokKind.COMMENT, s.line_comment(i)
    if text.startswith("/-", i):
        doc = text.startswith("/--", i) and not text.startswith("/--/", i)
        return (TokKind.DOC if doc else TokKind.COMMENT), s.block_comment(i)
    return None


def _literal(s: _Scan, i: int) -> tuple[TokKind, int] | None:
    text, ch = s.text, s.text[i]
    if ch == "r" and (m := _RAW.match(text, i, i + 64)):
        return TokKind.STRING, s.raw_string(i, m.group(1))
    if ch == '"':
        return TokKind.STRING, s.string(i)
    if ch == "'":
        m = _CHAR.match(text, i, i + 16)
        return (TokKind.STRING, i + m.end() - i) if m else (TokKind.SYMBOL, i + 1)
    if ch.isdigit():
        return TokKind.NUMBER, s.number(i)
    return None


def _word(s: _Scan, i: int) -> tuple[TokKind, int] | None:
    text, n, ch = s.text, len(s.text), s.text[i]
    if is_id_first(ch) or ch == "«":
        return TokKind.IDENT, s.ident(i)
    if ch == "#" and i + 1 < n and is_id_first(text[i + 1]) and not text.startswith("#v[", i):
        return TokKind.HASH, s.ident(i + 1)
    if ch == "`":
        k = i + 2 if text.startswith("``", i) else i + 1
        if k < n and (is_id_first(text[k]) or text[k] == "«"):
            return TokKind.NAME, s.ident(k)
    return None


_SCANNERS: tuple[Callable[[_Scan, int], tuple[TokKind, int] | None], ...] = (_comment, _literal, _word)


def tokenize(text: str, *, comments: bool = False, strict: bool = True) -> list[Token]:
    """Lex Lean source into tokens, skipping whitespace (and comments unless ``comments``).

    ``strict``: raise `LexError` on an unterminated block comment, string, char literal or ``«`` (in a batched
    document it would swallow what follows); otherwise such a token runs to the end of the text.
    """
    scan = _Scan(text, strict)
    toks: list[Token] = []
    newlines = [m.start() for m in re.finditer("\n", text)]
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        kind, end = next((r for f in _SCANNERS if (r := f(scan, i)) is not None), None) or (
            TokKind.SYMBOL, scan.symbol(i))
        if kind not in (TokKind.COMMENT, TokKind.DOC) or comments:
            line = bisect.bisect_left(newlines, i)
            col = i - (newlines[line - 1] + 1 if line else 0)
            toks.append(Token(kind, text[i:end], i, line, col, not toks or toks[-1].line != line))
        i = end
    return toks
