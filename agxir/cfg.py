"""Control-flow graph, reverse postorder and dominators over an `ir.Function`.

This module owns the graph view of a function: successor and predecessor lists (the
predecessor order is the phi source order), a depth-first reverse postorder with its
retreating edges, Cooper–Harvey–Kennedy dominators, dominance frontiers and the
reducibility test. It reads terminators only and never changes the function.

Every traversal is iterative: generated functions can have 100,000 blocks, far past
Python's recursion limit.
"""

from __future__ import annotations

from agxir.ir import Block, Function

__all__ = ["CFG", "Dominators", "is_reducible"]


class CFG:
    """Successors, predecessors and a DFS numbering of one function's blocks.

    Blocks are keyed by identity. Targets that are not blocks of the function are left
    out (the verifier reports them), so every block in `succs`/`preds` is in `blocks`.
    Predecessors include unreachable blocks: phis list one source per predecessor edge
    whether or not the edge can run, and the entry-has-no-predecessors rule covers them.
    """

    def __init__(self, fn: Function) -> None:
        self.fn = fn
        # dict.fromkeys keeps source order and drops a block listed twice.
        self.blocks: list[Block] = list(dict.fromkeys(fn.blocks))
        self.entry: Block | None = self.blocks[0] if self.blocks else None
        members = set(self.blocks)

        self.succs: dict[Block, list[Block]] = {}
        for block in self.blocks:
            out: list[Block] = []
            for target in block.successors:
                if target in members and target not in out:
                    out.append(target)
            self.succs[block] = out

        self.preds: dict[Block, list[Block]] = {block: [] for block in self.blocks}
        for block in self.blocks:
            for succ in self.succs[block]:
                self.preds[succ].append(block)

        self.rpo: list[Block] = []
        self.back_edges: list[tuple[Block, Block]] = []
        if self.entry is not None:
            self._depth_first(self.entry)
        self.reachable: set[Block] = set(self.rpo)
        self.rpo_index: dict[Block, int] = {block: i for i, block in enumerate(self.rpo)}

    def _depth_first(self, entry: Block) -> None:
        postorder: list[Block] = []
        visited = {entry}
        on_stack = {entry}
        # Each frame keeps its own successor iterator, so a frame resumes where it left
        # off after a child finishes, exactly like the recursive formulation.
        stack = [(entry, iter(self.succs[entry]))]
        while stack:
            block, pending = stack[-1]
            for succ in pending:
                if succ in on_stack:
                    self.back_edges.append((block, succ))
                elif succ not in visited:
                    visited.add(succ)
                    on_stack.add(succ)
                    stack.append((succ, iter(self.succs[succ])))
                    break
            else:
                stack.pop()
                on_stack.discard(block)
                postorder.append(block)
        postorder.reverse()
        self.rpo = postorder

    def edges(self) -> list[tuple[Block, Block]]:
        """Every edge (source, target), in source order of the sources."""
        return [(block, succ) for block in self.blocks for succ in self.succs[block]]


def immediate_dominators(preds: list[list[int]]) -> list[int]:
    """Cooper, Harvey & Kennedy, "A Simple, Fast Dominance Algorithm", on a graph numbered
    in reverse postorder: `preds[i]` are the predecessors of node i, node 0 is the entry.
    Returns each node's immediate dominator (-1 for the entry and for nodes the entry does
    not reach). Parents are RPO numbers, so walking toward the smaller number walks toward
    the entry."""
    count = len(preds)
    parent: list[int] = [-1] * count
    if count:
        parent[0] = 0
    changed = True
    while changed:
        changed = False
        for i in range(1, count):
            new = -1
            for p in preds[i]:
                if parent[p] < 0:
                    continue
                if new < 0:
                    new = p
                    continue
                a, b = p, new
                while a != b:
                    while a > b:
                        a = parent[a]
                    while b > a:
                        b = parent[b]
                new = a
            if parent[i] != new:
                parent[i] = new
                changed = True
    if count:
        parent[0] = -1
    return parent


class Dominators:
    """The dominator tree of the reachable blocks of a CFG.

    Unreachable blocks are absent from `idom`, `tree_children` and `frontier`, and edges
    out of them are ignored, so dead code never changes the answer for live code.
    """

    def __init__(self, cfg: CFG) -> None:
        self.cfg = cfg
        rpo = cfg.rpo
        index = cfg.rpo_index
        count = len(rpo)
        preds = [[index[p] for p in cfg.preds[block] if p in index] for block in rpo]

        parent = immediate_dominators(preds)

        self.idom: dict[Block, Block | None] = {
            block: (rpo[parent[i]] if i else None) for i, block in enumerate(rpo)
        }
        self.tree_children: dict[Block, list[Block]] = {block: [] for block in rpo}
        for i in range(1, count):
            self.tree_children[rpo[parent[i]]].append(rpo[i])

        self._pre: dict[Block, int] = {}
        self._post: dict[Block, int] = {}
        self._number_tree()

        # Runner walk: for each edge p -> b, every block from p up to (not including)
        # idom(b) dominates a predecessor of b without strictly dominating b.
        self.frontier: dict[Block, set[Block]] = {block: set() for block in rpo}
        for i, block in enumerate(rpo):
            stop = parent[i]
            for p in preds[i]:
                runner = p
                while runner != stop:
                    self.frontier[rpo[runner]].add(block)
                    runner = parent[runner]

    def _number_tree(self) -> None:
        entry = self.cfg.rpo[0] if self.cfg.rpo else None
        if entry is None:
            return
        clock = 0
        self._pre[entry] = clock
        stack = [(entry, iter(self.tree_children[entry]))]
        while stack:
            block, pending = stack[-1]
            child = next(pending, None)
            if child is None:
                stack.pop()
                clock += 1
                self._post[block] = clock
            else:
                clock += 1
                self._pre[child] = clock
                stack.append((child, iter(self.tree_children[child])))

    def dominates(self, a: Block, b: Block) -> bool:
        """Every path from the entry to `b` passes through `a` (reflexive)."""
        pre_a = self._pre.get(a)
        pre_b = self._pre.get(b)
        if pre_a is None or pre_b is None:
            return False
        return pre_a <= pre_b and self._post[b] <= self._post[a]

    def strictly_dominates(self, a: Block, b: Block) -> bool:
        return a is not b and self.dominates(a, b)


def is_reducible(cfg: CFG, doms: Dominators) -> bool:
    """True iff every retreating edge of the DFS is a back edge (its target dominates its
    source); this holds for one DFS exactly when it holds for all of them."""
    return all(doms.dominates(target, source) for source, target in cfg.back_edges)
