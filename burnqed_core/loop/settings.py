"""The settings section a stage receives: a read-only view of the profile that holds only what the stage's
spec declares (`burnqed_core.loop.spec.StageSpec.settings`).

A stage reads its settings through `SettingsView`. A declared path (``"training"``, ``"data.alpha_copies"``)
reads as the profile's value; a field of the machine (`burnqed_core.config.machine`: paths, workers,
timeouts of servers) reads anywhere; any other read raises `UndeclaredSetting`, naming the stage and the key.
The fingerprint of the stage (`burnqed_core.loop.markers.fingerprint`) hashes `section_payload`: the same
declared paths, less their machine fields. So what a stage reads and what its fingerprint covers cannot
drift apart: a setting the stage reads but its spec does not declare fails at once, in the tests of that
stage, instead of being skipped as "unchanged inputs".
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import BaseModel

from burnqed_core.config import Profile, is_machine
from burnqed_core.errors import BurnqedError


class UndeclaredSetting(BurnqedError, AttributeError):
    """A stage read a setting its spec does not declare."""


def _covered(path: str, declared: Sequence[str]) -> bool:
    return any(path == d or path.startswith(d + ".") for d in declared)


def _partly(path: str, declared: Sequence[str]) -> bool:
    return any(d.startswith(path + ".") for d in declared)


class SettingsView:
    """``node`` (a profile or one of its sections at ``prefix``) as seen by stage ``stage`` that declares
    ``declared`` (dotted profile paths)."""

    __slots__ = ("_declared", "_node", "_prefix", "_stage")

    def __init__(self, node: BaseModel, declared: Sequence[str], stage: str, prefix: str = "") -> None:
        object.__setattr__(self, "_node", node)
        object.__setattr__(self, "_declared", tuple(declared))
        object.__setattr__(self, "_stage", stage)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, key: str) -> Any:
        node: BaseModel = self._node
        fields = type(node).model_fields
        if key not in fields:  # a method or property of the section (e.g. pipeline.eval_shard)
            return getattr(node, key)
        path = f"{self._prefix}.{key}" if self._prefix else key
        value = getattr(node, key)
        if _covered(path, self._declared) or is_machine(fields[key]):
            return value
        if isinstance(value, BaseModel) and _partly(path, self._declared):
            return SettingsView(value, self._declared, self._stage, path)
        if isinstance(value, BaseModel) and _has_machine(value):
            return SettingsView(value, self._declared, self._stage, path)
        raise UndeclaredSetting(
            f"stage {self._stage} reads {path}, which its spec does not declare: add it to the stage's settings "
            "in its module under burnqed_core/loop/stages/ (its fingerprint then covers it)")

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"settings are read-only (stage {self._stage}): make a copy with model_copy")

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> SettingsView:
        """A view of a copy of the section with ``update`` applied (the stage's own derived settings; a view in
        ``update``, such as a copied sub-section, is stored as the section it views)."""
        raw = {k: v._node if isinstance(v, SettingsView) else v for k, v in (update or {}).items()}
        return SettingsView(self._node.model_copy(update=raw, deep=deep), self._declared, self._stage,
                            self._prefix)

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        """The declared part of the section (and its machine fields)."""
        out: dict[str, Any] = {}
        for key in type(self._node).model_fields:
            try:
                value = getattr(self, key)
            except UndeclaredSetting:
                continue
            out[key] = value.model_dump(**kwargs) if isinstance(value, (BaseModel, SettingsView)) else value
        return out

    def __repr__(self) -> str:
        return f"SettingsView({self._stage}: {', '.join(self._declared)})"


def _has_machine(model: BaseModel) -> bool:
    return any(is_machine(f) or (isinstance(getattr(model, k), BaseModel) and _has_machine(getattr(model, k)))
               for k, f in type(model).model_fields.items())


def view(profile: Profile, declared: Sequence[str], stage: str) -> Profile:
    """What stage ``stage`` receives: ``profile`` restricted to ``declared`` (typed as the profile it reads
    like; reading anything else raises `UndeclaredSetting`)."""
    for path in declared:
        resolve(profile, path)  # a typo in a spec fails here, naming the path
    return SettingsView(profile, declared, stage)  # type: ignore[return-value]


def resolve(profile: BaseModel, path: str) -> Any:
    node: Any = profile
    for key in path.split("."):
        if not isinstance(node, BaseModel) or key not in type(node).model_fields:
            raise BurnqedError(f"settings path {path!r}: no such key in the profile")
        node = getattr(node, key)
    return node


def _strip_machine(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return {k: _strip_machine(getattr(value, k)) for k, f in type(value).model_fields.items()
                if not is_machine(f)}
    if isinstance(value, (list, tuple)):
        return [_strip_machine(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _strip_machine(v) for k, v in value.items()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def section_payload(profile: Profile, declared: Sequence[str]) -> dict[str, Any]:
    """What a stage's fingerprint hashes of its settings: each declared path's value, machine fields left out."""
    return {path: _strip_machine(resolve(profile, path)) for path in sorted(declared)}


def leaves(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, bool]]:
    """Every leaf setting of a settings model as (dotted path, is a machine field), machine sections included."""
    for key, field in model.model_fields.items():
        path = f"{prefix}.{key}" if prefix else key
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            for sub, machine in leaves(ann, path):
                yield sub, machine or is_machine(field)
        else:
            yield path, is_machine(field)
