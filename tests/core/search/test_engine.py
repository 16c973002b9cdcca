"""Engine logic on a toy proof environment: transposition, budgets, labels,
priority, batching, failure accounting.

The toy (a counter that tactics decrease; 0 = proved) stands in for Lean ONLY
in these pure engine-logic tests; `test_search_lean.py` runs the engine on the
real embedded Lean and a real model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from burnqed_core.config import SearchConfig
from burnqed_core.lean.types import CheckResult, GoalState, Status, TacticResult
from burnqed_core.policy.base import Candidate
from burnqed_core.records import Theorem
from burnqed_core.search.engine import SearchEngine, resolve_sampling
from burnqed_core.search.scoring import priority
from burnqed_core.search.tree import NodeStatus


def _goal(k: int) -> tuple[str, ...]:
    return () if k == 0 else (f"⊢ {k}",)


def _value(state: GoalState) -> int:
    return int(state.goals[0].removeprefix("⊢ "))


def _step(k: int, tactic: str) -> tuple[Status, int | None]:
    """The toy semantics: dec, dec2, half (even only), cheat (closes any goal
    but is refused by the whole-proof check), boom (infrastructure failure)."""
    if tactic == "dec" and k >= 1:
        return Status.OK, k - 1
    if tactic == "dec2" and k >= 2:
        return Status.OK, k - 2
    if tactic == "half" and k % 2 == 0 and k > 0:
        return Status.OK, k // 2
    if tactic == "cheat":
        return Status.OK, 0
    if tactic == "boom":
        return Status.CRASHED, None
    if tactic == "garbage":
        return Status.PARSE_ERROR, None
    return Status.TACTIC_ERROR, None


class ToyEnv:
    def __init__(self) -> None:
        self.apply_calls: list[int] = []
        self.checks: list[list[str]] = []
        self.freed = 0

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def start_proof(self, theorem: Theorem) -> TacticResult:
        if not theorem.statement.strip().isdigit():
            return TacticResult(status=Status.START_ERROR, message="unknown identifier")
        k = int(theorem.statement)
        return TacticResult(status=Status.OK, state=GoalState(theorem=theorem, goals=_goal(k)))

    async def apply_many(self, items: Sequence[tuple[GoalState, str]]) -> list[TacticResult]:
        self.apply_calls.append(len(items))
        await asyncio.sleep(0)
        out = []
        for state, tactic in items:
            status, k = _step(_value(state), tactic)
            if k is None:
                out.append(TacticResult(status=status, message=f"{tactic} failed"))
            else:
                out.append(TacticResult(status=status, state=GoalState(
                    theorem=state.theorem, tactics=(*state.tactics, tactic), goals=_goal(k))))
        return out

    async def check_proof(self, theorem: Theorem, tactics: Sequence[str]) -> CheckResult:
        self.checks.append(list(tactics))
        k = int(theorem.statement)
        for t in tactics:
            if t == "cheat":
                return CheckResult(ok=False, errors=["cheat is not allowed"])
            status, nk = _step(k, t)
            if nk is None:
                return CheckResult(ok=False, errors=[f"{t}: {status}"])
            k = nk
        return CheckResult(ok=k == 0, errors=[] if k == 0 else ["unsolved goals"])

    async def free(self, states: Sequence[GoalState]) -> None:
        self.freed += len(states)


class ToyPolicy:
    """Proposes the same tactics (with fixed logprobs) for every state, n
    samples drawn round-robin (so duplicates appear when n > len(tactics))."""

    name = "toy"

    def __init__(self, tactics: dict[str, float], delay: float = 0.0) -> None:
        self.tactics = list(tactics.items())
        self.calls: list[list[str]] = []
        self.seeds: list[list[int]] = []
        self.delay = delay

    async def generate(self, states: Sequence[str], n: int, temperature: float, max_new_tokens: int | None = None,
                       seeds: Sequence[int] | None = None) -> list[list[Candidate]]:
        self.calls.append(list(states))
        self.seeds.append(list(seeds or []))
        if self.delay:
            await asyncio.sleep(self.delay)
        return [[Candidate(tactic=self.tactics[i % len(self.tactics)][0],
                           logprob=self.tactics[i % len(self.tactics)][1], num_tokens=2)
                 for i in range(n)] for _ in states]

    async def encode(self, texts: Sequence[str]) -> list[list[float]]:
        return [[0.0] for _ in texts]

    async def close(self) -> None: ...


def thm(k: int | str, name: str | None = None) -> Theorem:
    return Theorem(name=name or f"t{k}", statement=str(k))


def cfg(**kw: object) -> SearchConfig:
    base: dict[str, object] = dict(max_nodes=50, max_depth=20, num_candidates=4, timeout_s=30.0,
                                   frontier_batch=4, concurrency=4)
    base.update(kw)
    return SearchConfig(**base)


async def run_all(engine: SearchEngine, theorems: list[Theorem]) -> dict:
    return {o.result.theorem: o async for o in engine.search_many(theorems)}


async def test_finds_proof_records_and_labels() -> None:
    env = ToyEnv()
    policy = ToyPolicy({"dec": -0.1, "half": -1.0, "fail": -2.0})
    engine = SearchEngine(policy, env, cfg(), check_invariants=True)
    out = await engine.search(thm(3))
    r = out.result
    assert r.proved and r.stop == "proved" and r.error == ""
    assert r.proof == ["dec", "dec", "dec"]
    assert env.checks[-1] == r.proof
    recs = out.records
    assert [x.node_id for x in recs] == list(range(len(recs))) and len(recs) == r.nodes
    pos = [x for x in recs if x.label == "positive"]
    assert [x.state for x in pos] == ["⊢ 3", "⊢ 2", "⊢ 1", ""]
    assert [x.tactic for x in pos] == ["", "dec", "dec", "dec"]
    assert pos[-1].terminal and all(x.proved for x in recs)
    assert all(x.goal == "⊢ 3" for x in recs)
    by_id = {x.node_id: x for x in recs}
    for x in recs:  # parent links, depth and cumulative logprob are consistent
        if x.parent_id >= 0:
            p = by_id[x.parent_id]
            assert x.depth == p.depth + 1
            assert x.cum_logprob == pytest.approx(p.cum_logprob + x.logprob)
    assert len({x.state for x in recs}) == len(recs)
    # "fail" errors everywhere; candidates: dec, half, fail (+ dup dec) -> 3 unique per expansion
    assert r.candidates_max == 3 and r.candidates_min == 3 and r.candidates_avg == 3
    assert r.tactic_errors >= 3 and r.infra_failures == 0
    assert r.tactics_tried == 3 * r.expansions
    assert env.freed == r.nodes  # every state freed when the search ends


async def test_transposition_expands_a_state_once() -> None:
    env = ToyEnv()
    # From 4: dec2 -> 2 and half -> 2 reach the same state
    policy = ToyPolicy({"dec2": -0.5, "half": -0.6})
    engine = SearchEngine(policy, env, cfg(max_nodes=50), check_invariants=True)
    out = await engine.search(thm(4))
    assert out.result.proved
    expanded = [s for call in policy.calls for s in call]
    assert len(expanded) == len(set(expanded)), "a state was expanded twice"
    assert out.result.transpositions >= 1
    states = [x.state for x in out.records if x.state]
    assert states.count("⊢ 2") == 1


async def test_node_budget_and_stop_reason() -> None:
    env = ToyEnv()
    policy = ToyPolicy({"dec": -0.1, "dec2": -0.2, "half": -0.3})
    engine = SearchEngine(policy, env, cfg(max_nodes=6, frontier_batch=1), check_invariants=True)
    out = await engine.search(thm(1000))
    assert not out.result.proved and out.result.stop == "max_nodes"
    assert out.result.nodes == 6 and len(out.records) == 6
    assert all(x.label != "positive" for x in out.records)


async def test_proof_in_the_step_that_spends_the_budget_counts() -> None:
    env = ToyEnv()
    # root 2: dec (best) fills the last node slot, dec2 then closes the goal in the same step
    policy = ToyPolicy({"dec": -0.1, "dec2": -0.5})
    engine = SearchEngine(policy, env, cfg(max_nodes=2), check_invariants=True)
    out = await engine.search(thm(2))
    assert out.result.proved and out.result.proof == ["dec2"]
    assert out.result.nodes == 3  # root, ⊢ 1, and the closed-goal node past the budget


async def test_depth_limit_exhausts() -> None:
    env = ToyEnv()
    policy = ToyPolicy({"dec": -0.1})
    engine = SearchEngine(policy, env, cfg(max_depth=3), check_invariants=True)
    out = await engine.search(thm(5))
    assert not out.result.proved and out.result.stop == "exhausted" and out.result.error == ""
    assert out.result.depth_reached == 3
    assert max(x.depth for x in out.records) == 3
    # the node at max depth was never expanded: no state at depth 3 was sent to the policy
    assert "⊢ 2" not in [s for call in policy.calls for s in call]
    assert all(x.label == "unknown" for x in out.records)


async def test_timeout() -> None:
    env = ToyEnv()
    policy = ToyPolicy({"dec": -0.1, "dec2": -0.3}, delay=0.05)
    engine = SearchEngine(policy, env, cfg(timeout_s=0.2, frontier_batch=1, max_nodes=10_000))
    out = await engine.search(thm(10_000))
    r = out.result
    assert r.stop == "timeout" and not r.proved
    assert 0.2 < r.time_s < 1.0
    assert r.policy_s > 0.1


async def test_infra_failures_are_not_verdicts() -> None:
    env = ToyEnv()
    policy = ToyPolicy({"boom": -0.1, "fail": -0.2})
    engine = SearchEngine(policy, env, cfg(), check_invariants=True)
    out = await engine.search(thm(3))
    r = out.result
    assert r.stop == "exhausted" and r.error == "infra" and r.infra_failures == 1 and r.tactic_errors == 1
    assert [x.label for x in out.records] == ["unknown"]  # root not dead: one failure was infra


async def test_dead_ends_are_negative_in_unproved_theorems() -> None:
    env = ToyEnv()
    policy = ToyPolicy({"half": -0.1, "garbage": -0.2})
    engine = SearchEngine(policy, env, cfg(), check_invariants=True)
    out = await engine.search(thm(12))  # 12 -> 6 -> 3, then every tactic fails
    r = out.result
    assert r.stop == "exhausted" and r.error == "" and not r.proved
    assert [(x.state, x.label) for x in out.records] == [
        ("⊢ 12", "negative"), ("⊢ 6", "negative"), ("⊢ 3", "negative")]


async def test_siblings_of_the_proof_path_are_negative() -> None:
    env = ToyEnv()
    # 6: dec -> 5 (best), dec2 -> 4, half -> 3; ... the proof goes through one child
    policy = ToyPolicy({"dec2": -0.1, "dec": -0.2, "half": -3.0})
    engine = SearchEngine(policy, env, cfg(frontier_batch=1), overlap=False, check_invariants=True)
    out = await engine.search(thm(6))
    r = out.result
    assert r.proved and r.proof == ["dec2", "dec2", "dec2"]
    labels = {x.state: x.label for x in out.records}
    assert labels["⊢ 6"] == labels["⊢ 4"] == labels["⊢ 2"] == "positive"
    # ⊢ 5 and ⊢ 3 are siblings on the path, never solved: negative
    assert labels["⊢ 5"] == "negative" and labels["⊢ 3"] == "negative"
    # ⊢ 1 is a child of a path node (2 -dec-> 1) and unsolved: negative too
    assert labels.get("⊢ 1", "negative") == "negative"


async def test_recheck_failure_is_recorded_and_search_goes_on() -> None:
    env = ToyEnv()
    policy = ToyPolicy({"cheat": -0.01, "dec": -0.5})
    engine = SearchEngine(policy, env, cfg(frontier_batch=1), check_invariants=True)
    out = await engine.search(thm(2))
    r = out.result
    assert r.proved and r.proof == ["dec", "dec"]
    assert r.recheck_failures >= 1 and "cheat is not allowed" in r.message
    cheats = [x for x in out.records if x.tactic == "cheat"]
    assert cheats and all(not x.terminal and x.label != "positive" for x in cheats)
    assert [x for x in out.records if x.terminal and x.label == "positive"]


async def test_start_error_is_not_unproved() -> None:
    env = ToyEnv()
    engine = SearchEngine(ToyPolicy({"dec": -0.1}), env, cfg())
    outs = await run_all(engine, [thm("oops", "bad"), thm(1)])
    assert outs["bad"].result.error == "start" and outs["bad"].result.stop == "start_error"
    assert outs["bad"].records == [] and "unknown identifier" in outs["bad"].result.message
    assert outs["t1"].result.proved


async def test_batching_across_theorems_matches_one_at_a_time() -> None:
    theorems = [thm(k) for k in (5, 8, 13, 21, 34, 3)]
    tactics = {"dec": -0.3, "dec2": -0.2, "half": -0.1}

    env1, pol1 = ToyEnv(), ToyPolicy(tactics)
    seq = await run_all(SearchEngine(pol1, env1, cfg(concurrency=1, frontier_batch=1), overlap=False), theorems)
    env8, pol8 = ToyEnv(), ToyPolicy(tactics)
    engine8 = SearchEngine(pol8, env8, cfg(concurrency=4, frontier_batch=8), check_invariants=True)
    bat = await run_all(engine8, theorems)

    assert set(seq) == set(bat) == {t.name for t in theorems}
    assert all(o.result.proved for o in seq.values()) and all(o.result.proved for o in bat.values())
    # batched: fewer, larger calls; states from several theorems share a call
    assert len(pol8.calls) < len(pol1.calls) / 2
    assert max(len(c) for c in pol8.calls) > 1
    assert len(env8.apply_calls) <= len(pol8.calls)
    assert max(env8.apply_calls) > 3
    assert all(len(c) == 1 for c in pol1.calls)
    st = engine8.stats
    assert st.theorems == len(theorems) and st.nodes == sum(o.result.nodes for o in bat.values())
    assert st.policy_s >= 0 and st.engine_s > 0


async def test_engine_keeps_no_state_between_searches() -> None:
    env = ToyEnv()
    engine = SearchEngine(ToyPolicy({"dec": -0.1, "half": -0.2}), env, cfg(frontier_batch=1), overlap=False)
    a = await engine.search(thm(9))
    b = await engine.search(thm(9))
    assert a.result.proof == b.result.proof and a.result.nodes == b.result.nodes
    assert [x.state for x in a.records] == [x.state for x in b.records]


class DistanceScorer:
    """Energy = the counter value: lower is closer to a proof."""

    def __init__(self) -> None:
        self.calls = 0

    async def score(self, states: list[str], goal: str) -> list[float]:
        self.calls += 1
        return [float(s.removeprefix("⊢ ") or 0) for s in states]


async def test_energy_changes_the_order_and_is_recorded() -> None:
    # the policy prefers dec, but the energy prefers the smaller states from half
    tactics = {"dec": -0.1, "half": -2.0}
    plain = await SearchEngine(ToyPolicy(tactics), ToyEnv(), cfg(frontier_batch=1), overlap=False).search(thm(64))
    scorer = DistanceScorer()
    cfg_ebm = cfg(frontier_batch=1, beta=1.0)
    engine = SearchEngine(ToyPolicy(tactics), ToyEnv(), cfg_ebm, scorer=scorer, overlap=False)
    ebm = await engine.search(thm(64))
    assert ebm.result.proved and scorer.calls > 0
    assert ebm.result.expansions < plain.result.expansions
    assert ebm.result.proof[:5] == ["half"] * 5  # 64 -> 2, then 2 -> 1 -> 0
    assert all(x.energy is not None for x in ebm.records if x.state)
    root = ebm.records[0]
    assert root.energy == 64.0
    child = next(x for x in ebm.records if x.state == "⊢ 32")
    assert child.energy == 32.0
    assert priority(child.cum_logprob, child.depth, child.energy, 1.0, 1.0) == pytest.approx(-2.0 - 32.0)


def test_priority_is_length_normalised() -> None:
    assert priority(0.0, 0, None, 1.0, 0.0) == 0.0
    assert priority(-3.0, 3, None, 1.0, 0.0) == pytest.approx(-1.0)
    assert priority(-3.0, 3, 2.0, 0.5, 0.25) == pytest.approx(-0.5 - 0.5)
    assert priority(-3.0, 3, 2.0, 1.0, 0.0) == pytest.approx(-1.0)  # beta 0: energy ignored


def test_sampling_defaults_switch_with_an_ebm() -> None:
    c = SearchConfig(temperature=0.6, num_candidates=4, ebm_temperature=1.0, ebm_num_candidates=8)
    assert resolve_sampling(c).temperature == 0.6 and resolve_sampling(c).num_candidates == 4
    s = resolve_sampling(c, ebm=True)
    assert (s.temperature, s.num_candidates) == (1.0, 8)
    s = resolve_sampling(c, ebm=True, temperature=1.5, num_candidates=2)
    assert (s.temperature, s.num_candidates) == (1.5, 2)


def test_tree_invariants_catch_corruption() -> None:
    from burnqed_core.search.tree import SearchTree, TreeInvariantError

    t = SearchTree()
    root = t.add_node(parent=None, state=None, text="⊢ 1", tactic="", logprob=0.0, created_s=0, elapsed_s=0)
    root.status = NodeStatus.EXPANDED
    child = t.add_node(parent=root, state=None, text="⊢ 0b", tactic="x", logprob=-1.0, created_s=0, elapsed_s=0)
    t.check_invariants()
    child.cum_logprob = 5.0
    with pytest.raises(TreeInvariantError):
        t.check_invariants()
    child.cum_logprob = -1.0
    with pytest.raises(TreeInvariantError):
        t.add_node(parent=root, state=None, text="⊢ 1", tactic="y", logprob=-1.0, created_s=0, elapsed_s=0)


async def test_a_theorems_search_does_not_depend_on_the_theorems_beside_it() -> None:
    """Each theorem gets the same nodes per batch whatever else is searched, and
    each expansion a seed of (seed, theorem, node): searched alone or among
    others (a resume, another shard), a theorem's tree is the same."""
    from burnqed_core.search.engine import expansion_seed

    tactics = {"dec": -0.9, "dec2": -0.5, "half": -0.1}
    conf = cfg(concurrency=3, frontier_batch=6, max_nodes=9, seed=7)
    together = await run_all(SearchEngine(ToyPolicy(tactics), ToyEnv(), conf), [thm(k) for k in (40, 27, 33, 50)])
    pol = ToyPolicy(tactics)
    alone = await run_all(SearchEngine(pol, ToyEnv(), conf), [thm(27)])

    def strip(o: object) -> list[dict[str, object]]:
        return [{k: v for k, v in r.model_dump().items() if k not in ("created_s", "elapsed_s")}
                for r in o.records]  # type: ignore[attr-defined]

    assert strip(alone["t27"]) == strip(together["t27"])
    assert alone["t27"].result.nodes == together["t27"].result.nodes == 9  # the budget bound: order mattered
    expanded = {r.parent_id for r in alone["t27"].records if r.parent_id >= 0}
    seen = [s for call in pol.seeds for s in call]
    assert len(seen) == len(set(seen))  # one seed per expansion, each node expanded once
    assert {expansion_seed(7, "t27", n) for n in expanded} <= set(seen) <= {
        expansion_seed(7, "t27", n) for n in range(alone["t27"].result.nodes)}
    assert max(len(c) for c in pol.calls) == 2  # frontier_batch // concurrency nodes per theorem per batch


