"""The tactic sandbox and the static proof rules: hostile text is rejected,
legitimate tactics (as models and Mathlib proofs write them) pass."""

from __future__ import annotations

import pytest

from burnqed_core.lean.sandbox import (
    LexError,
    TokKind,
    check_proof_source,
    check_tactic,
    normalize_statement,
    option_problem,
    tokenize,
)

MAX = 2000

LEGITIMATE = [
    "simp [foo] at h ⊢",
    "omega",
    "exact ⟨_, rfl⟩",
    "decide",
    "decide -kernel",
    "rfl",
    "intro n",
    "constructor",
    "exact fun x => x.1",
    "induction n with\n| zero => simp\n| succ n ih => omega",
    "induction n with\n  | zero => rfl\n  | succ k ih =>\n    simp [Nat.succ_eq_add_one]\n    omega",
    "· simp\n  · omega",
    "show 1 = 1 from rfl",
    "have h : 2 = 2 := by omega",
    "have ⟨x, hx⟩ : ∃ x, x = 1 := ⟨1, rfl⟩",
    "calc a = b := by simp\n  _ = c := by omega",
    "conv => lhs; rw [h]",
    "conv at h in x + y => rw [Nat.add_comm]",
    "rcases h with ⟨x, hx'⟩ | h",
    "obtain ⟨k, rfl⟩ := h",
    "cases h <;> simp_all",
    "rw [← Nat.add_comm a b, h₁] at h₂",
    "nlinarith [sq_nonneg (a - b), sq_nonneg (a + b)]",
    "simp only [List.length_cons, List.map] at *",
    "exact absurd h (by decide)",
    "refine ⟨?_, ?_⟩",
    "exact ‹Nat›",
    "apply Finset.sum_congr rfl\nintro x hx",
    "simp [sorry_free, hsorry, no_sorry_lemma]",  # names that merely contain `sorry`
    "exact hIO",                                  # ... or `IO`
    "simp [Nat.ratio_pos, IOish]",
    "rw [Nat.add_comm] -- sorry, admit, #eval, theorem",  # all in a comment
    "/- a /- nested -/ sorry comment -/ simp",
    "simp [show \"sorry\" = \"sorry\" from rfl]",  # string literal contents are not code
    "exact 'a'",
    "open Nat in simp [succ_eq_add_one]",
    "open scoped BigOperators in simp",
    "set_option pp.all true in simp",
    "set_option linter.unusedVariables false in intro x",
    "let f := fun (x : Nat) => x + 1\nsimp [f]",
    "exact #[1, 2].size_pos",
    "generalize h : n + 1 = m",
    "norm_num [Nat.factorial]",
    "exact (by omega : 1 + 1 = 2)",
    "match h with\n| .inl h => exact h\n| .inr h => exact h.elim",
    "simp (config := { decide := true })",
    "interval_cases n <;> simp_all",
    "exact ⌊x⌋₊",
]

