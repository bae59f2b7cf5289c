"""The reference for lower-cf's declines: does an SSA function have the structured form?

`unstructurable_reason(fn)` says why `fn` has no form `agxir.machine.lower_cf` can emit
(nested if/else, loops with one exit target, breaks and continues), or None when it has
one. The harness (`fuzz.harness._declined`) asks it whenever lower-cf raises
`Unstructurable`: a decline it agrees with is counted as unstructurable, any other decline is
a crash of lower-cf. So this module shares no code with the lowering: it imports only the IR
(not `agxir.machine.structure`, not `agxir.cfg`) and decides from textbook definitions on a
graph of block numbers:

* reachability by a walk from the entry; dominators by the iterative set equations
  (dom(entry) = {entry}, dom(n) = {n} | the intersection of dom(p) over the predecessors,
  the sets held as bit masks), post-dominators by the same on the reversed graph, and the
  immediate one as the dominator whose set is n's without n;
* back edges are the edges u -> h with h dominating u, and the CFG is reducible when the
  graph without them is acyclic (Hecht and Ullman), checked by Kahn's topological sort;
* the canonical shape the lowering works on, built on the graph: several `stop` blocks
  lead to one fresh `stop`; several back edges into one header meet in a fresh latch;
  several edges entering a header from outside its loop meet in a fresh preheader;
* natural loops by the backward walk from the latch that stops at the header; a loop's
  exit targets are the blocks outside it that its blocks branch to.

The program is unstructurable when: a block is unreachable; the CFG is irreducible; the
entry is a loop header; a loop has no exit, or exits to several blocks; a loop's exit lies
outside a loop that encloses it (it leaves both at once; such a loop also exits towards the
outer latch, so it has two exit targets and that is said first, but lower-cf states the rule
and so does this); or a two-way branch whose sides are not regions of their own. That last
is judged per loop level: the level's acyclic graph holds the blocks of one loop (or of the
function) that no inner loop holds, each inner loop as one node leading to its exit, with the
back edges and the exits of the level dropped. There a branch with both targets in the level
is an if/else whose sides meet at its immediate post-dominator, and every block of a side
(reached from the side's first block before the meeting point) must be dominated by that
first block: nothing enters a side but the branch (`if (a || b)`, a jump into the other
side, or a loop that both sides enter, are not structured). A branch with a target leaving
the level (a loop test, `if (c) break`, the latch's test) needs nothing more, and a
"continue" (a back edge from inside an if) is a forward edge to the canonical latch.
"""

from __future__ import annotations

from agxir.ir import Function

__all__ = ["unstructurable_reason"]

Graph = dict[int, list[int]]  # node -> successors (no repeats)


class _Blocks:
    """The function's blocks as numbers 0..n-1 (0 the entry): successors, names, stops."""

    def __init__(self, fn: Function):
        index = {id(block): i for i, block in enumerate(fn.blocks)}
        self.names = [block.name for block in fn.blocks]
        self.succs: Graph = {}
        self.stops: list[int] = []
        for i, block in enumerate(fn.blocks):
            term = block.terminator
            targets = [] if term is None else [index[id(b)] for b in term.blocks if id(b) in index]
            self.succs[i] = list(dict.fromkeys(targets))
            if term is not None and term.name == "stop":
                self.stops.append(i)

    def add(self, name: str, succs: list[int]) -> int:
        node = len(self.names)
        self.names.append(name)
        self.succs[node] = succs
        return node

    def through(self, sources: list[int], target: int, name: str) -> int:
        """A fresh block that the edges sources -> target now pass through."""
        fresh = self.add(name, [target])
        for source in sources:
            self.succs[source] = [fresh if t == target else t for t in self.succs[source]]
        return fresh


def _predecessors(succs: Graph) -> Graph:
    preds: Graph = {node: [] for node in succs}
    for node, targets in succs.items():
        for target in targets:
            preds[target].append(node)
    return preds


