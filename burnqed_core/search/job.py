"""The whole ``burnqed search`` job: policy + Lean pool + engine + output.

Kept apart from `burnqed_core.search.runner` (which drives one search into
an output) and `burnqed_core.search.session` (which builds the run record
and the engine over an open policy and Lean environment), so that neither
of those imports the other's caller: runner <- session <- job.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from burnqed_core.config import Profile
from burnqed_core.errors import BurnqedError
from burnqed_core.policy.base import Policy
from burnqed_core.records import Theorem
from burnqed_core.search.engine import EngineStats, resolve_sampling
from burnqed_core.search.runner import RunReport, check_unique_names, prepare_output
from burnqed_core.search.scoring import EnergyScorer
from burnqed_core.search.session import build_run_record, search_theorems


class EbmUnavailableError(BurnqedError):
    """An EBM was asked for but cannot be loaded."""


class SearchInterrupted(BurnqedError):
    """SIGTERM/SIGINT arrived before the search started: nothing was written."""


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
) -> tuple[RunReport, EngineStats]:
    """Everything ``burnqed search`` does: check the output first (before any
    model or Lean starts), load the policy (and EBM), start the Lean pool, run
    `run_search`, close everything. A signal before the search started raises
    `SearchInterrupted`; one during it returns a report with ``interrupted``."""
    out = Path(out)
    cfg = profile.search
    model_path = model_path or profile.policy.model_path
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

    from burnqed_core.lean.pool import LeanPool
    from burnqed_core.policy.factory import make_policy

    main = asyncio.current_task()
    caught: list[str] = []

    def install() -> None:
        # Until the runner installs its own handlers (and after it removed
        # them), a signal cancels the job so that Lean workers are closed.
        if not handle_signals or main is None:
            return
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, lambda s=sig: (caught.append(signal.Signals(s).name), main.cancel()))

    def uninstall() -> None:
        if handle_signals:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(sig)

    install()
    policy: Policy | None = None
    pool = LeanPool(profile.lean)
    try:
        policy = make_policy(profile, model_path)
        scorer = load_scorer(ebm, policy) if ebm is not None else None
        await pool.start()
        report, engine = await search_theorems(
            profile, policy, pool, theorems, out, sampling=sampling, model_path=model_path,
            theorems_source=theorems_source, iteration=iteration, scorer=scorer, ebm=ebm, resume=resume,
            progress=progress, handle_signals=handle_signals)
        install()
    except asyncio.CancelledError:
        if not caught:
            raise
        raise SearchInterrupted(f"interrupted by {caught[0]} before the search started; nothing was written") from None
    finally:
        with contextlib.suppress(Exception):
            await pool.close()
        if policy is not None:
            with contextlib.suppress(Exception):
                await policy.close()
        uninstall()
    return report, engine.stats