HOSTILE = [
    ("sorry", "sorry"),
    ("admit", "admit"),
    ("exact sorryAx _ false", "sorryAx"),
    ("simp\n  stop", "stop"),
    ("native_decide", "native_decide"),
    ("decide +native", "native"),
    ("decide +kernel", "kernel"),
    ("decide (config := { kernel := true })", "kernel"),
    ("decide!", "decide!"),
    ("exact Lean.ofReduceBool _ _ rfl", "ofReduceBool"),
    ("exact of_decide_eq_true (Lean.trustCompiler)", "trustCompiler"),
    ("run_tac Lean.Elab.Tactic.evalTactic (← `(tactic| rfl))", "run_tac"),
    ("run_cmd IO.println 1", "run_cmd"),
    ("run_elab pure ()", "run_elab"),
    ("run_meta pure ()", "run_meta"),
    ("exact by_elab pure (Lean.mkConst ``True.intro)", "by_elab"),
    ("exact eval% 2 + 2", "eval%"),
    ("#eval IO.Process.run {cmd := \"sh\"}", "#eval"),
    ("#exit", "#exit"),
    ("#print axioms foo", "#print"),
    ("simp\n#check Nat", "#check"),
    ("exact (IO.FS.readFile \"/etc/passwd\")", "IO.FS.readFile"),
    ("have := EIO.toIO' x", "EIO"),
    ("exact unsafeBaseIO (pure 1)", "unsafeBaseIO"),
    ("exact unsafeCast x", "unsafeCast"),
    ("exact System.FilePath.mk \"x\"", "System"),
    ("exact Lean.Meta.whnf e", "Lean.Meta"),
    ("open IO in exact println 1", "open IO"),
    ("open Lean Elab in simp", "open Lean"),
    ("set_option maxHeartbeats 0 in simp", "maxHeartbeats"),
    ("set_option maxRecDepth 100000 in simp", "maxRecDepth"),
    ("set_option synthInstance.maxHeartbeats 0 in simp", "synthInstance"),
    ("set_option debug.skipKernelTC true in simp", "debug.skipKernelTC"),
    ("set_option maxHeartbeats 0", "set_option"),
    ("open Nat", "open"),
    ("simp\ntheorem bad : False := sorry", "theorem"),
    ("simp\naxiom bad : False", "axiom"),
    ("rfl\ndef f := 1", "def"),
    ("rfl\n  example : False := sorry", "example"),
    ("simp\n@[simp] theorem x : True := trivial", "@["),
    ("simp\nattribute [simp] foo", "attribute"),
    ("simp\nmacro \"foo\" : tactic => `(tactic| sorry)", "macro"),
    ("simp\nsyntax \"foo\" : tactic", "syntax"),
    ("simp\nelab \"foo\" : tactic => pure ()", "elab"),
    ("simp\nend", "end"),
    ("simp\nnamespace Foo", "namespace"),
    ("simp\nimport Lean", "import"),
    ("simp\ninstance : Inhabited False := sorry", "instance"),
    ("exact aux\nwhere aux : True := trivial", "where"),
    ("simp\nunsafe def f : Nat := 1", "unsafe"),
    ("exact f\n@[implemented_by g] def f := 1", "@["),
    ("exact foo) (bar", ")"),
    ("exact ⟨1, rfl", "⟩"),
    ("simp [h", "]"),
    ("/- comment never closed", "unterminated comment"),
    ("/- /- nested -/ still open", "unterminated comment"),
    ("exact \"abc", "unterminated string"),
    ("simp\x00", "U+0000"),
    ("simp\x1b[2J", "U+001B"),
    ("simp \u202e", "U+202E"),
    ("x" * (MAX + 1), "too long"),
    ("skip\n" * 60 + "simp", "lines"),
    ("", "empty"),
    ("   \n  ", "empty"),
    ("-- only a comment", "empty"),
    ("exact s!\"{IO.println 1}\"", "interpolated"),
]


@pytest.mark.parametrize("tactic", LEGITIMATE)
def test_legitimate_tactics_pass(tactic: str) -> None:
    assert check_tactic(tactic, MAX) is None


@pytest.mark.parametrize(("tactic", "why"), HOSTILE)
def test_hostile_tactics_rejected_with_reason(tactic: str, why: str) -> None:
    reason = check_tactic(tactic, MAX)
    assert reason is not None, tactic
    assert why in reason, (tactic, reason)


def test_max_chars_is_the_callers() -> None:
    assert check_tactic("simp [foo, bar]", 15) is None
    assert check_tactic("simp [foo, bar]", 14) is not None


def test_tokenizer_skips_nested_comments_and_strings() -> None:
    toks = tokenize('a /- x /- y -/ z -/ b -- c\n"s -- t" \'x\' d.e «f g».h `n ``m #eval #[')
    assert [(t.kind, t.text) for t in toks] == [
        (TokKind.IDENT, "a"), (TokKind.IDENT, "b"), (TokKind.STRING, '"s -- t"'), (TokKind.STRING, "'x'"),
        (TokKind.IDENT, "d.e"), (TokKind.IDENT, "«f g».h"), (TokKind.NAME, "`n"), (TokKind.NAME, "``m"),
        (TokKind.HASH, "#eval"), (TokKind.SYMBOL, "#["),
    ]
    assert toks[2].line == 1 and toks[2].col == 0 and toks[2].line_start
    assert toks[5].components == ["f g", "h"]


def test_tokenizer_identifier_rules() -> None:
    toks = tokenize("h' x₁ exact? λ x Σ h.1 r#\"raw \" still\"# '")
    assert [t.text for t in toks] == ["h'", "x₁", "exact?", "λ", "x", "Σ", "h", ".", "1", 'r#"raw " still"#', "'"]


