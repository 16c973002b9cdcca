"""Static rules for untrusted Lean text: tactics before they reach Lean, and
whole proofs before they are accepted.

Tactics come from a language model. Lean tactics and terms can run arbitrary
code at elaboration time (``run_tac``, ``#eval``, ``by_elab``,
``native_decide`` compiles and runs code), change resource limits
(``set_option maxHeartbeats 0 in``), or leave the proof and start new
commands (a ``theorem`` or ``axiom`` after the proof, an unbalanced bracket
that makes Lean's error recovery resume at the next command keyword, an
unterminated comment that swallows the rest of a batched document). Every
such tactic is rejected here, before Lean sees it.

The rules work on tokens of a light Lean lexer, not on substrings: comments
and string literals are skipped (``-- sorry`` is harmless, ``sorry`` is not;
nested ``/- /- -/ -/`` is one comment), and names are matched by their dotted
components, so ``simp [Nat.sorry_free]`` or ``h_IO`` pass while ``IO.Process``
or ``Lean.ofReduceBool`` do not.

Decisions (each a rule below):

* ``sorry``, ``admit``, ``stop`` (= ``repeat sorry``) and the axiom
  ``sorryAx`` are rejected; longer names that merely contain them
  (``sorry_lemma``, ``hsorry``) pass.
* a name with a component ``IO``/``EIO``/``BaseIO``, a first component
  ``System``, or a component starting with ``unsafe`` (``unsafeBaseIO``,
  ``unsafeCast``) is rejected; ``Lean.Elab``/``Lean.Meta``/``Lean.Compiler``
  and ``evalExpr``/``evalConst`` (the meta level, only useful to code that
  is then run) too. ``hIO``, ``IOish``, ``Nat.ratio`` pass.
* command keywords (``theorem``, ``def``, ``axiom``, ``end``, ``macro``,
  ``@[`` ...) are rejected anywhere in a tactic, not only at column 0: after a
  parse error Lean resumes at the next command keyword wherever it stands.
  ``open ... in`` and ``set_option ... in`` are tactic combinators and pass
  when ``in`` follows on the same line (``open`` of ``IO``/``Lean``/
  ``System`` is rejected; ``set_option`` only for the harmless options of
  `ALLOWED_OPTION_PREFIXES`, never for limits such as ``maxHeartbeats``).
* ``decide +kernel``, ``decide +native``, ``decide!``, ``(kernel := true)``
  and ``Lean.ofReduceBool``/``trustCompiler`` are rejected (they trust the
  compiler or skip elaboration checks); plain ``decide`` passes.
* brackets must balance and comments/strings must close.
"""

from __future__ import annotations

import re
import unicodedata
from types import MappingProxyType

from burnqed_core.lean.lexer import LexError, Token, TokKind, tokenize

MAX_TACTIC_LINES = 50


# --- the rules ---------------------------------------------------------------

SORRY_NAMES = frozenset({"sorry", "admit", "sorryAx", "stop", "cheat"})
NATIVE_NAMES = frozenset({
    "native_decide", "decide!", "ofReduceBool", "ofReduceNat", "reduceBool", "trustCompiler",
})
# THE list of words that make a proof not count: the static rules, the file
# parser (a proof using one is no known proof) and the training-data filter
# (`burnqed_core.data.pairs.prepare`) all use it.
FORBIDDEN_WORDS = SORRY_NAMES | NATIVE_NAMES


def forbidden_words_regex() -> str:
    """`FORBIDDEN_WORDS` as a whole-word regex (no look-around, so that
    polars' Rust regex engine accepts it too)."""
    parts = [re.escape(w) + (r"\b" if w[-1].isalnum() or w[-1] == "_" else "") for w in sorted(FORBIDDEN_WORDS)]
    return r"\b(?:" + "|".join(parts) + ")"
CODE_RUNNERS = frozenset({
    "run_tac", "run_cmd", "run_elab", "run_meta", "by_elab", "evalExpr", "evalConst",
    "implemented_by", "extern", "csimp",
})
IO_COMPONENTS = frozenset({"IO", "EIO", "BaseIO"})
META_PREFIXES = (("Lean", "Elab"), ("Lean", "Meta"), ("Lean", "Compiler"), ("Lean", "IR"), ("Lean", "Environment"))
OPEN_FORBIDDEN = frozenset({"IO", "EIO", "BaseIO", "System", "Lean"})
COMMAND_KEYWORDS = frozenset({
    "theorem", "lemma", "def", "axiom", "axioms", "example", "instance", "abbrev", "structure", "inductive",
    "coinductive", "class", "mutual", "namespace", "section", "end", "universe", "variable", "import", "export",
    "attribute", "macro", "macro_rules", "syntax", "elab", "elab_rules", "notation", "infix", "infixl", "infixr",
    "prefix", "postfix", "declare_syntax_cat", "initialize", "builtin_initialize", "noncomputable", "private",
    "protected", "nonrec", "deriving", "omit", "include", "add_decl_doc", "where", "termination_by",
    "decreasing_by", "register_simp_attr", "register_option", "declare_config_elab", "partial", "opaque",
    "unsafe",
})
# `set_option NAME` is allowed only for options that change neither limits nor
# checks: pretty-printing and linters (messages only) and auto-bound implicits.
ALLOWED_OPTION_PREFIXES = ("pp.", "linter.", "autoImplicit", "relaxedAutoImplicit", "push_neg.", "simprocs")
_OPENERS = MappingProxyType({"(": ")", "[": "]", "{": "}", "⟨": "⟩", "⦃": "⦄", "‹": "›", "⟦": "⟧", "⌊": "⌋", "⌈": "⌉",
                             "@[": "]", "#v[": "]", "#[": "]", "%[": "]", "`(": ")", "``(": ")"})
