"""The base assets and the training stages of an iteration, materialised in-process with a real (temporary,
on-disk) Dagster instance and real tiny models; no Lean: the corpus is a LeanDojo Benchmark 4 file, and the
automation baselines come from the benchmark's automation.json."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest
import yaml

from burnqed_core.data.pairs.prepare import read_split
from burnqed_core.record_io import read_records
from burnqed_core.records import TacticPair
from burnqed_pipeline.defs.partitions import add_iteration
from tests.pipeline.helpers import failure_message, materialize, metadata, resources
from tests.pipeline.profiles import leandojo_corpus, slice_set, write_profile

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dg.DagsterInstance]:
    tmp = tmp_path_factory.mktemp("pipeline_training")
    bench = slice_set("bundled:benchmark", 1, tmp / "bench" / "benchmark.jsonl")
    prof = write_profile(tmp / "profile.yaml", {"paths.work_dir": str(tmp / "work"),
                                                "data.corpus": str(leandojo_corpus(tmp / "dojo")),
                                                "data.benchmark": str(bench)})
    (tmp / "dagster").mkdir()
    return prof, dg.DagsterInstance.local_temp(tempdir=str(tmp / "dagster"))


def test_base_assets_and_iteration_0_training(setup: tuple[Path, dg.DagsterInstance]) -> None:
    prof, inst = setup
    res = resources(prof)
    md = metadata(materialize(inst, res, ["base_tactic_pairs", "premise_index", "base_model", "automation_baselines"]))
    assert md["base_tactic_pairs"]["pairs"] > 20 and md["base_tactic_pairs"]["source"] == "leandojo"
    assert md["base_model"]["loss_curve"].startswith("![pre-training loss curve](data:image/png;base64,")
    assert md["base_model"]["steps"] == 30 and len(md["base_model"]["model_fingerprint"]) == 16
    auto = md["automation_baselines"]
    assert auto["theorems"] > 0 and auto["closed"] + auto["hard"] == auto["theorems"] and auto["measured_now"] == 0

    add_iteration(inst, 0)
    md = metadata(materialize(inst, res, ["tactic_pairs", "lora_adapter", "merged_model"], "0"))
    assert md["tactic_pairs"]["train_pairs"] > 0 and md["tactic_pairs"]["partitions_used"] == \
        "base_tactic_pairs, base_model, premise_index"
    lora = md["lora_adapter"]
    assert lora["steps"] == 10 and lora["loss_curve"].startswith("![LoRA iteration 0 loss curve](data:image/png")
    assert lora["partitions_used"] == "tactic_pairs[0], base_model, premise_index" and lora["skipped"] is False
    assert str(md["merged_model"]["path"]).endswith("iter_0/merged_model") and md["merged_model"]["weight_files"] == 1
    assert inst.get_materialized_partitions(dg.AssetKey("merged_model")) == {"0"}

    # one split, drawn before pre-training: iteration 0 validates on theorems the base never trained on
    work = prof.parent / "work"
    split = read_split(work / "base" / "base_model" / "split.json")
    assert split.val and split.train
    val = {p.theorem for p in read_records(work / "iter_0" / "tactic_pairs" / "val.parquet", TacticPair)}
    train = {p.theorem for p in read_records(work / "iter_0" / "tactic_pairs" / "train.parquet", TacticPair)}
    assert val and val <= set(split.val) and train.isdisjoint(split.val)
    pretrain_val = json.loads((work / "base" / "base_model" / "metrics.json").read_text(encoding="utf-8"))
    assert pretrain_val["val_examples"] > 0  # pre-training selected its checkpoint on the held-out side


def test_unchanged_inputs_skip_changed_inputs_recompute(setup: tuple[Path, dg.DagsterInstance]) -> None:
    prof, inst = setup
    res = resources(prof)
    before = metadata(materialize(inst, res, ["merged_model"], "0"))["merged_model"]
    again = metadata(materialize(inst, res, ["lora_adapter", "merged_model"], "0"))
    assert again["lora_adapter"]["skipped"] is True and again["merged_model"]["skipped"] is True
    assert again["merged_model"]["inputs_fingerprint"] == before["inputs_fingerprint"]

    raw = yaml.safe_load(prof.read_text())
    raw["training"]["shard_size"] = "1GB"  # a setting merged_model reads
    changed = prof.with_name("changed.yaml")
    changed.write_text(yaml.safe_dump(raw))
    md = metadata(materialize(inst, resources(changed), ["merged_model"], "0"))["merged_model"]
    assert md["skipped"] is False and md["inputs_fingerprint"] != before["inputs_fingerprint"]
    md2 = metadata(materialize(inst, resources(changed), ["merged_model"], "0"))["merged_model"]
    assert md2["skipped"] is True and md2["inputs_fingerprint"] == md["inputs_fingerprint"]


def test_a_missing_earlier_partition_is_named(setup: tuple[Path, dg.DagsterInstance]) -> None:
    prof, inst = setup
    add_iteration(inst, 1)
    result = materialize(inst, resources(prof), ["tactic_pairs"], "1", raise_on_error=False)
    assert not result.success
    assert "tactic_pairs[1] needs trajectories[0]" in failure_message(result)