def test_tokenizer_raises_on_unterminated() -> None:
    with pytest.raises(LexError):
        tokenize("/- /- -/")
    with pytest.raises(LexError):
        tokenize('"abc\\"')


def test_option_policy() -> None:
    assert option_problem("pp.all") is None
    assert option_problem("linter.unusedVariables") is None
    assert option_problem("maxHeartbeats") is not None
    assert option_problem("pp") is not None  # only the pp.* family
    assert option_problem("debug.skipKernelTC") is not None


STMT = "(n : Nat) : n + 0 = n"


def test_proof_source_clean() -> None:
    src = "theorem foo (n : Nat) :\n    n + 0 = n := by\n  -- no sorry here\n  simp"
    assert check_proof_source(STMT, src) == []
    assert check_proof_source(STMT, "example (n : Nat) : n + 0 = n := by simp") == []
    assert check_proof_source(STMT, "theorem foo (n : Nat) : n + 0 = n := Nat.add_zero n") == []
    assert check_proof_source(STMT, "open Nat in\ntheorem foo (n : Nat) : n + 0 = n := by simp") == []


@pytest.mark.parametrize(("source", "why"), [
    ("theorem foo (n : Nat) : n + 0 = n := by\n  sorry", "sorry"),
    ("theorem foo (n : Nat) : n + 0 = n := by\n  admit", "admit"),
    ("theorem foo (n : Nat) : n + 0 = n := sorryAx _", "sorryAx"),
    ("theorem foo (n : Nat) : n + 0 = n := by\n  native_decide", "native_decide"),
    ("axiom cheat : False\ntheorem foo (n : Nat) : n + 0 = n := cheat.elim", "axiom"),
    ("theorem foo (n : Nat) : n + 0 = n := by simp\naxiom cheat : False", "axiom"),
    ("theorem foo (n : Nat) : n + 0 = n := by simp\n@[implemented_by g] def f := 1", "@["),
    ("theorem foo (n : Nat) : n + 0 = n := by simp\nattribute [csimp] foo", "csimp"),
    ("theorem foo (n : Nat) : n + 0 = n := by simp\nunsafe def f : Nat := 1", "unsafe"),
    ("theorem foo (n : Nat) : n + 0 = n := by simp\n@[extern \"f\"] opaque f : Nat", "extern"),
    ("set_option maxHeartbeats 0 in\ntheorem foo (n : Nat) : n + 0 = n := by simp", "maxHeartbeats"),
    ("set_option debug.skipKernelTC true in\ntheorem foo (n : Nat) : n + 0 = n := by simp", "skipKernelTC"),
    ("theorem foo (n : Nat) : n + 0 = n := by\n  set_option maxRecDepth 99999 in simp", "maxRecDepth"),
    ("theorem foo (n : Nat) : n + 0 = n := by simp\n#exit", "#exit"),
    ("theorem foo (n : Nat) : n + 1 = n + 1 := rfl", "statement differs"),
    ("theorem foo (n : Nat) : n + 0 = n ∨ True := by simp", "statement differs"),
    ("theorem foo (n : Int) : n + 0 = n := by simp", "statement differs"),
    ("theorem foo : True := trivial", "statement differs"),
    ("def foo (n : Nat) : n + 0 = n := by simp", "does not start with a theorem"),
    ("open Nat\ntheorem foo (n : Nat) : n + 0 = n := by simp", "`open` without `in`"),
    ("theorem foo (n : Nat) : n + 0 = n := by\n  /- unclosed", "unterminated"),
])
def test_proof_source_problems(source: str, why: str) -> None:
    problems = check_proof_source(STMT, source)
    assert any(why in p for p in problems), (source, problems)


def test_proof_source_comment_sorry_is_fine_code_sorry_is_not() -> None:
    assert check_proof_source(STMT, "theorem t (n : Nat) : n + 0 = n := by\n  simp -- sorry") == []
    assert check_proof_source(STMT, "theorem t (n : Nat) : n + 0 = n := by\n  /- sorry -/ simp") == []
    assert check_proof_source(STMT, "theorem t (n : Nat) : n + 0 = n := by\n  simp; sorry") != []


