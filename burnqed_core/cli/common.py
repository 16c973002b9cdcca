"""Options shared by every command."""

from __future__ import annotations

from typing import Annotated

import typer

from burnqed_core.config import Profile, load_profile
from burnqed_core.logutil import setup_logging

ProfileOpt = Annotated[
    str,
    typer.Option("--profile", "-p", envvar="BURNQED_PROFILE",
                 help="profile name (tiny, prod) or path to a profile YAML"),
]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="debug logging")]


def load(profile: str, verbose: bool = False) -> Profile:
    setup_logging(verbose)
    return load_profile(profile)