def _reached(succs: Graph, entry: int) -> list[int]:
    """The nodes `entry` reaches, in reverse postorder (an explicit-stack depth-first walk)."""
    postorder, seen = [], {entry}
    stack = [(entry, iter(succs[entry]))]
    while stack:
        node, pending = stack[-1]
        for succ in pending:
            if succ not in seen:
                seen.add(succ)
                stack.append((succ, iter(succs[succ])))
                break
        else:
            stack.pop()
            postorder.append(node)
    return postorder[::-1]


class _Dominance:
    """dom(n) for every node `entry` reaches in `succs`, from the set equations iterated to a
    fixpoint (in reverse postorder, so a reducible graph settles in a few rounds)."""

    def __init__(self, succs: Graph, entry: int):
        order = _reached(succs, entry)
        self.bit = {node: 1 << i for i, node in enumerate(order)}
        preds = _predecessors(succs)
        everything = (1 << len(order)) - 1
        dom = {node: everything for node in order}
        dom[entry] = self.bit[entry]
        changed = True
        while changed:
            changed = False
            for node in order[1:]:
                meet = everything
                for pred in preds[node]:
                    if pred in dom:
                        meet &= dom[pred]
                new = meet | self.bit[node]
                if new != dom[node]:
                    dom[node], changed = new, True
        self.sets = dom
        self.owner_of = {mask: node for node, mask in dom.items()}  # masks differ per node

    def dominates(self, a: int, b: int) -> bool:
        return b in self.sets and a in self.bit and bool(self.sets[b] & self.bit[a])

    def immediate(self, node: int) -> int | None:
        """The strict dominator every other one dominates: the one whose set is n's without n."""
        if node not in self.sets:
            return None
        return self.owner_of.get(self.sets[node] & ~self.bit[node])


def _back_edges(succs: Graph) -> list[tuple[int, int]]:
    dom = _Dominance(succs, 0)
    return [(u, h) for u, targets in succs.items() for h in targets if dom.dominates(h, u)]


def _acyclic_without(succs: Graph, removed: list[tuple[int, int]]) -> bool:
    """Kahn's topological sort of the graph without the `removed` edges empties it."""
    gone = set(removed)
    indegree = dict.fromkeys(succs, 0)
    for node, targets in succs.items():
        for target in targets:
            indegree[target] += (node, target) not in gone
    ready = [node for node, count in indegree.items() if count == 0]
    done = 0
    while ready:
        node = ready.pop()
        done += 1
        for target in succs[node]:
            if (node, target) not in gone:
                indegree[target] -= 1
                if indegree[target] == 0:
                    ready.append(target)
    return done == len(succs)


def _natural_loop(preds: Graph, latch: int, header: int) -> set[int]:
    body, work = {header, latch}, [latch]
    while work:
        node = work.pop()
        if node == header:
            continue
        for pred in preds[node]:
            if pred not in body:
                body.add(pred)
                work.append(pred)
    return body


def _canonical(blocks: _Blocks, back: list[tuple[int, int]]) -> None:
    """One stop, then one latch per header, then one preheader per header (in place)."""
    if len(blocks.stops) > 1:
        end = blocks.add("(the one stop)", [])
        for stop in blocks.stops:
            blocks.succs[stop] = [end]
        blocks.stops = [end]
    sources: dict[int, list[int]] = {}
    for u, h in back:
        sources.setdefault(h, []).append(u)
    latches = {}
    for header, froms in sources.items():
        name = f"(latch of {blocks.names[header]})"
        latches[header] = blocks.through(froms, header, name) if len(froms) > 1 else froms[0]
    preds = _predecessors(blocks.succs)
    for header, latch in latches.items():
        outside = [p for p in preds[header] if p != latch]
        if len(outside) > 1:
            blocks.through(outside, header, f"(preheader of {blocks.names[header]})")


