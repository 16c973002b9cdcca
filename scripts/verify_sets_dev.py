#!/usr/bin/env python3
"""Dev-only: check the bundled theorem sets with the embedded Lean 4 and measure automation.

For every theorem of ``burnqed_core/data/sets/{corpus,benchmark}.jsonl`` this
checks (a) that its known proof is accepted and (b) which single automation
tactic among rfl/trivial/decide/omega/simp/simp_all/grind closes it alone.
Theorems are batched many per document (one document per tactic and chunk, so
an error in one attempt never hides another); each preamble is emitted once
inside a ``section`` with the theorems that share it. The measured map
``{theorem: first closing tactic or null}`` is written, sorted, to
``sets/automation.json``, and the accepted/resistant counts are printed per
set and family.

This uses the reference LSP driver from the shared notes
(``/work/shared/notes/lean-wasm/lsp_repl.py``, or ``$BURNQED_LSP_REPL``) as a
development tool only: nothing in ``burnqed_core`` imports it. It starts ONE
Lean worker (~20 s, 5-6.5 GB RAM) and closes it at the end.

    LEAN_WASM_HOME=~/.cache/burnqed/lean-wasm python scripts/verify_sets_dev.py
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib.util
import json
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from burnqed_core.data.generate_sets import FILE_NAMES, SETS_DIR, hard_families
from burnqed_core.record_io import read_jsonl
from burnqed_core.records import Theorem

AUTOMATION = ("rfl", "trivial", "decide", "omega", "simp", "simp_all", "grind")
DEFAULT_DRIVER = Path("/work/shared/notes/lean-wasm/lsp_repl.py")


def load_driver() -> ModuleType:
    """Import the reference LSP driver by path, or exit with a clear message."""
    path = Path(os.environ.get("BURNQED_LSP_REPL", DEFAULT_DRIVER))
    if not path.exists():
        sys.exit(f"verify_sets_dev: the reference Lean driver {path} is absent; this dev tool needs it "
                 "(set BURNQED_LSP_REPL to its path)")
    os.environ.setdefault("LEAN_WASM_HOME", str(Path.home() / ".cache" / "burnqed" / "lean-wasm"))
    spec = importlib.util.spec_from_file_location("lsp_repl", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def render_proof(tactics: list[str]) -> str:
    """``by`` block body: each tactic indented by two, its continuation lines too."""
    return "".join("".join("  " + line + "\n" for line in t.split("\n")) for t in tactics)


@dataclass
class Document:
    text: str
    spans: dict[str, tuple[int, int]]  # theorem name -> [first line, last line) (0-based)


def build_document(theorems: list[Theorem], tactic: str | None) -> Document:
    """One Lean document: preambles once per group, then each theorem with its
    known proof (``tactic`` None) or with the single ``tactic``."""
    groups: dict[str, list[Theorem]] = defaultdict(list)
    for t in theorems:
        groups[t.preamble].append(t)
    lines: list[str] = []
    spans: dict[str, tuple[int, int]] = {}
    for preamble, ts in groups.items():
        lines.append("section")
        lines.extend(preamble.split("\n") if preamble else [])
        for t in ts:
            body = render_proof(t.proof) if tactic is None else f"  {tactic}\n"
            start = len(lines)
            lines.append(f"{t.declaration()} := by")
            lines.extend(body.rstrip("\n").split("\n"))
            spans[t.name] = (start, len(lines))
        lines.append("end")
    return Document("\n".join(lines) + "\n", spans)


def _key(mode: str | None, t: Theorem) -> str:
    """Cache key: the mode and everything Lean sees of the theorem."""
    blob = json.dumps([mode, t.preamble, t.statement, t.proof if mode is None else []])
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


class Checker:
    """One Lean worker at a time; restarted when it dies or grows past ``max_rss_mb``."""

    def __init__(self, lsp: ModuleType, max_rss_mb: int = 10500) -> None:
        self.lsp = lsp
        self.max_rss_mb = max_rss_mb
        self.worker = None

    async def _start(self) -> None:
        self.worker = self.lsp.LeanWorker(timeout=900.0)
        t0 = time.monotonic()
        await self.worker.start("theorem warmup : 1 + 1 = 2 := by decide\n")
        print(f"Lean worker started in {time.monotonic() - t0:.1f}s", flush=True)

    async def close(self) -> None:
        if self.worker is not None:
            await self.worker.close()
            self.worker = None

    async def check(self, theorems: list[Theorem], mode: str | None) -> dict[str, str]:
        """{theorem: first error or ''}; a chunk that kills the worker is split in halves."""
        if self.worker is None:
            await self._start()
        doc = build_document(theorems, mode)
        t0 = time.monotonic()
        try:
            diags = await self.worker.check(doc.text)
        except self.lsp.LeanError as e:
            print(f"  worker died on {len(theorems)} theorems ({str(e)[:80]}); restarting", flush=True)
            await self.close()
            if len(theorems) == 1:
                return {theorems[0].name: "Lean worker died"}
            mid = len(theorems) // 2
            return {**await self.check(theorems[:mid], mode), **await self.check(theorems[mid:], mode)}
        bad = self.lsp.failures(diags)
        res: dict[str, str] = {}
        placed = set()
        for name, (a, b) in doc.spans.items():
            errs = [d for d in bad if a <= d.line < b]
            placed.update(id(d) for d in errs)
            res[name] = errs[0].message.splitlines()[0] if errs else ""
        for d in bad:   # an error in a preamble: the theorems after it are suspect
            if id(d) not in placed:
                print(f"  PREAMBLE ERROR line {d.line + 1}: {d.message.splitlines()[0]}\n"
                      f"    {doc.text.splitlines()[d.line]}")
        rss = self.worker.rss_mb()
        print(f"  {mode or 'proof'}: {len(theorems)} theorems, {sum(1 for v in res.values() if v)} failing, "
              f"{time.monotonic() - t0:.1f}s, rss {rss} MB", flush=True)
        if rss > self.max_rss_mb:
            await self.close()
        return res


async def check_all(lsp: ModuleType, theorems: list[Theorem], chunk: int,
                    modes: tuple[str | None, ...], cache_path: Path) -> dict[str | None, dict[str, str]]:
    """For each mode (None = known proof, else a tactic): {theorem: first error or ''}.
    Results are cached by content in ``cache_path`` so that a rerun checks only what changed."""
    cache: dict[str, str] = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    checker = Checker(lsp)
    results: dict[str | None, dict[str, str]] = {}
    try:
        for mode in modes:
            todo = [t for t in theorems if _key(mode, t) not in cache]
            size = max(1, chunk // 4) if mode == "grind" else chunk
            for i in range(0, len(todo), size):
                part = todo[i:i + size]
                res = await checker.check(part, mode)
                for t in part:
                    cache[_key(mode, t)] = res[t.name]
                cache_path.write_text(json.dumps(cache))
            results[mode] = {t.name: cache[_key(mode, t)] for t in theorems}
    finally:
        await checker.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=Path, default=SETS_DIR)
    parser.add_argument("--chunk", type=int, default=120, help="theorems per Lean document")
    parser.add_argument("--proofs-only", action="store_true", help="skip the automation attempts")
    parser.add_argument("--family", action="append", help="only these families (no automation.json written)")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/burnqed-verify-sets-cache.json"),
                        help="results cached by theorem content (delete to recheck everything)")
    args = parser.parse_args()
    lsp = load_driver()

    theorems: list[Theorem] = []
    for fname in FILE_NAMES.values():
        theorems.extend(read_jsonl(args.sets / fname, Theorem))
    if args.family:
        theorems = [t for t in theorems if t.family in set(args.family)]
    modes: tuple[str | None, ...] = (None,) if args.proofs_only else (None, *AUTOMATION)
    results = asyncio.run(check_all(lsp, theorems, args.chunk, modes, args.cache))

    proof_errors = {n: e for n, e in results[None].items() if e}
    for t in theorems:
        if t.name in proof_errors:
            print(f"PROOF FAILS {t.name}: {proof_errors[t.name]}")
    closing: dict[str, str | None] = {}
    if not args.proofs_only:
        for t in theorems:
            closing[t.name] = next((tac for tac in AUTOMATION if not results[tac][t.name]), None)
    hard = hard_families()
    for split in FILE_NAMES:
        ts = [t for t in theorems if t.split == split]
        if not ts:
            continue
        ok = sum(1 for t in ts if t.name not in proof_errors)
        print(f"{split}: {ok}/{len(ts)} known proofs accepted by Lean")
        if args.proofs_only:
            continue
        resist = sum(1 for t in ts if closing[t.name] is None)
        print(f"{split}: automation-resistant {resist}/{len(ts)} = {resist / len(ts):.1%}")
        for tac in AUTOMATION:
            print(f"  {tac:9s} closes {sum(1 for t in ts if not results[tac][t.name]):4d}")
        for fam in sorted({t.family for t in ts}):
            fts = [t for t in ts if t.family == fam]
            r = sum(1 for t in fts if closing[t.name] is None)
            leaks = sorted({closing[t.name] or "" for t in fts} - {""})
            print(f"  {fam:8s} {'hard' if fam in hard else 'easy'} resistant {r:3d}/{len(fts):3d}"
                  f"{'  closed by ' + ','.join(leaks) if leaks else ''}")
    if not args.proofs_only and not args.family:
        out = args.sets / "automation.json"
        out.write_text(json.dumps(dict(sorted(closing.items())), indent=1, ensure_ascii=False) + "\n",
                       encoding="utf-8")
        print(f"wrote {out}")
    return 1 if proof_errors else 0


if __name__ == "__main__":
    sys.exit(main())
