"""The installed ``burnqed`` command: burnqed_core's commands plus ``burnqed loop``.

``burnqed loop`` materialises the pipeline's assets in this process against
a persistent Dagster instance (``DAGSTER_HOME``, default
``<work_dir>/dagster``), so a run started here shows in ``dagster dev`` with
its metadata: the shared base assets once, then for each iteration (added
as a partition in numeric order) every stage from tactic pairs to the eval
report. A stage whose inputs and settings did not change since it last ran
is skipped cheaply; a changed one is recomputed.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from burnqed_core.cli import app
from burnqed_core.cli import main as core_main
from burnqed_core.cli.common import ProfileOpt, VerboseOpt, load
from burnqed_core.config import Profile
from burnqed_core.errors import BurnqedError
from burnqed_core.loop.stages import SPECS
from burnqed_pipeline.deploy.cli import app as deploy_app
from burnqed_pipeline.transfer import transfer

REPO_DAGSTER_YAML = Path(__file__).resolve().parent.parent / "dagster.yaml"
# the order ``burnqed loop`` materialises: the stage specs' (inputs first)
ITERATION_ORDER = tuple(s.name for s in SPECS if s.partitioned)
BASE_ORDER = tuple(s.name for s in SPECS if not s.partitioned)


def parse_iterations(text: str) -> list[int]:
    try:
        its = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise BurnqedError(f"--iterations: expected comma-separated integers, got {text!r}") from None
    if not its or its != sorted(set(its)) or its[0] < 0:
        raise BurnqedError(f"--iterations must be distinct non-negative integers in increasing order, got {its}")
    return its


def dagster_home(work_dir: Path) -> Path:
    """``DAGSTER_HOME`` if set, else ``<work_dir>/dagster`` (created, with the repository's dagster.yaml)."""
    home = Path(os.environ.get("DAGSTER_HOME") or (Path(work_dir).resolve() / "dagster"))
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists() and REPO_DAGSTER_YAML.is_file():
        shutil.copyfile(REPO_DAGSTER_YAML, home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    return home


INTERRUPT_ERRORS = frozenset({"DagsterExecutionInterruptedError", "KeyboardInterrupt", "SearchInterrupted",
                              "EvalInterrupted"})
"""Error classes of a step stopped by SIGINT/SIGTERM (Dagster's own, or a search that caught the signal)."""


class RunInterrupted(BurnqedError):
    """SIGINT/SIGTERM stopped a stage of an in-process run: the command stops as well (it does not go on to
    the next iteration or fold); a rerun continues from the finished stages."""

    exit_code = 130


def _interrupted(result: Any) -> bool:
    """Whether a failed in-process run was stopped by a signal rather than by an error of a stage."""
    for ev in result.all_events:
        if ev.is_step_failure:
            err = ev.event_specific_data.error
            while err is not None:
                if err.cls_name in INTERRUPT_ERRORS:
                    return True
                err = err.cause
        elif ev.is_run_failure and "interrupted" in (ev.message or "").lower():
            return True
    return False


def _failure(result: Any) -> str:
    """The user-facing message of a failed in-process run: the stage and its error."""
    for ev in result.all_events:
        if ev.is_step_failure:
            err = ev.event_specific_data.error
            while err.cause is not None:
                err = err.cause
            return f"{ev.step_key}: {err.message.strip()}"
    return "the run failed (see the Dagster UI for its logs)"


def _echo_stage(echo: Callable[[str], None], key: str, partition: str | None, md: dict[str, Any]) -> None:
    def val(name: str) -> Any:
        v = md.get(name)
        return getattr(v, "value", getattr(v, "text", v))

    where = f"iter {partition} " if partition is not None else ""
    when = "unchanged inputs, skipped" if val("skipped") else f"{float(val('seconds') or 0):.1f} s"
    summary = str(val("summary") or md.get("summary") or "").strip().strip("`").strip()
    head = f"[{where}{key}] ({when})"
    if "\n" in summary:
        echo(head)
        for line in summary.splitlines():
            echo("    " + line)
    else:
        echo(f"{head} {summary}")


def carried_stages(profile: Profile, names: set[str]) -> set[str]:
    """The stages whose outputs of earlier iterations the stages ``names`` read (their specs' ``previous`` and
    ``earlier``): an iteration that stops early must still materialise these for the iterations after it."""
    out: set[str] = set()
    for spec in SPECS:
        if spec.name not in names:
            continue
        if spec.previous is not None and (asset := spec.previous(profile)):
            out.add(asset)
        if spec.earlier is not None:
            out.add(spec.earlier)
    return out


def materialize_stages(
    instance: Any,
    resources: dict[str, Any],
    iterations: Sequence[int],
    echo: Callable[[str], None] = print,
    log_level: str = "INFO",
    until: str | None = None,
    last_until: str | None = None,
) -> list[str]:
    """Materialise the base assets, then each iteration's assets in order (adding its partition first); with
    ``until``, only that stage of each iteration and the iteration's stages it needs, plus what the later
    iterations' selected stages read from it (`carried_stages`: iteration 1's tactic pairs read iteration 0's
    trajectories); with ``last_until``, the last iteration stops there instead. Prints what each stage did;
    returns the iterations run. Raises `BurnqedError` naming the failed stage (`RunInterrupted` when a signal
    stopped it)."""
    import dagster as dg

    from burnqed_pipeline.definitions import defs
    from burnqed_pipeline.defs.partitions import add_iteration
    from burnqed_pipeline.stage import COMMAND_TAG

    definitions = defs()
    graph = definitions.resolve_asset_graph()
    assets = list(definitions.assets or [])
    run_config = {"loggers": {"console": {"config": {"log_level": log_level}}}}
    known = {k.to_user_string() for k in graph.get_all_asset_keys()}

    for flag, stage in (("--until", until), ("--last-until", last_until)):
        if stage is not None and stage not in ITERATION_ORDER:
            raise BurnqedError(f"{flag}: {stage!r} is not a stage of an iteration ({', '.join(ITERATION_ORDER)})")

    def selected(stops: Sequence[str] | None) -> Any:
        selection = dg.AssetSelection.groups("iteration")
        if stops is not None:  # the stages and those of the group they need
            selection = selection & dg.AssetSelection.assets(*stops).upstream()
        return selection

    def run(group: str, order: Sequence[str], partition: str | None, selection: Any = None) -> None:
        selection = selection if selection is not None else dg.AssetSelection.groups(group)
        result = dg.materialize(assets, instance=instance, resources=resources, partition_key=partition,
                                selection=selection, run_config=run_config,
                                raise_on_error=False, tags={COMMAND_TAG: "loop"})
        mats = {}
        for ev in result.get_asset_materialization_events():
            m = ev.event_specific_data.materialization
            mats[m.asset_key.to_user_string()] = dict(m.metadata)
        for key in order:
            if key in mats:
                _echo_stage(echo, key, partition, mats[key])
        if not result.success:
            where = f"{'iteration ' + partition if partition else 'base'} run {result.run_id[:8]}"
            if _interrupted(result):
                raise RunInterrupted(f"{where} interrupted at {_failure(result)}; run the command again to continue")
            raise BurnqedError(f"{where} failed at {_failure(result)}")

    # each iteration's stop stages, from the last back: what a later iteration's selection reads of an earlier
    # one is selected there too
    profile = resources["profile"].load() if "profile" in resources else None
    plans: dict[int, Any] = {}
    carried: set[str] = set()
    for n in reversed(list(iterations)):
        stop = last_until if last_until is not None and n == iterations[-1] else until
        stops = None if stop is None else sorted({stop, *carried})
        plans[n] = selected(stops)
        names = {k.to_user_string() for k in plans[n].resolve(graph)}
        carried |= carried_stages(profile, names) if profile is not None else set()
    run("base", [k for k in BASE_ORDER if k in known], None)
    out = []
    for n in iterations:
        if add_iteration(instance, n):
            echo(f"added partition iteration={n}")
        run("iteration", [k for k in ITERATION_ORDER if k in known], str(n), plans[n])
        out.append(n)
    return [str(n) for n in out]


def loop(
    iterations: Annotated[str, typer.Option("--iterations", "-i", help="comma-separated iterations, in order")] = "0,1",
    work_dir: Annotated[Path | None, typer.Option("--work-dir", help="outputs (default: paths.work_dir)")] = None,
    profile: ProfileOpt = "tiny",
    until: Annotated[str | None, typer.Option(
        "--until", help="stop each iteration after this stage and the stages it needs, plus what later "
                        "iterations read from it (e.g. eval_report with --iterations 0: no trajectories; with "
                        "0,1: iteration 0's trajectories, which iteration 1 trains on)")] = None,
    last_until: Annotated[str | None, typer.Option(
        "--last-until", help="stop the last iteration after this stage and the stages it needs instead (e.g. "
                             "eval_report: its trajectories, which only the next iteration reads, are left to the "
                             "run of that one)")] = None,
    verbose: VerboseOpt = False,
) -> None:
    """Run the Dagster pipeline in this process: the base assets (traced corpus, base model, automation
    baselines), then for each iteration tactic pairs, LoRA adapter, merged model, (embeddings, EBM),
    search trajectories and the eval report; ends with the eval comparison across iterations.

    Runs are recorded in the Dagster instance at DAGSTER_HOME (default <work-dir>/dagster): `dagster dev`
    shows them. Stages whose inputs did not change are skipped, so a re-run continues an interrupted loop."""
    from dagster import DagsterInstance

    from burnqed_core.eval.report import SUMMARY_FILE, format_comparison, read_summary
    from burnqed_core.eval.steps import eval_set_specs, set_out
    from burnqed_core.loop.layout import BaseLayout
    from burnqed_core.loop.markers import is_done
    from burnqed_pipeline.defs.resources import LeanResource, PolicyResource, ProfileResource, close_kept
    from burnqed_pipeline.recovery import recover_dead_runs

    its = parse_iterations(iterations)
    prof = load(profile, verbose)
    wd = Path(work_dir) if work_dir is not None else Path(prof.paths.work_dir)
    home = dagster_home(wd)
    typer.echo(f"burnqed loop: profile {prof.name}, iterations {its}, outputs in {wd}, Dagster instance {home}")
    res_profile = ProfileResource(profile=str(prof.source or profile), work_dir=str(wd))
    # one process runs every run of the loop (base, then each iteration): it keeps its Lean pool from run to
    # run instead of starting one per run (the embedded Lean takes ~20-30 s to start)
    resources = {"profile": res_profile, "lean": LeanResource(profile=res_profile, keep=True),
                 "policy": PolicyResource(profile=res_profile, launch=os.environ.get("BURNQED_SGLANG_LAUNCH") == "1")}
    with DagsterInstance.get() as instance:
        for line in recover_dead_runs(instance):  # an earlier loop killed mid-run still holds the gpu slot
            typer.echo(line)
        try:
            materialize_stages(instance, resources, its, echo=typer.echo, log_level="DEBUG" if verbose else "INFO",
                               until=until, last_until=last_until)
        finally:
            close_kept()
    layout = BaseLayout(root=wd)
    done = [n for n in range(max(its) + 1) if is_done(layout.iteration(n).eval)]  # earlier runs' too
    for spec in eval_set_specs(prof):  # data.benchmark, then each set of eval.also
        dirs = [set_out(layout.iteration(n).eval, prof, spec) for n in done]
        typer.echo(f"\n{spec}:")
        typer.echo(format_comparison([read_summary(d) for d in dirs if (d / SUMMARY_FILE).is_file()]))
    typer.echo(f"\nSee the runs in the UI: DAGSTER_HOME={home} dagster dev -h 127.0.0.1 (README: Use the Dagster UI)")


def recover(
    work_dir: Annotated[Path | None, typer.Option("--work-dir", help="outputs (default: paths.work_dir)")] = None,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Mark runs whose process is gone (killed or preempted: they stay STARTED and keep their gpu pool slot)
    as failed and free their slots. Run it on the box that ran them, after a restart; then re-execute them
    from failure in the UI, or let run retries (dagster.yaml, with the daemon running) do it."""
    from dagster import DagsterInstance

    from burnqed_pipeline.recovery import recover_dead_runs

    prof = load(profile, verbose)
    home = dagster_home(Path(work_dir) if work_dir is not None else Path(prof.paths.work_dir))
    with DagsterInstance.get() as instance:
        lines = recover_dead_runs(instance)
    for line in lines:
        typer.echo(line)
    typer.echo(f"{len(lines)} run(s) recovered in the Dagster instance {home}")


pipeline_app = app
pipeline_app.command("loop")(loop)
pipeline_app.command("recover")(recover)
pipeline_app.command("transfer")(transfer)
pipeline_app.add_typer(deploy_app, name="deploy")


def main() -> None:
    """The ``burnqed`` entry point with ``loop``."""
    core_main(pipeline_app)


if __name__ == "__main__":
    main()
