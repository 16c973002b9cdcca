"""`burnqed data prepare` and `burnqed data stats`, in-process (CliRunner) and
as a real subprocess of the installed console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from burnqed_core.cli import app
from burnqed_core.config import load_profile
from burnqed_core.data.pairs.prepare import TheoremSplit, write_split
from burnqed_core.errors import DataError
from burnqed_core.record_io import read_records, write_parquet
from burnqed_core.records import TacticPair, TrajectoryRecord
from tests.core.data.pairs.test_mixing import search_tree
from tests.core.data.pairs.test_prepare import make_pairs

runner = CliRunner()


@pytest.fixture
def pair_file(tmp_path: Path) -> Path:
    return write_parquet(make_pairs(120), tmp_path / "pairs.parquet")


def test_prepare_iteration_0(tmp_path: Path, pair_file: Path) -> None:
    out = tmp_path / "prep"
    res = runner.invoke(app, ["data", "prepare", "--pairs", str(pair_file), "--out", str(out)])
    assert res.exit_code == 0, res.output
    stats = json.loads((out / "stats.json").read_text())
    train = read_records(out / "train.parquet", TacticPair)
    val = read_records(out / "val.parquet", TacticPair)
    assert stats["train_pairs"] == len(train) and stats["val_pairs"] == len(val) > 0
    assert stats["val_fraction"] == 0.1 and stats["iteration"] == 0  # the tiny profile's data settings
    assert f"train {len(train)} pairs" in res.output


def test_prepare_iteration_1_mixes_trajectories(tmp_path: Path, pair_file: Path) -> None:
    traj = [r for i in range(20) for r in search_tree(f"s{i}", iteration=0)]
    traj += search_tree("later", iteration=1)  # not from an earlier iteration: skipped
    traj_file = write_parquet(traj, tmp_path / "iter_0.parquet", TrajectoryRecord)
    profile = tmp_path / "p.yaml"
    profile.write_text("data:\n  base_subsample: 50\n  trajectory_upsample: 3\n  trajectory_max_share: 1.0\n",
                       encoding="utf-8")
    out = tmp_path / "prep1"
    res = runner.invoke(app, ["data", "prepare", "--pairs", str(pair_file), "--out", str(out),
                              "--trajectories", str(traj_file), "--iteration", "1", "--profile", str(profile)])
    assert res.exit_code == 0, res.output
    mix = json.loads((out / "stats.json").read_text())["mix"]
    train = read_records(out / "train.parquet", TacticPair)
    assert mix["base_train_used"] == 50 and mix["trajectory_upsample"] == 3
    assert mix["trajectory_steps"] == 40  # two positive steps per proved search, "later" skipped
    assert len(train) == 50 + 3 * mix["trajectory_steps_train"]
    assert not any(p.theorem == "later" for p in train)
    assert "skipped 4 trajectory records" in res.output

    # the profile's cap on the trajectory share, and a split drawn before pre-training reused
    capped = tmp_path / "capped.yaml"
    capped.write_text("data:\n  base_subsample: 60\n  trajectory_upsample: 3\n  trajectory_max_share: 0.2\n",
                      encoding="utf-8")
    names = sorted({p.theorem for p in read_records(pair_file, TacticPair)} | {f"s{i}" for i in range(20)})
    chosen = ["thm_0", "thm_1", "s0"]
    split = write_split(TheoremSplit(seed=0, val_fraction=0.1, train=[n for n in names if n not in chosen],
                                     val=chosen), tmp_path / "split.json")
    out2 = tmp_path / "prep2"
    res = runner.invoke(app, ["data", "prepare", "--pairs", str(pair_file), "--out", str(out2), "--trajectories",
                              str(traj_file), "--iteration", "1", "--profile", str(capped), "--split", str(split)])
    assert res.exit_code == 0, res.output
    mix = json.loads((out2 / "stats.json").read_text())["mix"]
    assert mix["share_capped"] and mix["trajectory_rows_train"] == 38  # every step once: 0.2 of 60 base is 15
    assert mix["trajectory_max_share"] == 0.2 and "share cap 20%" in res.output
    val = read_records(out2 / "val.parquet", TacticPair)
    assert {p.theorem for p in val} == set(chosen)  # exactly the split's validation theorems
    assert {p.theorem for p in read_records(out2 / "train.parquet", TacticPair)}.isdisjoint(chosen)


def test_prepare_rejects_trajectories_at_iteration_0(tmp_path: Path, pair_file: Path) -> None:
    res = runner.invoke(app, ["data", "prepare", "--pairs", str(pair_file), "--out", str(tmp_path / "o"),
                              "--trajectories", str(pair_file)])
    assert res.exit_code != 0 and isinstance(res.exception, DataError)


def test_stats_json(tmp_path: Path, pair_file: Path) -> None:
    res = runner.invoke(app, ["data", "stats", "--theorems", "bundled:benchmark", "--pairs", str(pair_file),
                              "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    bench = report["theorems"]["bundled:benchmark"]
    assert bench["theorems"] == sum(bench["by_split"].values()) == sum(bench["by_family"].values())
    assert set(bench["by_split"]) == {"dev", "test"}  # the generated benchmark's two splits
    pairs = report["pairs"][str(pair_file)]
    assert pairs["pairs"] == len(make_pairs(120)) and pairs["theorems"] == 120


def test_stats_text_defaults_to_profile_sets() -> None:
    res = runner.invoke(app, ["data", "stats"])
    assert res.exit_code == 0, res.output
    data = load_profile("tiny").data
    assert f"{data.corpus}:" in res.output and f"{data.benchmark}:" in res.output
    assert "proof length:" in res.output


def test_subprocess_error_is_one_line(tmp_path: Path) -> None:
    exe = shutil.which("burnqed", path=str(Path(sys.executable).parent)) or shutil.which("burnqed")
    assert exe, "the burnqed console script is not installed"
    env = {**os.environ, "BURNQED_PROFILE": "tiny"}
    ok = subprocess.run([exe, "data", "stats", "--theorems", "bundled:benchmark"], capture_output=True,
                        text=True, env=env, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("bundled:benchmark:")
    bad = subprocess.run([exe, "data", "stats", "--theorems", "bundled:nope"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert bad.returncode == 1
    assert bad.stderr.strip().splitlines() == [bad.stderr.strip()]  # one line, no traceback
    assert bad.stderr.startswith("error: no bundled theorem set 'nope'")


def test_core_pool_resplit_applies_the_near_twin_rules_without_lean(tmp_path: Path) -> None:
    """`burnqed data core-pool --resplit DIR --out OUT`: the written sets with the near-twin rules applied again
    (a pool row that prints as a test theorem leaves, counted under the eval's check); no Lean, no scans."""
    from burnqed_core.data.theorems.core_pool import SplitRules, build_pool, read_build, write_pool
    from tests.core.data.theorems.test_core_pool import _scans, row

    scans, graph = _scans()
    b = build_pool(scans, graph, split_rules=SplitRules(test_theorems=10, test_families=1, dev_theorems=10,
                                                         dev_families=1, min_family=1, test_clusters=1,
                                                         dev_clusters=1))
    t = b.split("test")[0]
    b = b.model_copy(update={"theorems": [*b.theorems, row("Z.copy", "Init.Data.Z.Lemmas", "pool", t.type)]})
    write_pool(b, tmp_path / "sets")
    res = runner.invoke(app, ["data", "core-pool", "--resplit", str(tmp_path / "sets"), "--out",
                              str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    assert "near-twin of a test theorem (eval check) 1" in res.output
    after = read_build(tmp_path / "out")
    assert {x.name for x in after.theorems} == {x.name for x in b.theorems} - {"Z.copy"}
    assert after.counts()["pool"]["theorems"] == len(b.split("pool")) - 1
    res = runner.invoke(app, ["data", "core-pool", "--resplit", str(tmp_path / "sets"), "--scans", "x.json"])
    assert isinstance(res.exception, DataError) and "--resplit" in str(res.exception)
