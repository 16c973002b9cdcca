"""What an eval stage's output directory holds to show (`EvalOutputs`): the summaries of its first set with
those of the earlier iterations it compares against, and the summary of each further set (``eval.also``, the
nightly eval's extra sets). Read from the stage's plan (`burnqed_core.eval.plan.PLAN_FILE`), so that whoever
shows an eval (the Dagster UI's metadata) needs no knowledge of its files."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from burnqed_core.eval.summary import EvalSummary


class SetSummary(BaseModel):
    """A further set of the eval: its folder name (`burnqed_core.eval.steps.set_slug`) and its summary."""

    model_config = ConfigDict(frozen=True)
    slug: str
    summary: EvalSummary


class EvalOutputs(BaseModel):
    """An eval stage's summaries: ``summaries`` (the first set: earlier iterations first, this one last) and
    ``sets`` (each further set, in the plan's order)."""

    model_config = ConfigDict(frozen=True)
    summaries: list[EvalSummary]
    sets: list[SetSummary]

    @property
    def current(self) -> EvalSummary:
        return self.summaries[-1]


def read_eval_outputs(out: Path) -> EvalOutputs | None:
    """The summaries of the eval written to ``out``; None for an eval finished by code older than its plan
    file (nothing to show but its result)."""
    from burnqed_core.eval.plan import PLAN_FILE, EvalPlan
    from burnqed_core.eval.report import read_summary
    from burnqed_core.eval.steps import set_slug

    if not (out / PLAN_FILE).is_file():
        return None
    plan = EvalPlan.model_validate_json((out / PLAN_FILE).read_text(encoding="utf-8"))
    first, *others = plan.sets
    return EvalOutputs(summaries=[read_summary(e) for e in first.earlier] + [read_summary(first.out)],
                       sets=[SetSummary(slug=set_slug(es.spec), summary=read_summary(es.out)) for es in others])
