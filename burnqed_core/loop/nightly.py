"""The nightly eval: the newest complete iteration on the profile's benchmark and its extra benchmarks.

Each benchmark is evaluated by the one evaluation path (`burnqed_core.eval.steps.evaluate`, with the
settings section of the ``eval_report`` stage: both automation baselines, one search per theorem at the
largest budget, every proof re-checked, the held-out check against the iteration's training pairs, with and
without the EBM) into a dated directory
``<work_dir>/nightly/<YYYY-MM-DD>/<benchmark>/`` (``report.md``, ``summary.json``, ``results.parquet``,
``solve_rate.png``), resumable within the day.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from burnqed_core.config import Profile
from burnqed_core.lean.types import ProofEnv
from burnqed_core.records import StageResult

NIGHTLY_DIR = "nightly"


def benchmarks(profile: Profile) -> list[str]:
    """The profile's benchmark, the eval's other sets (``eval.also``), then each extra benchmark (duplicates
    dropped, order kept)."""
    return list(dict.fromkeys([profile.data.benchmark, *profile.eval.also, *profile.nightly.extra_benchmarks]))


def slug(spec: str) -> str:
    """A directory name for a benchmark spec (``bundled:benchmark`` -> ``bundled_benchmark``)."""
    from burnqed_core.eval.steps import set_slug

    return set_slug(spec)


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


def fingerprint(profile: Profile, spec: str, inputs: Mapping[str, Any], extra: Mapping[str, Any]) -> str:
    """The fingerprint of one benchmark's nightly eval: the eval stage's settings on ``spec``, the inputs."""
    from burnqed_core.eval.steps import on_benchmark
    from burnqed_core.loop.markers import fingerprint_payload
    from burnqed_core.loop.settings import section_payload
    from burnqed_core.loop.stages.eval_report import EVAL_REPORT

    prof = on_benchmark(profile, spec)
    return fingerprint_payload("nightly_eval", section_payload(prof, EVAL_REPORT.declared(prof)), inputs, extra)


async def evaluate(profile: Profile, iteration: int, spec: str, policy: Any, env: ProofEnv, out_dir: Path,
                   model_path: Path, ebm_dir: Path | None, training_pairs: Sequence[Path]) -> StageResult:
    """One benchmark of the nightly eval (the eval on ``spec``, cut to ``eval.max_theorems``), reading the
    settings the ``eval_report`` stage declares."""
    from burnqed_core.eval.steps import evaluate as run_eval
    from burnqed_core.eval.steps import on_benchmark
    from burnqed_core.loop.inputs import benchmark_theorems
    from burnqed_core.loop.stages.eval_report import EVAL_REPORT

    settings = EVAL_REPORT.settings_view(on_benchmark(profile, spec))
    return await run_eval(settings, iteration, policy, env, benchmark_theorems(settings), None, out_dir,
                          model_path, ebm_dir=ebm_dir, training_pairs=training_pairs, progress=False)
