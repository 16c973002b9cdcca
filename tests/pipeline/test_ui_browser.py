"""The Dagster UI in a real browser: `dagster dev` on 127.0.0.1 (this repository's workspace.yaml), driven by
Playwright in Debian's Chromium (/usr/bin/chromium; Playwright's own browser download cannot work here).

The base assets are materialised in-process first (no Lean: a LeanDojo-format corpus and the benchmark's
automation.json), partition 0 is added, then the test opens the asset graph, finds the assets and the
partition, launches ``tactic_pairs[0]`` (a cheap CPU stage) through "Materialize…", waits for Success, opens
the loss-curve plot of ``base_model`` and saves screenshots (to ``BURNQED_UI_SCREENSHOTS`` if set, else the
test's temporary directory)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import httpx
import pytest

from burnqed_pipeline.defs.partitions import add_iteration
from tests.pipeline.helpers import materialize, resources
from tests.pipeline.profiles import leandojo_corpus, slice_set, write_profile

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
LOCATION = "burnqed"
CHROME_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _default_signals() -> None:
    # Background processes here may inherit ignored SIGINT/SIGTERM: restore the defaults so that the
    # server (and the daemon it starts) stop on SIGTERM.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def _gql(url: str, query: str) -> dict:
    r = httpx.post(f"{url}/graphql", json={"query": query}, timeout=30)
    r.raise_for_status()
    return r.json()


def _wait_loaded(url: str, proc: subprocess.Popen[bytes], log: Path, timeout_s: float = 240) -> None:
    query = "{ workspaceOrError { ... on Workspace { locationEntries { name locationOrLoadError { __typename } } } } }"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"dagster dev exited ({proc.returncode}): {log.read_text()[-3000:]}")
        with contextlib.suppress(httpx.HTTPError, ValueError):
            entries = _gql(url, query)["data"]["workspaceOrError"]["locationEntries"]
            kinds = {e["name"]: (e["locationOrLoadError"] or {}).get("__typename") for e in entries}
            if kinds.get(LOCATION) == "RepositoryLocation":
                return
            if kinds.get(LOCATION) == "PythonError":
                raise AssertionError(f"the code location failed to load: {log.read_text()[-3000:]}")
        time.sleep(1)
    raise AssertionError(f"the code location did not load in {timeout_s:.0f} s: {log.read_text()[-3000:]}")


def _wait_run(url: str, short_id: str, timeout_s: float = 300) -> str:
    """The full id of the run whose id starts with ``short_id``, once it succeeded (a failure fails the test)."""
    query = "{ runsOrError(limit: 20) { ... on Runs { results { runId status } } } }"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for run in _gql(url, query)["data"]["runsOrError"]["results"]:
            if run["runId"].startswith(short_id):
                assert run["status"] not in ("FAILURE", "CANCELED"), f"run {run['runId']} ended {run['status']}"
                if run["status"] == "SUCCESS":
                    return str(run["runId"])
        time.sleep(2)
    raise AssertionError(f"run {short_id} did not succeed within {timeout_s:.0f} s")


@contextlib.contextmanager
def dagster_dev(home: Path, profile: Path, log: Path) -> Iterator[str]:
    exe = shutil.which("dagster", path=str(Path(sys.executable).parent))
    assert exe, "dagster is not installed in this venv"
    port = _free_port()
    env = {**os.environ, "DAGSTER_HOME": str(home), "BURNQED_PROFILE": str(profile), "PYTHONPATH": str(ROOT)}
    with log.open("wb") as out:
        proc = subprocess.Popen([exe, "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)], cwd=ROOT,
                                env=env, stdout=out, stderr=subprocess.STDOUT, preexec_fn=_default_signals,
                                start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_loaded(url, proc, log)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        with contextlib.suppress(ProcessLookupError):  # anything left in its group (daemon, run workers)
            os.killpg(proc.pid, signal.SIGKILL)


def test_materialize_a_partition_from_the_ui(tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium (scripts/setup.sh installs it)")
    sync_api = pytest.importorskip("playwright.sync_api")
    shots = Path(os.environ.get("BURNQED_UI_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)

    bench = slice_set("bundled:benchmark", 1, tmp_path / "bench" / "benchmark.jsonl")
    prof = write_profile(tmp_path / "profile.yaml", {"paths.work_dir": str(tmp_path / "work"),
                                                     "data.corpus": str(leandojo_corpus(tmp_path / "dojo")),
                                                     "data.benchmark": str(bench)})
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copyfile(ROOT / "dagster.yaml", home / "dagster.yaml")
    inst = dg.DagsterInstance.from_config(str(home))
    materialize(inst, resources(prof), ["base_tactic_pairs", "base_model", "automation_baselines",
                                         "premise_index"])
    add_iteration(inst, 0)

    with dagster_dev(home, prof, tmp_path / "dagster-dev.log") as url:
        assert _gql(url, "mutation { setNuxSeen }")["data"]["setNuxSeen"] is not None  # no community pop-up
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROME_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            expect = sync_api.expect

            page.goto(f"{url}/locations/{LOCATION}/asset-groups/iteration")
            for name in ("tactic_pairs", "lora_adapter", "merged_model", "trajectories", "eval_report"):
                expect(page.get_by_text(name, exact=True).first).to_be_visible(timeout=60_000)
            page.screenshot(path=str(shots / "asset-graph.png"))

            page.goto(f"{url}/assets/tactic_pairs?view=partitions")
            expect(page.get_by_text("Missing (1)")).to_be_visible(timeout=60_000)  # partition 0, not materialised
            expect(page.get_by_text("0", exact=True).first).to_be_visible()
            page.get_by_role("button", name="Materialize…").click()
            dialog = page.get_by_role("dialog")
            expect(dialog).to_be_visible(timeout=30_000)
            dialog.get_by_text("Select a partition or create one").click()
            page.get_by_role("menuitem").filter(has=page.get_by_text("0", exact=True)).first.click()
            page.keyboard.press("Escape")
            page.get_by_role("button", name="Launch 1 run").click()
            toast = page.get_by_text("Launched run").first
            expect(toast).to_be_visible(timeout=60_000)
            short_id = toast.inner_text().split()[-1]
            run_id = _wait_run(url, short_id)

            page.goto(f"{url}/runs/{run_id}")
            expect(page.get_by_text("Success").first).to_be_visible(timeout=60_000)
            page.screenshot(path=str(shots / "run.png"))
            page.goto(f"{url}/assets/tactic_pairs?view=partitions&partition=0")
            expect(page.get_by_text("train_pairs").first).to_be_visible(timeout=60_000)
            page.screenshot(path=str(shots / "tactic_pairs-0.png"), full_page=True)

            # a plot: the PNG inlined in markdown as a data URI renders as an image
            page.goto(f"{url}/assets/base_model?view=events")
            row = page.get_by_role("row").filter(has=page.get_by_text("loss_curve", exact=True)).first
            row.get_by_text("[Show Markdown]").click()
            expect(page.get_by_role("img", name="pre-training loss curve")).to_be_visible(timeout=30_000)
            page.screenshot(path=str(shots / "base_model-loss-curve.png"))
            browser.close()

    assert inst.get_materialized_partitions(dg.AssetKey("tactic_pairs")) == {"0"}
    stats = json.loads((tmp_path / "work" / "iter_0" / "tactic_pairs" / "stats.json").read_text())
    assert stats["iteration"] == 0
    for name in ("asset-graph.png", "run.png", "tactic_pairs-0.png", "base_model-loss-curve.png"):
        assert (shots / name).stat().st_size > 10_000