def unstructurable_reason(fn: Function) -> str | None:
    """Why `fn` (SSA) has no structured form lower-cf emits; None when it has one."""
    blocks = _Blocks(fn)
    if not blocks.succs:
        return None
    reached = set(_reached(blocks.succs, 0))
    if len(reached) != len(blocks.succs):
        dead = min(set(blocks.succs) - reached)
        return f"block {blocks.names[dead]} is unreachable"
    back = _back_edges(blocks.succs)
    if not _acyclic_without(blocks.succs, back):
        return "the CFG is irreducible (a cycle without a back edge to a dominator)"
    if any(h == 0 for _, h in back):
        return f"the entry block {blocks.names[0]} is a loop header"
    _canonical(blocks, back)
    preds = _predecessors(blocks.succs)
    loops: dict[int, tuple[set[int], int]] = {}  # header: (body, exit target)
    for latch, header in _back_edges(blocks.succs):
        body = _natural_loop(preds, latch, header)
        exits = {t for n in body for t in blocks.succs[n] if t not in body}
        name = blocks.names[header]
        if not exits:
            return f"loop {name} never exits"
        if len(exits) > 1:
            where = ", ".join(sorted(blocks.names[t] for t in exits))
            return f"loop {name} exits to several blocks ({where})"
        loops[header] = (body, exits.pop())
    # Loops of a reducible CFG nest: the innermost loop holding a block is the smallest.
    owner: dict[int, int] = {}  # block -> the innermost loop holding it
    parent: dict[int, int | None] = {}  # header -> the innermost loop around that loop
    for header in sorted(loops, key=lambda h: -len(loops[h][0])):
        parent[header] = owner.get(header)
        for node in loops[header][0]:
            owner[node] = header
    for inner, (_, exit_target) in loops.items():
        outer = parent[inner]
        while outer is not None:
            if exit_target not in loops[outer][0]:
                return (f"loop {blocks.names[inner]} leaves the enclosing loop "
                        f"{blocks.names[outer]} straight from its body")
            outer = parent[outer]
    for level in [None, *loops]:
        reason = _unnested_branch(blocks, _level(blocks, loops, owner, parent, level), level)
        if reason:
            return reason
    return None


def _level(blocks: _Blocks, loops, owner, parent, level: int | None) -> Graph:
    """The acyclic graph of one loop level (see the module docstring): its own blocks, each
    loop directly inside it as its header with one edge to that loop's exit, and no edge
    back to the level's header or out of the level."""
    inside = loops[level][0] if level is not None else None
    nested = [h for h in loops if parent[h] == level]
    own = [n for n in blocks.succs if owner.get(n) == level and n not in nested]
    nodes = {*own, *nested}

    def kept(targets: list[int]) -> list[int]:
        return [t for t in targets if t != level and (inside is None or t in inside)
                and t in nodes]  # (the last always holds in a reducible CFG)

    graph: Graph = {node: kept(blocks.succs[node]) for node in own}
    graph.update({header: kept([loops[header][1]]) for header in nested})
    return graph


def _unnested_branch(blocks: _Blocks, graph: Graph, level: int | None) -> str | None:
    """Why some two-way branch of a level's graph is not an if/else of two regions."""
    entry = 0 if level is None else level
    ends = [node for node, targets in graph.items() if not targets]
    reverse = _predecessors(graph) | {-1: ends}  # -1: a virtual exit after every end
    postdom = _Dominance(reverse, -1)
    dom = _Dominance(graph, entry)
    for node, targets in graph.items():
        if len(targets) < 2:
            continue  # a jump, a loop test or break, a latch, or an inner loop
        merge = postdom.immediate(node)
        if merge is None or merge == -1:
            return f"the sides of the branch in {blocks.names[node]} never meet"
        for side in targets:
            if side == merge:
                continue
            seen, work = {side}, [side]
            while work:
                for succ in graph[work.pop()]:
                    if succ != merge and succ not in seen:
                        seen.add(succ)
                        work.append(succ)
            stranger = min((n for n in seen if not dom.dominates(side, n)), default=None)
            if stranger is not None:
                return (f"block {blocks.names[stranger]} is entered both from the side of the "
                        f"branch in {blocks.names[node]} that starts at {blocks.names[side]} "
                        f"and from elsewhere")
    return None
