"""One ``burnqed search`` job: a theorem list searched into a trajectory
output, with its run record, progress, resume and SIGTERM handling.

Three levels, each used on its own:

* `run_search`: drives `SearchEngine.search_many` over the theorems not yet
  saved in the output, hands every finished search to a `TrajectoryWriter`
  (one part file per ``flush_every`` theorems), shows a tqdm bar (theorems
  done, proved, rate, ETA) and keeps the run record beside the parts;
* `search_theorems`: over an open policy and Lean environment, builds the run
  record (what produced the output: `build_run_record`) and the engine, then
  hands over to `run_search`. Used by the command line, the evaluation and
  the loop, so that they all write the same run record;
* `search_job`: everything ``burnqed search`` does: checks the output before
  any model or Lean starts, loads the policy (and EBM), starts the Lean pool,
  runs `search_theorems`, closes everything.

SIGTERM (what a cloud sends before preempting a spot instance) and SIGINT
stop the search at once: the searches in flight are dropped (a resume redoes
them), everything finished is flushed, the run record is closed with status
``interrupted``, and the report says so (the command exits 143). Resume
(``resume=True``) reads the saved results, skips those theorems, checks that
the run settings match the saved run record, and appends new parts: a
theorem is never written twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import signal
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tqdm import tqdm

from burnqed_core.config import Profile, SearchConfig
from burnqed_core.data.pairs.prompt import format_of
from burnqed_core.errors import BurnqedError, DataError
from burnqed_core.lean.types import ProofEnv
from burnqed_core.policy.base import Policy
from burnqed_core.premises.index import PremiseIndex
from burnqed_core.records import Theorem
from burnqed_core.search.engine import EngineStats, Sampling, SearchEngine, resolve_sampling
from burnqed_core.search.scoring import EnergyScorer
from burnqed_core.search.trajectories import (
    OutputExistsError,
    ResumeMismatchError,
    RunRecord,
    RunSession,
    TrajectoryWriter,
    clean_temporaries,
    model_identity,
    now_iso,
    read_run_record,
    write_run_record,
)
from burnqed_core.trajectory_io import finished_theorems, list_parts, read_results

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class EbmUnavailableError(BurnqedError):
    """An EBM was asked for but cannot be loaded."""


class SearchInterrupted(BurnqedError):
    """SIGTERM/SIGINT stopped a search: before it started (nothing was
    written), or, for a caller that must not go on with a partial output (the
    loop's trajectories stage), while it ran (what finished is saved)."""


@dataclass
class RunReport:
    out: Path
    total: int
    skipped: int = 0
    searched: int = 0
    proved: int = 0
    interrupted: bool = False
    signal: str = ""
    wall_s: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)

    @property
    def done(self) -> int:
        return self.skipped + self.searched


# -- signals ------------------------------------------------------------------


def _add_stop_handlers(on_signal: Callable[[int], None]) -> list[int]:
    """``on_signal(signum)`` on SIGTERM/SIGINT in the running loop; the
    signals it could install (none off the main thread or on Windows)."""
    loop = asyncio.get_running_loop()
    installed = []
    for sig in STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, on_signal, sig)
            installed.append(sig)
    return installed


def _remove_stop_handlers(signals: Iterable[int] = STOP_SIGNALS) -> None:
    loop = asyncio.get_running_loop()
    for sig in signals:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(sig)


# -- one search into an output ------------------------------------------------------


def check_unique_names(theorems: Sequence[Theorem]) -> None:
    seen: set[str] = set()
    dups = sorted({t.name for t in theorems if t.name in seen or seen.add(t.name)})
    if dups:
        raise DataError(f"theorem names must be unique (the output is keyed by name); repeated: {', '.join(dups[:5])}")


def prepare_output(out: Path, record: RunRecord, resume: bool) -> tuple[set[str], RunRecord]:
    """The saved theorem names and the run record to continue (resume) or a
    fresh one; refuses to mix runs."""
    saved_record = read_run_record(out)
    has_parts = bool(list_parts(out))
    if not resume:
        if has_parts or saved_record is not None:
            raise OutputExistsError(f"{out} already holds a search output: pass --resume to continue it, "
                                    f"or choose another --out")
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise OutputExistsError(f"{out} exists and is not an empty directory")
        return set(), record
    if out.exists() and not out.is_dir():
        raise OutputExistsError(f"{out} is a file; a search output is a directory of parts")
    removed = clean_temporaries(out)
    if removed:
        log.info("removed %d half-written part file(s) left by a killed run", removed)
    if saved_record is None:
        if has_parts:
            raise ResumeMismatchError(f"{out} has parts but no run record ({out}/_run.json): cannot check settings")
        return set(), record
    diffs = saved_record.mismatches(record)
    if diffs:
        raise ResumeMismatchError(f"cannot resume {out} with other settings: " + "; ".join(diffs))
    return finished_theorems(out), saved_record


