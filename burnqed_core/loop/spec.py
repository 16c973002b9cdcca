"""A stage of the loop, declared once: `StageSpec`.

A spec holds what a stage is: its name and where it writes (`burnqed_core.loop.layout`), its inputs (assets of
the same iteration or the shared base, iteration N-1's output, the outputs of every iteration < N, files such
as the corpus), the settings it receives (`burnqed_core.loop.settings`), its run function, whether it runs
over theorem shards, and whether it needs a GPU. Everything else follows from the specs
(`burnqed_core.loop.stages.SPECS`): the Dagster assets of `burnqed_pipeline` (deps, partitions, GPU pool and
tags, split/shard/merge), `resolve` with its error naming the missing partition, the fingerprint (a hash of
the declared settings and the digests of the resolved inputs: no list of keys kept anywhere else), the
used-partitions metadata, and the order ``burnqed loop`` materialises.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from burnqed_core.config import Profile
from burnqed_core.lean.types import ProofEnv
from burnqed_core.loop import settings as settings_mod
from burnqed_core.loop.inputs import LoopError, UsedPartitions, require
from burnqed_core.loop.layout import BaseLayout, IterationLayout
from burnqed_core.loop.markers import fingerprint_payload
from burnqed_core.records import StageResult, Theorem

Settings = tuple[str, ...] | Callable[[Profile], tuple[str, ...]]
Extra = Literal["loss_curve", "model_fingerprint", "served", "eval_table"]


@dataclass(frozen=True)
class Input:
    """An upstream asset the stage reads: of the same iteration (or the shared base), from iteration
    ``from_iteration`` on (``ebm`` is read from iteration 1), drawn as a graph edge unless ``edge`` is false
    (an input already upstream of another one)."""

    asset: str
    from_iteration: int = 0
    edge: bool = True


@dataclass(frozen=True)
class Sharded:
    """A stage run over theorem shards: ``select`` the theorems (the plan, with ``prepare`` before it, e.g.
    the eval's baselines), ``shard`` one shard into its work dir, ``merge`` the finished shards into the
    stage's directory. ``size``: theorems per shard (a machine setting)."""

    select: Callable[[StageContext], Sequence[Theorem]]
    shard: Callable[[StageContext, Sequence[Theorem], Path], Awaitable[StageResult]]
    merge: Callable[[StageContext, Sequence[Path]], StageResult]
    size: Callable[[Profile], int]
    prepare: Callable[[StageContext], Awaitable[None]] | None = None
    verb: str = "searched"


@dataclass(frozen=True)
class StageSpec:
    """One stage (see the module docstring). ``run`` receives a `StageContext` and returns a `StageResult`
    (or a coroutine of one); a sharded stage has ``shards`` instead."""

    name: str
    doc: str
    out: str  # the attribute of the layout (iteration or base) naming the stage's directory
    settings: Settings
    run: Callable[[StageContext], StageResult | Awaitable[StageResult]] | None = None
    shards: Sharded | None = None
    partitioned: bool = True
    inputs: tuple[Input, ...] = ()
    previous: Callable[[Profile], str | None] | None = None  # the asset of iteration N-1 read (warm start)
    earlier: str | None = None  # the asset whose outputs of every iteration < N are read
    files: Callable[[Profile], Mapping[str, Path | None]] | None = None  # files hashed into the fingerprint
    gpu: bool = False
    kinds: frozenset[str] = frozenset()
    progress: Literal["training", "search"] | None = None
    extras: tuple[Extra, ...] = ()
    label: str = ""  # what the UI calls the stage's work (e.g. the title of its loss curve)
    eager: bool = False  # materialised as soon as its inputs land (and their blocking checks pass)
    priority: int = 0  # when steps of several stages are ready in one run, the higher priority's run first
    group: str = field(default="")

    @property
    def group_name(self) -> str:
        return self.group or ("iteration" if self.partitioned else "base")

    def title(self, n: int | None) -> str:
        """The stage's work as the UI names it: ``label`` (``pre-training``; ``LoRA iteration N``)."""
        label = self.label or self.name
        return f"{label} iteration {n}" if self.partitioned and n is not None else label

    def declared(self, profile: Profile) -> tuple[str, ...]:
        """The profile paths the stage receives."""
        return tuple(self.settings(profile) if callable(self.settings) else self.settings)

    def settings_view(self, profile: Profile) -> Profile:
        return settings_mod.view(profile, self.declared(profile), self.name)

    def out_dir(self, layout: BaseLayout, n: int | None) -> Path:
        return Path(getattr(_where(self, layout, n), self.out))


def _where(spec: StageSpec, layout: BaseLayout, n: int | None) -> BaseLayout | IterationLayout:
    if not spec.partitioned:
        return layout
    if n is None:
        raise LoopError(f"{spec.name} is partitioned by iteration: name the iteration")
    return layout.iteration(n)


@dataclass(frozen=True)
class StageContext:
    """What a stage's run function is given: its settings section (a read-only view, `settings`), the
    iteration, its resolved inputs and its output directory, and the runtime's Lean environment and policy
    (coroutine factories; only stages that need them call them)."""

    spec: StageSpec
    settings: Profile
    n: int | None
    layout: BaseLayout
    inputs: Mapping[str, Path | None]
    previous: Path | None
    earlier: list[IterationLayout]
    out: Path
    lean: Callable[[], Awaitable[ProofEnv]] | None = None
    policy: Callable[[Path, int], Awaitable[tuple[Any, dict[str, Any]]]] | None = None

    def input(self, asset: str) -> Path:
        path = self.inputs.get(asset)
        if path is None:
            raise LoopError(f"{self.spec.name}: input {asset} is not available here")
        return path

    @property
    def iteration(self) -> int:
        if self.n is None:
            raise LoopError(f"{self.spec.name} is not partitioned by iteration")
        return self.n

    async def env(self) -> ProofEnv:
        if self.lean is None:
            raise LoopError(f"{self.spec.name} needs Lean, but no Lean environment was given")
        return await self.lean()


@dataclass(frozen=True)
class Resolved:
    """A spec's inputs for one iteration: the paths, the fingerprint and which partitions were read."""

    inputs: dict[str, Path | None]
    previous: Path | None
    earlier: list[IterationLayout]
    fingerprint: str
    used: UsedPartitions


def me(spec: StageSpec, n: int | None) -> str:
    return f"{spec.name}[{n}]" if spec.partitioned else spec.name


def resolve(spec: StageSpec, specs: Mapping[str, StageSpec], profile: Profile, layout: BaseLayout,
            n: int | None, extra: Mapping[str, Any] | None = None) -> Resolved:
    """Check that every input of ``spec`` at iteration ``n`` is materialised (a `LoopError` naming the
    partition to materialise first), and fingerprint them with the declared settings."""
    who = me(spec, n)
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
        asset = spec.previous(profile)
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
    if spec.files is not None:
        digests |= {f"file:{k}": v for k, v in spec.files(profile).items()}
    fp = fingerprint_payload(spec.name, settings_mod.section_payload(profile, spec.declared(profile)), digests,
                             {"n": n, **(extra or {})} if spec.partitioned else dict(extra or {}))
    return Resolved(inputs, previous, earlier, fp, UsedPartitions(same_iteration=same, earlier=earlier_used))


def settings_fingerprint(spec: StageSpec, profile: Profile) -> str:
    """The part of the fingerprint the settings make (for the tests that walk every setting)."""
    return fingerprint_payload(spec.name, settings_mod.section_payload(profile, spec.declared(profile)), {}, {})


def context(spec: StageSpec, profile: Profile, layout: BaseLayout, n: int | None, resolved: Resolved,
            lean: Callable[[], Awaitable[ProofEnv]] | None = None,
            policy: Callable[[Path, int], Awaitable[tuple[Any, dict[str, Any]]]] | None = None) -> StageContext:
    return StageContext(spec=spec, settings=spec.settings_view(profile), n=n, layout=layout,
                        inputs=resolved.inputs, previous=resolved.previous, earlier=resolved.earlier,
                        out=spec.out_dir(layout, n), lean=lean, policy=policy)


def topological(specs: Sequence[StageSpec]) -> list[StageSpec]:
    """``specs`` in an order where every input comes before its readers (the order ``burnqed loop`` runs)."""
    by = {s.name: s for s in specs}
    done: list[StageSpec] = []
    seen: set[str] = set()

    def visit(s: StageSpec, path: tuple[str, ...]) -> None:
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
