"""Stage specs: the settings each stage receives (its typed projection of the profile) decide its fingerprint,
for every leaf setting; a projection holds only what its model declares, typed as in the profile; inputs are
resolved and named from the specs; the code version enters the fingerprint."""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest
from pydantic import ValidationError

from burnqed_core.config import DataConfig, PathsConfig, Profile, TrainingConfig, load_profile
from burnqed_core.loop.inputs import LoopError
from burnqed_core.loop.layout import DONE, BaseLayout
from burnqed_core.loop.spec import resolve as resolve_inputs
from burnqed_core.loop.spec import settings_fingerprint, topological
from burnqed_core.loop.stages import ALL, BY_NAME
from burnqed_core.projection import Projection, StageSettings, holds, leaves, problems, resolve
from burnqed_core.records import StageResult


def _profile(**overrides: Any) -> Profile:
    return load_profile("tiny", environ={}, overrides=overrides or None)


def _candidates(value: Any, annotation: Any) -> list[Any]:
    """Other values of a setting's type, tried in order until one validates."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return [a for a in args if a != value]
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        out: list[Any] = [None] if value is not None else []
        for a in inner:
            out += _candidates(value if value is not None else _zero(a), a)
        return out
    if isinstance(value, bool) or annotation is bool:
        return [not value]
    if isinstance(value, int) or annotation is int:
        v = int(value or 0)
        return [v + 1, v - 1, v * 2 + 3]
    if isinstance(value, float) or annotation is float:
        v = float(value or 0.0)
        return [v * 0.5 if v else 0.5, v + 0.01, v - 0.01, v * 1.5]
    if origin is list or isinstance(value, list):
        item = get_args(annotation)[0] if get_args(annotation) else str
        extra = 7 if item is int else "simp"
        return [[*value, extra], value[:-1]] if value else [[extra]]
    if annotation is Path or isinstance(value, Path):
        return [Path(str(value or "x") + "-other")]
    return [f"{value}x" if value else "x"]


def _zero(annotation: Any) -> Any:
    return {int: 1, float: 0.5, str: "x", bool: False}.get(annotation, Path("x") if annotation is Path else None)


def _field(path: str) -> Any:
    model: Any = Profile
    *parents, last = path.split(".")
    for p in parents:
        model = model.model_fields[p].annotation
    return model.model_fields[last].annotation


def _changed(base: Profile, path: str) -> Profile:
    raw = base.model_dump(mode="json")
    node = raw
    *parents, last = path.split(".")
    for p in parents:
        node = node[p]
    old = resolve(base, path)
    valid_strings = {"nightly.timezone": ["Europe/Paris"], "nightly.cron": ["0 4 * * *"]}
    for candidate in valid_strings.get(path, []) + _candidates(old, _field(path)):
        node[last] = json.loads(json.dumps(candidate, default=str))
        try:
            out = Profile.model_validate(raw)
        except ValidationError:
            continue
        if resolve(out, path) != old:
            return out
    raise AssertionError(f"no other valid value found for {path} (is {old!r})")


def _holders(path: str) -> set[str]:
    return {s.name for s in ALL if holds(s.settings, path)}


LEAVES = list(leaves(Profile))


def test_the_walk_sees_every_section() -> None:
    sections = {p.split(".")[0] for p, _ in LEAVES}
    assert sections >= {"lean", "policy", "search", "training", "data", "ebm", "eval", "paths", "pipeline"}
    assert len(LEAVES) > 150


@pytest.mark.parametrize(("path", "machine"), LEAVES, ids=[p for p, _ in LEAVES])
def test_each_setting_changes_exactly_the_stages_that_hold_it(path: str, machine: bool) -> None:
    # the trace settings go in pairs: start from a profile that sets both
    base = _profile(**{"data.trace_repo": "r", "data.trace_commit": "c"}) if path.startswith("data.trace_") \
        else _profile()
    if path in {"lean.embedded.install_dir", "source"}:
        pytest.skip("filled in from other settings at load")
    other = _changed(base, path)
    changed = {s.name for s in ALL if settings_fingerprint(s, base) != settings_fingerprint(s, other)}
    if machine:
        assert changed == set(), f"{path} is the machine's: it must not re-run {changed}"
        return
    expected = _holders(path)
    assert expected, f"{path}: no stage holds it (a dead setting, or mark it `machine` in burnqed_core/config.py)"
    assert changed == expected


def test_the_old_stale_result_bugs_are_gone() -> None:
    """data.alpha_copies was in no stage's key list, training.max_grad_norm not in base_model's."""
    base = _profile()
    for path, stages in {"data.alpha_copies": {"tactic_pairs", "base_model"},
                         "training.max_grad_norm": {"base_model", "lora_adapter"},
                         "training.eval_every": {"base_model", "lora_adapter"}}.items():
        other = _changed(base, path)
        rerun = {s.name for s in ALL if settings_fingerprint(s, base) != settings_fingerprint(s, other)}
        assert rerun == stages, path


def test_search_concurrency_is_a_result_setting() -> None:
    """Nodes per theorem per batch are frontier_batch // concurrency: a stage that searches must re-run."""
    base = _profile()
    other = _changed(base, "search.concurrency")
    rerun = {s.name for s in ALL if settings_fingerprint(s, base) != settings_fingerprint(s, other)}
    assert rerun == {"trajectories", "eval_report", "nightly_eval"}


