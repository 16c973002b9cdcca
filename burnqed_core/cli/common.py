"""Options shared by every command."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

import typer
from pydantic import BaseModel

from burnqed_core.config import Profile, load_profile
from burnqed_core.logutil import setup_logging

ProfileOpt = Annotated[
    str,
    typer.Option("--profile", "-p", envvar="BURNQED_PROFILE",
                 help="profile name (tiny, small, prod) or path to a profile YAML"),
]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="debug logging")]

M = TypeVar("M", bound=BaseModel)


def load(profile: str, verbose: bool = False) -> Profile:
    setup_logging(verbose)
    return load_profile(profile)


def with_changes(settings: M, **changes: Any) -> M:
    """A copy of a settings object with ``changes`` applied and validated
    (like ``model_copy(update=...)``, which alone would not validate):
    command-line options never mutate the profile they were given, which
    the loop, the pipeline and tests may share. Unknown fields and bad
    values raise pydantic's ``ValidationError``."""
    copy = settings.model_copy()
    for name, value in changes.items():
        type(settings).__pydantic_validator__.validate_assignment(copy, name, value)
    return copy
