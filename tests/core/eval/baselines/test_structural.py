"""Baseline (c), the eval's search with no learned policy: on the real embedded Lean (the session `lean_pool`)
it proves a theorem over a definition of its own that needs ``induction`` before the automation can close it
(which no single automation tactic closes) and not a false one; the result is cached and found by a key that
covers the budget, the tactic timeout and the theorems; a shipped file replaces only its own set's."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import pytest

from burnqed_core.config import Profile, load_profile
from burnqed_core.errors import DataError
from burnqed_core.eval.baselines.records import Baselines, StructuralBaseline
from burnqed_core.eval.baselines.structural import (
    cache_path,
    from_rows,
    measure_structural,
    read_cached,
    structural_key,
    write_shipped_structural,
)
from burnqed_core.lean.types import GoalState, ProofEnv, TacticResult
from burnqed_core.records import EvalResult, Theorem

TWIRL = "def twirl : Nat → Nat\n  | 0 => 0\n  | n + 1 => twirl n + 2"
INDUCTION = Theorem(name="twirl_eq", statement="(n : Nat) : twirl n = 2 * n", preamble=TWIRL)
FALSE = Theorem(name="succ_ne", statement="(n : Nat) : n + 1 = n")
THMS = [INDUCTION, FALSE]


def profile(**over: object) -> Profile:
    """tiny, small budgets; without baseline (b)'s tactics at the root (``induction n <;> grind [twirl]`` would
    prove the theorem in one step), so that the proof is the structural policy's step, then automation."""
    return load_profile("tiny", overrides={
        "search.concurrency": 2, "search.frontier_batch": 4, "search.flush_every": 1, "search.max_depth": 6,
        "eval.budgets": [4, 12], "eval.pass_k": 1, "search.automation.enabled": True,
        "search.automation.baseline_at_root": False, **over})


class NoLean:
    """A Lean that must not be asked: the baseline must come from a file."""

    async def start_proof(self, theorem: Theorem) -> TacticResult:
        raise AssertionError("searched although a matching file was there")

    async def apply_many(self, items: Sequence[tuple[GoalState, str]]) -> list[TacticResult]:
        raise AssertionError("searched although a matching file was there")

    async def check_proof(self, theorem: Theorem, tactics: Sequence[str]) -> object:
        raise AssertionError("searched although a matching file was there")


@pytest.mark.lean
async def test_baseline_c_proves_induction_then_automation_and_caches_it(lean_pool: ProofEnv,
                                                                         tmp_path: Path) -> None:
    from burnqed_core.eval.baselines.single import automation_baseline

    single, rep = await automation_baseline(lean_pool, THMS)
    assert single == {"twirl_eq": None, "succ_ne": None} and not rep.infra  # no single tactic closes either
    prof = profile()
    b = await measure_structural(prof, lean_pool, THMS, cache_dir=tmp_path / "cache", shipped=None,
                                 lean_version="lean-x")
    assert b.key == structural_key(THMS, prof, "lean-x") and b.budget == 12 and not b.infra and b.profile == "tiny"
    assert b.proved("twirl_eq") and not b.proved("succ_ne") and b.measured("succ_ne")
    assert b.nodes["twirl_eq"] is not None and 2 <= b.nodes["twirl_eq"] <= 12
    proof = b.proofs["twirl_eq"]  # a structural step first, then the automation
    assert proof[0].startswith(("induction n", "fun_induction twirl")) and len(proof) >= 2, proof
    assert list(b.proofs) == ["twirl_eq"]
    assert cache_path(tmp_path / "cache", b.key).is_file()
    again = await measure_structural(prof, NoLean(), THMS, cache_dir=tmp_path / "cache",  # type: ignore[arg-type]
                                     shipped=None, lean_version="lean-x")
    assert again == b
    # it travels with the baselines the eval's shards share
    carried = Baselines(single=single, defaware=dict.fromkeys(single)).model_copy(update={"structural": b})
    assert Baselines.model_validate_json(carried.model_dump_json()).structural == b


@pytest.mark.lean
async def test_at_pass_k_the_real_search_runs_k_seeded_attempts(lean_pool: ProofEnv, tmp_path: Path) -> None:
    """Equal compute on the real Lean: read at pass@2, (c) searches each theorem twice (its rows, per attempt),
    proves the induction theorem in both and the false one in neither."""
    prof = profile(**{"eval.pass_k": 2})
    b = await measure_structural(prof, lean_pool, THMS, cache_dir=tmp_path / "cache", shipped=None,
                                 lean_version="lean-x")
    assert b.attempts == 2 and b.key == structural_key(THMS, prof, "lean-x") != structural_key(THMS, profile(),
                                                                                                 "lean-x")
    assert set(b.per_attempt) == {"twirl_eq", "succ_ne"} and all(len(v) == 2 for v in b.per_attempt.values())
    assert b.attempt_rate("twirl_eq") == 1.0 and b.attempt_rate("succ_ne") == 0.0 and b.proved("twirl_eq")


