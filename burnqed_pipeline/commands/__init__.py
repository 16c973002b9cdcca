"""The pipeline's commands (``burnqed loop``, ``recover``, ``transfer``, ``deploy``), added by `register` to an
app of the caller's (`burnqed_pipeline.cli`): the core's own app is never changed."""

from __future__ import annotations

import typer

from burnqed_pipeline.commands import deploy, loop, transfer


def register(app: typer.Typer) -> None:
    app.command("loop")(loop.loop)
    app.command("recover")(loop.recover)
    app.command("transfer")(transfer.transfer_cmd)
    app.add_typer(deploy.app, name="deploy")