class _Data(Projection):
    SOURCE = DataConfig
    alpha_copies: int


class _Demo(StageSettings):
    data: _Data
    training: TrainingConfig
    paths: PathsConfig


def test_a_stage_receives_only_what_its_model_declares() -> None:
    prof = _profile()
    s = _Demo.of(prof)
    assert s.data.alpha_copies == prof.data.alpha_copies and s.training.lora.r == prof.training.lora.r
    with pytest.raises(AttributeError):
        _ = s.data.seed  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        _ = s.search  # type: ignore[attr-defined]
    with pytest.raises(ValidationError):
        s.data = prof.data  # type: ignore[misc]
    # the fingerprint's payload: the declared values, less the machine's (paths, training.device, ...)
    payload = s.payload()
    assert set(payload) == {"data", "training"} and payload["data"] == {"alpha_copies": prof.data.alpha_copies}
    assert "device" not in payload["training"] and "lr" in payload["training"]
    # a copy with a section changed (the eval's other set) stays a projection
    other = s.model_copy(update={"data": s.data.model_copy(update={"alpha_copies": 7})})
    assert other.data.alpha_copies == 7 and s.data.alpha_copies == prof.data.alpha_copies


def test_every_stage_model_is_a_projection_of_the_profile() -> None:
    for spec in ALL:
        assert problems(spec.settings) == [], spec.name


def test_a_wrong_projection_is_named() -> None:
    class Bad(Projection):
        SOURCE = DataConfig
        alpha_copy: int  # misspelt
        seed: str  # the profile's is an int

    class BadStage(StageSettings):
        data: Bad

    found = problems(BadStage)
    assert any("data.alpha_copy is not a setting of DataConfig" in p for p in found), found
    assert any("data.seed is typed" in p for p in found), found


def test_the_code_version_enters_the_fingerprint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prof = _profile(**{"paths.work_dir": str(tmp_path)})
    layout = BaseLayout(root=tmp_path)
    _done(layout.stage("base_tactic_pairs"), "t")
    _done(layout.stage("premise_index"), "p")
    spec = BY_NAME["base_model"]
    before = resolve_inputs(spec, BY_NAME, prof, layout, None).fingerprint
    monkeypatch.setattr(type(spec), "code_version", property(lambda s: "another"))
    assert resolve_inputs(spec, BY_NAME, prof, layout, None).fingerprint != before


