"""In-process materialisation: what ``burnqed loop`` and ``burnqed transfer`` run (`materialize_stages`).

The stages are materialised in this process against a persistent Dagster instance (``DAGSTER_HOME``, default
``<work_dir>/dagster``: `dagster_home`), so a run started here shows in ``dagster dev`` with its metadata: the
shared base assets once, then for each iteration (added as a partition in numeric order) its stages in the
order of the specs. One `StageRuntime` serves every run of the command (the caller's, bound to the runs'
``event_loop``, ``lean`` and ``policy`` resources: Lean starts once). A run stopped by SIGINT/SIGTERM stops the
command (`RunInterrupted`); a failed stage is a `BurnqedError` naming it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from burnqed_core.config import Profile
from burnqed_core.errors import BurnqedError
from burnqed_core.loop.stages import SPECS
from burnqed_pipeline.resources import ProfileResource, kept_resources
from burnqed_pipeline.services import StageRuntime

REPO_DAGSTER_YAML = Path(__file__).resolve().parent.parent / "dagster.yaml"
# the order ``burnqed loop`` materialises: the stage specs' (inputs first)
ITERATION_ORDER = tuple(s.name for s in SPECS if s.partitioned)
BASE_ORDER = tuple(s.name for s in SPECS if not s.partitioned)

INTERRUPT_ERRORS = frozenset({"DagsterExecutionInterruptedError", "KeyboardInterrupt", "SearchInterrupted",
                              "EvalInterrupted"})
"""Error classes of a step stopped by SIGINT/SIGTERM (Dagster's own, or a search that caught the signal)."""


class RunInterrupted(BurnqedError):
    """SIGINT/SIGTERM stopped a stage of an in-process run: the command stops as well (it does not go on to
    the next iteration or fold); a rerun continues from the finished stages."""

    exit_code = 130


def dagster_home(work_dir: Path) -> Path:
    """``DAGSTER_HOME`` if set, else ``<work_dir>/dagster`` (created, with the repository's dagster.yaml)."""
    home = Path(os.environ.get("DAGSTER_HOME") or (Path(work_dir).resolve() / "dagster"))
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists() and REPO_DAGSTER_YAML.is_file():
        shutil.copyfile(REPO_DAGSTER_YAML, home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def command_resources(profile: str, runtime: StageRuntime, work_dir: Path | None = None) -> dict[str, Any]:
    """The resources of a command's runs: the profile (``work_dir`` overriding ``paths.work_dir``), and the event
    loop, Lean pool and policy of the command's own runtime (`kept_resources`: Lean starts once per command)."""
    return {"profile": ProfileResource(profile=profile, work_dir=str(work_dir) if work_dir else None),
            **kept_resources(runtime)}


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
        if spec.previous is not None and (asset := spec.previous(spec.settings.of(profile))):
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
    from burnqed_pipeline.vocabulary import BASE_GROUP, ITERATION_GROUP

    definitions = defs()
    graph = definitions.resolve_asset_graph()
    assets = list(definitions.assets or [])
    run_config = {"loggers": {"console": {"config": {"log_level": log_level}}}}
    known = {k.to_user_string() for k in graph.get_all_asset_keys()}

    for flag, stage in (("--until", until), ("--last-until", last_until)):
        if stage is not None and stage not in ITERATION_ORDER:
            raise BurnqedError(f"{flag}: {stage!r} is not a stage of an iteration ({', '.join(ITERATION_ORDER)})")

    def selected(stops: Sequence[str] | None) -> Any:
        selection = dg.AssetSelection.groups(ITERATION_GROUP)
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
    run(BASE_GROUP, [k for k in BASE_ORDER if k in known], None)
    out = []
    for n in iterations:
        if add_iteration(instance, n):
            echo(f"added partition iteration={n}")
        run(ITERATION_GROUP, [k for k in ITERATION_ORDER if k in known], str(n), plans[n])
        out.append(n)
    return [str(n) for n in out]
