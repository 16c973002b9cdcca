"""The asset checks on real outputs: each check run by Dagster (a real on-disk instance) against stage
outputs built here in the run layout (Parquet tactic pairs, trajectories and an embeddings cache, an EBM
trained on them, eval summaries), passing on sound data and failing on each fault; the verdicts' figures
are in the check's metadata. No Lean, no language model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import numpy as np
import pytest

from burnqed_core.config import load_profile
from burnqed_core.data.pairs.prepare import prepare_pairs, write_prepared
from burnqed_core.data.theorems.load import load_theorems
from burnqed_core.ebm.data import build_data
from burnqed_core.ebm.embeddings import CacheMeta, EmbeddingCache, cache_dir_for
from burnqed_core.ebm.metrics import embeddings_verdict, separation_metrics
from burnqed_core.ebm.run import train_from_dirs
from burnqed_core.ebm.train import METRICS_FILE
from burnqed_core.eval.gonogo import go_no_go, gonogo_verdict
from burnqed_core.eval.report import write_report
from burnqed_core.eval.summary import SummaryOptions, summarize, summarize_variants
from burnqed_core.loop.layout import DONE, BaseLayout
from burnqed_core.record_io import write_jsonl, write_parquet
from burnqed_core.records import StageResult, TacticPair, Theorem, TrajectoryRecord
from burnqed_pipeline.definitions import defs
from burnqed_pipeline.defs.partitions import add_iteration
from tests.core.ebm_toy import separable_embeddings, toy_records
from tests.core.eval.test_summary import BASE, WIDE, WIDE_BASE, results, twelve
from tests.pipeline.helpers import all_assets, resources
from tests.pipeline.profiles import write_profile

CORPUS = load_theorems("bundled:corpus")[:12]
BENCH = load_theorems("bundled:benchmark")[:6]
RESTATED = Theorem(name="corpus_copy_of_a_benchmark_theorem", statement=BENCH[0].statement, proof=["omega"])


class Env:
    def __init__(self, tmp: Path, instance: dg.DagsterInstance) -> None:
        bench = tmp / "bench" / "benchmark.jsonl"
        write_jsonl(BENCH, bench)
        corpus = tmp / "corpus" / "corpus.jsonl"
        write_jsonl([*CORPUS, RESTATED], corpus)
        self.profile_path = write_profile(tmp / "profile.yaml", {
            "paths.work_dir": str(tmp / "work"), "data.benchmark": str(bench), "data.corpus": str(corpus),
            "ebm.hidden_dims": [32, 16], "ebm.steps": 80, "ebm.batch_size": 8, "ebm.eval_every": 40,
            "ebm.save_every": 80, "ebm.val_fraction": 0.3})
        self.profile = load_profile(str(self.profile_path))
        self.layout = BaseLayout(root=tmp / "work")
        self.instance = instance
        self.res = resources(self.profile_path)
        for n in range(3):
            add_iteration(instance, n)

    def check(self, name: str, n: int) -> tuple[bool, dict[str, Any]]:
        """Run one check alone for partition ``n`` (as the UI's "Execute check" does): passed, metadata."""
        checks = list(defs().asset_checks or [])
        key = next(k for c in checks for k in c.check_keys if k.name == name)
        result = dg.materialize([*all_assets(), *checks], instance=self.instance, resources=self.res,
                                selection=dg.AssetSelection.checks(key), tags={"dagster/partition": str(n)},
                                raise_on_error=False)
        evals = [e.event_specific_data for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
        assert len(evals) == 1, [e.event_type_value for e in result.all_events]
        ev = evals[0]
        assert ev.partition == str(n)
        assert result.success == ev.passed  # a failed blocking check fails the run
        return ev.passed, {k: getattr(v, "value", v) for k, v in ev.metadata.items()}


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    (tmp_path / "dagster").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "dagster")) as inst:
        yield Env(tmp_path, inst)


# -- tactic_pairs -----------------------------------------------------------------------------------


def corpus_pairs(theorems: list[Theorem]) -> list[TacticPair]:
    return [TacticPair(theorem=t.name, state_before=f"⊢ {t.statement} -- step {k}", tactic=tac,
                       state_after="no goals" if k == len(t.proof) - 1 else f"⊢ {t.statement} -- step {k + 1}",
                       depth=k, source="test")
            for t in theorems for k, tac in enumerate(t.proof)]


