"""Stage specs: the settings each stage receives decide its fingerprint, for every leaf setting; the view a
stage reads through refuses what its spec does not declare; inputs are resolved and named from the specs."""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest
from pydantic import ValidationError

from burnqed_core.config import Profile, load_profile
from burnqed_core.loop.inputs import LoopError
from burnqed_core.loop.layout import DONE, BaseLayout
from burnqed_core.loop.settings import UndeclaredSetting, leaves, resolve, view
from burnqed_core.loop.spec import resolve as resolve_inputs
from burnqed_core.loop.spec import settings_fingerprint, topological
from burnqed_core.loop.stages import BY_NAME, SPECS
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


def _holders(profile: Profile, path: str) -> set[str]:
    return {s.name for s in SPECS
            if any(path == d or path.startswith(d + ".") for d in s.declared(profile))}


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
    changed = {s.name for s in SPECS if settings_fingerprint(s, base) != settings_fingerprint(s, other)}
    if machine:
        assert changed == set(), f"{path} is the machine's: it must not re-run {changed}"
        return
    expected = _holders(base, path) | _holders(other, path)
    assert expected, f"{path}: no stage holds it (a dead setting, or mark it `machine` in burnqed_core/config.py)"
    assert changed == expected


def test_the_old_stale_result_bugs_are_gone() -> None:
    """data.alpha_copies was in no stage's key list, training.max_grad_norm not in base_model's."""
    base = _profile()
    for path, stages in {"data.alpha_copies": {"tactic_pairs", "base_model"},
                         "training.max_grad_norm": {"base_model", "lora_adapter"},
                         "training.eval_every": {"base_model", "lora_adapter"}}.items():
        other = _changed(base, path)
        rerun = {s.name for s in SPECS if settings_fingerprint(s, base) != settings_fingerprint(s, other)}
        assert rerun == stages, path


def test_joint_training_gives_the_adapter_the_ebm_section() -> None:
    lora = BY_NAME["lora_adapter"]
    separate, joint = _profile(), _profile(**{"ebm.joint.enabled": True})
    assert settings_fingerprint(lora, separate) == settings_fingerprint(lora, _changed(separate, "ebm.lr"))
    assert settings_fingerprint(lora, joint) != settings_fingerprint(lora, _changed(joint, "ebm.lr"))


def test_a_stage_reads_only_what_its_spec_declares() -> None:
    prof = _profile()
    v = view(prof, ("data.alpha_copies", "training"), "demo")
    assert v.data.alpha_copies == prof.data.alpha_copies and v.training.lora.r == prof.training.lora.r
    assert v.paths.work_dir == prof.paths.work_dir  # the machine's: readable anywhere
    assert v.lean.num_workers == prof.lean.num_workers
    with pytest.raises(UndeclaredSetting, match=r"stage demo reads data.seed"):
        _ = v.data.seed
    with pytest.raises(UndeclaredSetting, match=r"search.max_nodes"):
        _ = v.search.max_nodes
    with pytest.raises(AttributeError, match="read-only"):
        v.data = prof.data  # type: ignore[misc]
    copy = v.model_copy(update={"name": "x"})
    with pytest.raises(UndeclaredSetting):
        _ = copy.eval
    assert set(v.data.model_dump()) == {"alpha_copies"}
    # a copied sub-section (the eval's other benchmark) goes in as the section, still behind the view
    other = v.model_copy(update={"data": v.data.model_copy(update={"alpha_copies": 7})})
    assert other.data.alpha_copies == 7 and v.data.alpha_copies == prof.data.alpha_copies
    with pytest.raises(UndeclaredSetting):
        _ = other.data.seed


def test_a_misspelt_spec_path_fails_naming_it() -> None:
    with pytest.raises(Exception, match=r"data\.alpha_copy"):
        view(_profile(), ("data.alpha_copy",), "demo")


def test_specs_are_in_dependency_order_with_unique_outputs() -> None:
    names = [s.name for s in SPECS]
    for i, s in enumerate(SPECS):
        assert all(names.index(inp.asset) < i for inp in s.inputs), s.name
    assert len({(s.partitioned, s.out) for s in SPECS}) == len(SPECS)
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
    _done(layout.iteration(0).merged, "m0")
    _done(layout.model, "base")
    r0 = resolve_inputs(traj, BY_NAME, prof, layout, 0)
    assert r0.inputs["ebm"] is None and r0.used.same_iteration == ["merged_model[0]", "base_model"]
    # iteration 1 needs its EBM and every earlier iteration's trajectories
    _done(layout.iteration(1).merged, "m1")
    with pytest.raises(LoopError, match=r"ebm\[1\]"):
        resolve_inputs(traj, BY_NAME, prof, layout, 1)
    _done(layout.iteration(1).ebm, "e1")
    with pytest.raises(LoopError, match=r"trajectories\[0\]"):
        resolve_inputs(traj, BY_NAME, prof, layout, 1)
    _done(layout.iteration(0).trajectories, "t0")
    r1 = resolve_inputs(traj, BY_NAME, prof, layout, 1)
    assert r1.used.earlier == {"trajectories": [0]} and r1.fingerprint != r0.fingerprint
    # a recomputed upstream stage changes the fingerprint
    _done(layout.iteration(1).ebm, "e1 again")
    assert resolve_inputs(traj, BY_NAME, prof, layout, 1).fingerprint != r1.fingerprint


def test_warm_start_follows_the_setting(tmp_path: Path) -> None:
    layout = BaseLayout(root=tmp_path)
    lora = BY_NAME["lora_adapter"]
    for d in (layout.model, layout.iteration(1).pairs, layout.iteration(0).adapter):
        _done(d, "x")
    adapter = _profile(**{"paths.work_dir": str(tmp_path)})
    r = resolve_inputs(lora, BY_NAME, adapter, layout, 1)
    assert r.previous == layout.iteration(0).adapter and r.used.earlier == {"lora_adapter": [0]}
    merged = _profile(**{"paths.work_dir": str(tmp_path), "training.warm_start": "merged"})
    with pytest.raises(LoopError, match=r"merged_model\[0\]"):
        resolve_inputs(lora, BY_NAME, merged, layout, 1)
