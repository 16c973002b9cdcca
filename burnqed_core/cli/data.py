"""`burnqed data ...` commands: prepare a training set, describe data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from burnqed_core.cli.common import ProfileOpt, VerboseOpt, load
from burnqed_core.errors import DataError

if TYPE_CHECKING:
    from collections.abc import Callable

    from burnqed_core.config import DataConfig, Profile
    from burnqed_core.data.pairs.prepare import PairStats, PreparedPairs, TheoremSplit
    from burnqed_core.data.theorems.core_pool import PoolBuild, PoolRules, SplitRules

    # (split, build, pool sample) -> the line of that split's baselines (`_baseline_lookup`)
    BaselineLookup = Callable[[str, PoolBuild, int], str]

app = typer.Typer(help="Prepare training data and describe theorem sets and tactic pairs.", no_args_is_help=True)


def _hist(h: dict[int, int] | dict[str, int]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in h.items()) or "-"


@app.command()
def prepare(
    pairs: Annotated[list[Path], typer.Option("--pairs", help="tactic pairs: Parquet/JSONL records or a LeanDojo "
                                              "split .json / directory (repeat for several)")],
    out: Annotated[Path, typer.Option("--out", help="output directory (train.parquet, val.parquet, stats.json)")],
    trajectories: Annotated[list[Path] | None, typer.Option(
        "--trajectories", help="trajectory Parquet files of earlier iterations (repeat for several)")] = None,
    iteration: Annotated[int, typer.Option("--iteration", min=0, help="N > 0 mixes in positive trajectory steps "
                                           "of iterations < N")] = 0,
    tokenizer: Annotated[Path | None, typer.Option(
        "--tokenizer", help="tokenizer dir for the length filter (default: a character estimate)")] = None,
    split: Annotated[Path | None, typer.Option(
        "--split", help="a theorem split drawn before pre-training (split.json of the loop's base_model) to reuse "
        "instead of drawing one")] = None,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Filter, dedup and split tactic pairs by theorem name; for N > 0 mix in
    the proofs found by earlier searches (settings: the profile's ``data``)."""
    from burnqed_core.data.pairs.prepare import hf_token_counter, load_pairs, prepare_pairs, read_split, write_prepared

    cfg = load(profile, verbose).data
    if trajectories and iteration == 0:
        raise DataError("--trajectories are mixed in from --iteration 1 on (iteration 0 trains on the base pairs)")
    counter = hf_token_counter(tokenizer) if tokenizer else None
    theorem_split = read_split(split) if split else None
    prepared = prepare_pairs(load_pairs(pairs), cfg.val_fraction, cfg.seed, cfg.max_tokens, counter, progress=True,
                             val_theorems=theorem_split.val if theorem_split else None)
    _echo_pair_stats(prepared.stats)
    extra: dict[str, object] = {"iteration": iteration, "pair_files": [str(p) for p in pairs]}
    if iteration > 0:
        prepared, mixed = _mix_trajectories(prepared, trajectories or [], iteration, cfg, theorem_split)
        extra |= mixed
    paths = write_prepared(prepared, out, extra=extra)
    typer.echo(f"wrote {paths['train']}, {paths['val']}, {paths['stats']}")


def _echo_pair_stats(s: PairStats) -> None:
    """What the filters dropped, the split by theorem and the depths of the prepared pairs."""
    typer.echo(f"pairs: {s.pairs_in} in, {s.theorems_in} theorems; dropped {s.unsafe_pairs} of {s.unsafe_theorems} "
               f"theorems with sorry/admit/cheat/native_decide, {s.duplicate_pairs} duplicate, "
               f"{s.too_long_pairs} over {s.max_tokens} tokens, {s.empty_pairs} empty")
    typer.echo(f"split by theorem: train {s.train_pairs} pairs / {s.train_theorems} theorems, "
               f"val {s.val_pairs} pairs / {s.val_theorems} theorems")
    typer.echo(f"depth: {_hist(s.depth_histogram)}")


