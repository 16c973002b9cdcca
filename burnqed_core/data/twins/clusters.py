"""Clusters of theorems: the unit an eval counts by when theorems are not independent.

A generated benchmark holds several instances of one template that differ only in their numbers (and, after
the set generator's renaming, in their names): ``wlst_len_sum_0`` ... ``wlst_len_sum_7`` are one statement
shape with other lengths and sums, so one memorised witness pattern solves all eight. Counting them as eight
independent theorems overstates what an iteration learned and understates the uncertainty of a solve rate.
The eval (`burnqed_core.eval.summary`) therefore reports a rate where each cluster weighs one, and bootstraps
its intervals over clusters.

The rule (`cluster_of`, then `clusters`):

* **template instances**: a theorem of the bundled generator (``source == "burnqed-generated"``) is named
  ``<family>_<key>`` (`burnqed_core.data.synthetic.generate_sets.family_theorems`), where the family's templates build
  the key from the template's shape and then its drawn parameters, each numeric parameter as one
  ``_<digits>`` component at the end (``barith_s0_3``: shape ``s0`` of ``barith``, instance 3;
  ``two_even_0_5_4``: template ``even`` of ``two`` with parameters 0, 5, 4; ``wlst_len_sum_3``;
  ``fork_swap_incr_5``). The cluster of such a theorem is its name without the trailing run of ``_<digits>``
  components, followed by ``_*`` (``barith_s0_*``, ``two_even_*``, ``wlst_len_sum_*``). Digits glued to a
  word are part of the shape and stay (``blogic_s0`` and ``blogic_s1`` are different statements; so are
  ``suit_turn4`` and ``suit_red_*``). A generated name with no numeric tail (``fork_swap_swap``) is a cluster
  of its own, named as the theorem. The family prefix is never stripped (a key made only of numbers,
  ``wit_3_5``, gives ``wit_*``). The ``*`` cannot occur in a Lean name, so a template cluster never takes the
  name of a theorem.
* **a cluster the set fixes** (`Theorem.cluster`, e.g. Lean's library: the theorem's module, near-twins'
  modules merged, `burnqed_core.data.theorems.core_pool`): that cluster.
* **other theorems** (any other ``source``): each is its own cluster, named as the theorem.
* **twins and strong near-twins**: theorems that are one theorem up to renaming and numerals, or up to binder
  style and order and isomorphic definitions, by `burnqed_core.data.twins.near_twins.near_twin_groups` (equal
  canonical form of the statement with the definitions it needs, equal skeleton of a known proof of at least
  ``min_skeleton_steps`` steps, or equal near-twin form) are merged, with everything already in their clusters,
  by union-find. A merged cluster is named by the smallest
  (``str`` order) of the cluster names it joins, so the result depends only on the set of theorems, never on
  their order.

Known limits: the template rule trusts the generator's naming (a hand-written benchmark with names ending in
numbers is not touched unless its ``source`` says it was generated); a template whose instances differ in a
non-numeric parameter (``s0_pq`` / ``s0_qp``) gives one cluster per value of that parameter unless the twin
step joins them; the twin step sees only what `near_twin_groups` sees (see its limits).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from burnqed_core.data.twins.union_find import UnionFind
from burnqed_core.records import Theorem

GENERATED_SOURCE = "burnqed-generated"  # `burnqed_core.data.synthetic.generate_sets.SOURCE`
TEMPLATE_MARK = "_*"
_NUMERIC_TAIL = re.compile(r"(?:_\d+)+$")


def cluster_of(theorem: Theorem) -> str:
    """The cluster of one theorem by its name alone (the template rule of the module docstring)."""
    name = theorem.name
    if theorem.cluster:
        return theorem.cluster
    if theorem.source != GENERATED_SOURCE:
        return name
    prefix = f"{theorem.family}_" if theorem.family and name.startswith(f"{theorem.family}_") else ""
    key = name[len(prefix):]
    stem = _NUMERIC_TAIL.sub("", f"_{key}")[1:]  # "3_5" (numbers only) -> "", "s0_3" -> "s0"
    if stem == key:
        return name
    if not stem:  # the key is only numbers: the family is the template
        return f"{prefix.rstrip('_')}{TEMPLATE_MARK}" if prefix else name
    return f"{prefix}{stem}{TEMPLATE_MARK}"


def clusters(theorems: Iterable[Theorem], *, twins: bool = True, min_skeleton_steps: int = 2) -> dict[str, str]:
    """Theorem name -> cluster name: `cluster_of`, then (``twins``) the clusters of twins merged (union-find,
    named by the smallest cluster name they join). A name given twice keeps its last theorem."""
    by_name = {t.name: t for t in theorems}
    base = {n: cluster_of(t) for n, t in by_name.items()}
    uf = UnionFind(base.values())

    if twins and len(by_name) > 1:
        from burnqed_core.data.twins.near_twins import near_twin_groups

        for group in near_twin_groups(list(by_name.values()), min_skeleton_steps=min_skeleton_steps):
            for n in group[1:]:
                uf.union(base[group[0]], base[n])
    return {n: uf.find(c) for n, c in sorted(base.items())}


def cluster_members(assignment: dict[str, str]) -> dict[str, list[str]]:
    """Cluster name -> its theorem names (sorted), from a `clusters` assignment."""
    out: dict[str, list[str]] = {}
    for n, c in sorted(assignment.items()):
        out.setdefault(c, []).append(n)
    return dict(sorted(out.items()))
