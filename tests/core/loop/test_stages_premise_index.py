"""The ``premise_index`` stage without Lean: off (``premises.library: false``) it writes an index of no library
premise; on, it reads the library from the cache of this Lean (keyed by the Lean's identity and the rules) and
never starts Lean when the cache is complete; an incomplete cache folder is read again, not trusted."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from burnqed_core.config import load_profile
from burnqed_core.lean.install import lean_identity
from burnqed_core.loop.stages.premise_index import Settings, premise_index
from burnqed_core.premises.library import (
    BUILD_FILE,
    LIBRARY_RULES,
    LibraryBuild,
    library_key,
    load_index,
    write_library,
)
from burnqed_core.premises.records import Premise
from burnqed_core.records import Theorem


async def no_lean() -> object:
    raise AssertionError("Lean was started")


def test_off_writes_an_index_without_library_premises(tmp_path: Path) -> None:
    prof = load_profile("tiny", environ={}, overrides={"paths.home": str(tmp_path / "home")})
    res = asyncio.run(premise_index(Settings.of(prof), no_lean, tmp_path / "out"))  # type: ignore[arg-type]
    assert res.metrics["premises"] == 0 and not res.metrics["library"] and "no library premises" in res.summary
    index = load_index(tmp_path / "out")
    thm = Theorem(name="t", statement="(n : Nat) : f n = n", preamble="def f (n : Nat) : Nat := n\n")
    assert [r.premise.name for r in index.retrieve(thm, "n : Nat\n⊢ f n = n", 3)] == ["f"]


def test_on_reads_the_cache_of_this_lean(tmp_path: Path) -> None:
    home = tmp_path / "home"
    key = library_key(lean_identity(), LIBRARY_RULES)
    premises = [Premise(name="Nat.add_zero'", type="n + 0 = n", module="Init.A"),
                Premise(name="List.nil_append'", type="[] ++ l = l", module="Init.B")]
    build = LibraryBuild(key=key, lean=lean_identity(), rules=LIBRARY_RULES.model_dump(mode="json"),
                         premises=2, modules=2, modules_read=2)
    write_library(home / "premises" / key, premises, {"Init.A": [], "Init.B": ["Init.A"]}, build)
    prof = load_profile("core", environ={}, overrides={"paths.home": str(home)})
    res = asyncio.run(premise_index(Settings.of(prof), no_lean, tmp_path / "out"))  # type: ignore[arg-type]
    assert res.metrics["premises"] == 2 and res.metrics["read_now"] is False and "read from the cache" in res.summary
    index = load_index(tmp_path / "out")
    got = index.retrieve(Theorem(name="t", statement=": True", module="Init.B"), "⊢ n + 0 = n", 2)
    assert [r.premise.name for r in got] == ["Nat.add_zero'"]
    # a folder without its build record is no cache: Lean is asked
    (home / "premises" / key / BUILD_FILE).unlink()
    with pytest.raises(AssertionError, match="Lean was started"):
        asyncio.run(premise_index(Settings.of(prof), no_lean, tmp_path / "again"))  # type: ignore[arg-type]
