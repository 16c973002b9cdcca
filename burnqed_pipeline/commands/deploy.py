"""``burnqed deploy celery up|status|down``: the local Celery deployment (`local_celery`)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from burnqed_core.cli.common import ProfileOpt, VerboseOpt, load

app = typer.Typer(help="Deployments the project starts itself.", no_args_is_help=True)
celery_app = typer.Typer(help="A Redis broker and dagster-celery workers on this machine.", no_args_is_help=True)
app.add_typer(celery_app, name="celery")

DirOpt = Annotated[Path | None, typer.Option("--dir", help="state, logs and broker data (default: "
                                                            "<work_dir>/celery)")]


def _dir(dir: Path | None, profile: str, verbose: bool) -> tuple[Path, str, Path]:
    prof = load(profile, verbose)
    work = Path(prof.paths.work_dir).resolve()
    return (dir or work / "celery").resolve(), str(prof.source or profile), work


@celery_app.command("up")
def up_cmd(
    workers: Annotated[int, typer.Option("--workers", "-n", help="workers to start")] = 2,
    port: Annotated[int, typer.Option("--port", help="the local broker's port")] = 6390,
    broker: Annotated[str | None, typer.Option("--broker", help="use this Redis (redis://HOST:PORT) instead of "
                                                                "starting one: workers on another machine")] = None,
    queues: Annotated[str, typer.Option("--queues", "-q", help="comma-separated queues each worker "
                                                               "takes")] = "gpu,dagster",
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", help="steps at once per worker")] = 1,
    gpu_slots: Annotated[int | None, typer.Option("--gpu-slots", help="GPU steps at once in the instance "
                                                                      "(default: one per worker process on the gpu "
                                                                      "queue)")] = None,
    dagster_home: Annotated[Path | None, typer.Option("--dagster-home", help="the runs' Dagster instance "
                                                                            "(default: DAGSTER_HOME, else "
                                                                            "<work_dir>/dagster)")] = None,
    dir: DirOpt = None,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Start the broker and the workers; print the environment a run needs to use them."""
    from burnqed_pipeline.deploy import local_celery
    from burnqed_pipeline.runner import dagster_home as default_home

    d, prof, work = _dir(dir, profile, verbose)
    home = dagster_home or default_home(work)
    dep = local_celery.up(d, workers=workers, port=port, broker=broker, profile=prof, work_dir=str(work),
                          dagster_home=str(home), queues=[q.strip() for q in queues.split(",") if q.strip()],
                          concurrency=concurrency, gpu_slots=gpu_slots)
    typer.echo(f"broker {dep.broker_url} ({'started here' if dep.broker else 'external'}); workers "
               f"{', '.join(w.name for w in dep.workers)} on queues {','.join(dep.queues)}; logs in {dep.dir}")
    typer.echo("Run with these workers (code location, `dagster dev`, or a run process):")
    for k, v in sorted(dep.env().items()):
        typer.echo(f"  export {k}={shlex.quote(v)}")
    typer.echo(f"  run config: {dep.config}")


@celery_app.command("status")
def status_cmd(dir: DirOpt = None, profile: ProfileOpt = "tiny", verbose: VerboseOpt = False) -> None:
    """The broker, the queues and each worker (exit code 1 if any is down)."""
    from burnqed_pipeline.deploy import local_celery

    d, _, _ = _dir(dir, profile, verbose)
    st = local_celery.status(d)
    for line in st.lines():
        typer.echo(line)
    raise typer.Exit(0 if st.healthy else 1)


@celery_app.command("down")
def down_cmd(
    grace: Annotated[float, typer.Option("--grace", help="seconds a worker may finish its step before SIGKILL")] = 20.0,
    dir: DirOpt = None,
    profile: ProfileOpt = "tiny",
    verbose: VerboseOpt = False,
) -> None:
    """Stop the workers, then the broker; fails if any of their processes is left."""
    from burnqed_pipeline.deploy import local_celery

    d, _, _ = _dir(dir, profile, verbose)
    for line in local_celery.down(d, grace_s=grace):
        typer.echo(line)
