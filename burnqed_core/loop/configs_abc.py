"""The seeds' three configurations on the same theorems (issue 67): does the data help, does joint training help?

* **A**: iteration N-1's model with a decoupled EBM (trained apart, `burnqed_core.ebm.train`) on that model's
  embeddings of the trajectories of iterations < N;
* **B**: iteration N's SFT-only adapter (``ebm.joint: false``) with a decoupled EBM on its embeddings;
* **C**: iteration N's adapter trained jointly with its head (``ebm.joint: true``, `burnqed_core.training.joint`).

B and C are the loop's own stages (`burnqed_core.loop.stages`: lora_adapter, merged_model, embeddings, ebm)
run with ``ebm.joint`` off and on, on iteration N's tactic pairs with its warm start; the one the work dir's
iteration N already holds (its profile's ``ebm.joint``) is read from there, the other is trained under the
output folder (resumable). Each configuration searches the same theorems (the exercises of
`burnqed_core.loop.exercises`: withheld corpus theorems with long known proofs that no earlier iteration
searched; never a benchmark, never ``core:test``), with the same seeds, budgets and Lean checks (one eval
settings object), with and without its EBM. The report gives each configuration's embedding metrics
(centroid L2, linear probe) and EBM metrics, its solve rates and its EBM's effect with the paired interval,
and the paired cluster-bootstrap intervals of A -> B (did the data help?) and B -> C (did joint training
protect the embeddings and the search?).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import MappingProxyType

from pydantic import BaseModel, Field

from burnqed_core.config import Profile
from burnqed_core.ebm.metrics import EbmMetrics, SeparationMetrics
from burnqed_core.eval.plan import EvalPlan
from burnqed_core.eval.summary import EvalSummary, PairedChange
from burnqed_core.lean.types import ProofEnv
from burnqed_core.loop.layout import DONE, BaseLayout
from burnqed_core.records import StageResult, Theorem

log = logging.getLogger(__name__)

REPORT_FILE = "abc.md"
RECORD_FILE = "abc.json"
WHAT = MappingProxyType({"A": "iteration N-1's model, EBM trained apart",
                         "B": "iteration N's SFT-only adapter, EBM trained apart",
                         "C": "iteration N's adapter trained jointly with its EBM"})


class ConfigOutcome(BaseModel):
    """One configuration: what it searched with, its embeddings' and EBM's metrics, its eval."""

    name: str
    what: str
    model: str
    ebm: str | None
    separation: SeparationMetrics | None = None
    ebm_metrics: EbmMetrics | None = None
    trained_jointly: bool = False
    joint_abort: str | None = None
    eval_dir: str = ""
    ebm_effect: PairedChange | None = Field(None, description="without -> with its EBM, same seeds")


class AbcReport(BaseModel):
    iteration: int
    exercises: str = Field(description="which theorems, and why the others are left out")
    theorems: list[str] = Field(default_factory=list)
    configs: list[ConfigOutcome] = Field(default_factory=list)
    a_to_b: PairedChange | None = None
    b_to_c: PairedChange | None = None


def _done(out: Path) -> StageResult | None:
    from burnqed_core.loop.markers import read_marker

    return read_marker(out)


def _mark(res: StageResult) -> StageResult:
    out = Path(res.path)
    out.mkdir(parents=True, exist_ok=True)
    (out / DONE).write_text(res.model_dump_json(), encoding="utf-8")
    return res


def with_joint(profile: Profile, joint: bool) -> Profile:
    return profile.model_copy(update={"ebm": profile.ebm.model_copy(update={"joint": joint})})


def _earlier(layout: BaseLayout, n: int) -> list[Path]:
    from burnqed_core.loop.inputs import trajectory_dirs

    return trajectory_dirs([layout.iteration(k).stage("trajectories") for k in range(n)])


def _known(profile: Profile, layout: BaseLayout) -> dict[str, list[str]] | None:
    """The known proofs' states for hindsight positives, as the loop's stages read them (``ebm.hindsight``)."""
    if not profile.ebm.hindsight:
        return None
    from burnqed_core.ebm.hindsight import known_paths
    from burnqed_core.loop import corpus

    split = corpus.read_base_split(layout.stage("base_model"))
    return known_paths(corpus.base_pairs(layout.stage("base_tactic_pairs")), frozenset(split.train))


async def encode_and_ebm(profile: Profile, n: int, model: Path, out: Path, adapter: Path | None,
                         progress: bool) -> Path:
    """The embeddings and EBM stages of a configuration into ``out`` (skipped when done): the EBM folder."""
    from burnqed_core.loop.stages import ebm as ebm_stage
    from burnqed_core.loop.stages import embeddings as emb_stage
    from burnqed_core.policy.factory import make_policy

    layout = BaseLayout(root=profile.paths.work_dir)
    earlier, known = _earlier(layout, n), _known(profile, layout)
    if _done(out / "embeddings") is None:
        policy = make_policy(profile, model)
        try:
            _mark(await emb_stage.embeddings(emb_stage.Settings.of(profile), n, policy, earlier, out / "embeddings",
                                             model_path=model, progress=progress, known=known))
        finally:
            await policy.close()
    if _done(out / "ebm") is None:
        _mark(ebm_stage.ebm(ebm_stage.Settings.of(profile), n, out / "embeddings", earlier, out / "ebm",
                            progress=progress, known=known, adapter_dir=adapter))
    return out / "ebm"


def train_config(profile: Profile, n: int, out: Path) -> tuple[Path, Path]:
    """Iteration ``n``'s adapter (``profile.ebm.joint`` decides joint or not) and its merge, with the loop's
    stage functions and inputs, into ``out`` (skipped when done): (adapter, merged model)."""
    from burnqed_core.loop import corpus
    from burnqed_core.loop.stages import lora_adapter as lora_stage
    from burnqed_core.loop.stages import merged_model as merge_stage

    layout = BaseLayout(root=profile.paths.work_dir)
    it, prev = layout.iteration(n), layout.iteration(n - 1)
    adapter, merged = out / "lora_adapter", out / "merged_model"
    settings = lora_stage.Settings.of(profile)
    if _done(adapter) is None:
        warm = prev.stage("lora_adapter" if profile.training.warm_start == "adapter" else "merged_model")
        base = Path(corpus.base_model_path(layout.stage("base_model")))
        _mark(lora_stage.lora_adapter(settings, n, it.stage("tactic_pairs"), base, warm, adapter,
                                      layout.stage("premise_index"), earlier=_earlier(layout, n)))
    if _done(merged) is None:
        _mark(merge_stage.merged_model(merge_stage.Settings.of(profile), n, adapter, merged))
    return adapter, merged


async def prepare_configs(profile: Profile, n: int, out: Path, progress: bool = True) -> dict[str, tuple[Path, Path]]:
    """(model, EBM folder) of A, B and C (module docstring): what the work dir holds is read, the rest made."""
    layout = BaseLayout(root=profile.paths.work_dir)
    it, prev = layout.iteration(n), layout.iteration(n - 1)
    a_model = prev.stage("merged_model")
    configs = {"A": (a_model, await encode_and_ebm(with_joint(profile, False), n, a_model, out / "A", None,
                                                   progress))}
    for name, joint in (("B", False), ("C", True)):
        if profile.ebm.joint == joint:  # the loop's own iteration N
            configs[name] = (it.stage("merged_model"), it.stage("ebm"))
            continue
        prof = with_joint(profile, joint)
        adapter, merged = train_config(prof, n, out / name)
        configs[name] = (merged, await encode_and_ebm(prof, n, merged, out / name, adapter, progress))
    return configs


def _outcome(name: str, model: Path, ebm_dir: Path, summary: EvalSummary, eval_dir: Path) -> ConfigOutcome:
    from burnqed_core.ebm.train import METRICS_FILE, has_ebm, read_report
    from burnqed_core.eval.summary import ebm_change

    o = ConfigOutcome(name=name, what=WHAT[name], model=str(model), ebm=str(ebm_dir) if has_ebm(ebm_dir) else None,
                      eval_dir=str(eval_dir), ebm_effect=ebm_change(summary))
    if (ebm_dir / METRICS_FILE).is_file():
        rep = read_report(ebm_dir)
        o.separation, o.trained_jointly, o.joint_abort = rep.separation, rep.trained_jointly, rep.joint_abort
        o.ebm_metrics = rep.val if rep.val is not None and rep.val.rank1.n >= 10 else rep.train
    return o


async def run_abc(profile: Profile, n: int, out: Path, *, min_steps: int = 4,
                  env: Callable[[], Awaitable[ProofEnv]] | None = None, progress: bool = True) -> AbcReport:
    """Make the three configurations, search the same exercises with each (with and without its EBM), and write
    ``abc.json`` and ``abc.md`` into ``out``. ``env``: a Lean to use (else the profile's pool, started once)."""
    from burnqed_core.eval import plan as eval_plan
    from burnqed_core.eval.report import read_summary
    from burnqed_core.eval.summary import paired_deltas
    from burnqed_core.lean.pool import LeanPool
    from burnqed_core.loop.exercises import SPEC_PREFIX, ablation_settings, plan_exercises
    from burnqed_core.policy.factory import make_policy
    from burnqed_core.record_io import atomic_write_text

    exercises, theorems = plan_exercises(profile, n, min_steps)
    configs = await prepare_configs(profile, n, out, progress)
    settings = ablation_settings(profile)
    pool = LeanPool(settings.lean) if env is None else None
    lean = env or _starter(pool)
    report = AbcReport(iteration=n, exercises=exercises.describe(), theorems=exercises.theorems)
    summaries: dict[str, EvalSummary] = {}
    try:
        for name, (model, ebm_dir) in configs.items():
            plan = _plan(profile, n if name != "A" else n - 1, theorems, out / name / "eval", model, ebm_dir,
                         f"{SPEC_PREFIX}{n}")
            policy = make_policy(settings, model)  # type: ignore[arg-type]
            try:
                await eval_plan.run(settings, plan, policy, lean, progress=progress)
            finally:
                await policy.close()
            summaries[name] = read_summary(plan.sets[0].out)
            report.configs.append(_outcome(name, model, ebm_dir, summaries[name], plan.sets[0].out))
    finally:
        if pool is not None:
            await pool.close()
    report.a_to_b = paired_deltas(summaries["A"], summaries["B"])
    report.b_to_c = paired_deltas(summaries["B"], summaries["C"])
    atomic_write_text(out / RECORD_FILE, report.model_dump_json(indent=1) + "\n")
    atomic_write_text(out / REPORT_FILE, abc_markdown(report, summaries))
    return report


def _starter(pool: object) -> Callable[[], Awaitable[ProofEnv]]:
    async def lean() -> ProofEnv:
        await pool.start()  # type: ignore[attr-defined]  # once: a started pool returns at once
        return pool  # type: ignore[return-value]

    return lean


def _plan(profile: Profile, model_iteration: int, theorems: list[Theorem], out: Path, model: Path, ebm_dir: Path,
          spec: str) -> EvalPlan:
    """One set's eval plan: the exercises, the configuration's model and EBM, checked against the pairs its
    model trained on (iteration ``model_iteration``'s); not held out (corpus theorems)."""
    from burnqed_core.ebm.train import has_ebm
    from burnqed_core.eval.plan import plan_set

    pairs = BaseLayout(root=profile.paths.work_dir).iteration(model_iteration).stage("tactic_pairs")
    return plan_set(spec, theorems, model_iteration, out, model, ebm=ebm_dir if has_ebm(ebm_dir) else None,
                    training_pairs=[pairs] if pairs.is_dir() else [], held_out=False)


def _fmt(x: float | None, spec: str = ".3f") -> str:
    return "n/a" if x is None else format(x, spec)


def _primary(change: PairedChange | None, top: int) -> list[str]:
    """The changes at the largest budget (pass@k and pass@1, per theorem and per cluster) with their intervals."""
    if change is None or not change.deltas:
        return ["  (no theorem in both, or no common budget)"]
    keep = [d for d in change.deltas if d.name.endswith(f"budget {top}") and "hard" not in d.name]
    return [f"  - {d.describe()}" for d in keep] + [f"  ({change.describe()})"]


def abc_markdown(r: AbcReport, summaries: dict[str, EvalSummary]) -> str:
    """The report: a table of the configurations, then A -> B and B -> C with their paired intervals."""
    lines = [f"# A/B/C at iteration {r.iteration}", "", r.exercises, "",
             "| config | what | centroid L2 (ratio) | linear probe | EBM rank-1 (chance) | solved at top budget "
             "| pass@1 | EBM effect at top budget (without -> with) |", "|---|---|---|---|---|---|---|---|"]
    for c in r.configs:
        s = summaries[c.name]
        top = s.budgets[-1]
        sep, m = c.separation, c.ebm_metrics
        effect = next((d.describe() for d in (c.ebm_effect.deltas if c.ebm_effect else [])
                       if d.name.startswith("pass@1") and not d.by_cluster), "no EBM" if c.ebm is None else "n/a")
        rank = f"{_fmt(m.rank1.rank1)} ({_fmt(m.rank1.chance)}, {m.split})" if m is not None else "n/a"
        what = c.what + (" (ABORTED: " + c.joint_abort + ")" if c.joint_abort else "")
        lines.append(f"| {c.name} | {what} | {_fmt(sep.centroid_l2 if sep else None, '.4f')} "
                     f"({_fmt(sep.centroid_l2_ratio if sep else None)}) | "
                     f"{_fmt(sep.linear_probe_acc if sep else None)} | {rank} | {top.all} at {top.budget} | "
                     f"{100 * top.pass1:.1f}% | {effect} |")
    top = min(max(b.budget for b in s.budgets) for s in summaries.values())
    lines += ["", "**A -> B** (did iteration N's data help? both with an EBM trained apart):",
              *_primary(r.a_to_b, top), "",
              "**B -> C** (did joint training protect the embeddings and the search?):", *_primary(r.b_to_c, top), ""]
    return "\n".join(lines)


