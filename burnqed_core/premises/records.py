"""`Premise`: one declaration a proof may cite, and `Retrieved`: one with its retrieval score."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

PremiseKind = Literal["theorem", "definition"]


class Premise(BaseModel):
    """A declaration a proof may name: a library theorem (``module`` set) or a definition or lemma of a user's
    file stated before the theorem (``module`` empty)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str
    type: str = Field("", description="its type as Lean prints it (a file's lemma: its statement as written; "
                                      "a file's definition: empty)")
    module: str = Field("", description="the library module that declares it; empty for a file's own")
    kind: PremiseKind = "theorem"
    position: int = Field(0, ge=0, description="a file's own premise: its index among the file's premises "
                                               "(definitions, then lemmas)")

    @property
    def local(self) -> bool:
        return not self.module

    def prompt_line(self, max_chars: int = 160) -> str:
        """``name : type``, the type cut to ``max_chars`` (ReProver's premise format)."""
        typ = " ".join(self.type.split())
        if len(typ) > max_chars:
            typ = typ[:max_chars - 1] + "…"
        return f"{self.name} : {typ}" if typ else self.name


class Retrieved(BaseModel):
    """A premise retrieved for a goal: its BM25 score and where it came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    premise: Premise
    score: float
    rank: int = Field(ge=0)
