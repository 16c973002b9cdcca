"""The module rewrite of the embedded Lean (`burnqed_core.lean.slim_wasm`): on a small module built here, read
back by the rewrite's own parser and instantiated by the install's real Node (no Lean runs)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from burnqed_core.lean.install import LeanInstall
from burnqed_core.lean.slim_wasm import SlimWasmError, _exports, _sections, _table_entries, glue_names, slim_wasm
from tests.fixtures_lean import tiny_lean_config


def _name(s: str) -> bytes:
    return bytes([len(s)]) + s.encode()


def _section(sid: int, body: bytes) -> bytes:
    return bytes([sid, len(body)]) + body


def module(elem: bytes = b"\x01\x00\x41\x01\x0b\x01\x01") -> bytes:
    """Three functions ``() -> i32`` returning 1, 2, 3 (``f0``-``f2``); exports ``one`` and its alias ``uno``
    (f0), ``two`` (f1), ``three`` (f2), ``kept_by_got`` (f2 again, named by the module's one import, from
    ``GOT.func``) and the table; a table of 2 whose slot 1 holds f1 (an active segment at offset 1)."""
    types = _section(1, b"\x01\x60\x00\x01\x7f")
    imports = _section(2, b"\x01" + _name("GOT.func") + _name("kept_by_got") + b"\x03\x7f\x01")
    funcs = _section(3, b"\x03\x00\x00\x00")
    table = _section(4, b"\x01\x70\x00\x02")
    exports = [("one", 0, 0), ("uno", 0, 0), ("two", 0, 1), ("three", 0, 2), ("kept_by_got", 0, 2),
               ("__indirect_function_table", 1, 0)]
    export = _section(7, bytes([len(exports)]) + b"".join(_name(n) + bytes([k, i]) for n, k, i in exports))
    code = _section(10, b"\x03" + b"".join(b"\x04\x00\x41" + bytes([v]) + b"\x0b" for v in (1, 2, 3)))
    return b"\0asm\x01\0\0\0" + types + imports + funcs + table + export + _section(9, elem) + code


def test_moved_exports_get_table_slots_after_the_original_entries() -> None:
    out = slim_wasm(module(), keep={"three"})
    # f1 was in the table already (slot 1): `two` answers it; f0 (`one` and its alias `uno`) goes once, at 2
    assert out.symbols == {"one": 2, "uno": 2, "two": 1} and (out.table_start, out.table_end) == (2, 3)
    secs = dict(_sections(out.wasm))
    assert [(n, k, i) for n, k, i, _ in _exports(secs[7])] == [
        ("three", 0, 2), ("kept_by_got", 0, 2), ("__indirect_function_table", 1, 0)]
    placed, segments = _table_entries(secs[9])
    assert segments == 2 and placed == {1: 1, 0: 2}
    assert secs[4] == b"\x01\x70\x00\x03"  # the table grew by the one moved function
    for sid in (1, 2, 3, 10):  # every other section byte for byte
        assert secs[sid] == dict(_sections(module()))[sid]
    assert out.symbols_text() == "one 2\nuno 2\ntwo 1\n"


def test_a_kept_alias_keeps_its_function_exported() -> None:
    out = slim_wasm(module(), keep={"three", "uno"})  # `uno` kept, so `one` (same function) stays too
    assert out.symbols == {"two": 1} and out.table_start == out.table_end == 2


@pytest.mark.parametrize("elem", [
    b"\x01\x02\x00\x41\x01\x0b\x00\x01\x01",  # a segment with an explicit table index (flags 2)
    b"\x01\x00\x23\x00\x0b\x01\x01",           # an offset read from a global
])
def test_an_unknown_shape_is_refused(elem: bytes) -> None:
    with pytest.raises(SlimWasmError):
        slim_wasm(module(elem), keep=set())


def test_glue_names_cover_its_identifiers_and_their_exports() -> None:
    names = glue_names('var _malloc;x=wasmExports["free"];callMain("main")')
    assert {"_malloc", "malloc", "free", "main", "wasmExports"} <= names


def test_node_runs_the_moved_functions_from_their_table_slots(tmp_path: Path) -> None:
    """The rewritten module instantiates in the real Node of the install, and each symbol's table slot holds the
    function its export named."""
    node = LeanInstall(Path(str(tiny_lean_config().embedded.install_dir))).node
    if not node.exists():
        pytest.skip("the embedded Lean (and its Node) is not installed: `burnqed lean setup`")
    out = slim_wasm(module(), keep={"three"})
    (tmp_path / "m.wasm").write_bytes(out.wasm)
    script = ("const m=new WebAssembly.Module(require('fs').readFileSync(process.argv[1]));"
              "const i=new WebAssembly.Instance(m,{'GOT.func':{kept_by_got:new WebAssembly.Global("
              "{value:'i32',mutable:true},0)}});const t=i.exports.__indirect_function_table;"
              "console.log(JSON.stringify({exports:Object.keys(i.exports),length:t.length,"
              "slots:[1,2].map(k=>t.get(k)()),three:i.exports.three()}))")
    run = subprocess.run([str(node), "-e", script, str(tmp_path / "m.wasm")], capture_output=True, text=True,
                         timeout=60, check=True)
    got = json.loads(run.stdout)
    assert got == {"exports": ["three", "kept_by_got", "__indirect_function_table"], "length": 3,
                   "slots": [2, 1], "three": 3}
    assert {name: got["slots"][slot - 1] for name, slot in out.symbols.items()} == {"one": 1, "uno": 1, "two": 2}