def test_statement_comparison_ignores_whitespace_and_comments() -> None:
    assert normalize_statement("(n : Nat) :\n   n + 0 = n") == normalize_statement("(n : Nat) : n  +  0 = n -- c")
    assert normalize_statement("(n : Nat) : n + 0 = n") != normalize_statement("(n : Nat) : 0 + n = n")
    # a `let` inside the statement has its own `:=`; the comparison is token by token, not "up to :="
    stmt = ": let x := 1; x = 1"
    assert check_proof_source(stmt, "theorem t : let x := 1; x = 1 := by intro x; rfl") == []
    assert check_proof_source(stmt, "theorem t : let x := 2; x = 2 := by intro x; rfl") != []


# --- issue 16: what Lean reads, not what the text looks like ------------------------------------------------

LINE_TERMINATOR_ESCAPES = [
    "skip\u2028theorem t : False := sorry",
    "skip\u2029axiom t : False",
    "skip\u0085#exit",
    "skip\rtheorem t : False := sorry",
    "skip\x0btheorem t : False := sorry",
    "skip\x0ctheorem t : False := sorry",
    "skip\x1ctheorem t : False := sorry",
    "skip\ufeff",
    "skip\u200b",
]


@pytest.mark.parametrize("tactic", LINE_TERMINATOR_ESCAPES)
def test_every_line_terminator_and_control_character_is_rejected(tactic: str) -> None:
    assert check_tactic(tactic, MAX) is not None


GUILLEMET_AND_CONFIG_SPELLINGS = [
    "«native_decide»",
    "exact «Lean».«ofReduceBool» _ _ rfl",
    "exact Lean.«ofReduceBool» _ _ rfl",
    "exact «sorryAx» False",
    "decide +«native»",
    "decide (config := ⟨true, true, true, true⟩)",
    "decide (config := Lean.Parser.Tactic.DecideConfig.mk true true true true)",
    "decide (config := { «native» := true })",
    "decide (native := true)",
    "set_option «maxHeartbeats» 0 in simp",
    "set_option warn.sorry false in sorry",
    "exact «False.elim",  # unterminated guillemet: a lexer error
]


@pytest.mark.parametrize("tactic", GUILLEMET_AND_CONFIG_SPELLINGS)
def test_spellings_lean_reads_the_same_are_rejected(tactic: str) -> None:
    assert check_tactic(tactic, MAX) is not None


def test_unterminated_guillemet_is_a_lexer_error() -> None:
    with pytest.raises(LexError):
        tokenize("exact «foo")


def test_normalize_source_and_source_problems() -> None:
    from burnqed_core.lean.sandbox import normalize_source, source_problems

    assert normalize_source("a\r\nb") == "a\nb"
    assert source_problems("theorem x : 2 + 2 = 4 := by native_decide")
    assert source_problems("@[implemented_by f] def g : Nat := 1")
    assert source_problems("theorem x : 2 + 2 = 4 := of_decide_eq_true (Lean.«ofReduceBool» _ _ rfl)")
    assert source_problems("unsafe def g : Nat := 1")
    assert source_problems("def g : Nat := /- unterminated")
    assert source_problems("theorem x (a b : Nat) : a + b = b + a := by omega") == []


def test_checker_leaves_are_classified() -> None:
    """As the exported-level library reports them: imported theorems look like
    axioms, so an imported leaf counts only when the library's sources declare
    it an axiom; local axioms, unsafe and unknown constants always count."""
    from burnqed_core.lean.checker import axiom_problems
    from burnqed_core.lean.types import Elaboration
    from burnqed_core.lean.verdicts import leaf_axioms

    leaves = leaf_axioms(["I:propext", "I:Classical.em", "L:cheat", "I:Lean.ofReduceBool", "I:Nat.eq_of_beq_eq_true",
                          "I:sorryAx", "U:lcProof", "U:some.unknown_unsafe", "I:lcCast", "N:gone", "F:fuel"])
    assert leaves == ["propext", "local:cheat", "Lean.ofReduceBool", "sorryAx", "unsafe:lcProof",
                      "unsafe:some.unknown_unsafe", "lcCast", "unknown:gone", "unfinished:F:fuel"]
    for bad in (["unsafe:some.unknown_unsafe"], ["lcCast"], ["propext", "unsafe:lcProof"], ["unknown:gone"]):
        assert axiom_problems("t", Elaboration(axioms={"t": bad}))
    assert axiom_problems("t", Elaboration(axioms={"t": ["propext", "Quot.sound"]})) == []
    assert axiom_problems("t", Elaboration(axioms={"t": []}, rejected={"t": "kernel"})) == ["kernel"]


