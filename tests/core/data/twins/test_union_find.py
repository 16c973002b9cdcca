"""Union-find named by the smallest member, whatever the order of the unions."""

from burnqed_core.data.twins.union_find import UnionFind


def test_groups_are_named_by_their_smallest_member() -> None:
    for pairs in ([("d", "b"), ("b", "c")], [("c", "b"), ("d", "c")]):
        uf = UnionFind(["a", "b", "c", "d", "e"])
        for x, y in pairs:
            uf.union(x, y)
        assert [uf.find(x) for x in "abcde"] == ["a", "b", "b", "b", "e"]
        assert uf.groups() == {"a": ["a"], "b": ["b", "c", "d"], "e": ["e"]}
