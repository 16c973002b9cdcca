"""End to end: `burnqed transfer` runs one leave-one-family-out fold through Dagster (cheap tiny settings, real
embedded Lean, real tiny models): the held-out family is neither traced nor trained on, the fold's eval
compares the prover with baseline (c) on it; iteration 0 stops at the eval report (no trajectories); a rerun
skips every stage; read at iteration 1 the fold also searches the corpus (never the held-out family) and reports
the change since iteration 0, in files of its own."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from burnqed_core.data.synthetic.catalogue import BY_NAME
from burnqed_core.data.synthetic.generate_sets import family_theorems
from burnqed_core.eval.transfer import RESULT_FILE, FoldResult, TransferReport, result_file
from burnqed_core.record_io import read_parquet, write_jsonl
from burnqed_core.records import TacticPair
from burnqed_core.trajectory_io import read_trajectories
from burnqed_pipeline.cli import make_app
from burnqed_pipeline.commands.transfer import run_transfer
from tests.pipeline.helpers import lend
from tests.pipeline.profiles import write_profile

pytestmark = [pytest.mark.lean, pytest.mark.slow]


async def test_a_transfer_fold_through_dagster(tmp_path: Path, lean_pool: object,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    theorems = [t for fam in ("tmul", "tsort", "onat") for t in family_theorems(BY_NAME[fam])[:3]]
    corpus = write_jsonl(theorems, tmp_path / "corpus" / "corpus.jsonl")
    prof = write_profile(tmp_path / "profile.yaml", {
        "paths.work_dir": str(tmp_path / "work"), "paths.trace_cache": str(tmp_path / "trace-cache"),
        "data.corpus": str(corpus), "data.exclude_families": [], "data.withhold_families": [],
        "data.search_theorems": 4})
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    out = tmp_path / "transfer"
    runner, pipeline_app = CliRunner(), make_app()
    rt = lend(lean_pool)  # the session's loop and Lean serve every fold (the command would start its own)

    def transfer(iteration: int = 0) -> tuple[int, str]:
        """``burnqed transfer --profile P -o OUT -f tmul [--iteration N]``: its exit code, its output."""
        lines: list[str] = []
        try:
            run_transfer(out, str(prof), ["tmul"], None, False, False, iteration, False, runtime=rt,
                         echo=lines.append)
            code = 0
        except typer.Exit as e:
            code = e.exit_code
        except Exception as e:
            code, lines = 1, [*lines, repr(e)]
        return code, "\n".join(lines)

    code, text = await asyncio.to_thread(transfer)
    assert code == 0, text
    for stage in ("tactic_pairs", "lora_adapter", "merged_model", "eval_report"):
        assert f"[iter 0 {stage}]" in text, text
    assert "[iter 0 trajectories]" not in text  # eval_report's upstream only (its EBM input: none at 0)
    code2, text2 = await asyncio.to_thread(transfer)
    assert code2 == 0, text2
    skipped = [ln for ln in text2.splitlines() if ln.startswith("[") and "(unchanged inputs, skipped)" in ln]
    assert len(skipped) == 4 + 7, text2  # base (premise index too); pairs, LoRA, merge, embeddings, EBM,
    # premise re-ranker, eval

    work = out / "tmul" / "work"
    # the held-out family was never traced: no pair of it reached pre-training or fine-tuning
    traced = read_parquet(work / "base" / "base_tactic_pairs" / "pairs.parquet", TacticPair)
    assert traced and not any(p.theorem.startswith("tmul_") for p in traced)
    assert not (work / "iter_0" / "trajectories").exists()
    fold = FoldResult.model_validate_json((out / "tmul" / RESULT_FILE).read_text())
    assert fold.family == "tmul" and fold.technique == "predicates" and fold.theorems == 3 and fold.twins == 0
    assert fold.structural is not None and fold.structural.total == 3  # baseline (c) on the same theorems
    assert fold.versus_structural is not None
    report = TransferReport.model_validate_json((out / "transfer.json").read_text())
    assert [f.family for f in report.folds] == ["tmul"] and report.missing == []
    md = (out / "transfer.md").read_text()
    assert "| predicates | tmul | 3 (0) |" in md and "- predicates: above (c) on" in md
    # --table runs nothing: the finished fold's result, and the selected fold never run named as such
    (out / "transfer.md").unlink()
    r = runner.invoke(pipeline_app, ["transfer", "--profile", str(prof), "-o", str(out), "-f", "tmul", "-f", "tsort",
                                     "--table"])
    assert r.exit_code == 0, r.output
    assert "from 1 finished folds" in r.output and not (out / "tsort").exists()
    table = (out / "transfer.md").read_text()
    assert table.startswith(md.rstrip("\n")), table  # the same rows and lines, then what is missing
    assert "| predicates | tmul | 3 (0) |" in table
    assert "no result (failed or not run): tsort (not run)" in table
    assert fold.corpus is not None and fold.corpus == report.corpus  # the corpus the fold was planned on
    # a fold that ran before the corpus changed is marked and not counted by --table
    (out / "tmul" / RESULT_FILE).write_text(fold.model_copy(update={"corpus": "0" * 16}).model_dump_json())
    r = runner.invoke(pipeline_app, ["transfer", "--profile", str(prof), "-o", str(out), "-f", "tmul", "--table"])
    assert r.exit_code == 0, r.output
    assert "| predicates | tmul * | 3 (0) |" in r.output and "read on an earlier corpus" in r.output, r.output
    assert "techniques with a held-out family above (c)" not in r.output  # no fold of this corpus to count
    (out / "tmul" / RESULT_FILE).write_text(fold.model_dump_json(indent=1) + "\n")
    summary = json.loads((work / "iter_0" / "eval_report" / "summary.json").read_text())
    assert summary["theorems"] == 3 and summary["iteration"] == 0

    # read at iteration 1: iteration 0's stages are reused, its corpus search runs (without the held-out family),
    # and the fold's result and table are written beside iteration 0's, which stay as they were
    code3, text3 = await asyncio.to_thread(transfer, 1)
    assert code3 == 0, text3
    for stage in ("[iter 0 trajectories]", "[iter 1 lora_adapter]", "[iter 1 eval_report]"):
        assert stage in text3, text3
    reused = [ln for ln in text3.splitlines() if ln.startswith("[iter 0 ") and "(unchanged inputs, skipped)" in ln]
    assert any(ln.startswith("[iter 0 eval_report]") for ln in reused), text3
    searched = read_trajectories(work / "iter_0" / "trajectories" / "search.traj")
    assert searched and not any(r.theorem.startswith("tmul_") for r in searched)
    later = FoldResult.model_validate_json((out / "tmul" / result_file(1)).read_text())
    assert later.iteration == 1 and later.family == "tmul" and later.theorems == 3
    assert later.versus_iteration0 is not None and later.versus_iteration0.before == fold.prover.value
    assert (out / "transfer-iter1.md").read_text().startswith("Leave-one-family-out transfer, profile")
    assert "since iteration 0" in (out / "transfer-iter1.md").read_text()
    assert FoldResult.model_validate_json((out / "tmul" / RESULT_FILE).read_text()) == fold  # rewritten, the same
    assert "since iteration 0" not in (out / "transfer.md").read_text()