def write_pairs(env: Env, n: int, train: list[TacticPair], val: list[TacticPair]) -> None:
    out = env.layout.iteration(n).stage("tactic_pairs")
    write_parquet(train, out / "train.parquet", TacticPair)
    write_parquet(val, out / "val.parquet", TacticPair)


def test_tactic_pairs_check_passes_on_prepared_pairs(env: Env) -> None:
    prepared = prepare_pairs(corpus_pairs(CORPUS), 0.25, 0, 512)
    write_prepared(prepared, env.layout.iteration(0).stage("tactic_pairs"))
    passed, md = env.check("tactic_pairs_clean", 0)
    assert passed, md["verdict"]
    assert md["train_pairs"] == prepared.train.height > 0 and md["train_pairs_threshold"] == 0
    assert md["benchmark_theorems_in_pairs"] == 0 and md["theorems_with_sorry_or_admit"] == 0
    assert "| train_pairs |" in md["figures"] and md["verdict"].startswith("tactic_pairs: PASS")


@pytest.mark.parametrize("fault", ["benchmark_name", "restated", "overlap", "sorry", "empty"])
def test_tactic_pairs_check_fails_on_each_fault(env: Env, fault: str) -> None:
    train, val = corpus_pairs(CORPUS[:9]), corpus_pairs(CORPUS[9:])
    if fault == "benchmark_name":
        train += corpus_pairs([BENCH[2]])
    elif fault == "restated":  # a corpus theorem stating a benchmark theorem under another name
        train += corpus_pairs([RESTATED])
    elif fault == "overlap":
        val += corpus_pairs(CORPUS[:1])
    elif fault == "sorry":
        train += [TacticPair(theorem="cheater", state_before="⊢ 1 = 2", tactic="sorry", state_after="no goals",
                             depth=0)]
    elif fault == "empty":
        train = []
    write_pairs(env, 1, train, val)
    passed, md = env.check("tactic_pairs_clean", 1)
    assert not passed
    figure = {"benchmark_name": "benchmark_theorems_in_pairs", "restated": "benchmark_theorems_in_pairs",
              "overlap": "theorems_in_both_train_and_val", "sorry": "theorems_with_sorry_or_admit",
              "empty": "train_pairs"}[fault]
    assert md[figure] == (0 if fault == "empty" else 1), md["verdict"]
    assert f"{figure} = " in md["verdict"] and "FAIL" in md["verdict"]
    if fault == "restated":
        assert f"{BENCH[0].name} (same statement as {RESTATED.name})" in md["verdict"]


def test_a_missing_output_fails_its_check(env: Env) -> None:
    passed, md = env.check("tactic_pairs_clean", 2)
    assert not passed and "train.parquet: missing" in md["verdict"]


# -- embeddings and ebm ------------------------------------------------------------------------------


def write_trajectories(env: Env, n: int, records: list[TrajectoryRecord]) -> None:
    write_parquet(records, env.layout.iteration(n).stage("trajectories") / "search.traj" / "part-00000.parquet",
                  TrajectoryRecord)


def write_cache(env: Env, n: int, records: list[TrajectoryRecord], collapsed: bool = False) -> Path:
    data = build_data(records)
    z = separable_embeddings(data)
    if collapsed:  # every state onto (almost) one vector: an encoder collapse
        z = np.tile(z[:1], (len(z), 1)) + 1e-7 * np.random.default_rng(0).normal(size=z.shape).astype(np.float32)
    cache = EmbeddingCache.open(cache_dir_for(env.layout.iteration(n).stage("embeddings")),
                                CacheMeta(fingerprint="test-encoder", pooling="last_l2"))
    cache.write_part(data.keys, data.texts, z.tolist())
    return cache.dir