def test_the_key_covers_budget_timeout_theorems_and_settings() -> None:
    base = structural_key(THMS, profile(), "lean-x")
    assert structural_key(list(reversed(THMS)), profile(), "lean-x") == base  # order does not matter
    assert structural_key(THMS, profile(**{"eval.budgets": [2, 12]}), "lean-x") == base  # only the largest
    assert structural_key(THMS, profile(**{"search.flush_every": 7}), "lean-x") == base  # output only
    for other in (profile(**{"eval.budgets": [4, 16]}), profile(**{"lean.tactic_timeout_s": 7.0}),
                  profile(**{"eval.timeout_s": 30.0}), profile(**{"search.automation.enabled": False}),
                  profile(**{"search.seed": 3}), profile(**{"search.max_depth": 9})):
        assert structural_key(THMS, other, "lean-x") != base
    assert structural_key(THMS, profile(), "lean-y") != base
    assert structural_key(THMS[:1], profile(), "lean-x") != base
    edited = [INDUCTION.model_copy(update={"preamble": TWIRL.replace("+ 2", "+ 3")}), FALSE]
    assert structural_key(edited, profile(), "lean-x") != base
    assert structural_key(THMS, profile(), "lean-x", limit=3) != base


async def test_cache_then_shipped_file_by_key(tmp_path: Path) -> None:
    prof = profile()
    key = structural_key(THMS, prof, "lean-x")
    shipped = StructuralBaseline(key=key, budget=12, nodes={"twirl_eq": 5, "succ_ne": None})
    path = write_shipped_structural(shipped, tmp_path / "set")
    assert path == cache_path(tmp_path / "set", key) and path.name.startswith("structural-")
    got = await measure_structural(prof, NoLean(), THMS, cache_dir=tmp_path / "cache",  # type: ignore[arg-type]
                                   shipped=tmp_path / "set", lean_version="lean-x")
    assert got == shipped
    cached = shipped.model_copy(update={"nodes": {"twirl_eq": 3, "succ_ne": None}})
    (tmp_path / "cache").mkdir()
    cache_path(tmp_path / "cache", key).write_text(cached.model_dump_json())
    got = await measure_structural(prof, NoLean(), THMS, cache_dir=tmp_path / "cache",  # type: ignore[arg-type]
                                   shipped=tmp_path / "set", lean_version="lean-x")
    assert got == cached  # the cache first
    # another budget: neither file applies, so Lean is asked
    with pytest.raises(AssertionError, match="searched"):
        await measure_structural(profile(**{"eval.budgets": [4, 16]}), NoLean(), THMS,  # type: ignore[arg-type]
                                 cache_dir=tmp_path / "cache", shipped=tmp_path / "set", lean_version="lean-x")
    cache_path(tmp_path / "cache", key).write_text("{not json")
    with pytest.raises(DataError, match="corrupt baseline"):
        read_cached(tmp_path / "cache", key)


