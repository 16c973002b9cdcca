"""The nightly eval: the newest complete iteration on the profile's benchmark and its extra benchmarks.

Each benchmark is evaluated by THE eval stage (`burnqed_core.loop.stages.eval_report`: both automation
baselines, one search per theorem at the largest budget, every proof re-checked, the held-out check
against the iteration's training pairs, with and without the EBM) into a dated directory
``<work_dir>/nightly/<YYYY-MM-DD>/<benchmark>/`` (``report.md``, ``summary.json``, ``results.parquet``,
``solve_rate.png``), resumable within the day.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from burnqed_core.config import Profile
from burnqed_core.lean.types import ProofEnv
from burnqed_core.loop.stages import StageResult

NIGHTLY_DIR = "nightly"


def benchmarks(profile: Profile) -> list[str]:
    """The profile's benchmark, then each extra benchmark (duplicates dropped, order kept)."""
    return list(dict.fromkeys([profile.data.benchmark, *profile.nightly.extra_benchmarks]))


def slug(spec: str) -> str:
    """A directory name for a benchmark spec (``bundled:benchmark`` -> ``bundled_benchmark``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", spec).strip("_") or "benchmark"


def report_day(timezone: str, when: dt.datetime | None = None) -> str:
    """``YYYY-MM-DD`` of ``when`` (default now; naive = UTC) in ``timezone`` (``nightly.timezone``)."""
    when = when or dt.datetime.now(dt.UTC)
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.astimezone(ZoneInfo(timezone)).date().isoformat()


def report_dir(work_dir: Path, day: str, spec: str) -> Path:
    return Path(work_dir) / NIGHTLY_DIR / day / slug(spec)


def newest_complete(keys: Iterable[str], complete: Iterable[str]) -> int | None:
    """The highest iteration among ``keys`` that is in ``complete`` (e.g. whose merged model is
    materialised); None when there is none."""
    done = set(complete)
    numbers = [int(k) for k in keys if k.isdigit() and k in done]
    return max(numbers) if numbers else None


def profile_for(profile: Profile, spec: str) -> Profile:
    """The profile with ``spec`` as its benchmark (what the eval stage and its fingerprint read)."""
    return profile.model_copy(update={"data": profile.data.model_copy(update={"benchmark": spec})})


async def evaluate(profile: Profile, iteration: int, spec: str, policy: Any, env: ProofEnv, out_dir: Path,
                   model_path: Path, ebm_dir: Path | None, training_pairs: Sequence[Path]) -> StageResult:
    """One benchmark of the nightly eval (the eval stage on ``spec``, cut to ``eval.max_theorems``)."""
    from burnqed_core.loop import stages
    from burnqed_core.loop.inputs import benchmark_theorems

    prof = profile_for(profile, spec)
    return await stages.eval_report(prof, iteration, policy, env, benchmark_theorems(prof), None, out_dir,
                                    model_path, ebm_dir=ebm_dir, training_pairs=training_pairs, progress=False)