def test_embeddings_check_fails_on_a_collapsed_cache(env: Env) -> None:
    passed, md = env.check("no_collapse", 0)  # iteration 0: no earlier trajectories, nothing encoded
    assert passed and "nothing to judge" in md["verdict"]

    records = toy_records()
    write_trajectories(env, 0, records)
    write_cache(env, 1, records)
    passed, md = env.check("no_collapse", 1)
    assert passed, md["verdict"]
    assert md["variance_ratio"] > md["variance_ratio_threshold"] == 1e-4
    assert md["linear_probe_acc"] >= md["linear_probe_acc_threshold"] == 0.65

    write_cache(env, 2, records, collapsed=True)
    write_trajectories(env, 1, [r.model_copy(update={"iteration": 1}) for r in records[:3]])
    passed, md = env.check("no_collapse", 2)
    assert not passed
    assert md["variance_ratio"] < 1e-4 and "variance_ratio = " in md["verdict"]


def test_embeddings_verdict_keeps_the_centroid_separation_of_the_previous_iteration() -> None:
    records = toy_records()
    data = build_data(records)
    healthy = separation_metrics(separable_embeddings(data), data)
    assert embeddings_verdict(healthy, "last_l2", previous=healthy).passed
    weaker = healthy.model_copy(update={"centroid_l2_ratio": 0.5 * (healthy.centroid_l2_ratio or 0)})
    v = embeddings_verdict(weaker, "last_l2", previous=healthy)
    assert not v.passed and "centroid_l2_ratio" in v.summary()
    # mean pooling: the seed's raw red line 3.0 applies
    assert not embeddings_verdict(healthy.model_copy(update={"centroid_l2": 1.33}), "mean").passed


def write_marker(out: Path, res: StageResult) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / DONE).write_text(res.model_dump_json())


def test_ebm_check_on_a_trained_head_and_on_bad_records(env: Env) -> None:
    # iteration 0 trains no EBM: the check passes and says so
    ebm0 = env.layout.iteration(0).stage("ebm")
    write_marker(ebm0, StageResult(stage="ebm", iteration=0, path=str(ebm0), summary="no EBM",
                                   metrics={"trained": False, "reason": "iteration 0 has no trajectories"}))
    passed, md = env.check("ebm_healthy", 0)
    assert passed and "no EBM: iteration 0 has no trajectories" in md["verdict"]

    records = toy_records(n_theorems=45)
    write_trajectories(env, 0, records)
    cache = write_cache(env, 1, records)
    out = env.layout.iteration(1).stage("ebm")
    rep = train_from_dirs(cache, [env.layout.iteration(0).stage("trajectories") / "search.traj"], env.profile.ebm, out)
    passed, md = env.check("ebm_healthy", 1)
    assert passed, md["verdict"]
    m = rep.val if rep.val is not None and rep.val.rank1.n >= 10 else rep.train
    assert m is not None and md[f"rank1_{m.split}"] == pytest.approx(m.rank1.rank1)
    assert md[f"rank1_{m.split}_threshold"] == pytest.approx(m.rank1.chance) and m.rank1.rank1 > m.rank1.chance
    assert 0.05 < md["temperature_floor"] < 20

    raw = json.loads((out / METRICS_FILE).read_text())
    for split in ("train", "val"):
        if raw.get(split):
            raw[split]["temperature"] = env.profile.ebm.temperature_min  # pinned at the floor
    (out / METRICS_FILE).write_text(json.dumps(raw))
    passed, md = env.check("ebm_healthy", 1)
    assert not passed and "temperature (floor)" in md["verdict"] and "pinned at the floor" in md["figures"]

    for split in ("train", "val"):
        if raw.get(split):
            raw[split]["temperature"] = 1.0
            raw[split]["rank1"]["rank1"] = 0.0  # never ranks the positive first
    (out / METRICS_FILE).write_text(json.dumps(raw))
    passed, md = env.check("ebm_healthy", 1)
    assert not passed and "rank1 (" in md["verdict"]