def _mix_trajectories(prepared: PreparedPairs, trajectories: list[Path], iteration: int, cfg: DataConfig,
                      theorem_split: TheoremSplit | None) -> tuple[PreparedPairs, dict[str, object]]:
    """The prepared pairs of iteration ``iteration`` > 0: the base pairs mixed with the positive steps of the
    ``trajectories`` records of earlier iterations, and what the stats file records about the mix."""
    from burnqed_core.data.pairs.mixing import mix_iteration, positive_steps
    from burnqed_core.data.pairs.prepare import PreparedPairs
    from burnqed_core.record_io import read_records
    from burnqed_core.records import TrajectoryRecord

    steps = []
    skipped = 0
    for f in trajectories:
        recs = read_records(f, TrajectoryRecord)
        earlier = [r for r in recs if r.iteration < iteration]
        skipped += len(recs) - len(earlier)
        steps.extend(positive_steps(earlier, source=f"trajectory:{f.name}"))
    if not trajectories:
        typer.echo(f"warning: iteration {iteration} without --trajectories: base subsample only", err=True)
    if skipped:
        typer.echo(f"warning: skipped {skipped} trajectory records of iteration >= {iteration}", err=True)
    mix = mix_iteration(prepared, steps, cfg.base_subsample, cfg.trajectory_upsample, cfg.seed,
                        max_share=cfg.trajectory_max_share, split=theorem_split)
    m = mix.stats
    typer.echo(f"mix: base {m.base_train_used}/{m.base_train_available} + trajectory steps "
               f"{m.trajectory_steps_train} x{m.effective_upsample:.2f} (at most x{m.trajectory_upsample}, "
               f"share cap {m.trajectory_max_share:.0%}) = {m.train_rows} train rows "
               f"({m.trajectory_fraction:.1%} trajectory); val {m.val_rows} "
               f"(+{m.trajectory_steps_val} trajectory steps)")
    mixed = PreparedPairs(train=mix.train, val=mix.val, stats=prepared.stats)
    return mixed, {"trajectory_files": [str(p) for p in trajectories], "mix": m.model_dump()}


