"""The installed ``burnqed`` command: burnqed_core's commands and the pipeline's (`burnqed_pipeline.commands`),
on an app of its own (`make_app`): importing the pipeline leaves the core's app as it is."""

from __future__ import annotations

import typer

from burnqed_core.cli import main as core_main
from burnqed_core.cli import make_app as core_app
from burnqed_pipeline import commands


def make_app() -> typer.Typer:
    """A fresh ``burnqed`` app: the core's commands, then ``loop``, ``recover``, ``transfer`` and ``deploy``."""
    app = core_app()
    commands.register(app)
    return app


def main() -> None:
    """The ``burnqed`` entry point."""
    core_main(make_app())


if __name__ == "__main__":
    main()