_CLOSERS = frozenset(_OPENERS.values())


def option_problem(name: str) -> str | None:
    """Why ``set_option name`` is not allowed in untrusted text, or None."""
    if any(name.startswith(p) if p.endswith(".") else name == p for p in ALLOWED_OPTION_PREFIXES):
        return None
    return f"set_option {name} is not allowed (it can change limits or checks)"


def _name_problem(tok: Token) -> str | None:
    """The rule a single identifier breaks, if any."""
    comps = tok.components
    if comps in (["sorry"], ["admit"], ["cheat"]) or "sorryAx" in comps:
        return f"`{tok.text}` leaves the proof unfinished"
    for c in comps:
        if c in NATIVE_NAMES:
            return f"`{tok.text}` trusts compiled code instead of the kernel"
        if c in CODE_RUNNERS:
            return f"`{tok.text}` can run or replace arbitrary code"
        if c in IO_COMPONENTS or c.startswith("unsafe"):
            return f"`{tok.text}` reaches IO or unsafe code"
    if comps and comps[0] == "System" and comps[:2] != ["System", "Platform"]:
        # (`System.Platform.numBits_eq` and its kin are facts about the platform, not actions.)
        return f"`{tok.text}` reaches the system (IO)"
    if any(tuple(comps[: len(p)]) == p for p in META_PREFIXES):
        return f"`{tok.text}` reaches Lean's meta level"
    return None


# What may precede the `stop` tactic (`repeat sorry` for the rest of the block), and what never follows it:
# elsewhere `stop` is a name like any other (`(start stop : Nat)`, `stop + 1`).
_TACTIC_BEFORE = frozenset({"by", ";", "<;>", "·", ".", "=>", "then", "else", "do", "try", "repeat", "focus",
                            "all_goals", "any_goals", "first", "|", "(", "{", "⟨"})
_NOT_AFTER_TACTIC = frozenset({":", ",", ":=", "+", "-", "*", "/", "%", "^", "≤", "<", "≥", ">", "=", "≠", "∣",
                               "∧", "∨", "→", "↔", "::", "++", "∈", "∉", "⊆", "∘", "•", "|>", "<|", "|>.", "$"})


def _stop_problem(toks: list[Token], k: int) -> str | None:
    """``stop`` at toks[k] when it stands where a tactic starts (first of its
    line or after a tactic separator) and nothing that continues a term
    follows: a first filter only (Lean's own check refuses the `sorry` it
    leaves either way)."""
    t = toks[k]
    if t.components != ["stop"]:
        return None
    prev = toks[k - 1].text if k > 0 else None
    nxt = toks[k + 1] if k + 1 < len(toks) else None
    where = prev is None or t.line_start or prev in _TACTIC_BEFORE
    if not where or (nxt is not None and nxt.line == t.line and nxt.text in _NOT_AFTER_TACTIC):
        return None
    if prev == "(" and nxt is not None and nxt.kind is TokKind.IDENT and nxt.line == t.line:
        return None  # `(stop start : Nat)`: a binder
    return "`stop` discards the rest of the proof (it is `repeat sorry`)"


def _bracket_problem(toks: list[Token]) -> str | None:
    stack: list[str] = []
    for t in toks:
        if t.kind is not TokKind.SYMBOL:
            continue
        if t.text in _OPENERS:
            stack.append(_OPENERS[t.text])
        elif t.text in _CLOSERS and (not stack or stack.pop() != t.text):
            return f"unbalanced `{t.text}` (line {t.line + 1})"
    if stack:
        return f"unclosed bracket: `{stack[-1]}` expected"
    return None


