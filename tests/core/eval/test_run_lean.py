"""The eval on the real embedded Lean (session `lean_pool`) with a real tiny
model trained here: both automation baselines, reproducible searches (same
seed, same trajectories and rows; a theorem's search independent of the other
theorems of the run), a monotone budget curve, proofs re-checked before they
count, and EBM ablation rows with a real (if simple) energy scorer."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from burnqed_core.config import Profile, load_profile
from burnqed_core.eval.baselines.measure import baseline_key, measure_baselines, read_cached
from burnqed_core.eval.baselines.single import AUTOMATION_TACTICS
from burnqed_core.eval.run import (
    WrongProofError,
    attempt_dir,
    read_eval_results,
    run_eval,
    verify_proofs,
)
from burnqed_core.eval.summary import SummaryOptions, summarize, summarize_variants
from burnqed_core.lean.types import GoalState, ProofEnv, Status, TacticResult
from burnqed_core.policy.fixed import FixedTacticsPolicy
from burnqed_core.records import EvalResult, Theorem
from burnqed_core.trajectory_io import read_results, read_trajectories

pytestmark = pytest.mark.lean

DBL = "def dbl : Nat → Nat\n  | 0 => 0\n  | n + 1 => dbl n + 2"
LEN = "def len : List Nat → Nat\n  | [] => 0\n  | _ :: t => len t + 1"
BASELINE_THEOREMS = [
    Theorem(name="dbl_eq", statement="(n : Nat) : dbl n = 2 * n", preamble=DBL),
    Theorem(name="len_append", statement="(xs ys : List Nat) : len (xs ++ ys) = len xs + len ys", preamble=LEN),
    Theorem(name="comm", statement="(a b : Nat) : a + b = b + a"),
    Theorem(name="false_succ", statement="(n : Nat) : n + 1 = n"),
]

THEOREMS = [
    Theorem(name="add_zero", statement="(n : Nat) : n + 0 = n"),
    Theorem(name="two_two", statement=": 2 + 2 = 4"),
    Theorem(name="imp_self", statement="(p : Prop) : p → p"),
    Theorem(name="three_three", statement=": 3 * 3 = 9"),
    Theorem(name="imp_twice", statement="(p q : Prop) : p → q → p"),
    Theorem(name="false_succ", statement="(n : Nat) : n + 1 = n"),
]
TIME_FIELDS = {"time_s", "policy_s", "lean_s", "engine_s", "ebm_s", "created_s", "elapsed_s"}


@pytest.fixture(scope="module")
def eval_model(search_model: Path) -> Path:
    return search_model


def eval_profile(**over: object) -> Profile:
    return load_profile("tiny", overrides={
        "search.concurrency": 3, "search.frontier_batch": 6, "search.flush_every": 1, "search.max_depth": 6,
        "search.temperature": 1.0, "eval.budgets": [2, 4, 10], "eval.pass_k": 2, "eval.num_candidates": 4,
        "policy.max_new_tokens": 12, "search.automation.enabled": False, **over})


def strip(rows: Sequence[object]) -> list[dict[str, object]]:
    """Records without their wall-clock fields (everything else must match byte for byte)."""
    return [{k: v for k, v in r.model_dump().items() if k not in TIME_FIELDS}  # type: ignore[attr-defined]
            for r in rows]


def by_theorem(rows: Sequence[object]) -> dict[str, list[dict[str, object]]]:
    out: dict[str, list[dict[str, object]]] = {}
    for r in strip(rows):
        out.setdefault(str(r["theorem"]), []).append(r)
    return out


async def test_definition_aware_baseline_closes_induction_over_a_user_definition(
        lean_pool: ProofEnv, tmp_path: Path) -> None:
    b = await measure_baselines(lean_pool, BASELINE_THEOREMS, tmp_path)
    assert b.single["comm"] in AUTOMATION_TACTICS
    for name in ("dbl_eq", "len_append"):
        assert b.single[name] is None, b  # no single automation tactic proves it ...
        assert b.defaware[name] is not None and b.defaware[name].startswith("induction "), b  # ... (b) does
        assert b.hard(name) is False
    assert "[dbl]" in (b.defaware["dbl_eq"] or "") and "[len]" in (b.defaware["len_append"] or "")
    assert b.single["false_succ"] is None and b.defaware["false_succ"] is None and b.hard("false_succ")
    # cached per benchmark content: read back without Lean
    assert await measure_baselines(None, BASELINE_THEOREMS, tmp_path) == b  # type: ignore[arg-type]
    edited = [*BASELINE_THEOREMS[:3], BASELINE_THEOREMS[3].model_copy(update={"statement": "(n : Nat) : n = n"})]
    assert read_cached(tmp_path, baseline_key(edited)) is None  # an edited benchmark is measured again


async def test_shipped_baselines_are_what_lean_measures(lean_pool: ProofEnv, tmp_path: Path) -> None:
    """The baseline file shipped beside the bundled benchmark is used by key, and a sample of it (hard
    theorems and theorems each baseline closes) is what Lean measures now."""
    from burnqed_core.data.theorems.load import load_theorems, set_dir
    from burnqed_core.lean.install import lean_identity

    bench = load_theorems("bundled:benchmark")
    from burnqed_core.config import load_profile

    timeout = load_profile("tiny", environ={}).lean.tactic_timeout_s  # what the shipped file was measured with
    shipped = await measure_baselines(None, bench, None, lean_version=lean_identity(),  # type: ignore[arg-type]
                                      shipped=set_dir("bundled:benchmark"), tactic_timeout_s=timeout)
    hard = [t for t in bench if shipped.hard(t.name)][:3]
    single = [t for t in bench if shipped.single[t.name] is not None][:3]
    defaware = [t for t in bench if shipped.single[t.name] is None and shipped.defaware[t.name] is not None][:3]
    sample = hard + single + defaware
    assert len(sample) == 9
    now = await measure_baselines(lean_pool, sample, tmp_path)
    for t in sample:
        assert now.hard(t.name) == shipped.hard(t.name), t.name
        assert (now.single[t.name] is None) == (shipped.single[t.name] is None), t.name
        assert (now.defaware[t.name] is None) == (shipped.defaware[t.name] is None), t.name


async def test_same_seed_same_searches_independent_of_other_theorems_and_monotone(
        lean_pool: ProofEnv, eval_model: Path, tmp_path: Path) -> None:
    from burnqed_core.policy.local import LocalPolicy

    prof = eval_profile()
    policy = LocalPolicy.from_config(prof.policy, eval_model)
    kw = {"iteration": 0, "benchmark": "tests", "model_path": eval_model, "progress": False,
          "handle_signals": False}
    rows_a = await run_eval(prof, policy, lean_pool, THEOREMS, tmp_path / "a", **kw)  # type: ignore[arg-type]
    rows_b = await run_eval(prof, policy, lean_pool, THEOREMS, tmp_path / "b", **kw)  # type: ignore[arg-type]
    assert len(rows_a) == 2 * len(THEOREMS)
    assert strip(rows_a) == strip(rows_b)
    for attempt in (0, 1):
        ta, tb = (read_trajectories(attempt_dir(tmp_path / d, "policy", attempt)) for d in "ab")
        assert by_theorem(ta) == by_theorem(tb)
        assert by_theorem(read_results(attempt_dir(tmp_path / "a", "policy", attempt))) == by_theorem(
            read_results(attempt_dir(tmp_path / "b", "policy", attempt)))
    # the attempts are independent searches: their own seeds
    assert len({r.seed for r in rows_a}) == 2

    # two of the theorems searched alone (other neighbours, other batches): the same searches
    alone = THEOREMS[2:4]
    rows_c = await run_eval(prof, policy, lean_pool, alone, tmp_path / "c", **kw)  # type: ignore[arg-type]
    assert strip(rows_c) == [r for r in strip(rows_a) if r["theorem"] in {t.name for t in alone}]
    tc = by_theorem(read_trajectories(attempt_dir(tmp_path / "c", "policy", 0)))
    ta = by_theorem(read_trajectories(attempt_dir(tmp_path / "a", "policy", 0)))
    assert tc == {t.name: ta[t.name] for t in alone}

    # the budget curve is read off one search: monotone, and it is what each search found
    s = summarize(read_eval_results(tmp_path / "a"), None,
                  SummaryOptions(iteration=0, benchmark="tests", budgets=[2, 4, 10]))
    rates = [b.all.rate for b in s.budgets]
    assert rates == sorted(rates) and s.cumulative.solved >= 3, s
    for b in s.budgets:
        solved = {r.theorem for r in rows_a
                  if r.proved and r.nodes_to_proof is not None and r.nodes_to_proof <= b.budget}
        assert b.all.solved == len(solved)
    assert "false_succ" not in s.solved
    # every proof in the rows passes the whole-theorem check
    await verify_proofs(lean_pool, THEOREMS, rows_a)


class LyingLean:
    """The real Lean pool, except that it claims ``exact lie`` closes every
    goal (what a per-tactic check bug would do): only the whole-proof re-check
    stands between that and a report."""

    def __init__(self, pool: ProofEnv) -> None:
        self.pool = pool
        self.lean_version = getattr(pool, "lean_version", None)
        self.fake: set[int] = set()

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def start_proof(self, theorem: Theorem) -> TacticResult:
        return await self.pool.start_proof(theorem)

    async def apply_many(self, items: Sequence[tuple[GoalState, str]]) -> list[TacticResult]:
        real = [(s, t) for s, t in items if t != "exact lie"]
        answers = iter(await self.pool.apply_many(real) if real else [])
        out = []
        for s, t in items:
            if t == "exact lie":
                lie = GoalState(theorem=s.theorem, tactics=(*s.tactics, t), goals=())
                self.fake.add(id(lie))
                out.append(TacticResult(status=Status.OK, state=lie))
            else:
                out.append(next(answers))
        return out

    async def check_proof(self, theorem: Theorem, tactics: Sequence[str]) -> object:
        return await self.pool.check_proof(theorem, tactics)  # type: ignore[attr-defined]

    async def free(self, states: Sequence[GoalState]) -> None:
        await self.pool.free([s for s in states if id(s) not in self.fake])


async def test_a_wrong_proof_never_enters_a_report(lean_pool: ProofEnv, tmp_path: Path) -> None:
    prof = eval_profile(**{"policy.backend": "fixed", "eval.pass_k": 1, "eval.budgets": [4]})
    env = LyingLean(lean_pool)
    theorems = [Theorem(name="false_succ", statement="(n : Nat) : n + 1 = n"),
                Theorem(name="comm", statement="(a b : Nat) : a + b = b + a")]
    rows = await run_eval(prof, FixedTacticsPolicy(["exact lie", "omega"]), env, theorems, tmp_path,  # type: ignore[arg-type]
                          iteration=0, benchmark="tests", progress=False, handle_signals=False)
    got = {r.theorem: r for r in rows}
    assert not got["false_succ"].proved and got["false_succ"].proof == []
    assert got["comm"].proved and got["comm"].proof == ["omega"]  # the lie came first and was rejected
    res = {r.theorem: r for r in read_results(attempt_dir(tmp_path, "policy", 0))}
    assert res["false_succ"].recheck_failures >= 1 and res["comm"].recheck_failures >= 1
    s = summarize(read_eval_results(tmp_path), None, SummaryOptions(iteration=0, benchmark="tests"))
    assert s.solved == ["comm"]
    # a row claiming a proof that Lean rejects (a tampered or buggy output) stops the report
    forged = EvalResult(iteration=0, benchmark="tests", theorem="false_succ", budget=4, proved=True,
                        nodes_to_proof=1, nodes_used=2, time_s=0.1, proof=["simp"])
    with pytest.raises(WrongProofError, match="false_succ"):
        await verify_proofs(lean_pool, theorems, [forged])


class LengthEnergy:
    """A real, simple energy: shorter goal text = closer to proved."""

    def __init__(self) -> None:
        self.calls = 0

    def score(self, states: list[str], goal: str) -> list[float]:
        self.calls += 1
        return [len(s) / max(len(goal), 1) for s in states]


async def test_ebm_ablation_rows_with_and_without_the_scorer(lean_pool: ProofEnv, eval_model: Path,
                                                             tmp_path: Path) -> None:
    from burnqed_core.policy.local import LocalPolicy

    prof = eval_profile(**{"search.beta": 1.0, "eval.pass_k": 1})
    policy = LocalPolicy.from_config(prof.policy, eval_model)
    theorems = THEOREMS[:4]
    kw = {"iteration": 1, "benchmark": "tests", "model_path": eval_model, "progress": False,
          "handle_signals": False}
    await run_eval(prof, policy, lean_pool, theorems, tmp_path, **kw)  # type: ignore[arg-type]
    scorer = LengthEnergy()
    await run_eval(prof, policy, lean_pool, theorems, tmp_path, scorer=scorer, ebm="length-energy", **kw)  # type: ignore[arg-type]
    assert scorer.calls > 0
    rows = read_eval_results(tmp_path)
    assert sorted({r.ebm for r in rows}) == ["", "length-energy"] and len(rows) == 2 * len(theorems)
    energies = [r.energy for r in read_trajectories(attempt_dir(tmp_path, "ebm", 0)) if not r.terminal]
    assert energies and all(e is not None for e in energies)  # the scorer ranked every open node
    s = summarize_variants(rows, None, SummaryOptions(iteration=1, benchmark="tests", budgets=[2, 4, 10]))
    assert s.ebm == "length-energy" and s.without_ebm is not None and s.without_ebm.theorems == len(theorems)