class HotPolicy(ToyPolicy):
    """Samples only ``garbage`` below temperature 1.0; hotter, ``dec`` too (a model whose right tactic is
    too unlikely for a few cool samples)."""

    def __init__(self) -> None:
        super().__init__({"garbage": -0.1})
        self.temperatures: list[float] = []

    async def generate(self, states: Sequence[str], n: int, temperature: float, max_new_tokens: int | None = None,
                       seeds: Sequence[int] | None = None) -> list[list[Candidate]]:
        self.calls.append(list(states))
        self.seeds.append(list(seeds or []))
        self.temperatures.append(temperature)
        tactics = ["garbage"] if temperature < 1.0 else ["garbage", "dec"]
        return [[Candidate(tactic=tactics[i % len(tactics)], logprob=-1.0, num_tokens=2) for i in range(n)]
                for _ in states]


async def test_a_dry_frontier_is_resampled_hotter_with_fresh_seeds() -> None:
    env = ToyEnv()
    off = await SearchEngine(HotPolicy(), env, cfg(temperature=0.8), check_invariants=True).search(thm(2))
    assert not off.result.proved and off.result.stop == "exhausted" and off.result.expansions == 1

    env = ToyEnv()
    policy = HotPolicy()
    engine = SearchEngine(policy, env, cfg(temperature=0.8, resample_rounds=2, resample_temperature_step=0.2),
                          check_invariants=True)
    out = await engine.search(thm(2))
    assert out.result.proved and out.result.proof == ["dec", "dec"]
    assert policy.temperatures[:2] == [0.8, pytest.approx(1.0)]
    assert policy.seeds[0] != policy.seeds[1]  # the root's second expansion draws new samples
    # the root's failed tactic is not sent to Lean again: the re-expansion applies only `dec`
    assert env.apply_calls[:2] == [1, 1]
    root = out.records[0]
    assert root.node_id == 0 and root.label == "positive"


