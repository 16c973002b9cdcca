"""Run iterations of the loop in order, stage by stage, printing what each
stage did. Finished stages are skipped (their ``_done.json`` is read back),
so re-running after an interruption continues where it stopped."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path

from burnqed_core.config import Profile
from burnqed_core.errors import BurnqedError
from burnqed_core.eval.summary import EvalSummary
from burnqed_core.lean.types import ProofEnv
from burnqed_core.loop import stages
from burnqed_core.loop.layout import DONE, BaseLayout
from burnqed_core.loop.stages import StageResult, run_stage
from burnqed_core.records import Theorem

log = logging.getLogger(__name__)


class LoopError(BurnqedError):
    """The loop cannot run as asked (e.g. iteration N before N-1)."""


def _echo_result(echo: Callable[[str], None], res: StageResult) -> None:
    where = f"iter {res.iteration} " if res.iteration is not None else ""
    when = "done earlier, skipped" if res.skipped else f"{res.seconds:.1f} s"
    head = f"[{where}{res.stage}] ({when})"
    if "\n" in res.summary:
        echo(head)
        for line in res.summary.splitlines():
            echo("    " + line)
    else:
        echo(f"{head} {res.summary}")


async def run_loop(
    profile: Profile,
    iterations: Sequence[int],
    echo: Callable[[str], None] = print,
    env: ProofEnv | None = None,
) -> list[str]:
    """Run ``iterations`` (e.g. [0, 1]) of the loop; returns the eval output
    directories. Iteration N needs the trajectories of every iteration < N.
    ``env``: an already started Lean environment to use (else a pool is
    started on first need and closed at the end)."""
    from burnqed_core.data.theorems import automation_map, load_theorems
    from burnqed_core.eval.report import format_comparison
    from burnqed_core.lean.pool import LeanPool

    layout = BaseLayout(root=Path(profile.paths.work_dir))
    echo(f"burnqed loop: profile {profile.name}, iterations {list(iterations)}, outputs in {layout.root}")
    pool: ProofEnv = env if env is not None else LeanPool(profile.lean)
    started = env is not None
    own_pool = env is None

    async def get_env() -> ProofEnv:
        nonlocal started
        if not started:
            echo(f"starting Lean ({profile.lean.backend} backend) ...")
            await pool.start()
            started = True
        return pool

    async def run_async(out: Path, make: Callable[[], Awaitable[StageResult]]) -> StageResult:
        """`run_stage` for a stage that needs Lean (started on first use)."""
        if (out / DONE).exists():
            return run_stage(out, make_never)
        t0 = time.perf_counter()
        res = await make()
        res = res.model_copy(update={"seconds": round(time.perf_counter() - t0, 1)})
        return run_stage(out, lambda: res)

    try:
        async def trace() -> StageResult:
            return await stages.trace_base(profile, await get_env(), layout.traced)

        _echo_result(echo, await run_async(layout.traced, trace))
        base = stages.base_pairs(layout.traced)
        _echo_result(echo, run_stage(layout.model, lambda: stages.pretrain(profile, base, layout.model)))

        corpus = load_theorems(profile.data.corpus)
        benchmark = load_theorems(profile.data.benchmark)
        if profile.eval.max_theorems is not None:
            benchmark = sorted(benchmark, key=lambda t: t.name)[:profile.eval.max_theorems]
        automation = automation_map(profile.data.benchmark)
        easy = {k for k, v in (automation_map(profile.data.corpus) or {}).items() if v is not None}
        summaries = []
        for n in iterations:
            summaries.append(await _iteration(profile, layout, n, corpus, benchmark, automation, easy, get_env,
                                              run_async, echo))
        if summaries:
            echo("")
            echo(format_comparison(summaries))
        return [str(layout.iteration(n).eval) for n in iterations]
    finally:
        if started and own_pool:
            await pool.close()


def make_never() -> StageResult:
    raise AssertionError("a finished stage is never recomputed")


async def _iteration(
    profile: Profile,
    layout: BaseLayout,
    n: int,
    corpus: Sequence[Theorem],
    benchmark: Sequence[Theorem],
    automation: Mapping[str, str | None] | None,
    easy: set[str],
    env: Callable[[], Awaitable[ProofEnv]],
    run_async: Callable[[Path, Callable[[], Awaitable[StageResult]]], Awaitable[StageResult]],
    echo: Callable[[str], None],
) -> EvalSummary:
    from burnqed_core.data.selection import select_theorems
    from burnqed_core.eval.report import read_summary
    from burnqed_core.eval.run import earlier_solved as read_earlier_solved
    from burnqed_core.policy.factory import make_policy
    from burnqed_core.search.trajectories import finished_theorems

    it = layout.iteration(n)
    earlier = [layout.iteration(k) for k in range(n)]
    for e in earlier:
        if not (e.trajectories / DONE).exists():
            raise LoopError(f"iteration {n} needs the trajectories of iteration {e.iteration}: "
                            f"run iteration {e.iteration} first")
    traj_dirs = [p for e in earlier for p in stages.trajectory_outputs(e.trajectories)]
    _echo_result(echo, run_stage(it.pairs, lambda: stages.tactic_pairs(profile, n, stages.base_pairs(layout.traced),
                                                                       traj_dirs, it.pairs, layout.model)))
    warm = None
    if n > 0:
        prev = layout.iteration(n - 1)
        warm = prev.adapter if profile.training.warm_start == "adapter" else prev.merged
    _echo_result(echo, run_stage(it.adapter, lambda: stages.lora_adapter(profile, n, it.pairs, layout.model, warm,
                                                                         it.adapter)))
    _echo_result(echo, run_stage(it.merged, lambda: stages.merged_model(profile, n, it.adapter, it.merged)))

    searched: set[str] = set()
    for p in traj_dirs:
        with contextlib.suppress(BurnqedError):
            searched |= finished_theorems(p)
    sel = select_theorems(corpus, profile.data.search_theorems, profile.data.seed + n, searched=searched,
                          held_out={t.name for t in benchmark}, easy=easy, held_out_theorems=benchmark)
    # a missing or corrupt earlier eval is an error naming the file, not a changed "newly solved" list
    earlier_solved = read_earlier_solved(e.eval for e in earlier)
    policy = make_policy(profile, it.merged)
    try:
        async def search() -> StageResult:
            return await stages.trajectories(profile, n, policy, await env(), sel.theorems, it.trajectories,
                                             it.merged)

        async def evaluate() -> StageResult:
            return await stages.eval_report(profile, n, policy, await env(), benchmark, automation, it.eval,
                                            it.merged, earlier_solved if earlier else None,
                                            training_pairs=[layout.traced / "pairs.parquet", it.pairs])

        _echo_result(echo, await run_async(it.trajectories, search))
        _echo_result(echo, await run_async(it.eval, evaluate))
    finally:
        await policy.close()
    return read_summary(it.eval)
