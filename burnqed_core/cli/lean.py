"""`burnqed lean ...` commands."""

from __future__ import annotations

import typer

app = typer.Typer(help="lean commands", no_args_is_help=True)