async def test_resampling_is_bounded_by_its_rounds() -> None:
    env = ToyEnv()
    policy = ToyPolicy({"garbage": -0.1})
    out = await SearchEngine(policy, env, cfg(resample_rounds=3), check_invariants=True).search(thm(4))
    assert not out.result.proved and out.result.stop == "exhausted"
    assert len(policy.calls) == 4  # the first expansion and three rounds
    assert env.apply_calls == [1]  # every later round only re-proposed the tactic already tried


async def test_max_checks_caps_every_candidate_sent_to_lean() -> None:
    """search.max_checks counts every candidate sent to Lean, failing or not; the search ends ``max_checks``
    with the rest of its node budget unspent, and never sends more than the cap."""
    env = ToyEnv()
    policy = ToyPolicy({"fail": -0.1, "garbage": -0.2, "dec": -0.3})
    engine = SearchEngine(policy, env, cfg(max_checks=7, frontier_batch=1, concurrency=1), check_invariants=True)
    r = (await engine.search(thm(40))).result
    assert not r.proved and r.stop == "max_checks"
    assert r.tactics_tried == 7 == sum(env.apply_calls)
    assert r.tactic_errors >= 4  # the failing candidates count too
    assert r.nodes < 50


async def test_max_checks_keeps_the_most_likely_candidates_of_the_last_expansion() -> None:
    env = ToyEnv()
    policy = ToyPolicy({"fail": -3.0, "dec": -0.1, "garbage": -2.0})
    engine = SearchEngine(policy, env, cfg(max_checks=4, frontier_batch=1, concurrency=1))
    r = (await engine.search(thm(2))).result
    # 3 checks at the root, the one left goes to the most likely candidate of the next expansion
    assert r.proved and r.proof == ["dec", "dec"] and r.tactics_tried == 4


