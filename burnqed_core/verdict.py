"""A check's verdict: the figures measured beside their thresholds, and why it passed or failed.

The pure judging functions (`burnqed_core.eval.hygiene.pairs_verdict`,
`burnqed_core.ebm.metrics.embeddings_verdict` / `ebm_verdict`,
`burnqed_core.eval.gonogo.gonogo_verdict`) return one; the pipeline's asset
checks show it in the UI, the command line can print it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Op = Literal[">", ">=", "<", "<=", "=="]


class Figure(BaseModel):
    """One measured figure and its threshold: ``value op threshold`` must hold. ``blocking=False``: shown,
    never failing; ``value=None``: not measurable here (too little data), it does not fail."""

    model_config = ConfigDict(frozen=True)
    name: str
    value: float | None
    op: Op
    threshold: float
    blocking: bool = True
    note: str = ""

    @property
    def ok(self) -> bool:
        if self.value is None:
            return True
        v, t = self.value, self.threshold
        return {">": v > t, ">=": v >= t, "<": v < t, "<=": v <= t, "==": v == t}[self.op]

    @property
    def failed(self) -> bool:
        return self.blocking and not self.ok

    def describe(self) -> str:
        value = "n/a" if self.value is None else f"{self.value:.4g}"
        mark = "ok" if self.ok else ("FAIL" if self.blocking else "warn")
        return f"{self.name} = {value} (needs {self.op} {self.threshold:.4g}): {mark}" + (
            f" ({self.note})" if self.note else "")


class CheckVerdict(BaseModel):
    """A check passes when no blocking figure fails and no blocking message was raised."""

    model_config = ConfigDict(frozen=True)
    check: str
    figures: list[Figure] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list, description="blocking findings beyond the figures")
    notes: list[str] = Field(default_factory=list, description="context shown with the verdict, never failing")

    @property
    def passed(self) -> bool:
        return not self.failures and not any(f.failed for f in self.figures)

    def reasons(self) -> list[str]:
        return [f.describe() for f in self.figures if f.failed] + list(self.failures)

    def summary(self) -> str:
        head = f"{self.check}: {'PASS' if self.passed else 'FAIL'}"
        why = self.reasons() if not self.passed else self.notes
        return head + (": " + "; ".join(why) if why else "")

    def markdown(self) -> str:
        """The figures as a markdown table (name, value, threshold, status), then failures and notes."""
        lines = ["| figure | value | threshold | status |", "|---|---|---|---|"]
        for f in self.figures:
            value = "n/a" if f.value is None else f"{f.value:.4g}"
            status = "ok" if f.ok else ("**FAIL**" if f.blocking else "warn")
            lines.append(f"| {f.name} | {value} | {f.op} {f.threshold:.4g} | {status}"
                         f"{' (' + f.note + ')' if f.note else ''} |")
        out = "\n".join(lines) if self.figures else ""
        for msg in self.failures:
            out += f"\n\n**FAIL**: {msg}"
        for msg in self.notes:
            out += f"\n\n{msg}"
        return out.strip()
