"""A stage of the loop, declared once: `StageSpec`.

A spec holds what a stage is: its name (which is also its folder, `burnqed_core.loop.layout`), its inputs
(stages of the same iteration or the shared base, iteration N-1's output, the outputs of every iteration
< N), the settings it receives (a `burnqed_core.projection.StageSettings` model), its run function, whether
it runs over theorem shards, whether it needs a GPU, and its code version (`burnqed_core.code_graph`: its
module and every module of burnqed_core it imports). Everything else follows from the specs
(`burnqed_core.loop.stages.SPECS`): the Dagster assets of `burnqed_pipeline`, `resolve` with its error naming
the missing partition, the fingerprint (a hash of the settings, the code version and the digests of the
resolved inputs), the used-partitions metadata, and the order ``burnqed loop`` materialises. What the UI
calls a stage and how it draws it (kinds, labels, priority) is the pipeline's (`burnqed_pipeline.vocabulary`).

A stage is skipped only when its fingerprint and the files it read (`burnqed_core.reads`, recorded in its
``_done.json``) are unchanged (`burnqed_core.loop.markers`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from burnqed_core.code_graph import code_version
from burnqed_core.config import Profile
from burnqed_core.lean.types import ProofEnv
from burnqed_core.loop.inputs import LoopError, UsedPartitions, require
from burnqed_core.loop.layout import BaseLayout, IterationLayout
from burnqed_core.loop.markers import fingerprint_payload
from burnqed_core.projection import StageSettings
from burnqed_core.records import StageResult, Theorem

S = TypeVar("S", bound=StageSettings)
PolicyFactory = Callable[[Path, int], Awaitable[tuple[Any, dict[str, Any]]]]


@dataclass(frozen=True)
class Input:
    """An upstream stage the stage reads: of the same iteration (or the shared base), from iteration
    ``from_iteration`` on (``ebm`` is read from iteration 1), drawn as a graph edge unless ``edge`` is false
    (an input already upstream of another one)."""

    asset: str
    from_iteration: int = 0
    edge: bool = True


@dataclass(frozen=True)
class Sharded(Generic[S]):
    """A stage run over theorem shards: ``select`` the theorems (the plan, with ``prepare`` before it, e.g.
    the eval's baselines), ``shard`` one shard into its work dir, ``merge`` the finished shards into the
    stage's folder. ``size``: theorems per shard (a machine setting, read from the profile's ``pipeline``)."""

    select: Callable[[StageContext[S]], Sequence[Theorem]]
    shard: Callable[[StageContext[S], Sequence[Theorem], Path], Awaitable[StageResult]]
    merge: Callable[[StageContext[S], Sequence[Path]], StageResult]
    size: Callable[[Profile], int]
    prepare: Callable[[StageContext[S]], Awaitable[None]] | None = None


@dataclass(frozen=True)
class StageSpec(Generic[S]):
    """One stage (see the module docstring). ``run`` receives a `StageContext` and returns a `StageResult`
    (or a coroutine of one); a sharded stage has ``shards`` instead. ``dated``: the stage's folder has one
    sub-folder per day (the nightly eval), and its fingerprint holds the day."""

    name: str
    doc: str
    settings: type[S]
    run: Callable[[StageContext[S]], StageResult | Awaitable[StageResult]] | None = None
    shards: Sharded[S] | None = None
    partitioned: bool = True
    inputs: tuple[Input, ...] = ()
    previous: Callable[[S], str | None] | None = None  # the stage of iteration N-1 read (warm start)
    earlier: str | None = None  # the stage whose outputs of every iteration < N are read
    gpu: bool = False
    dated: bool = False
    # what of its settings the fingerprint hashes at iteration N (None: all; a setting read only at some
    # iterations, or only under another setting, need not re-run the others: lora_adapter's ebm.joint)
    payload: Callable[[S, int | None], dict[str, Any]] | None = None

    def settings_payload(self, settings: S, n: int | None) -> dict[str, Any]:
        """The settings' part of the fingerprint at iteration ``n`` (`payload`, else all of them)."""
        return self.payload(settings, n) if self.payload is not None else settings.payload()

    @property
    def module(self) -> str:
        """The module that defines the stage (its run or shard function)."""
        fn = self.run if self.run is not None else self.shards.shard if self.shards is not None else None
        if fn is None:
            raise LoopError(f"stage {self.name} has neither run nor shards")
        return fn.__module__

    @property
    def code_version(self) -> str:
        """The stage's code version (`burnqed_core.code_graph.code_version` of its module)."""
        return code_version(self.module)

    def out_dir(self, layout: BaseLayout, n: int | None, day: str | None = None) -> Path:
        if not self.partitioned:
            return layout.stage(self.name)
        if n is None:
            raise LoopError(f"{self.name} is partitioned by iteration: name the iteration")
        out = layout.iteration(n).stage(self.name)
        if self.dated:
            if day is None:
                raise LoopError(f"{self.name} keeps one folder per day: name the day")
            out = out / day
        return out