async def run_search(
    engine: SearchEngine,
    theorems: Sequence[Theorem],
    out: str | Path,
    record: RunRecord,
    *,
    resume: bool = False,
    flush_every: int = 10,
    progress: bool = True,
    handle_signals: bool = True,
) -> RunReport:
    """Search every theorem not yet saved in ``out``; see the module docstring."""
    out = Path(out)
    check_unique_names(theorems)
    served = record.served_model
    saved, record = prepare_output(out, record, resume)
    todo = [t for t in theorems if t.name not in saved]
    report = RunReport(out=out, total=len(theorems), skipped=len(theorems) - len(todo))
    if resume:
        log.info("resume: %d of %d theorems already saved, %d to search", report.skipped, len(theorems), len(todo))
    session = RunSession(resumed=resume and bool(saved), theorems_at_start=len(saved), served_model=served)
    record.sessions.append(session)
    out.mkdir(parents=True, exist_ok=True)
    write_run_record(out, record)

    writer = TrajectoryWriter(out, flush_every, already_saved=saved)
    t0 = time.perf_counter()
    bar = tqdm(total=len(theorems), initial=report.skipped, unit="thm", desc="search", disable=not progress,
               dynamic_ncols=True)
    proved_before = sum(r.proved for r in read_results(out)) if saved else 0

    status: Literal["complete", "interrupted", "failed"] = "failed"
    try:
        status = await _drain(engine, todo, writer, report, bar, proved_before, handle_signals)
    finally:
        bar.close()
        writer.close()
        report.wall_s = time.perf_counter() - t0
        session.ended = session.ended or now_iso()
        session.status = status
        session.theorems_written = writer.theorems_written
        write_run_record(out, record)
    log.info("search %s: %d searched (%d proved), %d skipped, %.1f s", status, report.searched, report.proved,
             report.skipped, report.wall_s)
    return report


async def _drain(
    engine: SearchEngine,
    todo: Sequence[Theorem],
    writer: TrajectoryWriter,
    report: RunReport,
    bar: tqdm,
    proved_before: int,
    handle_signals: bool,
) -> Literal["complete", "interrupted"]:
    """Search ``todo``, handing every finished search to ``writer``, ``report`` and ``bar``, until all are done
    ("complete") or SIGTERM/SIGINT cancels the searches in flight ("interrupted"); any other cancellation or
    error propagates. The stop handlers are installed for the search only."""

    async def consume() -> None:
        async for outcome in engine.search_many(todo):
            r = outcome.result
            writer.add(outcome)
            report.searched += 1
            report.proved += r.proved
            if r.error:
                report.errors[r.error] = report.errors.get(r.error, 0) + 1
            bar.update(1)
            bar.set_postfix(proved=proved_before + report.proved, refresh=False)

    task = asyncio.ensure_future(consume())

    def on_signal(signum: int) -> None:
        if not report.interrupted:
            report.interrupted = True
            report.signal = signal.Signals(signum).name
            log.warning("%s: stopping; flushing %d finished theorem(s)", report.signal, len(writer.buffer))
            task.cancel()

    installed = _add_stop_handlers(on_signal) if handle_signals else []
    try:
        await task
        return "complete"
    except asyncio.CancelledError:
        if not report.interrupted:
            raise
        return "interrupted"
    finally:
        _remove_stop_handlers(installed)


# -- the run record and the engine over an open policy and Lean environment ----------


def theorems_digest(theorems: Sequence[Theorem]) -> str:
    h = hashlib.sha256()
    for t in theorems:
        h.update(t.model_dump_json().encode())
        h.update(b"\n")
    return h.hexdigest()


def lean_version(profile: Profile, env: Any) -> str:
    v = getattr(env, "lean_version", None)
    if isinstance(v, str) and v:
        return v
    if profile.lean.backend == "embedded":
        from burnqed_core.lean.install import lean_identity

        return lean_identity()
    return f"pantograph {profile.lean.pantograph.executable} (LEAN_PATH={profile.lean.pantograph.lean_path})"