@app.command()
def stats(
    theorems: Annotated[list[str] | None, typer.Option(
        "--theorems", help="theorem set: bundled:<name>, .jsonl, .parquet, .lean, a directory or a LeanDojo "
        "split (repeat for several; default: the profile's corpus and benchmark)")] = None,
    pairs: Annotated[list[Path] | None, typer.Option("--pairs", help="tactic pair file (repeat for several)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object instead of text")] = False,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Theorem counts per set, split and family, proof-length and depth
    distributions, and hard/easy counts where an automation map exists."""
    from burnqed_core.data.pairs.prepare import load_pairs, pair_set_stats
    from burnqed_core.data.theorems.load import automation_map, load_theorems, theorem_set_stats

    cfg = load(profile, verbose).data
    specs = list(theorems or [])
    if not specs and not pairs:
        specs = [cfg.corpus, cfg.benchmark]
    report: dict[str, dict[str, object]] = {"theorems": {}, "pairs": {}}
    for spec in specs:
        st = theorem_set_stats(load_theorems(spec), automation_map(spec))
        report["theorems"][spec] = st.model_dump(mode="json")
        if as_json:
            continue
        typer.echo(f"{spec}: {st.theorems} theorems")
        typer.echo(f"  split: {_hist(st.by_split)}")
        typer.echo(f"  family: {_hist(st.by_family)}")
        typer.echo(f"  proof length: {_hist(st.proof_length_histogram)}")
        if st.hard is not None:
            typer.echo(f"  hard (no single automation tactic closes it): {st.hard}, easy: {st.easy}"
                       + (f", unmeasured: {st.unmeasured}" if st.unmeasured else ""))
            typer.echo(f"  closed by: {_hist(st.closed_by)}")
            typer.echo(f"  hard by family: {_hist(st.hard_by_family)}")
    for p in pairs or []:
        ps = pair_set_stats(load_pairs([p]))
        report["pairs"][str(p)] = json.loads(json.dumps(ps))
        if as_json:
            continue
        typer.echo(f"{p}: {ps['pairs']} pairs, {ps['theorems']} theorems, {ps['unsafe_pairs']} unsafe")
        typer.echo(f"  depth: {_hist(ps['depth_histogram'])}")  # type: ignore[arg-type]
        typer.echo(f"  proof length: {_hist(ps['proof_length_histogram'])}")  # type: ignore[arg-type]
    if as_json:
        typer.echo(json.dumps(report, indent=1))


@app.command()
def similarity(
    sets: Annotated[list[str], typer.Argument(
        help="theorem sets (bundled:test, bundled:handwritten, a .lean file ...)")],
    corpus: Annotated[str, typer.Option("--corpus", help="the training corpus")] = "bundled:corpus",
    exclude: Annotated[list[str] | None, typer.Option(
        "--exclude", help="corpus families left out (a profile's data.exclude_families; repeat for several)")] = None,
    show_all: Annotated[bool, typer.Option("--all", help="list every near-twin and every unseen theorem")] = False,
) -> None:
    """Each set's similarity block against the corpus (and how close the corpus's families are to each other)."""
    from burnqed_core.data.theorems.load import load_theorems
    from burnqed_core.data.twins.similarity import similarity_lines

    left_out = set(exclude or [])
    theorems = [t for t in load_theorems(corpus) if t.family not in left_out]
    typer.echo("\n".join(similarity_lines(corpus, theorems, [(spec, load_theorems(spec)) for spec in sets],
                                          show_all)))


@app.command("core-pool")
def core_pool(
    out: Annotated[Path | None, typer.Option("--out", help="write pool.jsonl, dev.jsonl, test.jsonl and build.json "
                                             "here (burnqed_core/data/sets/core: the bundled core:* sets)")] = None,
    max_size: Annotated[int | None, typer.Option("--max-size", min=1, help="largest statement kept, in nodes of its "
                                                 "type (default: the pool rules')")] = None,
    seed: Annotated[int, typer.Option("--seed", help="the seed of the held-out families' draw")] = 0,
    pool_sample: Annotated[int, typer.Option("--pool-sample", min=1, help="the pool's baselines are read on a "
                                             "fixed sample of this many theorems (`burnqed lean baseline "
                                             "core:pool --sample N`)")] = 300,
    scans: Annotated[Path | None, typer.Option("--scans", help="build from the scans saved by --save-scans "
                                               "instead of reading the library with Lean (the same Lean)")] = None,
    save_scans: Annotated[Path | None, typer.Option("--save-scans", help="save what Lean read (every module's "
                                                    "theorems up to --max-size, and the import graph) as JSON")
                          ] = None,
    resplit_dir: Annotated[Path | None, typer.Option("--resplit", help="no Lean, no scans: apply the near-twin "
                                                     "rules again to the sets written in this directory (every "
                                                     "theorem keeps its split; twins of a more held-out split are "
                                                     "dropped, clusters merged); --scans sees more (module doc)")
                           ] = None,
    profile: ProfileOpt = "core",
    verbose: VerboseOpt = False,
) -> None:
    """Lean's own library as a theorem pool: enumerate the theorems of the installed Init and Std modules with
    the embedded Lean, hold out whole module families as core:test and core:dev (seeded, before any result), and
    print the counts per family and the share of each split that each baseline closes (where measured)."""
    from burnqed_core.data.theorems.core_pool import PoolRules, SplitRules, write_pool

    prof = load(profile, verbose)
    rules = PoolRules() if max_size is None else PoolRules(max_size=max_size)
    split_rules = SplitRules(seed=seed)
    if resplit_dir is not None:
        if scans is not None or save_scans is not None:
            raise DataError("--resplit reads written sets: not with --scans or --save-scans")
        build, lookup = _resplit_pool(prof, resplit_dir)
    else:
        build, lookup = _build_pool(prof, rules, split_rules, scans, save_scans)
    _echo_pool(build, lookup, pool_sample)
    if out is not None:
        paths = write_pool(build, out)
        typer.echo("wrote " + ", ".join(str(p) for p in paths.values()))


def _resplit_pool(prof: Profile, resplit_dir: Path) -> tuple[PoolBuild, BaselineLookup]:
    """The sets written in ``resplit_dir`` with the near-twin rules applied again (no Lean), and the baselines'
    lookup (`_baseline_lookup`)."""
    import asyncio

    from burnqed_core.data.theorems.core_pool import read_build, resplit

    build = resplit(read_build(resplit_dir))
    return build, asyncio.run(_baseline_lookup(prof, None))


def _build_pool(prof: Profile, rules: PoolRules, split_rules: SplitRules, scans: Path | None,
                save_scans: Path | None) -> tuple[PoolBuild, BaselineLookup]:
    """The pool built from the library's modules, read with one embedded Lean worker (or from ``scans``, saved
    by an earlier run; the scans saved to ``save_scans``), and the baselines' lookup (`_baseline_lookup`)."""
    import asyncio

    from tqdm import tqdm

    from burnqed_core.data.theorems.core_pool import build_pool, read_scans, save_scans_file, scan_library
    from burnqed_core.lean.library import SCAN_TIMEOUT_S
    from burnqed_core.lean.pool import LeanPool

    # one worker; a document that reads a large module takes minutes, far above a tactic's request timeout
    cfg = prof.lean.model_copy(update={"num_workers": 1, "embedded": prof.lean.embedded.model_copy(
        update={"request_timeout_s": SCAN_TIMEOUT_S})})

    async def run():  # type: ignore[no-untyped-def]
        if scans is not None:  # no Lean: what an earlier run read
            read, graph = read_scans(scans)
            return read, graph, await _baseline_lookup(prof, None)
        async with LeanPool(cfg) as pool:
            typer.echo("reading the library's modules with the embedded Lean ...")
            with tqdm(desc="modules", unit="module") as bar:
                read, graph = await scan_library(pool, rules, progress=bar)
            return read, graph, await _baseline_lookup(prof, pool)

    read, graph, lookup = asyncio.run(run())
    if save_scans is not None:
        typer.echo(f"wrote {save_scans_file(read, graph, save_scans)}")
    return build_pool(read, graph, rules, split_rules), lookup