@dataclass(frozen=True)
class StageContext(Generic[S]):
    """What a stage's run function is given: its settings (the stage's own model, `settings`), the
    iteration, its resolved inputs and its output folder, and the runtime's Lean environment and policy
    (coroutine factories; only stages that need them call them)."""

    spec: StageSpec[S]
    settings: S
    n: int | None
    layout: BaseLayout
    inputs: Mapping[str, Path | None]
    previous: Path | None
    earlier: list[IterationLayout]
    out: Path
    lean: Callable[[], Awaitable[ProofEnv]] | None = None
    policy: PolicyFactory | None = None
    day: str | None = None

    def input(self, asset: str) -> Path:
        path = self.inputs.get(asset)
        if path is None:
            raise LoopError(f"{self.spec.name}: input {asset} is not available here")
        return path

    def earlier_outputs(self) -> list[Path]:
        """The folders of the spec's ``earlier`` stage in every iteration < N."""
        if self.spec.earlier is None:
            return []
        return [e.stage(self.spec.earlier) for e in self.earlier]

    @property
    def iteration(self) -> int:
        if self.n is None:
            raise LoopError(f"{self.spec.name} is not partitioned by iteration")
        return self.n

    async def env(self) -> ProofEnv:
        if self.lean is None:
            raise LoopError(f"{self.spec.name} needs Lean, but no Lean environment was given")
        return await self.lean()

    async def policy_for(self, model: Path) -> tuple[Any, dict[str, Any]]:
        """The policy serving ``model`` for this iteration, and what it serves."""
        if self.policy is None:
            raise LoopError(f"{self.spec.name} needs a policy, but none was given")
        return await self.policy(model, self.iteration)


@dataclass(frozen=True)
class Resolved:
    """A spec's inputs for one iteration: the paths, the fingerprint and which partitions were read."""

    inputs: dict[str, Path | None]
    previous: Path | None
    earlier: list[IterationLayout]
    fingerprint: str
    used: UsedPartitions


def me(spec: StageSpec[Any], n: int | None) -> str:
    return f"{spec.name}[{n}]" if spec.partitioned else spec.name


def resolve(spec: StageSpec[Any], specs: Mapping[str, StageSpec[Any]], profile: Profile, layout: BaseLayout,
            n: int | None, day: str | None = None) -> Resolved:
    """Check that every input of ``spec`` at iteration ``n`` is materialised (a `LoopError` naming the
    partition to materialise first), and fingerprint them with the settings and the code version."""
    who = me(spec, n)
    settings = spec.settings.of(profile)
    inputs: dict[str, Path | None] = {}
    same: list[str] = []
    for inp in spec.inputs:
        up = specs[inp.asset]
        if up.partitioned and (n or 0) < inp.from_iteration:
            inputs[inp.asset] = None
            continue
        inputs[inp.asset] = require(up.out_dir(layout, n), up.name, n if up.partitioned else None, who)
        same.append(me(up, n))
    earlier_used: dict[str, list[int]] = {}
    previous = None
    if spec.previous is not None and n:
        asset = spec.previous(settings)
        if asset is not None:
            previous = require(specs[asset].out_dir(layout, n - 1), asset, n - 1, f"{who} (warm start)")
            earlier_used[asset] = [n - 1]
    earlier: list[IterationLayout] = []
    if spec.earlier is not None:
        up = specs[spec.earlier]
        for k in range(n or 0):
            require(up.out_dir(layout, k), up.name, k, who)
            earlier.append(layout.iteration(k))
        earlier_used[up.name] = [e.iteration for e in earlier]
    digests: dict[str, Any] = dict(inputs)
    if previous is not None:
        digests["previous"] = previous
    if spec.earlier is not None:
        digests["earlier"] = [specs[spec.earlier].out_dir(layout, e.iteration) for e in earlier]
    extra: dict[str, Any] = {"n": n} if spec.partitioned else {}
    if spec.dated:
        extra["day"] = day
    fp = fingerprint_payload(spec.name, spec.settings_payload(settings, n), digests, extra, code=spec.code_version)
    return Resolved(inputs, previous, earlier, fp, UsedPartitions(same_iteration=same, earlier=earlier_used))


def settings_fingerprint(spec: StageSpec[Any], profile: Profile, n: int | None = None) -> str:
    """The part of the fingerprint the settings make (for the tests that walk every setting): all of them, or
    with ``n`` the part hashed at iteration ``n`` (`StageSpec.payload`)."""
    settings = spec.settings.of(profile)
    return fingerprint_payload(spec.name, settings.payload() if n is None else spec.settings_payload(settings, n),
                               {}, {})


def context(spec: StageSpec[S], profile: Profile, layout: BaseLayout, n: int | None, resolved: Resolved,
            lean: Callable[[], Awaitable[ProofEnv]] | None = None, policy: PolicyFactory | None = None,
            day: str | None = None) -> StageContext[S]:
    return StageContext(spec=spec, settings=spec.settings.of(profile), n=n, layout=layout,
                        inputs=resolved.inputs, previous=resolved.previous, earlier=resolved.earlier,
                        out=spec.out_dir(layout, n, day), lean=lean, policy=policy, day=day)


def topological(specs: Sequence[StageSpec[Any]]) -> list[StageSpec[Any]]:
    """``specs`` in an order where every input comes before its readers (the order ``burnqed loop`` runs)."""
    by = {s.name: s for s in specs}
    done: list[StageSpec[Any]] = []
    seen: set[str] = set()

    def visit(s: StageSpec[Any], path: tuple[str, ...]) -> None:
        if s.name in seen:
            return
        if s.name in path:
            raise LoopError(f"stage specs form a cycle: {' -> '.join((*path, s.name))}")
        for inp in s.inputs:
            visit(by[inp.asset], (*path, s.name))
        seen.add(s.name)
        done.append(s)

    for s in specs:
        visit(s, ())
    return done