def test_checker_report_is_read_only_from_this_calls_nonce() -> None:
    """The answer is netstrings after the call's nonce: a message without the
    nonce, a text posing as a field, a verdict for a name not asked, or a cut
    report is refused."""
    import pytest

    from burnqed_core.lean.judge import ReportError, judge_command, lean_string, parse_report
    from burnqed_core.lean.verdicts import statement_notes

    def nets(*fields: str) -> str:
        return "".join(f"{len(f)}:{f}" for f in fields)

    nonce = "burnqed-abc"
    good = nonce + nets("v2", "X", "1", "D", "0", "ok", "2", "I:propext", "L:x", "M", "warning", "3", "2", "4", "0",
                        "has 4:D0:ok inside", "S", "0", "1", "⊢ True", "S", "1", "none", "R", "commands x", "end")
    rep = parse_report(good, nonce, ["t"])
    assert rep.complete and rep.verdicts["t"].leaves == ["I:propext", "L:x"]
    assert rep.messages[0].text == "has 4:D0:ok inside" and rep.messages[0].line == 3
    assert rep.messages[0].end_line == 4 and rep.states == {0: ["⊢ True"], 1: None}
    assert rep.ran_code == ["commands x"] and not rep.unsafe_code
    for bad in (good.replace(nonce, "burnqed-xyz"), good[:-6], nonce + nets("v2", "D", "1", "ok", "0", "end"),
                nonce + nets("v2", "D", "0", "ok", "0", "D", "0", "ok", "0", "end"), nonce + "3:v2x",
                nonce + nets("v1", "end"), nonce + nets("v2", "S", "0", "none", "S", "0", "none", "end"),
                nonce + nets("v2", "M", "error", "x", "0", "0", "0", "t", "end")):
        with pytest.raises(ReportError):
            parse_report(bad, "burnqed-abc" if bad.startswith("burnqed-abc") else nonce, ["t"])
    # Notes on a statement's meaning travel as W fields, for asked names only.
    flagged = parse_report(nonce + nets("v2", "X", "1", "D", "0", "ok", "0", "W", "0", "variables",
                                        "W", "0", "instance evil of Add", "W", "0", "renaming add → Nat.mul",
                                        "W", "0", "shadow Foo.Nat Nat", "W", "0", "meta m", "end"), nonce, ["t"])
    assert flagged.flags["t"][:2] == ["variables", "instance evil of Add"]
    notes = statement_notes(flagged.flags["t"])
    assert "`variable`" in notes[0] and "`evil`" in notes[1] and "`Add`" in notes[1]
    assert "renaming add → Nat.mul" in notes[2] and "`Foo.Nat`" in notes[3] and "`Nat`" in notes[3]
    assert "macros" in notes[4]
    with pytest.raises(ReportError):
        parse_report(nonce + nets("v2", "W", "3", "variables", "end"), nonce, ["t"])
    # Mode "list": the names are the listed declarations', in order, once each.
    listed = parse_report(nonce + nets("v2", "X", "1", "T", "0", "a", "theorem", "1", "0", "0", "0", "0", "True",
                                       "T", "1", "example_2", "example", "1", "1", "0", "1", "1", "1 = 1",
                                       "D", "1", "ok", "0", "end"), nonce, None)
    assert [d.name for d in listed.declared] == ["a", "example_2"] and listed.declared[1].statement == "1 = 1"
    assert listed.verdicts["example_2"].status == "ok" and "a" not in listed.verdicts
    for bad in (nets("v2", "T", "1", "a", "theorem", "1", "0", "0", "0", "0", "True", "end"),
                nets("v2", "T", "0", "a", "theorem", "1", "0", "0", "0", "0", "True",
                     "T", "1", "a", "theorem", "1", "0", "0", "0", "0", "True", "end")):
        with pytest.raises(ReportError):
            parse_report(nonce + bad, nonce, None)
    with pytest.raises(ReportError):  # a listed declaration in a report of named ones
        parse_report(nonce + nets("v2", "T", "0", "a", "theorem", "1", "0", "0", "0", "0", "True", "end"), nonce,
                     ["t"])
    # Untrusted text travels as one string literal, whatever it holds.
    lit = lean_string('a"b\\c\n\u2028\x00«»')
    assert lit.startswith('"') and lit.endswith('"') and "\n" not in lit[1:-1].replace("\\n", "")
    assert "\\u2028" in lit and "\\x00" in lit and '\\"' in lit and "\u2028" not in lit
    cmd = judge_command(nonce, "def d := 1", "", "theorem t : True := trivial\n#exit", ["t", "A.b c", "«one eq two»"],
                        positions=[(1, 2)])
    assert cmd.count("\n") == 1 and cmd.endswith(" 1 2 t A.«b c» «one eq two»\n")


