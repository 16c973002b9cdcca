"""The records that flow between stages, with their Arrow schemas.

Every record is a frozen pydantic model. Its Arrow schema is derived from the
field annotations (`arrow_schema`), so that a Parquet file written by one stage
is checked column by column when another stage reads it (see
`burnqed_core.record_io`).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Any, ClassVar, Literal

import pyarrow as pa
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)

Split = Literal["train", "valid", "dev", "test", "benchmark"]
Label = Literal["positive", "negative", "unknown"]
TacticSource = Literal["", "policy", "automation", "both", "structural", "premise"]


class Record(BaseModel):
    """Base of all records: immutable, unknown keys are errors."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: ClassVar[str] = "record"


class Theorem(Record):
    """A theorem to prove.

    ``statement`` is the declaration's signature after its name: binders and
    type, e.g. ``(n : Nat) : n + 0 = n``. ``preamble`` holds what the statement
    needs before it: ``import`` / ``open`` / ``set_option`` lines and any
    definitions or inductive types. ``proof`` is a known tactic proof (one
    tactic per entry; a multi-line tactic keeps its newlines), empty if unknown.
    ``module`` is the library module this theorem is posed in; when set, a
    proof may use only constants of the modules that module (transitively)
    imports -- never the module itself or anything after it; enforced by the
    trusted checker (`burnqed_core.lean.judge`, status ``premise``).
    ``cluster``: the cluster the eval counts it in when its set fixes one (Lean's
    library: its module, near-twins merged, `burnqed_core.data.theorems.core_pool`); ""
    for the rule of `burnqed_core.data.twins.clusters.cluster_of`.
    """

    kind: ClassVar[str] = "theorem"
    name: str
    statement: str
    preamble: str = ""
    split: Split = "train"
    source: str = ""
    family: str = ""
    proof: list[str] = Field(default_factory=list)
    module: str = ""
    cluster: str = ""

    @model_serializer(mode="wrap")
    def _json_without_empty_library_fields(self, handler: SerializerFunctionWrapHandler,
                                           info: SerializationInfo) -> Any:
        """In JSON an empty ``module`` or ``cluster`` is left out (it reads back as the default): the theorem
        files written before the fields existed, and the bundled sets regenerated from their families, stay
        byte for byte what they were."""
        data = handler(self)
        if info.mode_is_json() and isinstance(data, dict):
            for key in ("module", "cluster"):
                if not data.get(key):
                    data.pop(key, None)
        return data

    def declaration(self, name: str | None = None) -> str:
        """``theorem <name> <statement>`` (without ``:=``)."""
        return f"theorem {name or self.name} {self.statement}"


class TacticPair(Record):
    """One step of a proof: the state before, the tactic, the state after."""

    kind: ClassVar[str] = "tactic_pair"
    theorem: str
    state_before: str
    tactic: str
    state_after: str
    depth: int
    source: str = ""


class TrajectoryRecord(Record):
    """One node of a proof search.

    ``state`` is the node's goals as text (Lean's pretty-printed goals joined
    by a blank line; "" when no goals remain); ``goal`` is the root goal of the
    theorem (the EBM conditions on it). ``tactic`` led from the parent (``""``
    at the root, whose ``parent_id`` is -1); ``source`` says where it came
    from: ``policy`` (sampled), ``automation`` (added by the search,
    ``search.automation``), ``both``; ``""`` at the root. Files written before
    the column read as ``policy``. ``terminal``: this node closes the
    proof; ``proved``: this search proved the theorem (same on every row of it).
    """

    kind: ClassVar[str] = "trajectory"
    theorem: str
    iteration: int
    node_id: int
    parent_id: int
    state: str
    goal: str
    tactic: str
    source: TacticSource = "policy"
    depth: int
    logprob: float
    cum_logprob: float
    energy: float | None = None
    label: Label = "unknown"
    terminal: bool = False
    proved: bool = False
    created_s: float = Field(0.0, description="unix time the node was created")
    elapsed_s: float = Field(0.0, description="seconds since the theorem's search started")


