"""Command-line overrides copy the settings, never mutate them."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from burnqed_core.cli.common import with_changes
from burnqed_core.config import load_profile


def test_with_changes_copies_validates_and_leaves_the_original() -> None:
    prof = load_profile("tiny")
    before = prof.model_dump()
    new = with_changes(prof, paths=with_changes(prof.paths, work_dir="/tmp/elsewhere"),
                       lean=with_changes(prof.lean, num_workers=3))
    assert new.paths.work_dir == Path("/tmp/elsewhere") and new.lean.num_workers == 3
    assert prof.model_dump() == before
    with pytest.raises(ValidationError):
        with_changes(prof.lean, num_workers="many")
    with pytest.raises(ValidationError):
        with_changes(prof.lean, no_such_setting=1)