def test_step_reports_of_a_batch_document() -> None:
    """The goal readers' answers: one per block, netstrings after the document's nonce; a block that
    answers twice (or badly) has none."""
    from burnqed_core.lean.judge import parse_step_reports

    def nets(*fields: str) -> str:
        return "".join(f"{len(f)}:{f}" for f in fields)

    n = "burnqed-n"
    msgs = [n + nets("v2", "0", "ok", "1", "⊢ False", "open", "", "0", "end"),
            n + nets("v2", "1", "ok", "0", "ok", "", "1", "I:propext", "end"),
            n + nets("v2", "2", "ok", "0", "kernel", "the kernel rejects x", "0", "end"),
            n + nets("v2", "3", "ok", "0", "ok", "", "0", "end"), n + nets("v2", "3", "ok", "0", "ok", "", "0", "end"),
            n + nets("v2", "4", "ok", "2", "⊢ a", "end"), "burnqed-other" + nets("v2", "5", "ok", "0", "ok", "", "0",
                                                                                  "end"), "no nonce"]
    reps = parse_step_reports(msgs, n)
    assert reps[0] is not None and reps[0].goals == ["⊢ False"] and reps[0].verdict == "open"
    assert reps[1] is not None and reps[1].leaves == ["I:propext"] and reps[1].goals == []
    assert reps[2] is not None and reps[2].verdict == "kernel"
    assert reps[3] is None and 4 not in reps and 5 not in reps


def test_lean_identifiers_keep_guillemet_names() -> None:
    """A name written with guillemets (`«one eq two»`) is one part: it is written back as such, compared
    without its guillemets, and a name that cannot be written is a ValueError (a FAIL line, not a crash)."""
    import pytest

    from burnqed_core.lean.judge import lean_ident
    from burnqed_core.lean.lexer import name_parts, plain_name

    assert name_parts("«one eq two»") == ["one eq two"] and lean_ident("«one eq two»") == "«one eq two»"
    assert name_parts("A.«b.c».d") == ["A", "b.c", "d"] and plain_name("A.«b c»") == "A.b c"
    assert lean_ident("Foo.one eq two") == "Foo.«one eq two»" and lean_ident("℘x") == "℘x"
    for bad in ("a..b", "«a«b»»", "x\ny"):
        with pytest.raises(ValueError):
            lean_ident(bad)


def test_worker_header_loads_the_checker_from_one_string() -> None:
    """The header: judge.lean up to its load marker as it is, the rest as the
    literal of one `burnqed_load` command (decoding it gives the source back),
    the namespace closed outside it, then each extra trusted source as one more
    `burnqed_load` (its imports hoisted), then the public section."""
    import ast

    import pytest

    from burnqed_core.lean.judge import JUDGE_SOURCE, LOAD_MARKER, NAMESPACE_END, SECTION, worker_header

    header = worker_header(extra=[])
    head = JUDGE_SOURCE.split(LOAD_MARKER)[0]
    assert header.startswith(head) and header.endswith(f"\n{NAMESPACE_END}\n{SECTION}")
    load = header[len(head):].split("\n")[0]
    assert load.startswith("burnqed_load \"") and load.endswith('"')
    body = ast.literal_eval(load[len("burnqed_load "):])  # the escapes used are Python's too
    assert body.strip() and body.strip() in JUDGE_SOURCE and "elabJudge" in body and NAMESPACE_END not in body
    for broken in (JUDGE_SOURCE.replace(LOAD_MARKER, "-- no marker"), JUDGE_SOURCE.replace(NAMESPACE_END, "end")):
        with pytest.raises(ValueError):
            worker_header(broken)
    extra = "module\npublic meta import Lean.Elab.Command\n\nnamespace Lib\ndef x := 1\nend Lib\n"
    with_extra = worker_header(extra=[extra])
    assert "public meta import Lean.Elab.Command\n" in with_extra.split("burnqed_load")[0]
    tail = with_extra.split(f"\n{NAMESPACE_END}\n", 1)[1]
    assert tail.startswith("burnqed_load ") and tail.endswith(SECTION)
    assert ast.literal_eval(tail.split("\n")[0][len("burnqed_load "):]) == "namespace Lib\ndef x := 1\nend Lib"


