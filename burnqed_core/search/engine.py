"""Best-first proof search with batched expansion across theorems.

`SearchEngine.search_many` searches up to ``concurrency`` theorems at once.
Each step pops up to ``frontier_batch`` nodes (round-robin over the
theorems, best node of each first), asks the policy for all their candidates
in ONE ``generate`` call, and sends all (state, tactic) pairs to Lean in ONE
``apply_many`` call. With ``overlap`` on, the policy already generates for the
next batch while Lean checks the current one (the next batch is chosen before
the current one's children are known: throughput for a little best-first
order).

Budgets per theorem: ``max_nodes`` (nodes created, root included),
``max_depth`` (nodes this deep are kept but not expanded), ``timeout_s`` (a
safety cap on the time CHARGED to this theorem: its share of the policy,
Lean and engine time of the batches it was in, so theorems searched at the
same time do not spend each other's time; recorded as ``stop="timeout"``).
The step in flight when a budget runs out is still integrated, so a proof
found in it counts; closed-goal nodes are always created, even past
``max_nodes``. ``SearchResult.nodes_to_proof`` is the number of nodes
created before the accepted proof's closing node: a search with a smaller
node budget B is read off as "proved iff nodes_to_proof <= B".

Reproducibility: every expansion asks the policy for its candidates with a
seed derived from (``config.seed``, theorem name, node id) (`expansion_seed`),
and each theorem gets the same number of nodes per batch whatever else is
searched (``max(1, frontier_batch // concurrency)``), so a theorem's search
depends only on the model, the sampling settings, the seed and the theorem:
not on call order, on the other theorems of the run, or on a resume (as long
as no timeout binds).

A proof is found when a tactic leaves no goals; it counts only after the
whole tactic path passes ``ProofEnv.check_proof`` (a failed re-check is
recorded and the search goes on). Infrastructure failures (``Status.is_infra``:
the pool already retried once) are counted apart from tactic errors and never
make a node dead or a theorem unprovable: an unproved search that saw one and
ran out of frontier or time reports ``error="infra"``.

Resampling (``search.resample_rounds``): a small policy often puts its
samples on two or three tactics, and when all of them fail the frontier runs
dry with most of the node budget unspent. Then every expanded node is queued
for another expansion, round r sampling at ``temperature + r x
search.resample_temperature_step`` with seeds of its own, and a tactic
already tried on a node is not sent to Lean again; after the last round the
search ends ``exhausted`` as before.

With ``search.automation.enabled`` every expansion adds automation tactics
to the policy's (deduplicated) samples (`burnqed_core.search.automation`):
one candidate per tactic text, each marked with its origin (``policy``,
``automation``, ``both``) on its edge, its node's trajectory row and the
proof (``SearchResult.proof_sources``). With ``search.automation.partial:
drop``, an automation-only candidate below the root becomes a node only when
it closes a goal (the state after has fewer goals); otherwise it is a failed
edge: rewriting steps of the automation (a ``simp_all`` that unfolds a
definition and stops) no longer fill the node budget, which is then spent on
the policy's structural steps between automation calls.

The candidates of an expansion come from one builder for every searcher (`burnqed_core.search.candidates`):
the policy's samples, the automation tactics, with ``search.structural`` baseline (c)'s structural steps and
with ``search.premises`` the premise steps of the premises retrieved for the state under the premise rule (a
re-ranked index, `burnqed_core.premises.rerank`, first encodes each batch's states: `PremiseIndex.prepare`,
charged to the policy). Each candidate sent to Lean is one check (`SearchResult.tactics_tried`);
``search.max_checks`` caps them per theorem (the most likely candidates of the last expansion first), and a
search that spends them ends ``max_checks``: the compute measure searchers are compared at, whatever share of
their checks become nodes.

All per-theorem state lives in a `_Search` created for that theorem and
dropped when it ends; the engine object only holds settings and aggregate
counters (`EngineStats`).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.config import SearchConfig
from burnqed_core.data.pairs.prompt import format_of
from burnqed_core.lean.types import GoalState, ProofEnv, Status, TacticResult
from burnqed_core.policy.base import Candidate, Policy, TacticScorer, dedup_candidates, derive_seed
from burnqed_core.premises.index import PremiseIndex
from burnqed_core.records import Theorem, TrajectoryRecord
from burnqed_core.search.automation import Source, SourcedCandidate, tactic_key
from burnqed_core.search.candidates import CandidateBuilder
from burnqed_core.search.scoring import EnergyScorer, priority, score_states
from burnqed_core.search.tree import Node, NodeStatus, SearchTree
from burnqed_core.trajectory_io import SearchResult, StopReason

log = logging.getLogger(__name__)

PARTIAL_DROPPED = "automation closed no goal (search.automation.partial: drop)"


class Sampling(BaseModel):
    """Sampling settings of one search run (recorded in the run record)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    temperature: float = Field(gt=0)
    num_candidates: int = Field(ge=1)
    max_new_tokens: int | None = None


