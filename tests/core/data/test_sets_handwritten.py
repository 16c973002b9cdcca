"""The hand-written benchmark (`bundled:handwritten`): theorems written by hand outside the generator, each
file with its own definitions; every reference proof checked by Lean; at least a third closed by neither
automation baseline."""

from __future__ import annotations

import asyncio
import re
from collections import Counter

import pytest

from burnqed_core.config import load_profile
from burnqed_core.data.selection import stratified_sample
from burnqed_core.data.theorems import BUNDLED_DIR, load_theorems
from burnqed_core.eval.baselines import Baselines
from burnqed_core.lean.types import ProofEnv

DIR = BUNDLED_DIR / "handwritten"
FORBIDDEN = re.compile(r"\b(sorry|admit|native_decide|axiom|implemented_by|extern)\b")


def test_every_file_brings_its_own_definitions_and_every_theorem_a_proof() -> None:
    files = sorted(DIR.glob("*.lean"))
    assert len(files) >= 5
    thms = load_theorems("bundled:handwritten")
    assert len(thms) >= 50
    assert all(t.proof for t in thms), [t.name for t in thms if not t.proof]
    per_file = Counter(t.source for t in thms)
    assert set(per_file) == {f.name for f in files} and min(per_file.values()) >= 5
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert text.lstrip().startswith(("--", "/-")), f"{f.name}: a header comment says what the file is about"
        assert re.search(r"^namespace Hw\w+", text, re.M), f"{f.name}: its definitions in a namespace of its own"
        assert re.search(r"^(inductive|structure|class|def) ", text, re.M), f"{f.name}: brings its own definitions"
        assert not FORBIDDEN.search(text), f"{f.name}: {FORBIDDEN.search(text)}"


def test_at_least_a_third_is_hard_by_both_baselines() -> None:
    names = {t.name for t in load_theorems("bundled:handwritten")}
    files = [Baselines.model_validate_json(f.read_text(encoding="utf-8")) for f in sorted(DIR.glob("baselines-*.json"))]
    # the whole set's file, and the fixed sample tiny evaluates (eval.also_sample), each under its own key
    whole = [b for b in files if set(b.single) == names]
    assert len(whole) == 1, "measure with `burnqed lean baseline bundled:handwritten --eval-baselines`"
    b = whole[0]
    assert not b.infra
    sample = stratified_sample(load_theorems("bundled:handwritten"), load_profile("tiny", environ={}).eval.also_sample)
    parts = [p for p in files if set(p.single) == {t.name for t in sample}]
    assert len(parts) == 1 and all(parts[0].single[n] == b.single[n] for n in parts[0].single)
    hard = [n for n in names if b.hard(n)]
    assert 3 * len(hard) >= len(names), f"{len(hard)} of {len(names)} hard"


@pytest.mark.lean
async def test_every_reference_proof_checks(lean_pool: ProofEnv) -> None:
    """Each reference proof passes the trusted checker as a whole theorem (the
    eval's re-check; the states a trace would read are not needed here)."""
    thms = load_theorems("bundled:handwritten")
    checks = await asyncio.gather(*(lean_pool.check_proof(t, t.proof) for t in thms))
    failed = {t.name: c.errors[:1] for t, c in zip(thms, checks, strict=True) if not c.ok}
    assert failed == {}
    assert len(checks) == len(thms) >= 50