def build_run_record(
    profile: Profile,
    config: SearchConfig,
    sampling: Sampling,
    *,
    model_path: str | Path | None,
    policy: Policy,
    env: Any,
    theorems: Sequence[Theorem],
    theorems_source: str,
    iteration: int,
    ebm: str | Path | None = None,
    served_model: dict[str, str | None] | None = None,
) -> RunRecord:
    return RunRecord(
        model=model_identity(model_path),
        policy_backend=getattr(policy, "name", profile.policy.backend),
        prompt_version=format_of(policy).version,
        sampling=sampling,
        budgets={"max_nodes": config.max_nodes, "max_depth": config.max_depth, "timeout_s": config.timeout_s},
        search=config.model_dump(mode="json"),
        ebm=str(Path(ebm).resolve()) if ebm is not None else None,
        lean_backend=profile.lean.backend,
        lean_version=lean_version(profile, env),
        seeds={"profile": profile.seed, "search": config.seed},
        theorems_source=theorems_source,
        theorems_sha256=theorems_digest(theorems),
        theorems_total=len(theorems),
        iteration=iteration,
        profile=str(profile.source or profile.name),
        served_model=served_model,
        automation=config.automation.model_dump(mode="json") if config.automation.enabled else None,
    )


async def served_model(policy: Policy) -> dict[str, str | None] | None:
    """What a policy server says it serves (`SglangPolicy.served_model`:
    ``/model_info`` ``model_path`` and ``weight_version``), so that the run
    record names the model really used; None for in-process policies."""
    ask = getattr(policy, "served_model", None)
    return await ask() if ask is not None else None


async def search_theorems(
    profile: Profile,
    policy: Policy,
    env: ProofEnv,
    theorems: Sequence[Theorem],
    out: str | Path,
    *,
    sampling: Sampling,
    config: SearchConfig | None = None,
    model_path: str | Path | None = None,
    theorems_source: str = "",
    iteration: int = 0,
    scorer: EnergyScorer | None = None,
    ebm: str | Path | None = None,
    resume: bool = True,
    progress: bool = True,
    handle_signals: bool = True,
    premises: PremiseIndex | None = None,
) -> tuple[RunReport, SearchEngine]:
    """Search ``theorems`` into ``out`` (resuming a partial output by default); ``premises``: the premise index
    the search's premise steps retrieve from (``search.premises.enabled``)."""
    config = config or profile.search
    record = build_run_record(profile, config, sampling, model_path=model_path, policy=policy, env=env,
                              theorems=theorems, theorems_source=theorems_source, iteration=iteration, ebm=ebm,
                              served_model=await served_model(policy))
    engine = SearchEngine(policy, env, config, sampling=sampling, scorer=scorer, iteration=iteration,
                          premises=premises if config.premises.enabled else None)
    report = await run_search(engine, theorems, out, record, resume=resume, flush_every=config.flush_every,
                              progress=progress, handle_signals=handle_signals)
    return report, engine


# -- the whole job: policy + Lean pool + engine + output ------------------------------


def load_scorer(ebm_dir: Path, policy: Any) -> EnergyScorer:
    """The EBM in ``ebm_dir`` as an `EnergyScorer`
    (``burnqed_core.ebm.scorer.load_energy_scorer(dir, policy)``)."""
    from burnqed_core.ebm.scorer import load_energy_scorer
    from burnqed_core.ebm.train import RECORD_FILE, has_ebm

    if not ebm_dir.is_dir():
        raise EbmUnavailableError(f"--ebm {ebm_dir}: no such directory")
    if not has_ebm(ebm_dir):
        raise EbmUnavailableError(f"--ebm {ebm_dir}: no trained EBM there (no {RECORD_FILE}; iteration 0 "
                                  f"trains none): train one with `burnqed ebm train`")
    return load_energy_scorer(ebm_dir, policy)


def rerank_premises(index: PremiseIndex | None, reranker: Path | None, policy: Any,
                    model_path: str | Path | None) -> PremiseIndex | None:
    """``index`` with its retrieval re-ranked by the premise re-ranker saved in ``reranker`` (a
    ``premise_reranker`` stage's folder) on ``policy``'s encoder, whose model is ``model_path``
    (`burnqed_core.premises.rerank`), when the folder holds one; else ``index`` as it is. A re-ranker trained on
    another model's embeddings is an error."""
    from burnqed_core.premises.rerank import has_reranker

    if index is None or not has_reranker(reranker):
        return index
    from burnqed_core.ebm.embeddings import policy_fingerprint
    from burnqed_core.premises.rerank import RerankedIndex, load_reranker

    assert reranker is not None
    rr = load_reranker(reranker, policy, policy_fingerprint(policy, model_path))
    log.info("premise retrieval re-ranked by %s (%d BM25 candidates per state)", reranker, rr.candidates)
    return RerankedIndex(index, rr)


