"""The ``burnqed`` command line. Sub-commands live in one module each and
import heavy libraries (torch, transformers) inside their functions, so that
``burnqed --help`` stays fast.

``burnqed loop`` is not here: it runs the Dagster pipeline, and burnqed_core
never imports Dagster. The installed ``burnqed`` command is
`burnqed_pipeline.cli.main`, which adds the pipeline's commands to an app of
its own (`make_app` gives a fresh one each call)."""

from __future__ import annotations

import logging
import sys

import typer

from burnqed_core.cli import data, ebm, lean, search, train
from burnqed_core.cli import eval as eval_cli
from burnqed_core.errors import BurnqedError


def make_app() -> typer.Typer:
    """A new ``burnqed`` app with the core's commands."""
    app = typer.Typer(
        name="burnqed",
        help="Train a Lean 4 theorem prover by expert iteration.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    app.add_typer(data.app, name="data")
    app.add_typer(lean.app, name="lean")
    app.add_typer(train.app, name="train")
    app.add_typer(ebm.app, name="ebm")
    search.register(app)
    eval_cli.register(app)
    return app


app = make_app()


def main(command: typer.Typer | None = None) -> None:
    """Entry point (``command``: the app to run, default `app`): user errors are one line on stderr and
    exit code 1 (the error's own `exit_code`: 130 for an interrupted run)."""
    try:
        (command or app)()
    except BurnqedError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as e:  # a bug: keep the traceback in the log, one line on screen
        logging.getLogger("burnqed").debug("unhandled error", exc_info=True)
        print(f"error: {type(e).__name__}: {e} (set BURNQED_LOG=DEBUG for the traceback)", file=sys.stderr)
        sys.exit(2)