def _combinator_problem(toks: list[Token], k: int) -> str | None:
    """``open ... in`` / ``set_option ... in`` at toks[k]: allowed as a tactic
    combinator when ``in`` follows on the same line and the target is harmless."""
    head = toks[k]
    rest: list[Token] = []
    for t in toks[k + 1:]:
        if t.line != head.line:
            break
        rest.append(t)
        if t.text == "in":
            break
    if not rest or rest[-1].text != "in":
        return f"`{head.text}` without `in` starts a new command"
    args = rest[:-1]
    if head.text == "set_option":
        if len(args) != 2 or args[0].kind is not TokKind.IDENT:
            return "malformed `set_option ... in`"
        return option_problem(".".join(args[0].components))
    for t in args:
        if t.kind is TokKind.IDENT and t.components[0] in OPEN_FORBIDDEN:
            return f"`open {t.text}` reaches IO or Lean's meta level"
    return None


def _kernel_flag_problem(toks: list[Token], k: int) -> str | None:
    """Configuration that makes ``decide`` (or any tactic) trust compiled
    code or skip checks, in every spelling Lean reads the same way:
    ``+native``/``+kernel``, ``+«native»``, ``(native := true)``,
    ``(config := { native := true })``, ``(config := ⟨...⟩)`` / positional
    ``DecideConfig.mk`` arguments (anonymous constructors cannot be checked
    field by field, so they are refused)."""
    t = toks[k]
    comps = t.components
    if not comps:
        return None
    last = comps[-1]
    prev = toks[k - 1].text if k > 0 else ""
    nxt = toks[k + 1].text if k + 1 < len(toks) else ""
    if last in ("kernel", "native") and (prev == "+" or nxt == ":="):
        return f"`{prev if prev == '+' else ''}{t.text}` option trusts compiled code or skips checks"
    if any(c in ("DecideConfig", "Config") for c in comps) and ("Decide" in t.text or "decide" in t.text):
        return f"`{t.text}`: decide's configuration is not allowed"
    if last == "config" and nxt == ":=":
        after = toks[k + 2] if k + 2 < len(toks) else None
        if after is None or after.text != "{":
            return "`config :=` must be a structure instance `{ field := value }`"
    return None


def _token_problems(toks: list[Token], *, allow_leading_decl: bool) -> list[str]:
    """Problems of a token stream. ``allow_leading_decl``: the first command
    keyword (``theorem``/``lemma``/``example``) is the declaration checked."""
    problems: list[str] = []
    for k, t in enumerate(toks):
        if t.kind is TokKind.HASH:
            problems.append(f"`{t.text}` is a command (commands are not allowed)")
        elif t.kind is TokKind.SYMBOL and t.text == "@[":
            problems.append("`@[` attributes start a new declaration")
        elif t.kind is TokKind.IDENT:
            if t.text in ("open", "set_option"):
                p = _combinator_problem(toks, k)
            elif t.text in COMMAND_KEYWORDS:
                if allow_leading_decl and k == 0 and t.text in DECL_KEYWORDS:
                    continue
                p = ("`axiom` declares a new axiom" if t.text in ("axiom", "axioms")
                     else f"`{t.text}` starts a new command (a proof must not leave its declaration)")
            elif t.text == "eval" and k + 1 < len(toks) and toks[k + 1].text == "%" \
                    and toks[k + 1].offset == t.offset + 4:
                p = "`eval%` runs code at elaboration time"
            else:
                p = _name_problem(t) or _stop_problem(toks, k) or _kernel_flag_problem(toks, k)
            if p:
                problems.append(p)
        elif t.kind is TokKind.NAME:
            # `` `IO.println `` names are only useful to meta code.
            p = _name_problem(Token(TokKind.IDENT, t.text.lstrip("`"), t.offset, t.line, t.col, t.line_start))
            if p:
                problems.append(p)
    p = _bracket_problem(toks)
    if p:
        problems.append(p)
    return problems


# Characters Python's `str.splitlines` breaks lines on, besides "\n": Lean
# does not (for Lean they are not even whitespace), so text holding them
# would be laid out differently by us and by Lean.
LINE_BREAKS = "\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"


def normalize_source(text: str) -> str:
    """Trusted source (a user's file, a preamble) as Lean reads it: CRLF is
    one line break for Lean (the server normalises it), so it becomes
    ``\n``; nothing else changes. Untrusted text is not normalised but
    rejected (`control_char_problem`) if it holds any other line break."""
    return text.replace("\r\n", "\n")


def control_char_problem(text: str) -> str | None:
    """Why text must not reach Lean because of a character in it: every
    line break but ``\n`` (``\r``, ``\v``, ``\f``, U+0085, U+2028, U+2029
    ...), every other control or format character (bidi overrides, BOM,
    zero-width), surrogates, private-use and unassigned code points. Tabs
    are left to Lean (an error there)."""
    for ch in text:
        if ch in "\n\t":
            continue
        if ch in LINE_BREAKS:
            return f"line terminator U+{ord(ch):04X} (Lean does not break lines there)"
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            return f"control character U+{ord(ch):04X}"
    return None