async def test_without_max_checks_nothing_changes() -> None:
    a = await SearchEngine(ToyPolicy({"dec": -0.1, "fail": -1.0}), ToyEnv(), cfg()).search(thm(5))
    b = await SearchEngine(ToyPolicy({"dec": -0.1, "fail": -1.0}), ToyEnv(), cfg(max_checks=10_000)).search(thm(5))
    assert a.result.proof == b.result.proof and a.result.tactics_tried == b.result.tactics_tried


class ScoringToyPolicy(ToyPolicy):
    """`ToyPolicy` whose model also scores tactics (`TacticScorer`): ``scores`` by tactic text, a low default."""

    def __init__(self, tactics: dict[str, float], scores: dict[str, float]) -> None:
        super().__init__(tactics)
        self.scores = scores
        self.scored: list[list[list[str]]] = []

    async def score(self, states: Sequence[str], tactics: Sequence[Sequence[str]],
                    premises: Sequence[Sequence[str]] | None = None) -> list[list[float]]:
        self.scored.append([list(t) for t in tactics])
        return [[self.scores.get(t, -20.0) for t in row] for row in tactics]


async def test_max_width_tries_the_best_ranked_first_and_the_rest_later() -> None:
    """With max_width 1 a node sends one candidate per expansion, best first, and goes back on the frontier
    for the next one: every candidate is tried in rank order, one check per expansion."""
    env = ToyEnv()
    policy = ToyPolicy({"fail": -0.1, "garbage": -0.2, "dec": -0.3})
    r = (await SearchEngine(policy, env, cfg(max_width=1, frontier_batch=1, concurrency=1),
                            check_invariants=True).search(thm(1))).result
    assert r.proved and r.proof == ["dec"]
    assert env.apply_calls == [1, 1, 1] and r.tactics_tried == 3