def resolve_sampling(
    config: SearchConfig,
    *,
    ebm: bool = False,
    temperature: float | None = None,
    num_candidates: int | None = None,
    max_new_tokens: int | None = None,
) -> Sampling:
    """Explicit values win; otherwise the profile's, switched to the EBM
    defaults (``search.ebm_temperature``, ``search.ebm_num_candidates``) when an EBM scores the search,
    because dedup at low temperature leaves the EBM too little to rank."""
    if temperature is None:
        temperature = config.ebm_temperature if ebm else config.temperature
    if num_candidates is None:
        num_candidates = config.ebm_num_candidates if ebm else config.num_candidates
    return Sampling(temperature=temperature, num_candidates=num_candidates, max_new_tokens=max_new_tokens)


@dataclass
class SearchOutcome:
    result: SearchResult
    records: list[TrajectoryRecord]


@dataclass
class EngineStats:
    """Aggregate counters over every search this engine ran (benchmarks, logs).
    Times are wall time of the calls; concurrent calls of one kind (the starts
    of a refill, the re-checks of a step) count once."""

    policy_s: float = 0.0
    lean_s: float = 0.0
    engine_s: float = 0.0
    ebm_s: float = 0.0
    generate_calls: int = 0
    apply_calls: int = 0
    states_generated: int = 0
    pairs_applied: int = 0
    expansions: int = 0
    nodes: int = 0
    theorems: int = 0

    def summary(self) -> dict[str, float]:
        nodes = max(self.nodes, 1)
        return {
            "theorems": self.theorems,
            "nodes": self.nodes,
            "expansions": self.expansions,
            "policy_s": self.policy_s,
            "lean_s": self.lean_s,
            "engine_s": self.engine_s,
            "engine_ms_per_node": 1000 * self.engine_s / nodes,
            "avg_states_per_generate": self.states_generated / max(self.generate_calls, 1),
            "avg_pairs_per_apply": self.pairs_applied / max(self.apply_calls, 1),
        }


@dataclass(eq=False)
class _Search:
    """Everything about one theorem's search; created per theorem."""

    theorem: Theorem
    t0: float
    t0_unix: float
    tree: SearchTree = field(default_factory=SearchTree)
    goal: str = ""
    frontier: list[tuple[float, int, int]] = field(default_factory=list)
    in_flight: int = 0
    done: bool = False
    proved: bool = False
    stop: StopReason | None = None
    expansions: int = 0
    candidates: list[int] = field(default_factory=list)
    tactics_tried: int = 0
    tactic_errors: int = 0
    infra_failures: int = 0
    transpositions: int = 0
    recheck_failures: int = 0
    automation_tried: int = 0
    checks: int = 0  # Lean tactic checks sent (every candidate, closing or not), in flight included
    builder: CandidateBuilder | None = None
    resample_round: int = 0
    reexpand: list[tuple[float, int, int]] = field(default_factory=list)
    partial: set[int] = field(default_factory=set)  # expanded nodes with ranked candidates left (max_width)
    times_expanded: dict[int, int] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    policy_s: float = 0.0
    lean_s: float = 0.0
    engine_s: float = 0.0
    ebm_s: float = 0.0

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def charged(self) -> float:
        """Seconds charged to this theorem (its shares of shared calls)."""
        return self.policy_s + self.lean_s + self.engine_s + self.ebm_s

    def push(self, node: Node) -> None:
        heapq.heappush(self.frontier, (-node.priority, node.node_id, node.node_id))

    def push_rest(self, node: Node, priority: float) -> None:
        """Put an expanded node with candidates left back on the frontier (``search.max_width``)."""
        self.partial.add(node.node_id)
        heapq.heappush(self.frontier, (-priority, node.node_id, node.node_id))

    def _live(self, i: int) -> bool:
        node = self.tree.nodes[i]
        return node.status is NodeStatus.OPEN or (node.status is NodeStatus.EXPANDED and i in self.partial)

    def pop(self) -> Node | None:
        """The best open node (or expanded node with candidates left); when none is left, the best node
        queued for another expansion."""
        while self.frontier:
            _, _, i = heapq.heappop(self.frontier)
            if self._live(i):
                self.partial.discard(i)
                return self.tree.nodes[i]
        while self.reexpand:
            _, _, i = heapq.heappop(self.reexpand)
            node = self.tree.nodes[i]
            if node.status is NodeStatus.EXPANDED:
                return node
        return None

    def has_open(self) -> bool:
        return bool(self.reexpand) or any(self._live(i) for _, _, i in self.frontier)

    def resample(self, max_depth: int) -> bool:
        """Queue every expanded node above ``max_depth`` for another round of samples (a frontier that ran
        dry); False when there is none."""
        nodes = [n for n in self.tree.nodes if n.status is NodeStatus.EXPANDED and n.depth < max_depth]
        if not nodes:
            return False
        self.resample_round += 1
        for n in nodes:
            heapq.heappush(self.reexpand, (-n.priority, n.node_id, n.node_id))
        return True


