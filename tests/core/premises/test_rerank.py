"""The learned premise re-ranker (issue 65), on a toy library made here and real tiny torch models: it learns an
association BM25 cannot see and generalises to states it never saw, is deterministic under its seed, refuses
another encoder, never returns a premise BM25 did not return under the premise rule, changes nothing while off;
the search prepares its states before it retrieves; the ``premise_reranker`` stage trains nothing at iteration 0.

The toy: eight categories, each a goal word (``red``) and a premise word (``apple``): a state ``⊢ foo (barN y) =
redFn y`` is proved with ``Foo.apple_spec``. Every accessible premise shares ``foo`` with the state and none its
category word, so BM25 ranks them by their index; premises of a module the theorem does not import
(``Foo.apple_other``, whose type even names ``red``) must never come back. The encoder is a real function of the
text (each word a fixed random vector, summed): what the head learns is the words' association, which holds for
states of the validation side (other ``barN``) it never trained on.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from burnqed_core.config import PremiseStepsConfig, RerankConfig, SearchConfig, StructuralStepsConfig, load_profile
from burnqed_core.lean.types import CheckResult, GoalState, Status, TacticResult
from burnqed_core.policy.base import Candidate
from burnqed_core.premises.index import PremiseIndex
from burnqed_core.premises.library import LIBRARY_RULES, LibraryBuild, write_library
from burnqed_core.premises.records import Premise
from burnqed_core.premises.rerank import (
    PremisePair,
    RerankedIndex,
    RerankMismatchError,
    has_reranker,
    load_reranker,
    premise_pairs,
    train_reranker,
)
from burnqed_core.record_io import write_jsonl, write_parquet
from burnqed_core.records import Theorem, TrajectoryRecord
from burnqed_core.search.automation import tactic_key
from burnqed_core.search.candidates import CandidateBuilder
from burnqed_core.search.engine import SearchEngine

WORDS = [("red", "apple"), ("green", "lime"), ("blue", "sky"), ("gold", "sun"), ("gray", "stone"),
         ("pink", "rose"), ("white", "snow"), ("black", "coal")]
GRAPH = {"T.Base": [], "T.Lemmas": ["T.Base"], "T.Top": ["T.Lemmas"], "T.Other": ["T.Base"]}
PREMISES = ([Premise(name=f"Foo.{p}_spec", type=f"∀ (x : Nat), foo x = {p}Fn x", module="T.Lemmas")
             for _, p in WORDS]
            + [Premise(name=f"Foo.{p}_other", type=f"∀ (x : Nat), foo x = {g}Fn x", module="T.Other")
               for g, p in WORDS])
CONFIG = RerankConfig(enabled=True, candidates=8, steps=120, batch_size=16, lr=1e-2, val_fraction=0.3,
                      recall_at=[1, 3])


class ToyEncoder:
    """Each word (lowercased, camel case split) a fixed random vector seeded by its hash; a text the normalised
    sum of its words' vectors. ``name`` keys its fingerprint."""

    pooling = "last_l2"

    def __init__(self, dim: int = 48, name: str = "toy-encoder") -> None:
        self.hidden_size = dim
        self.name = name
        self.calls = 0

    def _vec(self, word: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
        return np.random.default_rng(seed).normal(size=self.hidden_size)

    async def encode(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        out = []
        for t in texts:
            v = sum((self._vec(w.lower()) for w in re.findall(r"[A-Z]?[a-z]+|\d+", t)), np.zeros(self.hidden_size))
            out.append((v / (np.linalg.norm(v) or 1.0)).tolist())
        return out


def theorem(i: int) -> Theorem:
    return Theorem(name=f"toy{i}", statement=": True", module="T.Top")


def state(i: int) -> str:
    return f"y : Nat\n⊢ foo (bar{i} y) = {WORDS[i % len(WORDS)][0]}Fn y"


def used(i: int) -> str:
    return f"Foo.{WORDS[i % len(WORDS)][1]}_spec"


PAIRS = [PremisePair(theorem=theorem(i), state=state(i), premises=[used(i)]) for i in range(64)]


@pytest.fixture(scope="module")
def index() -> PremiseIndex:
    return PremiseIndex(PREMISES, GRAPH)


@pytest.fixture(scope="module")
def trained(index: PremiseIndex, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reranker")
    asyncio.run(train_reranker(PAIRS, index, ToyEncoder(), "toy-fingerprint", CONFIG, out))
    return out


def test_it_learns_what_bm25_cannot_see_on_states_it_never_saw(trained: Path) -> None:
    rec = load_reranker(trained, ToyEncoder(), "toy-fingerprint").record
    rep = rec.report
    assert rep.val is not None and rep.val_pairs >= 8 and rep.train_pairs + rep.val_pairs == len(PAIRS)
    assert rep.in_candidates == 1.0 and rep.examples == rep.train_pairs
    # BM25 orders the eight accessible premises by index: right for one category in eight
    assert rep.val.before[1] <= 0.35 and rep.train.before[1] <= 0.35
    # the validation side's states (their barN) were never trained on: the association generalises
    assert rep.val.after[1] >= rep.val.before[1] + 0.4 and rep.val.after[1] >= 0.7, rep.summary()
    assert rep.loss_last is not None and rep.loss_first is not None and rep.loss_last < rep.loss_first
    assert rep.adopted and "at least as much as BM25" in rep.verdict  # require_gain (the default) passed
    assert "re-ranker on 64 (state, premise) pairs" in rep.summary()


def test_training_is_deterministic_under_its_seed(index: PremiseIndex, trained: Path, tmp_path: Path) -> None:
    again = asyncio.run(train_reranker(PAIRS, index, ToyEncoder(), "toy-fingerprint", CONFIG, tmp_path / "a"))
    first = load_reranker(trained, ToyEncoder(), "toy-fingerprint").record
    assert again.weights_sha256 == first.weights_sha256
    assert again.report.model_dump(exclude={"train_s", "encode_s"}) == \
        first.report.model_dump(exclude={"train_s", "encode_s"})
    other = asyncio.run(train_reranker(PAIRS, index, ToyEncoder(), "toy-fingerprint",
                                       CONFIG.model_copy(update={"seed": 1}), tmp_path / "b"))
    assert other.weights_sha256 != first.weights_sha256  # another seed: another split and batch order


def test_it_refuses_another_encoder(trained: Path) -> None:
    load_reranker(trained, ToyEncoder(), "toy-fingerprint")  # the same encoder: fine
    with pytest.raises(RerankMismatchError, match="model"):
        load_reranker(trained, ToyEncoder(), "another-model")
    with pytest.raises(RerankMismatchError, match="width"):
        load_reranker(trained, ToyEncoder(dim=32), "toy-fingerprint")
    mean = ToyEncoder()
    mean.pooling = "mean"
    with pytest.raises(RerankMismatchError, match="pooling"):
        load_reranker(trained, mean, "toy-fingerprint")


def test_it_refuses_a_real_model_it_was_not_trained_on(index: PremiseIndex, tiny_model_dir: Path,
                                                       tmp_path: Path) -> None:
    """A real tiny Llama as the encoder (the policy's `encode`), its fingerprint that of its model folder."""
    from burnqed_core.ebm.embeddings import policy_fingerprint
    from burnqed_core.policy.local import LocalPolicy
    from tests.fixtures_models import build_fixture_model

    policy = LocalPolicy(tiny_model_dir, batch_size=16)
    cfg = CONFIG.model_copy(update={"steps": 5, "val_fraction": 0.0})
    # require_gain: with no validation pair nothing shows it beats BM25: not adopted, nothing written
    rec = asyncio.run(train_reranker(PAIRS[:8], index, policy, policy_fingerprint(policy), cfg, tmp_path / "rr",
                                     model_path=tiny_model_dir))
    assert not rec.report.adopted and "no validation pair" in rec.report.verdict and not has_reranker(tmp_path / "rr")
    assert rec.report.summary().startswith("not adopted (no validation pair")
    rec = asyncio.run(train_reranker(PAIRS[:8], index, policy, policy_fingerprint(policy),
                                     cfg.model_copy(update={"require_gain": False}), tmp_path / "rr",
                                     model_path=tiny_model_dir))
    assert rec.encoder_dim == policy.hidden_size and rec.report.val is None and rec.report.adopted
    rr = load_reranker(tmp_path / "rr", policy, policy_fingerprint(policy))
    got = asyncio.run(RerankedIndex(index, rr).retrieve_async(theorem(0), state(0), 3))
    assert [r.rank for r in got] == [0, 1, 2]
    other = LocalPolicy(build_fixture_model(tmp_path / "other", seed=1))
    with pytest.raises(RerankMismatchError, match="model"):
        load_reranker(tmp_path / "rr", other, policy_fingerprint(other))


def test_only_what_bm25_returned_under_the_rule_comes_back(index: PremiseIndex, trained: Path) -> None:
    reranked = RerankedIndex(index, load_reranker(trained, ToyEncoder(), "toy-fingerprint"))
    assert reranked.rerank_key is not None and index.rerank_key is None
    allowed = index.accessible_modules(theorem(0))
    assert allowed is not None
    for i in range(64, 80):  # states never seen
        for k in (1, 3, 8, 12):
            got = asyncio.run(reranked.retrieve_async(theorem(i), state(i), k))
            bm25 = index.retrieve(theorem(i), state(i), max(k, CONFIG.candidates))
            assert {r.premise.name for r in got} <= {r.premise.name for r in bm25}
            assert len(got) == min(k, len(bm25)) and [r.rank for r in got] == list(range(len(got)))
            assert all(r.premise.module in allowed and not r.premise.name.endswith("_other") for r in got)
    # a library theorem of a module that imports nothing of the toy gets nothing, re-ranked or not
    lone = Theorem(name="lone", statement=": True", module="T.Base")
    assert asyncio.run(reranked.retrieve_async(lone, state(3), 8)) == []
    # the families filter keeps the re-ranker
    assert isinstance(reranked.without_families(["nothing"]), RerankedIndex)


def test_retrieval_needs_its_states_prepared(index: PremiseIndex, trained: Path) -> None:
    reranked = RerankedIndex(index, load_reranker(trained, ToyEncoder(), "toy-fingerprint"))
    with pytest.raises(RuntimeError, match="prepare"):
        reranked.retrieve(theorem(90), state(90), 3)
    asyncio.run(reranked.prepare([(theorem(90), state(90)), (theorem(91), state(91))], [3]))
    assert reranked.retrieve(theorem(90), state(90), 3)[0].premise.name == used(90)
    assert reranked.reranker.encode_calls == 1  # both states and their premises in one call


def test_off_by_default_and_in_every_profile_but_core() -> None:
    from burnqed_core.config import _bundled_profiles

    assert RerankConfig().enabled is False
    for name in _bundled_profiles():
        assert load_profile(name).premises.rerank.enabled is (name == "core"), name


def test_c_with_retrieval_gets_the_provers_reranked_retrieval(index: PremiseIndex, trained: Path) -> None:
    """Both candidate builders on the same re-ranked index: (c)'s candidates stay a subset of the prover's,
    and the premise steps of both are those of the re-ranked top k."""
    from burnqed_core.eval.baselines.structural import search_config
    from burnqed_core.policy.structural import StructuralPolicy

    reranked = RerankedIndex(index, load_reranker(trained, ToyEncoder(), "toy-fingerprint"))
    search = SearchConfig(structural=StructuralStepsConfig(enabled=True),
                          premises=PremiseStepsConfig(enabled=True, k=1))
    profile = load_profile("tiny").model_copy(update={"search": search})
    c = CandidateBuilder(search_config(profile, retrieval=True), theorem(70), reranked)
    prover = CandidateBuilder(profile.search, theorem(70), reranked)
    asyncio.run(reranked.prepare([(theorem(70), state(70))], [1]))
    (steps,) = asyncio.run(StructuralPolicy().generate([state(70)], 8, 1.0))
    mine = {tactic_key(x.tactic) for x in c.build(steps, state(70), 0)}
    theirs = {tactic_key(x.tactic) for x in prover.build([Candidate(tactic="simp", logprob=-1, num_tokens=1)],
                                                          state(70), 0)}
    assert mine <= theirs and f"rw [{used(70)}]" in mine  # BM25 alone would give Foo.apple_spec (index 0)
    assert used(70) != "Foo.apple_spec"


class _Env:
    """One goal that no tactic changes: every candidate is tried once and fails."""

    def __init__(self) -> None:
        self.tried: list[str] = []

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def start_proof(self, thm: Theorem) -> TacticResult:
        return TacticResult(status=Status.OK, state=GoalState(theorem=thm, goals=(state(int(thm.name[3:])),)))

    async def apply_many(self, items: Sequence[tuple[GoalState, str]]) -> list[TacticResult]:
        self.tried += [t for _, t in items]
        return [TacticResult(status=Status.TACTIC_ERROR, message="no") for _ in items]

    async def check_proof(self, thm: Theorem, tactics: Sequence[str]) -> CheckResult:
        return CheckResult(ok=False, errors=["no"])

    async def free(self, states: Sequence[GoalState]) -> None: ...


class _Policy:
    name = "none"

    async def generate(self, states: Sequence[str], n: int, temperature: float, max_new_tokens: int | None = None,
                       seeds: Sequence[int] | None = None) -> list[list[Candidate]]:
        return [[] for _ in states]

    async def encode(self, texts: Sequence[str]) -> list[list[float]]:
        raise AssertionError("the re-ranker encodes with its own encoder")

    async def close(self) -> None: ...


def test_the_search_prepares_then_tries_the_reranked_premises_first(index: PremiseIndex, trained: Path) -> None:
    rr = load_reranker(trained, ToyEncoder(), "toy-fingerprint")
    config = SearchConfig(max_nodes=5, max_depth=3, num_candidates=1, frontier_batch=2, concurrency=2,
                          timeout_s=30.0, premises=PremiseStepsConfig(enabled=True, k=2, joint=[]))
    env = _Env()
    engine = SearchEngine(_Policy(), env, config, premises=RerankedIndex(index, rr))  # type: ignore[arg-type]

    async def run() -> None:
        async for _ in engine.search_many([theorem(75), theorem(76)]):
            pass

    asyncio.run(run())
    assert rr.encode_calls == 1  # the two roots in one batch: one call
    firsts = [t for t in env.tried if t.startswith("rw [")]
    assert {firsts[0], firsts[2]} == {f"rw [{used(75)}]", f"rw [{used(76)}]"}, env.tried


def test_pairs_are_read_from_found_proofs_under_the_rule(index: PremiseIndex) -> None:
    records = _trajectory(0, f"rw [{used(0)}]") + _trajectory(1, f"simp [{used(1)}, Foo.sky_other, Nat.succ]") + \
        _trajectory(2, "rw [Foo.sun_other]") + _trajectory(3, "omega")
    pairs = premise_pairs(records, {theorem(i).name: theorem(i) for i in range(4)}, index)
    # Foo.sky_other's module is not imported by T.Top: not a premise its theorem may cite
    assert [(p.theorem.name, p.premises) for p in pairs] == [("toy0", [used(0)]), ("toy1", [used(1)])]
    assert pairs[0].state == state(0)
    assert premise_pairs(records + records, {t.name: t for t in (theorem(0),)}, index) == pairs[:1]


def _trajectory(i: int, tactic: str) -> list[TrajectoryRecord]:
    """A found proof of toy theorem ``i`` in one step ``tactic``."""
    common = dict(theorem=f"toy{i}", iteration=0, goal=state(i), logprob=0.0, cum_logprob=0.0, proved=True)
    return [TrajectoryRecord(node_id=0, parent_id=-1, state=state(i), tactic="", depth=0, label="positive",
                             **common),  # type: ignore[arg-type]
            TrajectoryRecord(node_id=1, parent_id=0, state="", tactic=tactic, depth=1, label="positive", terminal=True,
                             **common)]  # type: ignore[arg-type]


def test_the_stage_trains_nothing_at_iteration_0_or_when_off(tmp_path: Path) -> None:
    from burnqed_core.loop.stages import premise_reranker as stage

    async def no_encoder() -> object:
        raise AssertionError("no encoder is needed")

    on = stage.Settings.of(load_profile("tiny", overrides={"premises.rerank.enabled": True}))
    res = asyncio.run(stage.premise_reranker(on, 0, [], tmp_path / "index", tmp_path / "model", tmp_path / "out",
                                             no_encoder))
    assert res.metrics == {"trained": False, "reason": "iteration 0 has no found proofs to learn from"}
    assert "no re-ranker" in res.summary and not has_reranker(tmp_path / "out")
    off = stage.Settings.of(load_profile("tiny"))
    res = asyncio.run(stage.premise_reranker(off, 1, [tmp_path / "t.traj"], tmp_path / "index", tmp_path / "model",
                                             tmp_path / "out", no_encoder))
    assert not res.metrics["trained"] and "premises.rerank.enabled is false" in res.summary


def test_the_stage_trains_on_earlier_found_proofs(tmp_path: Path) -> None:
    from burnqed_core.loop.stages import premise_reranker as stage

    index_dir = write_library(tmp_path / "index", PREMISES, GRAPH, LibraryBuild(
        key="toy", lean="toy", rules=LIBRARY_RULES.model_dump(mode="json"), premises=len(PREMISES),
        modules=len(GRAPH), modules_read=len(GRAPH)))
    pool = write_jsonl([theorem(i) for i in range(64)], tmp_path / "pool.jsonl")
    traj = write_parquet([r for i in range(64) for r in _trajectory(i, f"rw [{used(i)}]")], tmp_path / "t.parquet",
                         TrajectoryRecord)
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    profile = load_profile("tiny", overrides={"data.search_pool": str(pool), **{
        f"premises.rerank.{k}": v for k, v in CONFIG.model_dump(mode="json").items()}})
    res = asyncio.run(stage.premise_reranker(stage.Settings.of(profile), 1, [traj], index_dir, model,
                                             tmp_path / "out", lambda: _async(ToyEncoder())))
    assert res.metrics["trained"] and has_reranker(tmp_path / "out"), res.summary
    assert res.metrics["pairs"] == 64 and res.metrics["val_recall@1_reranked"] > res.metrics["val_recall@1_bm25"]
    assert "val @1" in res.summary


async def _async(value: object) -> object:
    return value


def test_the_eval_reranks_with_the_policy_and_keys_c_with_retrieval_by_it(index: PremiseIndex, tmp_path: Path) -> None:
    """The eval's index is re-ranked on the policy's encoder (needed: never BM25 in silence), and baseline (c)
    with retrieval's cache key names the re-ranker (its file of BM25 alone keeps its key)."""
    from burnqed_core.ebm.embeddings import model_fingerprint
    from burnqed_core.eval import plan as eval_plan
    from burnqed_core.eval.baselines.structural import structural_key
    from burnqed_core.eval.settings import EvalSettings

    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    asyncio.run(train_reranker(PAIRS, index, ToyEncoder(), model_fingerprint(model), CONFIG, tmp_path / "rr"))
    library = write_library(tmp_path / "index", PREMISES, GRAPH, LibraryBuild(
        key="toy", lean="toy", rules=LIBRARY_RULES.model_dump(mode="json"), premises=len(PREMISES),
        modules=len(GRAPH), modules_read=len(GRAPH)))
    profile = load_profile("tiny", overrides={"search.premises.enabled": True})
    settings = EvalSettings.of(profile)
    plan = eval_plan.EvalPlan(iteration=1, out=tmp_path / "eval", sets=[], model=model, premises=library,
                              premise_reranker=tmp_path / "rr")
    assert eval_plan.reranked(settings, plan)
    with pytest.raises(Exception, match="encoder"):
        eval_plan.premise_index(settings, plan)
    got = eval_plan.premise_index(settings, plan, ToyEncoder())
    assert isinstance(got, RerankedIndex) and got.rerank_key is not None
    plain = eval_plan.premise_index(settings, plan.model_copy(update={"premise_reranker": None}))
    assert not isinstance(plain, RerankedIndex) and plain.rerank_key is None
    thms = [theorem(0)]
    bm25 = structural_key(thms, profile, "v", retrieval=True, rerank=plain.rerank_key)
    assert bm25 == structural_key(thms, profile, "v", retrieval=True)
    assert structural_key(thms, profile, "v", retrieval=True, rerank=got.rerank_key) != bm25