async def test_a_node_with_candidates_left_competes_with_its_children() -> None:
    """The rest of a node is queued at the priority its next candidate's child would have: a child reached
    by a likely step is expanded before the parent's unlikely second candidate (without overlap, which picks
    the next batch before the current one's children exist)."""
    env = ToyEnv()
    policy = ToyPolicy({"dec": -0.1, "fail": -4.0})
    r = (await SearchEngine(policy, env, cfg(max_width=1, frontier_batch=1, concurrency=1), overlap=False,
                            check_invariants=True).search(thm(3))).result
    assert r.proved and r.proof == ["dec", "dec", "dec"] and r.tactics_tried == 3


async def test_rank_policy_orders_every_candidate_by_the_policys_scores() -> None:
    """search.rank 'policy': the candidates' log-probabilities are the policy model's scores, whatever their
    source or sampled log-probability; the child's edge keeps the score."""
    prior = ToyPolicy({"fail": -0.1, "dec": -5.0})
    env = ToyEnv()
    r0 = (await SearchEngine(prior, env, cfg(max_width=1, frontier_batch=1, concurrency=1)).search(thm(2))).result
    scoring = ScoringToyPolicy({"fail": -0.1, "dec": -5.0}, {"dec": -0.2, "fail": -6.0})
    out = await SearchEngine(scoring, ToyEnv(), cfg(max_width=1, frontier_batch=1, concurrency=1, rank="policy"),
                             overlap=False, check_invariants=True).search(thm(2))
    r1 = out.result
    assert r0.proved and r1.proved and r1.proof == ["dec", "dec"]
    assert r1.tactics_tried == 2 < r0.tactics_tried  # the policy's ranking spends no check on "fail"
    assert scoring.scored and all(sorted(row) == ["dec", "fail"] for call in scoring.scored for row in call)
    assert [rec.logprob for rec in out.records if rec.tactic == "dec"] == [-0.2, -0.2]


async def test_rank_policy_without_a_scoring_policy_ranks_by_the_priors() -> None:
    """Baseline (c) has no model: with search.rank 'policy' its search is the prior-ranked one."""
    a = await SearchEngine(ToyPolicy({"fail": -0.1, "dec": -5.0}), ToyEnv(),
                           cfg(max_width=1, rank="policy")).search(thm(3))
    b = await SearchEngine(ToyPolicy({"fail": -0.1, "dec": -5.0}), ToyEnv(), cfg(max_width=1)).search(thm(3))
    assert a.result.proof == b.result.proof and a.result.tactics_tried == b.result.tactics_tried