@dataclass(eq=False)
class _Expansion:
    search: _Search
    node: Node
    candidates: list[Candidate] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    results: list[TacticResult] | None = None
    round: int = 0  # how many times the node was expanded before this expansion
    rest_logprob: float | None = None  # the best candidate left for a later expansion (``search.max_width``)


def expansion_seed(seed: int, theorem: str, node_id: int, round: int = 0) -> int:
    """The policy seed of one expansion: a function of the run's seed, the
    theorem, the node and how many times it was expanded before (an eval
    attempt has a seed of its own)."""
    return derive_seed("expand", seed, theorem, node_id) if round == 0 else \
        derive_seed("expand", seed, theorem, node_id, round)


@dataclass(eq=False)
class _Schedule:
    """The state of one `SearchEngine.search_many` call: the input not started yet, the searches under way, the
    outcomes not yielded yet, the policy's and Lean's task in flight, and the round-robin position."""

    pending: Iterator[Theorem]
    input_left: bool = True
    active: list[_Search] = field(default_factory=list)
    finished: list[SearchOutcome] = field(default_factory=list)
    gen_task: asyncio.Task[list[_Expansion]] | None = None
    lean_task: asyncio.Task[None] | None = None
    rotation: int = 0

    def take(self, n: int) -> list[Theorem]:
        """Up to ``n`` theorems from the input (``input_left`` turns false when it is exhausted)."""
        out: list[Theorem] = []
        while len(out) < n:
            try:
                out.append(next(self.pending))
            except StopIteration:
                self.input_left = False
                break
        return out


async def _cancel(*tasks: asyncio.Task[Any] | None) -> None:
    """Cancel the tasks still running and wait for them (their errors are of no interest any more)."""
    for task in tasks:
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass


class SearchEngine:
    """Best-first search driver. ``env`` is a `ProofEnv` (normally the Lean
    pool), ``policy`` a `Policy`; ``scorer`` an optional EBM."""

    def __init__(
        self,
        policy: Policy,
        env: ProofEnv,
        config: SearchConfig,
        *,
        sampling: Sampling | None = None,
        scorer: EnergyScorer | None = None,
        iteration: int = 0,
        overlap: bool = True,
        check_invariants: bool = False,
        premises: PremiseIndex | None = None,
    ) -> None:
        if config.premises.enabled and premises is None:
            raise ValueError("search.premises.enabled needs a premise index (the premise_index stage's)")
        self.policy = policy
        self.premises = premises
        # premise lines the policy's prompt shows (its model's `PromptFormat.premises`): none without an index
        self.prompt_premises = format_of(policy).premises if premises is not None else 0
        if format_of(policy).premises and premises is None:
            log.warning("the policy's prompt shows %d premises but the search has no premise index: it sees none",
                        format_of(policy).premises)
        # the k the candidate builders retrieve at: the premise steps' and the prompt's
        self.premise_ks = tuple(sorted({k for k in (config.premises.k if config.premises.enabled else 0,
                                                    self.prompt_premises) if k > 0}))
        self.env = env
        self.config = config
        self.scorer = scorer
        self.sampling = sampling or resolve_sampling(config, ebm=scorer is not None)
        self.iteration = iteration
        self.overlap = overlap
        self.check_invariants = check_invariants
        # candidates ranked by the policy's model (search.rank 'policy'); a policy that cannot score (baseline
        # (c)'s, which has no model) ranks by the priors
        self.ranker: TacticScorer | None = policy if (
            config.rank == "policy" and isinstance(policy, TacticScorer)) else None
        if config.rank == "policy" and self.ranker is None:
            log.info("search.rank is 'policy' but %s scores no tactics: candidates ranked by their priors",
                     getattr(policy, "name", type(policy).__name__))
        self.stats = EngineStats()

    # -- public -----------------------------------------------------------

    async def search(self, theorem: Theorem) -> SearchOutcome:
        """Search one theorem (batching then only spans its own frontier)."""
        async with contextlib.aclosing(self.search_many([theorem])) as outcomes:
            async for outcome in outcomes:
                return outcome
        raise RuntimeError("search_many yielded nothing")  # pragma: no cover

    async def search_many(self, theorems: Iterable[Theorem]) -> AsyncIterator[SearchOutcome]:
        """Search theorems ``concurrency`` at a time; yield each outcome as
        soon as its search ends (not in input order)."""
        sched = _Schedule(pending=iter(theorems))
        try:
            while True:
                await self._admit(sched)
                while sched.finished:
                    yield sched.finished.pop(0)
                if not sched.active:
                    if sched.input_left:
                        continue
                    break
                await self._step(sched)
        finally:
            await _cancel(sched.gen_task, sched.lean_task)

    # -- scheduling -------------------------------------------------------

    async def _admit(self, sched: _Schedule) -> None:
        """Start theorems from the input until ``concurrency`` searches are active (or the input is exhausted);
        a theorem whose start fails is finished at once."""
        if not sched.input_left or len(sched.active) >= self.config.concurrency:
            return
        batch_in = sched.take(self.config.concurrency - len(sched.active))
        if not batch_in:
            return
        t0 = time.perf_counter()
        started = await asyncio.gather(*(self._start(thm) for thm in batch_in))
        self.stats.lean_s += time.perf_counter() - t0  # wall time: the starts overlap
        for item in started:
            if isinstance(item, SearchOutcome):
                sched.finished.append(item)
            else:
                sched.active.append(item)

    async def _step(self, sched: _Schedule) -> None:
        """One batch: select and generate its candidates (unless the previous step already did, with
        ``overlap``), check them in Lean while the next batch is generated, integrate them and finish the
        searches that ended. With no node to expand, end the searches that are done (resampling may refill
        a frontier instead)."""
        if sched.gen_task is None:
            sched.rotation += 1
            batch = self._select(sched.active, sched.rotation)
            if not batch:
                ended, refilled = await self._finish_done(sched.active)
                if not ended and not refilled:
                    raise RuntimeError("search stalled: no node to expand and no search ended")
                sched.finished.extend(ended)
                return
            sched.gen_task = asyncio.create_task(self._generate(batch))
        expansions = await sched.gen_task
        sched.gen_task = None
        sched.lean_task = asyncio.create_task(self._apply(expansions))
        if self.overlap:
            sched.rotation += 1
            nxt = self._select(sched.active, sched.rotation)
            if nxt:
                sched.gen_task = asyncio.create_task(self._generate(nxt))
        await sched.lean_task
        sched.lean_task = None
        await self._integrate(expansions)
        sched.finished.extend((await self._finish_done(sched.active))[0])

    # -- steps ------------------------------------------------------------

    async def _start(self, theorem: Theorem) -> _Search | SearchOutcome:
        s = _Search(theorem=theorem, t0=time.perf_counter(), t0_unix=time.time())
        s.builder = CandidateBuilder(self.config, theorem, self.premises)
        res = await self.env.start_proof(theorem)
        s.lean_s += time.perf_counter() - s.t0
        if not res.ok:
            infra = res.status.is_infra or res.status is Status.OK
            stop: StopReason = "infra" if infra else "start_error"
            log.info("%s: start failed (%s): %s", theorem.name, res.status, res.message[:200])
            self.stats.theorems += 1
            result = SearchResult(
                theorem=theorem.name, proved=False, stop=stop, error="infra" if infra else "start",
                message=res.message[:2000], time_s=s.elapsed(), lean_s=s.lean_s,
                infra_failures=1 if infra else 0,
            )
            return SearchOutcome(result, [])
        state = res.state
        assert state is not None
        root = s.tree.add_node(parent=None, state=state, text=state.text, tactic="", logprob=0.0,
                               created_s=time.time(), elapsed_s=s.elapsed())
        s.goal = root.text
        if self.scorer is not None:
            t = time.perf_counter()
            (root.energy,) = await score_states(self.scorer, [root.text], s.goal)
            s.ebm_s += time.perf_counter() - t
        root.priority = priority(0.0, 0, root.energy, self.config.alpha, self.config.beta)
        if self.config.max_depth > 0:
            s.push(root)
        return s

    @property
    def per_theorem(self) -> int:
        """Nodes each theorem gets per batch: the same whatever else is searched."""
        return max(1, self.config.frontier_batch // max(1, self.config.concurrency))

    def _select(self, active: Sequence[_Search], rotation: int) -> list[_Expansion]:
        """Up to `per_theorem` open nodes of every active theorem (best first,
        the theorems in turn), never more in flight per theorem than its node
        budget left. The batch holds at most ``concurrency x per_theorem``
        nodes (``max(frontier_batch, concurrency)``)."""
        t = time.perf_counter()
        cfg = self.config
        out: list[_Expansion] = []
        n = len(active)
        order = [active[(rotation + i) % n] for i in range(n)] if n else []
        taken: dict[int, int] = {}
        for _ in range(self.per_theorem):
            for s in order:
                if s.done or s.charged() > cfg.timeout_s or len(s.tree) + s.in_flight >= cfg.max_nodes:
                    continue
                if cfg.max_checks is not None and s.checks >= cfg.max_checks:
                    continue
                if taken.get(id(s), 0) >= self.per_theorem:
                    continue
                node = s.pop()
                if node is None:
                    continue
                node.status = NodeStatus.EXPANDED
                s.in_flight += 1
                taken[id(s)] = taken.get(id(s), 0) + 1
                rounds = s.times_expanded.get(node.node_id, 0)
                s.times_expanded[node.node_id] = rounds + 1
                out.append(_Expansion(s, node, round=rounds))
        self._charge_engine(time.perf_counter() - t, [e.search for e in out])
        return out

    async def _prepare_premises(self, expansions: list[_Expansion]) -> None:
        """What the builders' retrievals of these states need ahead (`PremiseIndex.prepare`: a re-ranked index
        encodes the states and their candidates with its model, in one call); charged to the policy."""
        if self.premises is None or not self.premise_ks:
            return
        t = time.perf_counter()
        await self.premises.prepare([(e.search.theorem, e.node.text) for e in expansions], self.premise_ks)
        dt = time.perf_counter() - t
        self.stats.policy_s += dt
        for e in expansions:
            e.search.policy_s += dt / len(expansions)

    async def _generate(self, expansions: list[_Expansion]) -> list[_Expansion]:
        await self._prepare_premises(expansions)
        t = time.perf_counter()
        raw: list[list[Candidate]] = [[] for _ in expansions]
        rounds = sorted({e.round for e in expansions})
        for r in rounds:  # one generate() call per temperature (a re-expansion samples hotter)
            idx = [i for i, e in enumerate(expansions) if e.round == r]
            seeds = [expansion_seed(self.config.seed, expansions[i].search.theorem.name, expansions[i].node.node_id,
                                    r) for i in idx]
            temperature = self.sampling.temperature + r * self.config.resample_temperature_step
            shown: dict[str, Any] = {}
            if self.prompt_premises:  # the model's prompt shows the premises retrieved for each state
                shown["premises"] = [expansions[i].search.builder.prompt_lines(  # type: ignore[union-attr]
                    expansions[i].node.text, self.prompt_premises) for i in idx]
            out = await self.policy.generate([expansions[i].node.text for i in idx], self.sampling.num_candidates,
                                             temperature, self.sampling.max_new_tokens, seeds=seeds, **shown)
            if len(out) != len(idx):
                raise RuntimeError(f"policy returned {len(out)} candidate lists for {len(idx)} states")
            for i, cands in zip(idx, out, strict=True):
                raw[i] = cands
        dt = time.perf_counter() - t
        self.stats.policy_s += dt
        self.stats.generate_calls += len(rounds)
        self.stats.states_generated += len(expansions)
        t = time.perf_counter()
        built: list[list[SourcedCandidate]] = []
        for e, cands in zip(expansions, raw, strict=True):
            e.search.policy_s += dt / len(expansions)
            builder = e.search.builder
            assert builder is not None
            merged = builder.build(dedup_candidates(cands), e.node.text, e.node.depth)
            if e.node.edges:  # a re-expansion: only tactics not tried on this node yet
                tried = {tactic_key(edge.tactic) for edge in e.node.edges}
                merged = [m for m in merged if tactic_key(m.tactic) not in tried]
            built.append(merged)
        self._charge_engine(time.perf_counter() - t, [e.search for e in expansions])
        if self.ranker is not None:
            built = await self._rank(expansions, built)
        t = time.perf_counter()
        for e, merged in zip(expansions, built, strict=True):
            self._take(e, merged)
        self._charge_engine(time.perf_counter() - t, [e.search for e in expansions])
        return expansions

    async def _rank(self, expansions: list[_Expansion],
                    built: list[list[SourcedCandidate]]) -> list[list[SourcedCandidate]]:
        """Every candidate with the policy model's log-probability at its state (``search.rank: policy``), in
        the prompt its samples were drawn from (premise lines included); charged to the policy."""
        assert self.ranker is not None
        t = time.perf_counter()
        shown = None
        if self.prompt_premises:
            shown = [e.search.builder.prompt_lines(e.node.text, self.prompt_premises)  # type: ignore[union-attr]
                     for e in expansions]
        scores = await self.ranker.score([e.node.text for e in expansions],
                                         [[m.tactic for m in merged] for merged in built], premises=shown)
        out = [[SourcedCandidate(m.candidate.model_copy(update={"logprob": lp}), m.source)
                for m, lp in zip(merged, row, strict=True)] for merged, row in zip(built, scores, strict=True)]
        dt = time.perf_counter() - t
        self.stats.policy_s += dt
        for e in expansions:
            e.search.policy_s += dt / len(expansions)
        return out

    def _take(self, e: _Expansion, merged: list[SourcedCandidate]) -> None:
        """The candidates ``e`` sends to Lean: with ``max_width`` the best ranked (the next best's
        log-probability kept, `_Expansion.rest_logprob`), within the checks left (the most likely first)."""
        cfg = self.config
        if cfg.max_width is not None or self.ranker is not None:
            merged = sorted(merged, key=lambda m: -m.logprob)
        if cfg.max_width is not None and len(merged) > cfg.max_width:
            e.rest_logprob = merged[cfg.max_width].logprob
            merged = merged[:cfg.max_width]
        if cfg.max_checks is not None:
            left = max(0, cfg.max_checks - e.search.checks)
            if len(merged) > left:
                merged = sorted(merged, key=lambda m: -m.logprob)[:left]
                e.rest_logprob = None  # the checks are spent
        e.search.checks += len(merged)
        e.candidates = [m.candidate for m in merged]
        e.sources = [m.source for m in merged]

    async def _apply(self, expansions: list[_Expansion]) -> None:
        live = [e for e in expansions if not e.search.done]
        pairs: list[tuple[GoalState, str]] = []
        for e in live:
            assert e.node.state is not None
            pairs.extend((e.node.state, c.tactic) for c in e.candidates)
        if not pairs:
            for e in live:
                e.results = []
            return
        t = time.perf_counter()
        results = await self.env.apply_many(pairs)
        dt = time.perf_counter() - t
        if len(results) != len(pairs):
            raise RuntimeError(f"Lean returned {len(results)} results for {len(pairs)} tactics")
        self.stats.lean_s += dt
        self.stats.apply_calls += 1
        self.stats.pairs_applied += len(pairs)
        i = 0
        for e in live:
            k = len(e.candidates)
            e.results = results[i:i + k]
            e.search.lean_s += dt * k / len(pairs)
            i += k

    async def _integrate(self, expansions: list[_Expansion]) -> None:
        """Turn a step's Lean results into the trees: new nodes (scored by the EBM, then pushed), failed edges,
        transpositions, and closed-goal nodes whose whole proofs are re-checked."""
        t = time.perf_counter()
        new_nodes: dict[_Search, list[Node]] = {}
        proofs: dict[_Search, list[Node]] = {}
        for e in expansions:
            self._integrate_expansion(e, new_nodes, proofs)
        self._charge_engine(time.perf_counter() - t, list({e.search: None for e in expansions}))

        if self.scorer is not None and new_nodes:
            t = time.perf_counter()
            await asyncio.gather(*(self._score(s, nodes) for s, nodes in new_nodes.items()))
            self.stats.ebm_s += time.perf_counter() - t
        t = time.perf_counter()
        self._push_new(new_nodes)
        self._charge_engine(time.perf_counter() - t, list(new_nodes))
        if proofs:
            t = time.perf_counter()
            await asyncio.gather(*(self._recheck(s, nodes) for s, nodes in proofs.items()))
            self.stats.lean_s += time.perf_counter() - t

    def _integrate_expansion(self, e: _Expansion, new_nodes: dict[_Search, list[Node]],
                             proofs: dict[_Search, list[Node]]) -> None:
        """One expansion's results into its search's tree, in candidate order: the new nodes are appended to
        ``new_nodes[search]``, the closed-goal nodes to ``proofs[search]``. A search that ended meanwhile, or an
        expansion that was never sent to Lean, only leaves the in-flight count."""
        s = e.search
        s.in_flight -= 1
        if s.done or e.results is None:
            return
        node = e.node
        cfg = self.config
        s.expansions += 1
        if e.rest_logprob is not None:  # the node's next candidates compete with the children
            s.push_rest(node, priority(node.cum_logprob + e.rest_logprob, node.depth + 1, node.energy,
                                       cfg.alpha, cfg.beta))
        s.candidates.append(len(e.candidates))
        self.stats.expansions += 1
        for cand, source, res in zip(e.candidates, e.sources, e.results, strict=True):
            s.tactics_tried += 1
            s.automation_tried += source == "automation"
            if res.ok:
                assert res.state is not None
                self._integrate_child(s, node, cand, source, res.state, new_nodes, proofs)
            else:
                status = res.status if res.status is not Status.OK else Status.CRASHED
                if status.is_infra:
                    s.infra_failures += 1
                else:
                    s.tactic_errors += 1
                s.tree.add_failure(node, cand.tactic, cand.logprob, status, res.message, source=source)

    def _integrate_child(self, s: _Search, node: Node, cand: Candidate, source: Source, child_state: GoalState,
                         new_nodes: dict[_Search, list[Node]], proofs: dict[_Search, list[Node]]) -> None:
        """A candidate Lean accepted on ``node``: a closed-goal node (a proof to re-check), a failed edge (an
        automation step that closed no goal, under ``partial: drop``), a transposition to a known state, a
        truncation (the node budget is spent), or a new node."""
        cfg = self.config
        if child_state.is_proved:
            child = s.tree.add_node(parent=node, state=child_state, text="", tactic=cand.tactic,
                                    logprob=cand.logprob, created_s=time.time(), elapsed_s=s.elapsed(),
                                    source=source)
            proofs.setdefault(s, []).append(child)
            return
        if source == "automation" and node.depth > 0 and cfg.automation.partial == "drop" and (
                node.state is not None and len(child_state.goals) >= len(node.state.goals)):
            s.tree.add_failure(node, cand.tactic, cand.logprob, Status.TACTIC_ERROR, PARTIAL_DROPPED, source=source)
            return
        text = child_state.text
        existing = s.tree.lookup(text)
        if existing is not None:
            s.tree.add_transposition(node, cand.tactic, cand.logprob, existing, source=source)
            s.transpositions += 1
        elif len(s.tree) >= cfg.max_nodes:
            node.truncated = True
        else:
            child = s.tree.add_node(parent=node, state=child_state, text=text, tactic=cand.tactic,
                                    logprob=cand.logprob, created_s=time.time(), elapsed_s=s.elapsed(),
                                    source=source)
            new_nodes.setdefault(s, []).append(child)

    def _push_new(self, new_nodes: dict[_Search, list[Node]]) -> None:
        """Give the new nodes their priority (with their energy, once scored) and push those above the depth
        limit onto their search's frontier."""
        cfg = self.config
        for s, nodes in new_nodes.items():
            for n in nodes:
                n.priority = priority(n.cum_logprob, n.depth, n.energy, cfg.alpha, cfg.beta)
                if n.depth < cfg.max_depth:
                    s.push(n)

    async def _score(self, s: _Search, nodes: list[Node]) -> None:
        assert self.scorer is not None
        t = time.perf_counter()
        energies = await score_states(self.scorer, [n.text for n in nodes], s.goal)
        for n, energy in zip(nodes, energies, strict=True):
            n.energy = energy
        s.ebm_s += time.perf_counter() - t

    async def _recheck(self, s: _Search, terminals: list[Node]) -> None:
        """Re-check closed-goal paths as whole theorems, best first, until one passes."""
        for node in sorted(terminals, key=lambda n: n.cum_logprob, reverse=True):
            tactics = s.tree.tactics_to(node.node_id)
            t = time.perf_counter()
            check = await self.env.check_proof(s.theorem, tactics)
            s.lean_s += time.perf_counter() - t
            if check.ok:
                s.tree.proof_node = node.node_id
                s.proved = True
                return
            node.status = NodeStatus.REJECTED
            if check.infra:
                s.infra_failures += 1
            else:
                s.recheck_failures += 1
            msg = "; ".join(check.errors)[:500]
            s.messages.append(f"re-check failed{' (infra)' if check.infra else ''}: {msg}")
            log.warning("%s: closed-goal path %r failed the re-check: %s", s.theorem.name, tactics, msg)

    async def _finish_done(self, active: list[_Search]) -> tuple[list[SearchOutcome], bool]:
        """End every search that is over and remove them from ``active``: (their outcomes, whether a search's
        dry frontier was refilled for another round of samples instead)."""
        out = []
        refilled = False
        cfg = self.config
        for s in list(active):
            stop: StopReason | None = None
            if s.proved:
                stop = "proved"
            elif s.in_flight == 0:
                if s.charged() > cfg.timeout_s:
                    stop = "timeout"
                elif len(s.tree) >= cfg.max_nodes:
                    stop = "max_nodes"
                elif cfg.max_checks is not None and s.checks >= cfg.max_checks:
                    stop = "max_checks"
                elif not s.has_open():
                    if s.resample_round < cfg.resample_rounds and s.resample(cfg.max_depth):
                        refilled = True
                        continue
                    stop = "exhausted"
            if stop is None:
                continue
            s.done = True
            s.stop = stop
            active.remove(s)
            out.append(self._outcome(s))
            states = [n.state for n in s.tree.nodes if n.state is not None]
            if states:
                await self.env.free(states)
        return out, refilled

    def _outcome(self, s: _Search) -> SearchOutcome:
        """The ended search's result and trajectory records (its engine time charged first, so that the result
        counts the time spent building the records)."""
        t = time.perf_counter()
        assert s.stop is not None
        if self.check_invariants:
            s.tree.check_invariants()
        elapsed = s.elapsed()
        records = self._records(s)
        self.stats.nodes += len(s.tree)
        self.stats.theorems += 1
        self._charge_engine(time.perf_counter() - t, [s])
        result = _result(s, elapsed)
        log.debug("%s: %s after %d nodes, %.2fs", s.theorem.name, s.stop, len(s.tree), elapsed)
        return SearchOutcome(result, records)

    def _records(self, s: _Search) -> list[TrajectoryRecord]:
        """One trajectory record per node of the search's tree, in node order, with its label."""
        tree = s.tree
        return [
            TrajectoryRecord(
                theorem=s.theorem.name,
                iteration=self.iteration,
                node_id=n.node_id,
                parent_id=n.parent_id,
                state=n.text,
                goal=s.goal,
                tactic=n.tactic,
                source=n.source,
                depth=n.depth,
                logprob=n.logprob,
                cum_logprob=n.cum_logprob,
                energy=n.energy,
                label=label,
                terminal=n.status is NodeStatus.TERMINAL,
                proved=s.proved,
                created_s=n.created_s,
                elapsed_s=n.elapsed_s,
            )
            for n, label in zip(tree.nodes, tree.labels(), strict=True)
        ]

    def _charge_engine(self, dt: float, searches: Sequence[_Search]) -> None:
        self.stats.engine_s += dt
        if searches:
            share = dt / len(searches)
            for s in searches:
                s.engine_s += share


def _result(s: _Search, elapsed: float) -> SearchResult:
    """The `SearchResult` of an ended search that ran ``elapsed`` seconds. An unproved search that ran out of
    frontier or time after an infrastructure failure reports ``error="infra"``."""
    assert s.stop is not None
    tree = s.tree
    error: Literal["", "start", "infra"] = ""
    if not s.proved and s.infra_failures and s.stop in ("exhausted", "timeout"):
        error = "infra"
    cands = s.candidates
    return SearchResult(
        theorem=s.theorem.name,
        proved=s.proved,
        proof=tree.tactics_to(tree.proof_node) if tree.proof_node is not None else [],
        nodes_to_proof=tree.proof_node if s.proved else None,
        stop=s.stop,
        error=error,
        message=" | ".join(s.messages)[:2000],
        nodes=len(tree),
        expansions=s.expansions,
        depth_reached=max(n.depth for n in tree.nodes),
        time_s=elapsed,
        policy_s=s.policy_s,
        lean_s=s.lean_s,
        engine_s=s.engine_s,
        ebm_s=s.ebm_s,
        candidates_min=min(cands, default=0),
        candidates_avg=sum(cands) / len(cands) if cands else 0.0,
        candidates_max=max(cands, default=0),
        tactics_tried=s.tactics_tried,
        tactic_errors=s.tactic_errors,
        infra_failures=s.infra_failures,
        transpositions=s.transpositions,
        recheck_failures=s.recheck_failures,
        automation_tried=s.automation_tried,
        proof_sources=[n.source for n in tree.path(tree.proof_node)[1:]] if tree.proof_node is not None else [],
    )
