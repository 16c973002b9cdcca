"""The search tree of one theorem: nodes, edges, the transposition table, labels.

A node is a distinct goal state (its text is the key of the transposition
table: a state reached a second time, by another path, gets an edge to the
existing node and is never expanded twice). An edge is one tactic tried on a
node: it leads to a node, or it failed (tactic error, rejected, or an
infrastructure failure, which says nothing about the tactic).

A tree is built fresh for every search and owned by it (ReProver kept
per-theorem state on a long-lived object; here nothing outlives the search).

Labels, given to every node when the search ends (`SearchTree.labels`):

* ``positive``: on the proof path (root to the terminal node of the proof that
  passed the whole-theorem re-check).
* ``negative``: not positive, not *solved* (no closed-goal node reachable from
  it), and either a sibling of a positive node (another child of a node on the
  proof path: the search had it and the proof went elsewhere), or *dead*: it
  was expanded, at least one tactic was tried, and every tactic failed with a
  tactic error or led to dead nodes (never because of an infrastructure
  failure, nor when a new state from it was dropped for the node budget).
  Dead nodes are the only negatives of an unproved theorem: a state that the
  budget merely did not reach further from is not evidence that it is
  unprovable, so it stays ``unknown``.
* ``unknown``: everything else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from burnqed_core.lean.types import GoalState, Status
from burnqed_core.records import Label


class NodeStatus(StrEnum):
    OPEN = "open"          # created, waiting in the frontier (or beyond max depth)
    EXPANDED = "expanded"  # tactics were tried on it
    TERMINAL = "terminal"  # no goals left (a proof, pending or passed re-check)
    REJECTED = "rejected"  # no goals left, but the whole-proof re-check failed


@dataclass(slots=True)
class Edge:
    """One tactic tried on a node. ``child`` is None when it failed."""

    parent: int
    tactic: str
    status: Status
    logprob: float
    child: int | None = None
    transposition: bool = False
    message: str = ""
    source: str = "policy"  # where the tactic came from: policy, automation or both (search.automation)


@dataclass(slots=True)
class Node:
    node_id: int
    parent_id: int
    state: GoalState | None
    text: str
    tactic: str
    depth: int
    logprob: float
    cum_logprob: float
    created_s: float
    elapsed_s: float
    energy: float | None = None
    priority: float = 0.0
    status: NodeStatus = NodeStatus.OPEN
    edges: list[Edge] = field(default_factory=list)
    truncated: bool = False  # a new state from it was dropped: the node budget was spent
    source: str = ""  # the origin of ``tactic`` (policy, automation, both); "" at the root

    @property
    def is_terminal(self) -> bool:
        return self.status in (NodeStatus.TERMINAL, NodeStatus.REJECTED)


class TreeInvariantError(AssertionError):
    """The tree broke one of its invariants (a bug in the engine)."""


class SearchTree:
    """Nodes of one theorem's search, with the transposition table."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.by_text: dict[str, int] = {}
        self.proof_node: int | None = None

    def __len__(self) -> int:
        return len(self.nodes)

    @property
    def root(self) -> Node:
        return self.nodes[0]

    def lookup(self, text: str) -> Node | None:
        i = self.by_text.get(text)
        return None if i is None else self.nodes[i]

    def add_node(
        self,
        *,
        parent: Node | None,
        state: GoalState | None,
        text: str,
        tactic: str,
        logprob: float,
        created_s: float,
        elapsed_s: float,
        source: str = "policy",
    ) -> Node:
        """A new node (the root when ``parent`` is None). A closed-goal state
        ("" text) is always a new terminal node: every proof is its own leaf."""
        terminal = state is not None and state.is_proved
        if not terminal and text in self.by_text:
            raise TreeInvariantError(f"state already in the tree as node {self.by_text[text]}")
        node = Node(
            node_id=len(self.nodes),
            parent_id=-1 if parent is None else parent.node_id,
            state=state,
            text=text,
            tactic=tactic,
            depth=0 if parent is None else parent.depth + 1,
            logprob=logprob,
            cum_logprob=logprob + (0.0 if parent is None else parent.cum_logprob),
            created_s=created_s,
            elapsed_s=elapsed_s,
            status=NodeStatus.TERMINAL if terminal else NodeStatus.OPEN,
            source="" if parent is None else source,
        )
        self.nodes.append(node)
        if not terminal:
            self.by_text[text] = node.node_id
        if parent is not None:
            parent.edges.append(Edge(parent.node_id, tactic, Status.OK, logprob, child=node.node_id, source=source))
        return node

    def add_transposition(self, parent: Node, tactic: str, logprob: float, target: Node,
                          source: str = "policy") -> Edge:
        edge = Edge(parent.node_id, tactic, Status.OK, logprob, child=target.node_id, transposition=True,
                    source=source)
        parent.edges.append(edge)
        return edge

    def add_failure(self, parent: Node, tactic: str, logprob: float, status: Status, message: str = "",
                    source: str = "policy") -> Edge:
        edge = Edge(parent.node_id, tactic, status, logprob, message=message[:500], source=source)
        parent.edges.append(edge)
        return edge

    def path(self, node_id: int) -> list[Node]:
        """Root ... node, following parent links (the tree edges)."""
        out = []
        i = node_id
        while i >= 0:
            node = self.nodes[i]
            out.append(node)
            i = node.parent_id
        out.reverse()
        return out

    def tactics_to(self, node_id: int) -> list[str]:
        return [n.tactic for n in self.path(node_id)[1:]]

    # -- labels -----------------------------------------------------------

    def _solved(self) -> set[int]:
        """Nodes from which a closed-goal node (not rejected by the re-check) is reachable."""
        solved = {n.node_id for n in self.nodes if n.status is NodeStatus.TERMINAL}
        changed = True
        while changed:
            changed = False
            for n in self.nodes:
                if n.node_id not in solved and any(e.child in solved for e in n.edges):
                    solved.add(n.node_id)
                    changed = True
        return solved

    def _dead(self) -> set[int]:
        """Least fixpoint: expanded, >= 1 tactic tried, every edge a tactic
        failure (not infra) or into a dead node. Cycles never become dead."""
        dead: set[int] = set()
        changed = True
        while changed:
            changed = False
            for n in self.nodes:
                if n.node_id in dead or n.status is not NodeStatus.EXPANDED or not n.edges or n.truncated:
                    continue
                if all(
                    (e.child is None and not e.status.is_infra) or (e.child is not None and e.child in dead)
                    for e in n.edges
                ):
                    dead.add(n.node_id)
                    changed = True
        return dead

    def labels(self) -> list[Label]:
        """One label per node (see the module docstring)."""
        positive = {n.node_id for n in self.path(self.proof_node)} if self.proof_node is not None else set()
        solved = self._solved()
        dead = self._dead()
        siblings = {
            e.child
            for p in positive
            for e in self.nodes[p].edges
            if e.child is not None and not e.transposition and e.child not in positive
        }
        out: list[Label] = []
        for n in self.nodes:
            i = n.node_id
            if i in positive:
                out.append("positive")
            elif i not in solved and (i in siblings or i in dead):
                out.append("negative")
            else:
                out.append("unknown")
        return out

    def check_invariants(self) -> None:
        """Raise `TreeInvariantError` if the structure is inconsistent (tests, debug)."""
        for i, n in enumerate(self.nodes):
            if n.node_id != i:
                raise TreeInvariantError(f"node {i} has id {n.node_id}")
            self._check_place(i, n)
            if n.is_terminal:
                if n.edges or n.text:
                    raise TreeInvariantError(f"terminal node {i} has edges or goals")
            elif self.by_text.get(n.text) != i:
                raise TreeInvariantError(f"node {i} is not the transposition entry of its state")
            self._check_edges(i, n)
        if self.proof_node is not None and self.nodes[self.proof_node].status is not NodeStatus.TERMINAL:
            raise TreeInvariantError("proof node is not a terminal node")
        if len(self.by_text) != sum(1 for n in self.nodes if not n.is_terminal):
            raise TreeInvariantError("transposition table out of sync with the nodes")

    def _check_place(self, i: int, n: Node) -> None:
        """Node ``i`` is the root (parent -1, depth 0, no tactic), or a child of an earlier node one deeper, its
        cumulative log-probability its parent's plus its own, with a tree edge from the parent."""
        if i == 0:
            if n.parent_id != -1 or n.depth != 0 or n.tactic:
                raise TreeInvariantError("root must have parent -1, depth 0, no tactic")
            return
        if not 0 <= n.parent_id < i:
            raise TreeInvariantError(f"node {i}: parent {n.parent_id} not created before it")
        parent = self.nodes[n.parent_id]
        if n.depth != parent.depth + 1:
            raise TreeInvariantError(f"node {i}: depth {n.depth}, parent depth {parent.depth}")
        if abs(n.cum_logprob - (parent.cum_logprob + n.logprob)) > 1e-6:
            raise TreeInvariantError(f"node {i}: cumulative logprob is not parent's + own")
        if not any(e.child == i and not e.transposition for e in parent.edges):
            raise TreeInvariantError(f"node {i}: no tree edge from its parent")

    def _check_edges(self, i: int, n: Node) -> None:
        """Only an expanded node has edges; each starts at it, has a child iff it succeeded, and its child exists."""
        if n.edges and n.status is not NodeStatus.EXPANDED:
            raise TreeInvariantError(f"node {i} has edges but status {n.status}")
        for e in n.edges:
            if e.parent != i or (e.child is not None and not 0 <= e.child < len(self.nodes)):
                raise TreeInvariantError(f"node {i}: bad edge {e}")
            if (e.child is None) == (e.status is Status.OK):
                raise TreeInvariantError(f"node {i}: edge status {e.status} with child {e.child}")