def test_specs_are_in_dependency_order_with_unique_outputs() -> None:
    names = [s.name for s in ALL]
    for i, s in enumerate(ALL):
        assert all(names.index(inp.asset) < i for inp in s.inputs), s.name
    assert len({s.name for s in ALL}) == len(ALL)
    with pytest.raises(LoopError, match="cycle"):
        a = BY_NAME["merged_model"]
        topological([a.__class__(**{**a.__dict__, "inputs": (type(a.inputs[0])("merged_model"),)})])


def _done(path: Path, tag: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / DONE).write_text(StageResult(stage="x", path=str(path), summary=tag).model_dump_json())


def test_inputs_are_resolved_named_and_recorded(tmp_path: Path) -> None:
    prof = _profile(**{"paths.work_dir": str(tmp_path)})
    layout = BaseLayout(root=tmp_path)
    traj = BY_NAME["trajectories"]
    with pytest.raises(LoopError, match=r"trajectories\[0\] needs merged_model\[0\].*materialise merged_model\[0\]"):
        resolve_inputs(traj, BY_NAME, prof, layout, 0)
    _done(layout.iteration(0).stage("merged_model"), "m0")
    _done(layout.stage("base_model"), "base")
    with pytest.raises(LoopError, match=r"trajectories\[0\] needs premise_index, which is not materialised"):
        resolve_inputs(traj, BY_NAME, prof, layout, 0)
    _done(layout.stage("premise_index"), "premises")
    r0 = resolve_inputs(traj, BY_NAME, prof, layout, 0)
    assert r0.inputs["ebm"] is None and r0.used.same_iteration == ["merged_model[0]", "premise_index", "base_model"]
    # iteration 1 needs its EBM, its premise re-ranker and every earlier iteration's trajectories
    _done(layout.iteration(1).stage("merged_model"), "m1")
    with pytest.raises(LoopError, match=r"ebm\[1\]"):
        resolve_inputs(traj, BY_NAME, prof, layout, 1)
    _done(layout.iteration(1).stage("ebm"), "e1")
    with pytest.raises(LoopError, match=r"premise_reranker\[1\]"):
        resolve_inputs(traj, BY_NAME, prof, layout, 1)
    _done(layout.iteration(1).stage("premise_reranker"), "r1")
    with pytest.raises(LoopError, match=r"trajectories\[0\]"):
        resolve_inputs(traj, BY_NAME, prof, layout, 1)
    _done(layout.iteration(0).stage("trajectories"), "t0")
    r1 = resolve_inputs(traj, BY_NAME, prof, layout, 1)
    assert r1.used.earlier == {"trajectories": [0]} and r1.fingerprint != r0.fingerprint
    # a recomputed upstream stage changes the fingerprint
    _done(layout.iteration(1).stage("ebm"), "e1 again")
    assert resolve_inputs(traj, BY_NAME, prof, layout, 1).fingerprint != r1.fingerprint


def test_warm_start_follows_the_setting(tmp_path: Path) -> None:
    layout = BaseLayout(root=tmp_path)
    lora = BY_NAME["lora_adapter"]
    for d in (layout.stage("base_model"), layout.iteration(1).stage("tactic_pairs"),
              layout.iteration(0).stage("lora_adapter"), layout.stage("premise_index"),
              layout.iteration(0).stage("trajectories")):  # read by the joint training (ebm.joint)
        _done(d, "x")
    adapter = _profile(**{"paths.work_dir": str(tmp_path)})
    r = resolve_inputs(lora, BY_NAME, adapter, layout, 1)
    assert r.previous == layout.iteration(0).stage("lora_adapter")
    assert r.used.earlier == {"lora_adapter": [0], "trajectories": [0]}
    merged = _profile(**{"paths.work_dir": str(tmp_path), "training.warm_start": "merged"})
    with pytest.raises(LoopError, match=r"merged_model\[0\]"):
        resolve_inputs(lora, BY_NAME, merged, layout, 1)
