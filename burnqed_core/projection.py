"""The settings a stage receives: a typed projection of the profile (`StageSettings`).

Each stage declares one model (``Settings`` in its module under `burnqed_core.loop.stages`) whose fields
mirror the profile's: a field named like a profile section holds either that whole section (``search:
SearchConfig``) or a `Projection` of it, a model of its own that names the fields the stage reads
(``data: Data`` with ``corpus: str``, ``seed: int``), typed as in the section. `StageSettings.of` builds it
from a profile; the stage receives only that object, so a read of anything else is an ``AttributeError`` at
run time and a wrong attribute for the type checker, and `tests/core/loop/test_stages_reads.py` checks
statically that each stage module reads only what its model declares.

The fingerprint of the stage (`burnqed_core.loop.spec`) hashes `Projection.payload`: the model's values less
the fields of the machine (`burnqed_core.config.machine`: paths, workers, timeouts of servers), which a stage
declares like any other field when it reads them. What a stage reads and what its fingerprint covers are
thus one declaration and cannot drift apart.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from typing import Any, ClassVar, Self, get_args, get_origin

from pydantic import BaseModel, ConfigDict

from burnqed_core.config import Profile, is_machine
from burnqed_core.errors import BurnqedError


class Projection(BaseModel):
    """Part of a settings section (`SOURCE`): the fields a stage reads, each typed as in the section, or a
    `Projection` of a sub-section."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    SOURCE: ClassVar[type[BaseModel]]

    @classmethod
    def project(cls, section: BaseModel) -> Self:
        """This part of ``section`` (an instance of `SOURCE`)."""
        if not isinstance(section, cls.SOURCE):
            raise BurnqedError(f"{cls.__qualname__} projects a {cls.SOURCE.__name__}, got {type(section).__name__}")
        values: dict[str, Any] = {}
        for name, field in cls.model_fields.items():
            value = getattr(section, name)
            sub = projection_type(field.annotation)
            values[name] = sub.project(value) if sub is not None else value
        return cls.model_validate(values)

    def payload(self) -> dict[str, Any]:
        """What a fingerprint hashes of these settings: every value, less the machine's fields."""
        out: dict[str, Any] = {}
        source_fields = self.SOURCE.model_fields
        for name in type(self).model_fields:
            if is_machine(source_fields[name]):
                continue
            out[name] = _payload(getattr(self, name))
        return out


class StageSettings(Projection):
    """The settings a stage receives: a projection of the whole `Profile` (module docstring)."""

    SOURCE: ClassVar[type[BaseModel]] = Profile

    @classmethod
    def of(cls, profile: Profile) -> Self:
        return cls.project(profile)


def projection_type(annotation: Any) -> type[Projection] | None:
    """The `Projection` class a field annotation names, or None."""
    if isinstance(annotation, type) and issubclass(annotation, Projection):
        return annotation
    return None


def _payload(value: Any) -> Any:
    if isinstance(value, Projection):
        return value.payload()
    if isinstance(value, BaseModel):
        return {k: _payload(getattr(value, k)) for k, f in type(value).model_fields.items() if not is_machine(f)}
    if isinstance(value, (list, tuple)):
        return [_payload(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _payload(v) for k, v in value.items()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _same_type(a: Any, b: Any) -> bool:
    if a == b:
        return True
    oa, ob = get_origin(a), get_origin(b)
    if oa in (typing.Union, types.UnionType) and ob in (typing.Union, types.UnionType):
        return set(get_args(a)) == set(get_args(b))
    return False


def problems(model: type[Projection], prefix: str = "") -> list[str]:
    """Why ``model`` is not a projection of its `SOURCE` (a field the source lacks, another type), or []."""
    out: list[str] = []
    source = model.SOURCE
    for name, field in model.model_fields.items():
        path = f"{prefix}.{name}" if prefix else name
        if name not in source.model_fields:
            out.append(f"{model.__qualname__}: {path} is not a setting of {source.__name__}")
            continue
        src_ann = source.model_fields[name].annotation
        sub = projection_type(field.annotation)
        if sub is not None:
            if sub.SOURCE is not src_ann:
                out.append(f"{model.__qualname__}: {path} projects {sub.SOURCE.__name__}, the profile holds "
                           f"{getattr(src_ann, '__name__', src_ann)}")
            out += problems(sub, path)
        elif not _same_type(field.annotation, src_ann):
            out.append(f"{model.__qualname__}: {path} is typed {field.annotation}, the profile's is {src_ann}")
        if not field.is_required():
            out.append(f"{model.__qualname__}: {path} has a default: every value comes from the profile")
    return out


def covered(model: type[Projection], prefix: str = "") -> Iterator[str]:
    """The dotted profile paths ``model`` holds: a whole section by its path, a projection by its fields."""
    for name, field in model.model_fields.items():
        path = f"{prefix}.{name}" if prefix else name
        sub = projection_type(field.annotation)
        if sub is None:
            yield path
        else:
            yield from covered(sub, path)


def holds(model: type[Projection], path: str) -> bool:
    """Whether settings of type ``model`` hold the profile setting ``path`` (or a section around it)."""
    return any(path == c or path.startswith(c + ".") for c in covered(model))


def resolve(profile: BaseModel, path: str) -> Any:
    """The value at a dotted path of the profile; an error naming the path if there is none."""
    node: Any = profile
    for key in path.split("."):
        if not isinstance(node, BaseModel) or key not in type(node).model_fields:
            raise BurnqedError(f"settings path {path!r}: no such key in the profile")
        node = getattr(node, key)
    return node


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
