"""The records of the baselines an eval reads: `Baselines` (per theorem, the tactic of (a) and of (b) that
closes it; (c) when measured) and `StructuralBaseline` (baseline (c): nodes to proof per theorem).

Baseline (c), the same search as the prover's with no learned policy
(`burnqed_core.eval.baselines.structural`), is measured apart (it is a search, not a
tactic list) and travels here as `Baselines.structural`, so that the shards
of an eval share it with (a) and (b).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class StructuralBaseline(BaseModel):
    """Baseline (c) (`burnqed_core.eval.baselines.structural.measure_structural`): per theorem, the nodes the search
    with `burnqed_core.policy.structural.StructuralPolicy` (no learned policy; the profile's automation
    candidates) created before its proof, None when it found none within ``budget``.

    With ``attempts`` > 1 (the eval's pass@k) it searched each theorem that many times with as many seeds (the
    structural policy orders its steps by each attempt's seeds), so that the prover's k searches meet k searches
    of (c): ``nodes`` is the best of them (pass@k), ``per_attempt`` each one."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    key: str = ""
    budget: int = Field(0, ge=0, description="node budget of each search per theorem (the eval's largest)")
    attempts: int = Field(1, ge=1, description="searches per theorem, each with its own seed (the eval's pass@k)")
    nodes: dict[str, int | None] = Field(default_factory=dict,
                                         description="nodes to proof per measured theorem, the fewest over its "
                                                     "attempts (None: no attempt proved it)")
    per_attempt: dict[str, list[int | None]] = Field(
        default_factory=dict, description="nodes to proof per attempt (attempt order); empty for one attempt "
                                          "(then ``nodes`` is the one attempt)")
    infra: list[str] = Field(default_factory=list, description="theorems left unmeasured by a Lean failure")
    timeouts: list[str] = Field(default_factory=list,
                                description="searches stopped by the per-theorem time cap (counted unproved)")
    proofs: dict[str, list[str]] = Field(default_factory=dict, description="the proof found, per proved theorem")
    checks: dict[str, float] = Field(default_factory=dict, description="Lean tactic checks per measured theorem "
                                     "(the mean over its attempts); empty in files measured before it was counted")
    profile: str = Field("", description="the profile it was measured with (its key covers the settings; the "
                                         "name tells shipped files of one set apart)")

    def measured(self, name: str) -> bool:
        return name in self.nodes

    def proved(self, name: str, budget: int | None = None) -> bool:
        """Proved by some attempt within ``budget`` nodes (None: within its own budget; pass@k); False when not
        measured."""
        n = self.nodes.get(name)
        return n is not None and (budget is None or n <= budget)

    def attempt_rate(self, name: str, budget: int | None = None) -> float:
        """The fraction of its attempts that proved it within ``budget`` nodes (pass@1 as the mean over
        attempts); 0.0 when not measured."""
        runs = self.per_attempt.get(name)
        if not runs:
            return float(self.proved(name, budget))
        return sum(n is not None and (budget is None or n <= budget) for n in runs) / len(runs)


class Baselines(BaseModel):
    """Per theorem: the tactic of each baseline that closes it, or None; baseline (c) when measured."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    key: str = ""
    single: dict[str, str | None] = Field(default_factory=dict, description="baseline (a): one tactic alone")
    defaware: dict[str, str | None] = Field(default_factory=dict, description="baseline (b): definition-aware")
    infra: list[str] = Field(default_factory=list, description="theorems left unmeasured by a Lean failure")
    structural: StructuralBaseline | None = Field(
        None, description="baseline (c): the search with no learned policy (None: not measured; files written "
                          "before it have none)")
    structural_retrieval: StructuralBaseline | None = Field(
        None, description="baseline (c) with retrieval: the same search with the prover's premise steps too (None: "
                          "not measured; the search has no premise steps)")

    def measured(self, name: str) -> bool:
        return name in self.single and name in self.defaware

    def hard(self, name: str) -> bool | None:
        """Closed by neither baseline (None: not measured)."""
        if not self.measured(name):
            return None
        return self.single[name] is None and self.defaware[name] is None
