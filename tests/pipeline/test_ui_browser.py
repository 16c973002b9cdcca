"""The Dagster UI in a real browser: `dagster dev` on 127.0.0.1 (this repository's workspace.yaml), driven by
Playwright in Debian's Chromium (/usr/bin/chromium; Playwright's own browser download cannot work here).

The base assets are materialised in-process first (no Lean: a LeanDojo-format corpus and the benchmark's
automation.json), partition 0 is added and one `dagster dev` serves the module's tests. One opens the
``iteration`` job's launchpad: the Lean pool's and the policy's fields (resources' config) are described beside
the editor, accepted when set, and a misspelled one is an error. The other opens the asset graph, finds the
assets and the partition, launches ``tactic_pairs[0]`` (a cheap CPU stage) through "Materialize…", waits for
Success and opens the loss-curve plot of ``base_model``. Both save screenshots (to ``BURNQED_UI_SCREENSHOTS`` if
set, else the module's temporary directory)."""

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


@dataclass(frozen=True)
class Served:
    url: str
    inst: dg.DagsterInstance
    work: Path
    shots: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`dagster dev` on an instance where the base assets are materialised (in-process, no Lean: a LeanDojo-format
    corpus and the benchmark's automation.json) and partition 0 is added; its pop-up seen."""
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium (scripts/setup.sh installs it)")
    pytest.importorskip("playwright.sync_api")
    tmp = tmp_path_factory.mktemp("ui")
    shots = Path(os.environ.get("BURNQED_UI_SCREENSHOTS") or tmp)
    shots.mkdir(parents=True, exist_ok=True)
    bench = slice_set("bundled:benchmark", 1, tmp / "bench" / "benchmark.jsonl")
    prof = write_profile(tmp / "profile.yaml", {"paths.work_dir": str(tmp / "work"),
                                                "data.corpus": str(leandojo_corpus(tmp / "dojo")),
                                                "data.benchmark": str(bench)})
    home = tmp / "dagster_home"
    home.mkdir()
    shutil.copyfile(ROOT / "dagster.yaml", home / "dagster.yaml")
    inst = dg.DagsterInstance.from_config(str(home))
    materialize(inst, resources(prof), ["base_tactic_pairs", "base_model", "automation_baselines",
                                         "premise_index"])
    add_iteration(inst, 0)
    with dagster_dev(home, prof, tmp / "dagster-dev.log") as url:
        assert _gql(url, "mutation { setNuxSeen }")["data"]["setNuxSeen"] is not None  # no community pop-up
        yield Served(url=url, inst=inst, work=tmp / "work", shots=shots)


@contextlib.contextmanager
def browser_page() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROME_ARGS)
        try:
            yield browser.new_page(viewport={"width": 1400, "height": 900})
        finally:
            browser.close()


def _set_config(page: Any, text: str) -> None:
    """Replace the launchpad's run config (its CodeMirror editor) with ``text``."""
    page.evaluate("(v) => document.querySelector('.CodeMirror').CodeMirror.setValue(v)", text)


LAUNCHPAD_CONFIG = """resources:
  lean:
    config:
      num_workers: 2
  policy:
    config:
      device: cpu
"""


def test_the_launchpad_shows_the_pool_s_and_the_policy_s_fields(served: Served) -> None:
    """The ``iteration`` job's launchpad: the Lean pool's and the policy's fields are resources' config, described
    beside the editor where the cursor is, accepted when set, and a misspelled field is an error naming them."""
    from playwright.sync_api import expect

    with browser_page() as page:
        page.goto(f"{served.url}/locations/{LOCATION}/jobs/iteration/playground")
        editor = page.locator(".CodeMirror")
        expect(editor).to_contain_text("launch_sglang", timeout=60_000)  # the policy's default config, scaffolded
        _set_config(page, LAUNCHPAD_CONFIG)
        expect(page.get_by_text("No errors")).to_be_visible(timeout=30_000)
        body = page.locator("body")
        page.get_by_text("num_workers").first.click()  # the cursor in lean's config: its fields beside the editor
        for field in ("worker_ttl_s", "worker_rss_limit_mb", "verdict_cache", "max_requests_per_worker"):
            expect(body).to_contain_text(field, timeout=30_000)
        page.screenshot(path=str(served.shots / "launchpad-lean.png"))
        page.get_by_text("device").first.click()  # in the policy's: its fields
        for field in ("launch_sglang", "sglang_url", "batch_size"):
            expect(body).to_contain_text(field, timeout=30_000)
        page.screenshot(path=str(served.shots / "launchpad-policy.png"))
        _set_config(page, LAUNCHPAD_CONFIG.replace("num_workers", "num_wrkers"))
        expect(body).to_contain_text('unexpected config entry "num_wrkers" at path root:resources:lean:config',
                                     timeout=30_000)
    for name in ("launchpad-lean.png", "launchpad-policy.png"):
        assert (served.shots / name).stat().st_size > 10_000


def test_materialize_a_partition_from_the_ui(served: Served) -> None:
    from playwright.sync_api import expect

    url, shots = served.url, served.shots
    with browser_page() as page:
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

    assert served.inst.get_materialized_partitions(dg.AssetKey("tactic_pairs")) == {"0"}
    stats = json.loads((served.work / "iter_0" / "tactic_pairs" / "stats.json").read_text())
    assert stats["iteration"] == 0
    for name in ("asset-graph.png", "run.png", "tactic_pairs-0.png", "base_model-loss-curve.png"):
        assert (shots / name).stat().st_size > 10_000