def _premise_index(profile: Profile, premises: Path | None) -> PremiseIndex | None:
    """The premise index in ``premises`` when ``search.premises`` is on (which needs one), else None."""
    if not profile.search.premises.enabled:
        return None
    if premises is None:
        raise DataError("search.premises.enabled: pass the premise index (--premises DIR: the loop's "
                        "base/premise_index folder), or turn the premise steps off")
    from burnqed_core.premises.library import load_index

    return load_index(premises)


def _preflight(
    profile: Profile,
    theorems: Sequence[Theorem],
    out: Path,
    *,
    model_path: str | Path | None,
    ebm: Path | None,
    temperature: float | None,
    num_candidates: int | None,
    resume: bool,
    iteration: int,
    theorems_source: str,
) -> Sampling:
    """The job's sampling settings, once its settings and ``out`` are checked against each other (a fresh
    output, or a resume with the same settings), before any model or Lean starts."""
    cfg = profile.search
    if ebm is not None and profile.policy.backend == "fixed":
        raise EbmUnavailableError("--ebm needs a model policy (the fixed-tactics policy has no encoder)")
    sampling = resolve_sampling(cfg, ebm=ebm is not None, temperature=temperature, num_candidates=num_candidates,
                                max_new_tokens=profile.policy.max_new_tokens)
    check_unique_names(theorems)
    # the settings that a resume must match are known before any model or Lean starts
    preflight = build_run_record(profile, cfg, sampling, model_path=model_path, policy=None,  # type: ignore[arg-type]
                                 env=None, theorems=theorems, theorems_source=theorems_source,
                                 iteration=iteration, ebm=ebm)
    prepare_output(out, preflight, resume)
    return sampling


@dataclass
class _JobStop:
    """Until `run_search` installs its own handlers (and after it removed them), SIGTERM/SIGINT cancel the
    job's task ``main`` so that the Lean workers are closed; ``caught`` names the signals received."""

    main: asyncio.Task[Any] | None
    enabled: bool
    caught: list[str] = field(default_factory=list)

    def on_signal(self, signum: int) -> None:
        self.caught.append(signal.Signals(signum).name)
        self.main.cancel()  # type: ignore[union-attr]

    def install(self) -> None:
        if self.enabled and self.main is not None:
            _add_stop_handlers(self.on_signal)


async def _close_job(pool: ProofEnv, policy: Policy | None, handle_signals: bool) -> None:
    """Close the job's Lean pool and policy (an error closing either is ignored), then remove the stop
    handlers."""
    with contextlib.suppress(Exception):
        await pool.close()
    if policy is not None:
        with contextlib.suppress(Exception):
            await policy.close()
    if handle_signals:
        _remove_stop_handlers()


async def search_job(
    profile: Profile,
    theorems: Sequence[Theorem],
    out: str | Path,
    *,
    model_path: str | Path | None = None,
    ebm: Path | None = None,
    temperature: float | None = None,
    num_candidates: int | None = None,
    resume: bool = False,
    iteration: int = 0,
    theorems_source: str = "",
    progress: bool = True,
    handle_signals: bool = True,
    premises: Path | None = None,
) -> tuple[RunReport, EngineStats]:
    """Everything ``burnqed search`` does: check the output first (before any
    model or Lean starts), load the policy (and EBM) and the premise index
    (``premises``: a premise_index folder, needed by ``search.premises``),
    start the Lean pool, run `run_search`, close everything. A signal before
    the search started raises `SearchInterrupted`; one during it returns a
    report with ``interrupted``."""
    out = Path(out)
    index = _premise_index(profile, premises)
    model_path = model_path or profile.policy.model_path
    sampling = _preflight(profile, theorems, out, model_path=model_path, ebm=ebm, temperature=temperature,
                          num_candidates=num_candidates, resume=resume, iteration=iteration,
                          theorems_source=theorems_source)

    from burnqed_core.lean.pool import LeanPool
    from burnqed_core.policy.factory import make_policy

    stop = _JobStop(asyncio.current_task(), handle_signals)
    stop.install()
    policy: Policy | None = None
    pool = LeanPool(profile.lean)
    try:
        policy = make_policy(profile, model_path)
        scorer = load_scorer(ebm, policy) if ebm is not None else None
        await pool.start()
        report, engine = await search_theorems(
            profile, policy, pool, theorems, out, sampling=sampling, model_path=model_path,
            theorems_source=theorems_source, iteration=iteration, scorer=scorer, ebm=ebm, resume=resume,
            progress=progress, handle_signals=handle_signals, premises=index)
        stop.install()
    except asyncio.CancelledError:
        if not stop.caught:
            raise
        raise SearchInterrupted(f"interrupted by {stop.caught[0]} before the search started; nothing was "
                                f"written") from None
    finally:
        await _close_job(pool, policy, handle_signals)
    return report, engine.stats
