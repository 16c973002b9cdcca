"""Groups closed under "these two belong together": a union-find whose root is always the smallest member,
so a group's name does not depend on the order the pairs came in."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T", bound=Hashable)


class UnionFind(Generic[T]):
    """Disjoint groups of ``items``; `find` names an item's group by its smallest member."""

    def __init__(self, items: Iterable[T]) -> None:
        self._parent: dict[T, T] = {x: x for x in items}

    def find(self, x: T) -> T:
        parent = self._parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: T, b: T) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:  # the smaller stays the root: a group's root is its smallest member
            lo, hi = (ra, rb) if ra < rb else (rb, ra)  # type: ignore[operator]
            self._parent[hi] = lo

    def groups(self) -> dict[T, list[T]]:
        """Root -> members, in the order the items were given."""
        out: dict[T, list[T]] = {}
        for x in self._parent:
            out.setdefault(self.find(x), []).append(x)
        return out