_control_char_problem = control_char_problem


def check_tactic(tactic: str, max_chars: int) -> str | None:
    """Why an untrusted tactic must not reach Lean, or None if it may.

    ``tactic`` is one tactic as the model wrote it (it may span lines: the
    caller indents continuation lines into the proof block).
    """
    if not tactic.strip():
        return "empty tactic"
    if len(tactic) > max_chars:
        return f"too long: {len(tactic)} characters (max {max_chars})"
    if tactic.count("\n") + 1 > MAX_TACTIC_LINES:
        return f"too long: {tactic.count(chr(10)) + 1} lines (max {MAX_TACTIC_LINES})"
    p = _control_char_problem(tactic)
    if p:
        return p
    try:
        toks = tokenize(tactic)
    except LexError as e:
        return str(e)
    if not toks:
        return "empty tactic (only comments)"
    for k, t in enumerate(toks[:-1]):
        # s!"..{code}.." / m!".." interpolate code that the lexer does not inspect.
        if t.kind is TokKind.IDENT and t.text.endswith("!") and toks[k + 1].kind is TokKind.STRING \
                and toks[k + 1].offset == t.offset + len(t.text):
            return f"interpolated string `{t.text}\"...\"` is not allowed"
    problems = _token_problems(toks, allow_leading_decl=False)
    return problems[0] if problems else None


DECL_KEYWORDS = frozenset({"theorem", "lemma", "example"})


def normalize_statement(text: str) -> str:
    """A statement as its tokens joined by single spaces: whitespace and
    comments do not matter when statements are compared."""
    return " ".join(t.text for t in tokenize(text))


def check_proof_source(statement_expected: str, source: str) -> list[str]:
    """Static problems of a complete proof, [] if none.

    ``source`` is the declaration with its proof as it will be elaborated
    after the theorem's preamble (``theorem name <statement> := by ...``; the
    preamble is trusted data and is not part of it). ``statement_expected`` is
    `Theorem.statement`; the declaration must state exactly that (compared
    token by token, so whitespace and comments are ignored).
    """
    problems: list[str] = []
    p = _control_char_problem(source)
    if p:
        problems.append(p)
    try:
        toks = tokenize(source)
        expected = [t.text for t in tokenize(statement_expected)]
    except LexError as e:
        return [*problems, str(e)]
    # `open ... in` / `set_option ... in` may prefix the declaration.
    k = 0
    while k < len(toks) and toks[k].text in ("open", "set_option"):
        j = k + 1
        while j < len(toks) and toks[j].text != "in" and toks[j].line == toks[k].line:
            j += 1
        if j >= len(toks) or toks[j].text != "in":
            break  # not a combinator: reported by the token rules below
        k = j + 1
    decl = toks[k:]
    problems.extend(_token_problems(toks[:k], allow_leading_decl=False))
    problems.extend(_token_problems(decl, allow_leading_decl=True))
    if not decl or decl[0].text not in DECL_KEYWORDS:
        problems.append("the source does not start with a theorem declaration")
    else:
        body = decl[1:] if decl[0].text == "example" else decl[2:]
        stated = [t.text for t in body[: len(expected)]]
        follows = body[len(expected)].text if len(body) > len(expected) else ""
        if stated != expected or follows != ":=":
            got_end = next((i for i, t in enumerate(body) if t.text == ":=" and i >= len(expected)), len(body))
            got = " ".join(t.text for t in body[: max(got_end, 0)])
            problems.append(f"statement differs from the one asked: got `{got[:200]}`, expected "
                            f"`{' '.join(expected)[:200]}`")
    return list(dict.fromkeys(problems))


def source_problems(text: str) -> list[str]:
    """Forbidden words in one declaration of a user's file (any form:
    ``theorem``, ``def``, ``instance``, ``abbrev`` ..., with any modifiers and
    attributes): the name rules of `check_tactic` (``sorry``, ``native_decide``
    and ``«native_decide»``, ``implemented_by``, ``extern``, ``unsafe``, IO,
    the meta level) and the kernel/native configuration forms. Command
    keywords are allowed here (the text is a declaration); a lexer error
    (unterminated comment, string or ``«``) is a problem."""
    try:
        toks = tokenize(text)
    except LexError as e:
        return [str(e)]
    problems: list[str] = []
    for k, t in enumerate(toks):
        p: str | None = None
        if t.kind is TokKind.IDENT:
            p = _name_problem(t) or _stop_problem(toks, k) or _kernel_flag_problem(toks, k)
        elif t.kind is TokKind.NAME:
            p = _name_problem(Token(TokKind.IDENT, t.text.lstrip("`"), t.offset, t.line, t.col, t.line_start))
        if p:
            problems.append(p)
    return list(dict.fromkeys(problems))
