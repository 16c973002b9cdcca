"""Lean's word on the renaming: every pool name is free in core Lean, and
renamed bundled theorems are still proved (cheap: one document, and the
first theorem of each family; ``burnqed lean trace`` checks the whole sets)."""

from __future__ import annotations

import asyncio
from collections import defaultdict

import pytest

from burnqed_core.data.synthetic.catalogue import ALL_FAMILIES
from burnqed_core.data.synthetic.renaming import CONSTRUCTORS, FUNCTIONS, TYPES, VARIABLES
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.lean.pool import LeanPool

pytestmark = pytest.mark.lean


def _unique(*pools: tuple[str, ...]) -> list[str]:
    return list(dict.fromkeys(n for pool in pools for n in pool))


DOCUMENT_LINES = 150
"""Lines per checked document. The worker's next document change cancels the last one's command snapshots
recursively (`Lean.Language.SnapshotTask.cancelRec`, on Node's stack): after a document of ~460 commands that
recursion overflows the stack and ends the process (the pool restarts it; a Lean start lost)."""


def pool_documents() -> tuple[list[str], list[list[tuple[str, str]]]]:
    """Lean sources exercising every pool name (each at most `DOCUMENT_LINES` lines), and the owner (role,
    name) of each of their lines: ``#check @name`` must fail with "unknown identifier" (so the name is neither a
    core constant nor a keyword), and the constructors work as ``.name`` and as ``cases`` tags (the rest is
    exercised by the bundled sets)."""
    units: list[tuple[list[str], str, str]] = []

    def add(text: str, role: str, name: str) -> None:
        units.append((text.splitlines(), role, name))

    functions = _unique(*FUNCTIONS.values())
    types = _unique(*TYPES.values())
    ctors = _unique(*CONSTRUCTORS.values())
    variables = _unique(*VARIABLES.values())
    for name in functions + types + ctors + variables:
        add(f"#check @{name}", "free", name)        # must fail: not a name of core Lean
    for i in range(0, len(ctors), 10):
        chunk = ctors[i:i + 10]
        alts = " | ".join(chunk)
        add(f"namespace BqPoolC{i}\ninductive C where\n  | {alts}\nend BqPoolC{i}\nopen BqPoolC{i} in\n"
            f"example (t : C) (h : t = .{chunk[0]}) : True := by\n  cases t with\n"
            + "\n".join(f"  | {c} => trivial" for c in chunk) + "\n"
            + "\n".join(f"open BqPoolC{i} in\nexample : (.{c} : C) = C.{c} := rfl" for c in chunk),
            "constructor", ",".join(chunk))
    docs: list[tuple[list[str], list[tuple[str, str]]]] = [([], [])]
    for lines, role, name in units:
        if docs[-1][0] and len(docs[-1][0]) + len(lines) > DOCUMENT_LINES:
            docs.append(([], []))
        docs[-1][0].extend(lines)
        docs[-1][1].extend([(role, name)] * len(lines))
    return ["\n".join(lines) + "\n" for lines, _ in docs], [owner for _, owner in docs]


async def test_pool_names_are_free_and_usable_in_lean(lean_pool: LeanPool) -> None:
    texts, owners = pool_documents()
    assert len(texts) > 1 and all(t.count("\n") <= DOCUMENT_LINES for t in texts)
    crashes = lean_pool.stats().crashes
    errors: dict[tuple[str, str], list[str]] = defaultdict(list)
    everyone: set[tuple[str, str]] = set()
    for text, owner in zip(texts, owners, strict=True):
        everyone |= set(owner)
        for d in await lean_pool.check_source(text, timeout_s=600):
            if d.is_error:
                errors[owner[min(d.line, len(owner) - 1)]].append(d.message)
    taken = sorted(name for (role, name) in everyone if role == "free"
                   and not any("unknown identifier" in m.lower() for m in errors.get((role, name), [])))
    assert taken == [], f"pool names that exist in core Lean: {taken}"
    unusable = {key: msgs[0] for key, msgs in errors.items() if key[0] != "free"}
    assert unusable == {}
    # the next document (the worker cancels the last one's snapshots then) finds the worker alive
    assert not [d for d in await lean_pool.check_source("example : True := trivial\n") if d.is_error]
    assert lean_pool.stats().crashes == crashes


async def test_one_renamed_theorem_per_family_is_proved(lean_pool: LeanPool) -> None:
    """The bundled sets are replayed and re-checked whole by ``burnqed lean
    trace``; here the known proof of the first theorem of every family (renamed
    types, constructors, definitions, variables) passes the whole-proof check."""
    firsts = {}
    for t in load_theorems("bundled:corpus") + load_theorems("bundled:benchmark"):
        firsts.setdefault(t.family, t)
    # every corpus family has theorems; a benchmark family may have none left: each of its theorems was a twin or
    # a strong near-twin of the corpus and was dropped (`fork`, issue 55; the sets README)
    absent = {f.name for f in ALL_FAMILIES} - set(firsts)
    assert not [f.name for f in ALL_FAMILIES if f.name in absent and f.split == "train"]
    results = await asyncio.gather(*(lean_pool.check_proof(t, t.proof) for t in firsts.values()))
    failed = {t.name: r.errors[:1] for t, r in zip(firsts.values(), results, strict=True) if not r.ok}
    assert failed == {}
