"""`burnqed search` and `burnqed trajectories ...` commands."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the search commands to the main app."""