def _echo_pool(build: PoolBuild, lookup: BaselineLookup, pool_sample: int) -> None:
    """What the build left out, its families and splits, and each split's baselines (``lookup``)."""
    typer.echo(f"{build.modules_scanned} modules scanned; left out: "
               + ", ".join(f"{k} {v}" for k, v in build.excluded.items()))
    if build.modules_unread:
        typer.echo(f"warning: {len(build.modules_unread)} modules could not be read (no answer from Lean): "
                   + ", ".join(build.modules_unread), err=True)
    typer.echo(f"{'family':32} {'split':5} {'modules':>7} {'theorems':>8} {'kept':>6} {'clusters':>8}")
    for f in build.families:
        if f.kept:
            typer.echo(f"{f.family:32} {f.split:5} {f.modules:7d} {f.enumerated:8d} {f.kept:6d} {f.clusters:8d}")
    for split, c in build.counts().items():
        typer.echo(f"core:{split}: {c['theorems']} theorems, {c['families']} families, {c['modules']} modules, "
                   f"{c['clusters']} clusters")
    for split in ("pool", "dev", "test"):
        typer.echo(f"core:{split} baselines: {lookup(split, build, pool_sample)}")

async def _baseline_lookup(prof, pool):  # type: ignore[no-untyped-def]
    """A function (split, build, pool sample) -> the line of the baselines measured on that split (shipped beside
    the bundled sets or cached), read only: measuring is `burnqed lean baseline core:<split> --eval-baselines
    --structural`."""
    from burnqed_core.data.theorems.core_pool import CORE_DIR, split_theorems
    from burnqed_core.eval.baselines.measure import baseline_key, read_cached
    from burnqed_core.eval.baselines.structural import read_cached as read_structural
    from burnqed_core.eval.baselines.structural import structural_key
    from burnqed_core.search.job import lean_version

    version = lean_version(prof, pool)
    cache = prof.paths.baselines_dir()

    def line(split: str, build, pool_sample: int) -> str:  # type: ignore[no-untyped-def]
        thms = split_theorems(build, split, pool_sample)
        n = len(thms)
        key = baseline_key(thms, version, prof.lean.tactic_timeout_s)
        ab = next((b for d in (cache, CORE_DIR) if (b := read_cached(d, key)) is not None), None)
        on_set = prof.model_copy(update={"data": prof.data.model_copy(update={"benchmark": f"core:{split}"})})
        skey = structural_key(thms, on_set, version)
        c = next((b for d in (cache, CORE_DIR) if (b := read_structural(d, skey)) is not None), None)
        parts = []
        if ab is None:
            parts.append("(a), (b) not measured")
        else:
            a = sum(v is not None for v in ab.single.values())
            b = sum(v is not None for v in ab.defaware.values())
            parts.append(f"(a) {a}/{n} ({a / n:.1%}), (b) {b}/{n} ({b / n:.1%})")
        if c is None:
            parts.append("(c) not measured")
        else:
            k = sum(v is not None for v in c.nodes.values())
            parts.append(f"(c) {k}/{n} ({k / n:.1%}) at {c.budget} nodes")
        where = f" on a fixed sample of {n}" if split == "pool" else ""
        return "; ".join(parts) + where + (f" (measure: burnqed lean baseline core:{split}"
                                            f"{f' --sample {n}' if split == 'pool' else ''} --eval-baselines "
                                            f"--structural -p {prof.name})" if ab is None or c is None else "")

    return line