def test_ebm_check_fails_on_a_joint_run_its_monitor_aborted(env: Env, tmp_path: Path) -> None:
    """ebm.joint: the ebm stage adopts the head lora_adapter trained; the blocking check passes on a joint run
    that finished and fails, naming the condition and the step, on one whose monitor aborted it."""
    from burnqed_core.ebm.train import load_head
    from burnqed_core.loop.stages import ebm as ebm_stage
    from burnqed_core.training.joint_head import JointRecord, save_joint_head
    from burnqed_core.training.joint_monitor import AbortRecord, MonitorPoint

    records = toy_records(n_theorems=45)
    write_trajectories(env, 0, records)
    cache = write_cache(env, 1, records)
    dirs = [env.layout.iteration(0).stage("trajectories") / "search.traj"]
    train_from_dirs(cache, dirs, env.profile.ebm, tmp_path / "apart")  # a head that ranks: what joint training gives
    head, rec = load_head(tmp_path / "apart")
    adapter = env.layout.iteration(1).stage("lora_adapter")
    adapter.mkdir(parents=True)
    prof = env.profile.model_copy(update={"ebm": env.profile.ebm.model_copy(update={"joint": True})})
    out = env.layout.iteration(1).stage("ebm")
    for aborted in (None, AbortRecord(condition="centroid_l2", step=40, message="joint training aborted at step 40: "
                                      "centroid_l2: the probe set's centroid L2 0.01 fell below 60% of its 0.1")):
        save_joint_head(head, JointRecord(head=rec.head, pooling=rec.pooling, text_format=rec.text_format,
                                          max_prompt_tokens=1024, joint_lambda=0.1, head_lr=1e-3, steps=40,
                                          monitor=[MonitorPoint(step=0, temperature=1.0)], aborted=aborted), adapter)
        res = ebm_stage.ebm(ebm_stage.Settings.of(prof), 1, env.layout.iteration(1).stage("embeddings"), dirs, out,
                            progress=False, adapter_dir=adapter)
        write_marker(out, res)
        assert res.metrics["trained_jointly"] is True
        passed, md = env.check("ebm_healthy", 1)
        if aborted is None:
            assert passed, md["verdict"]
        else:
            assert not passed and "aborted at step 40: centroid_l2" in md["verdict"]


# -- eval_report: go/no-go ---------------------------------------------------------------------------


def test_go_no_go_check_against_the_previous_iteration(env: Env) -> None:
    """Decided on the primary statistic (pass@1 by cluster) with its paired interval; twelve clusters."""
    def at(solved: list[str], iteration: int) -> object:
        return summarize(twelve(dict.fromkeys(solved, 3), iteration), WIDE_BASE, SummaryOptions(iteration=iteration,
                         benchmark="bench", budgets=[8, 32]))

    write_report(at(WIDE[:6], 0), env.layout.iteration(0).stage("eval_report"), plot=False)  # type: ignore[arg-type]
    passed, md = env.check("go_no_go", 0)
    assert passed and "no previous iteration" in md["verdict"]

    write_report(at(WIDE, 1), env.layout.iteration(1).stage("eval_report"), plot=False)  # type: ignore[arg-type]
    passed, md = env.check("go_no_go", 1)
    assert passed, md["verdict"]
    key = "upper_bound_of_pass_1_mean_per_attempt_by_cluster_budget_32"
    assert md["best_lower_bound"] > 0 and md[key] >= 0.5  # +50 pp (six clusters of twelve more), its upper bound

    write_report(at(WIDE[:1], 1), env.layout.iteration(1).stage("eval_report"), plot=False)  # type: ignore[arg-type]
    passed, md = env.check("go_no_go", 1)
    assert not passed and "regression beyond 2.0pp" in md["verdict"]
    assert md[key] < -0.02 and md[f"{key}_threshold"] == -0.02


def test_gonogo_verdict_agrees_with_go_no_go() -> None:
    base = summarize(results(), BASE, SummaryOptions(iteration=0, benchmark="bench", budgets=[8, 32]))
    same = summarize([r.model_copy(update={"iteration": 1}) for r in results()], BASE, SummaryOptions(iteration=1,
                     benchmark="bench", budgets=[8, 32]))
    flat = summarize_variants(results() + [r.model_copy(update={"ebm": "e"}) for r in results()], BASE,
                              SummaryOptions(iteration=0, benchmark="bench", budgets=[8, 32]))
    for cur, prev in [(base, None), (same, base), (flat, None), (flat, base)]:
        v, cv = gonogo_verdict(cur, prev)
        assert v == go_no_go(cur, prev) and cv.passed == v.go
    assert not gonogo_verdict(flat, None)[1].passed and "best EBM gain" in gonogo_verdict(flat, None)[1].summary()