class EvalResult(Record):
    """One search of one theorem in an evaluation (one attempt, one EBM setting).

    The search ran at the largest node budget ``budget``; every smaller budget
    B is read off it: proved at B iff ``nodes_to_proof <= B`` (the number of
    nodes created before the proof's closing node), so solve rates are monotone
    in the budget by construction.
    """

    kind: ClassVar[str] = "eval_result"
    iteration: int
    benchmark: str
    theorem: str
    budget: int = Field(description="the node budget the search ran with (the largest reported)")
    attempt: int = 0
    seed: int = Field(0, description="the search seed of this attempt")
    proved: bool
    nodes_to_proof: int | None = Field(None, description="nodes created before the proof was found")
    nodes_used: int
    time_s: float
    timeout: bool = Field(False, description="the per-theorem safety cap stopped the search")
    proof: list[str] = Field(default_factory=list)
    proof_sources: list[str] = Field(
        default_factory=list, description="per proof step, where its tactic came from: 'policy' (sampled by the "
                                          "policy), 'automation' (an automation candidate the policy did not "
                                          "sample) or 'both'; [] when not recorded")
    hard: bool | None = Field(None, description="closed by neither automation baseline (None: not measured)")
    automation: str | None = Field(None, description="the single automation tactic that closes it, if any")
    defaware: str | None = Field(None, description="the definition-aware automation that closes it, if any")
    error: str = Field("", description="'start' (statement did not elaborate) or 'infra' (Lean died), else ''")
    message: str = Field("", description="with an error: Lean's message (a statement that did not start: why), "
                                         "cut to 2000 characters; '' in files written before the column")
    model: str = ""
    ebm: str = Field("", description="the EBM directory that scored the search; '' without one (ablation rows)")
    checks: int = Field(0, ge=0, description="Lean tactic checks the search sent (every candidate, closing or "
                        "not): its compute; 0 in files written before the column")
    search_automation: bool = Field(False, description="the search added automation tactics to the policy's "
                                    "candidates (search.automation); False: the policy alone")
    cluster: str = Field("", description="the theorem's cluster (burnqed_core.data.twins.clusters: instances of one "
                         "template and twins share one), the unit the summary's intervals resample; '' in files "
                         "written before the column (read back as '': one cluster per theorem)")

    def proved_within(self, budget: int) -> bool:
        return self.proved and self.nodes_to_proof is not None and self.nodes_to_proof <= budget


RECORD_TYPES: Mapping[str, type[Record]] = MappingProxyType({
    t.kind: t for t in (Theorem, TacticPair, TrajectoryRecord, EvalResult)
})


def _arrow_type(annotation: Any) -> tuple[pa.DataType, bool]:
    """(arrow type, nullable) of a field annotation."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if len(inner) != 1:
            raise TypeError(f"unsupported union {annotation}")
        t, _ = _arrow_type(inner[0])
        return t, True
    if origin is Literal:
        return pa.string(), False
    if origin is list:
        t, _ = _arrow_type(args[0])
        return pa.list_(t), False
    mapping = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}
    if annotation in mapping:
        return mapping[annotation], False
    raise TypeError(f"no Arrow type for {annotation}")


@cache
def arrow_schema(model: type[Record]) -> pa.Schema:
    """The Arrow schema of a record type; the metadata names the record kind."""
    hints = typing.get_type_hints(model)
    fields = []
    for name in model.model_fields:
        t, nullable = _arrow_type(hints[name])
        fields.append(pa.field(name, t, nullable=nullable))
    return pa.schema(fields, metadata={b"burnqed.kind": model.kind.encode()})


class StageResult(BaseModel):
    """What a stage did, for the terminal and the Dagster UI."""

    stage: str
    iteration: int | None = None
    path: str
    seconds: float = 0.0
    summary: str = ""
    metrics: dict[str, Any] = Field(default_factory=dict)
    skipped: bool = Field(False, description="already done by an earlier run: loaded, not recomputed")
    fingerprint: str = Field("", description="of the inputs, settings and code it was computed for (loop.markers)")
    reads: dict[str, str] = Field(default_factory=dict, description="the files it read, by path: their digests "
                                  "when read (burnqed_core.reads)")