def test_batch_parse_problem_from_lean_symbols() -> None:
    from burnqed_core.lean.embedded import HEADER, build_document, parse_problem
    from burnqed_core.lean.lsp import Symbol

    text, blocks = build_document("def d := 1", [(": True", ["trivial"]), (": 1 = 1", ["rfl"])], "burnqed-n")
    assert text.startswith(HEADER)
    text = text[len(HEADER):]
    assert text.count("example ") == 2 and "theorem" not in text
    # each candidate nested under the goal reader, nothing after it in its block
    assert '  burnqed_step "burnqed-n" 0\n    trivial\n\n' in text and '  burnqed_step "burnqed-n" 1\n    rfl\n' in text
    ok = [Symbol("d", 12, blocks[0].decl_line - 2, blocks[0].decl_line - 2, 10)]
    ok += [Symbol("example", 12, b.decl_line, b.end_line, 6) for b in blocks]
    assert parse_problem(blocks, ok) is None
    extra = [*ok, Symbol("cheat", 12, blocks[0].end_line, blocks[0].end_line, 5)]
    assert parse_problem(blocks, extra) is not None


def test_lean_check_lines_come_from_lean_and_refuse_a_disagreeing_parser() -> None:
    """`burnqed lean check` prints the theorems Lean listed, with Lean's statement; errors are attributed
    to a theorem by its command's lines; a file where the file parser and Lean disagree (names or keyword
    lines) gets a FAIL <file> line; an unreadable file for the parser is a FAIL line, not a crash."""
    from burnqed_core.cli.lean import check_report, parser_disagreement
    from burnqed_core.lean.types import DeclaredTheorem, Diagnostic, Elaboration

    text = "theorem a : True := trivial\ntheorem «one eq two» : 1 = 2 := by decide\n"
    thms = [DeclaredTheorem(name="a", kind="theorem", found=True, line=0, column=0, start_line=0, end_line=0,
                            statement="True"),
            DeclaredTheorem(name="one eq two", kind="theorem", found=True, line=1, column=0, start_line=1,
                            end_line=1, statement="1 = 2")]
    elab = Elaboration(diagnostics=[Diagnostic(severity=1, line=1, end_line=1, message="decide failed")],
                       axioms={"a": [], "one eq two": ["sorryAx"]}, complete=True, theorems=thms)
    lines, ok, total = check_report(text, elab)
    assert lines == ["ok a : True", "FAIL one eq two: decide failed"] and (ok, total) == (1, 2)
    # Lean lists a theorem the parser does not see (a command after a term), or the other way round
    assert parser_disagreement("theorem a : True := trivial theorem b : True := trivial\n",
                               [thms[0], DeclaredTheorem(name="b", kind="theorem", found=True, line=0, column=28,
                                                         start_line=0, end_line=0, statement="True")])
    assert parser_disagreement(text, thms[:1]) is not None
    assert parser_disagreement(text, thms) is None
    # a letter-like start the parser cannot read: a disagreement, not a crash
    weird = "theorem ℘foo : True := trivial\n"
    why = parser_disagreement(weird, [DeclaredTheorem(name="℘foo", kind="theorem", found=True, line=0, column=0,
                                                      start_line=0, end_line=0, statement="True")])
    assert why is not None
    lines, _, _ = check_report(weird, Elaboration(complete=True, axioms={"℘foo": []}, theorems=[
        DeclaredTheorem(name="℘foo", kind="theorem", found=True, line=0, column=0, start_line=0, end_line=0,
                        statement="True")]))
    assert lines[0].startswith("FAIL <file>: ") and "ok ℘foo : True" in lines
    # no list from the checker: one FAIL line
    assert check_report(text, Elaboration())[0][0].startswith("FAIL <file>")