async def test_a_killed_measurement_resumes_from_its_directory_in_the_cache(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Baseline (c) of a large set takes hours: it is searched in a directory of its key in the cache (what
    `run_eval` resumes from), kept when the search is killed and removed once the result is cached."""
    import burnqed_core.eval.run as run_mod
    from burnqed_core.eval.baselines.structural import partial_dir

    prof, calls = profile(), []

    async def fake_run_eval(profile: Profile, policy: object, env: object, theorems: Sequence[Theorem],
                            out_dir: Path, **kw: object) -> list[EvalResult]:
        calls.append(out_dir)
        if len(calls) == 1:  # the first search flushes one theorem's part and is killed
            out_dir.mkdir(parents=True)
            (out_dir / "part-00000.parquet").write_text("one theorem")
            raise KeyboardInterrupt
        assert (out_dir / "part-00000.parquet").read_text() == "one theorem"  # the second one finds it
        return [EvalResult(iteration=0, benchmark="b", theorem=t.name, budget=12, proved=False, nodes_used=12,
                           time_s=1.0) for t in theorems]

    monkeypatch.setattr(run_mod, "run_eval", fake_run_eval)
    cache = tmp_path / "cache"
    with pytest.raises(KeyboardInterrupt):
        await measure_structural(prof, NoLean(), THMS, cache_dir=cache, shipped=None,  # type: ignore[arg-type]
                                 lean_version="lean-x")
    key = structural_key(THMS, prof, "lean-x")
    assert calls == [partial_dir(cache, key)] and partial_dir(cache, key).is_dir()
    b = await measure_structural(prof, NoLean(), THMS, cache_dir=cache, shipped=None,  # type: ignore[arg-type]
                                 lean_version="lean-x")
    assert calls == [partial_dir(cache, key)] * 2 and b.nodes == {"twirl_eq": None, "succ_ne": None}
    assert cache_path(cache, key).is_file() and not partial_dir(cache, key).exists()


HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.readline()  # measuring, until the test has seen the other process wait
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write(sys.argv[3])
os.replace(sys.argv[2] + ".tmp", sys.argv[2])
"""


async def test_a_second_process_waits_for_the_first_measurement_and_reads_it(tmp_path: Path,
                                                                             caplog: pytest.LogCaptureFixture) -> None:
    """Two runs that need the same baseline (c) share the cache: while another process measures it (holding
    its lock), a second one waits instead of searching into the same directory, then reads the cached file
    without asking Lean."""
    import asyncio
    import sys

    from burnqed_core.eval.baselines.structural import lock_file

    caplog.set_level(logging.INFO)
    prof, cache = profile(), tmp_path / "cache"
    key = structural_key(THMS, prof, "lean-x")
    theirs = StructuralBaseline(key=key, budget=12, nodes={"twirl_eq": 4, "succ_ne": None}, profile="tiny")
    cache.mkdir()
    other = await asyncio.create_subprocess_exec(sys.executable, "-c", HOLDER, str(lock_file(cache, key)),
                                                 str(cache_path(cache, key)), theirs.model_dump_json(),
                                                 stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert other.stdin is not None and other.stdout is not None
    assert (await other.stdout.readline()).strip() == b"locked"
    waiting = asyncio.create_task(measure_structural(prof, NoLean(), THMS, cache_dir=cache,  # type: ignore[arg-type]
                                                     shipped=None, lean_version="lean-x"))
    for _ in range(600):  # until it waits on the lock (however loaded the machine), then let the holder finish
        if "another process holds" in caplog.text or waiting.done():
            break
        await asyncio.sleep(0.1)
    other.stdin.write(b"done\n")
    await other.stdin.drain()
    got = await asyncio.wait_for(waiting, 60)
    assert await other.wait() == 0
    assert got == theirs
    assert "another process holds" in caplog.text and "measured by another process meanwhile" in caplog.text


def test_a_shipped_file_replaces_only_its_own_sets(tmp_path: Path) -> None:
    a = StructuralBaseline(key="a" * 64, budget=12, nodes={"twirl_eq": 5, "succ_ne": None}, profile="tiny")
    write_shipped_structural(a, tmp_path)
    write_shipped_structural(a.model_copy(update={"key": "b" * 64}), tmp_path)  # same set, re-measured
    assert [p.name for p in tmp_path.glob("structural-*.json")] == [f"structural-{'b' * 24}.json"]
    write_shipped_structural(StructuralBaseline(key="c" * 64, budget=12, nodes={"other": 1}), tmp_path)
    assert len(list(tmp_path.glob("structural-*.json"))) == 2
    # the same set measured with another profile (other budgets: another key) keeps the first profile's file
    write_shipped_structural(a.model_copy(update={"key": "d" * 64, "budget": 64, "profile": "small"}), tmp_path)
    assert len(list(tmp_path.glob("structural-*.json"))) == 3
    with pytest.raises(DataError, match="unmeasured"):
        write_shipped_structural(a.model_copy(update={"infra": ["succ_ne"]}), tmp_path)


def test_rows_to_baseline_leave_lean_failures_unmeasured() -> None:
    def r(theorem: str, nodes: int | None, error: str = "", timeout: bool = False) -> EvalResult:
        return EvalResult(iteration=0, benchmark="b", theorem=theorem, budget=12, proved=nodes is not None,
                          nodes_to_proof=nodes, nodes_used=nodes or 12, time_s=1.0, error=error, timeout=timeout,
                          proof=["simp"] if nodes is not None else [])

    thms = [*THMS, Theorem(name="crashed", statement=": True"), Theorem(name="slow", statement=": True"),
            Theorem(name="never", statement=": True")]
    b = from_rows([r("twirl_eq", 4), r("succ_ne", None), r("crashed", None, error="infra"),
                   r("slow", None, timeout=True)], thms, key="k", budget=12)
    assert b.nodes == {"twirl_eq": 4, "succ_ne": None, "slow": None} and b.proofs == {"twirl_eq": ["simp"]}
    assert b.infra == ["crashed", "never"] and b.timeouts == ["slow"]
    assert b.proved("twirl_eq") and b.proved("twirl_eq", 4) and not b.proved("twirl_eq", 3)
    assert not b.measured("crashed") and not b.proved("crashed")


def test_at_pass_k_baseline_c_gets_k_searches() -> None:
    """Equal compute: read at pass@3, (c) searches each theorem three times, with seeds of their own (its key
    says so; a one-attempt key is unchanged); its rows give pass@3 and the mean over the attempts."""
    one = structural_key(THMS, profile(), "lean-x")
    three = structural_key(THMS, profile(**{"eval.pass_k": 3}), "lean-x")
    assert three != one and structural_key(THMS, profile(**{"eval.pass_k": 1}), "lean-x") == one

    def r(theorem: str, attempt: int, nodes: int | None) -> EvalResult:
        return EvalResult(iteration=0, benchmark="b", theorem=theorem, budget=12, attempt=attempt,
                          proved=nodes is not None, nodes_to_proof=nodes, nodes_used=nodes or 12, time_s=1.0,
                          proof=["simp"] if nodes is not None else [])

    b = from_rows([r("twirl_eq", 0, None), r("twirl_eq", 1, 9), r("twirl_eq", 2, 5),
                   r("succ_ne", 0, None), r("succ_ne", 1, None), r("succ_ne", 2, None)], THMS, key="k", budget=12,
                  attempts=3)
    assert b.attempts == 3 and b.nodes == {"twirl_eq": 5, "succ_ne": None}
    assert b.per_attempt == {"twirl_eq": [None, 9, 5], "succ_ne": [None, None, None]}
    assert b.proved("twirl_eq") and b.attempt_rate("twirl_eq") == pytest.approx(2 / 3)
    assert b.attempt_rate("twirl_eq", 6) == pytest.approx(1 / 3) and b.attempt_rate("succ_ne") == 0.0
    assert StructuralBaseline.model_validate_json(b.model_dump_json()) == b


async def test_the_seeded_structural_policy_orders_each_state_by_its_seed() -> None:
    """Baseline (c)'s k searches differ: each state's steps in an order of its seed (the same seed, the same
    order); without seeds, or unseeded, the fixed order."""
    from burnqed_core.policy.structural import StructuralPolicy, structural_steps

    state = "xs ys : List Nat\nn m : Nat\n⊢ f xs ys n = g m"
    fixed = structural_steps(state)
    seeded = StructuralPolicy(seeded=True)
    orders = [[c.tactic for c in (await seeded.generate([state], 8, 0.8, seeds=[s]))[0]] for s in range(6)]
    assert all(sorted(o) == sorted(fixed) for o in orders) and len({tuple(o) for o in orders}) > 1
    assert orders[0] == [c.tactic for c in (await seeded.generate([state], 8, 0.8, seeds=[0]))[0]]
    assert [c.tactic for c in (await StructuralPolicy().generate([state], 8, 0.8, seeds=[3]))[0]] == fixed
    assert [c.tactic for c in (await seeded.generate([state], 8, 0.8))[0]] == fixed


def test_tiny_ships_baseline_c_for_every_set_it_evaluates() -> None:
    """The main job reads baseline (c) of test and of the hand-written sample from the shipped files: a change
    to tiny's search or eval settings changes the key (re-ship with `burnqed lean baseline SET --structural
    --profile tiny [--sample N]`), else every fresh machine searches them again."""
    from burnqed_core.config import load_profile
    from burnqed_core.data.theorems.load import set_dir
    from burnqed_core.eval.baselines.structural import read_cached, structural_key
    from burnqed_core.eval.plan import set_theorems
    from burnqed_core.eval.settings import EvalSettings
    from burnqed_core.lean.install import lean_identity

    prof = load_profile("tiny", environ={})
    for spec, theorems in set_theorems(EvalSettings.of(prof)).items():
        found = read_cached(set_dir(spec), structural_key(theorems, prof, lean_identity()))
        assert found is not None, f"{spec}: no shipped baseline (c) for tiny's settings"
        assert set(found.nodes) == {t.name for t in theorems} and not found.infra
