"""A stage's code version (issue 57): a hash of its module and of every module of burnqed_core it imports (lazily
too), blind to comments, docstrings and layout, and to the modules whose effect is hashed another way."""

from __future__ import annotations

from pathlib import Path

from burnqed_core import code_graph as cg

PKGS = ("burnqed_core",)


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _version(root: Path) -> str:
    for fn in (cg.modules, cg.graph, cg.source_digest, cg.code_version, cg._parsed):
        fn.cache_clear()
    return cg.code_version("burnqed_core.stage", root, PKGS)


def test_the_version_follows_the_code_it_runs_and_nothing_else(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "burnqed_core/__init__.py": "",
        "burnqed_core/stage.py": '"""A stage."""\n\ndef run():\n    from burnqed_core import mixing\n'
                                 "    return mixing.mix()\n",
        "burnqed_core/mixing.py": "def mix():\n    return 1  # one\n",
        "burnqed_core/unrelated.py": "X = 1\n",
        "burnqed_core/config.py": "Y = 1\n",
    })
    v0 = _version(tmp_path)
    assert cg.code_modules("burnqed_core.stage", tmp_path, PKGS) == [
        "burnqed_core", "burnqed_core.mixing", "burnqed_core.stage"]  # the package (its __init__) too
    # a comment, a docstring, layout: the same code
    (tmp_path / "burnqed_core/mixing.py").write_text('"""Mixing."""\n\n\ndef mix():  # changed comment\n'
                                                     "    return (1)\n")
    (tmp_path / "burnqed_core/unrelated.py").write_text("X = 2\n")  # not imported
    assert _version(tmp_path) == v0
    # a fixed bug in a module it imports lazily: another version
    (tmp_path / "burnqed_core/mixing.py").write_text("def mix():\n    return 2\n")
    assert _version(tmp_path) != v0


def test_the_project_s_stages_have_versions_of_their_own_closure() -> None:
    from burnqed_core.loop.stages import ALL

    versions = {s.name: s.code_version for s in ALL}
    assert len(set(versions.values())) == len(versions)  # each stage's own modules
    merged = cg.code_modules("burnqed_core.loop.stages.merged_model")
    assert "burnqed_core.training.merge" in merged and "burnqed_core.search.engine" not in merged
    assert not set(merged) & cg.NOT_CODE
