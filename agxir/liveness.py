"""Liveness of SSA values: live-in/live-out per block, last uses, register pressure.

This module owns the liveness analysis passes and the register allocator rely on. It follows
Mesa MR "speeds up and corrects liveness computation for AGX" (seed 004):

* Local sets are computed once per block: `defs` (every value the block defines, its phi
  destinations included) and `uses` (upward-exposed uses of the non-phi instructions).
* Phis sit on the incoming edges and act in parallel. A phi destination is defined at block
  entry, so it is never live into its own block; a phi source is used at the end of the
  matching predecessor, so it is live out of that predecessor (and live into it unless the
  predecessor defines it).
* The global sets are iterated to a fixpoint, live-out before live-in:
      live_out(B) = U over successors S of (live_in(S) - phi_dests(S)) | phi_srcs(B -> S)
      live_in(B)  = uses(B) | (live_out(B) - defs(B))
  with a worklist ordered by postorder, so a loop-free function takes one evaluation per block.

`live_in[B]` is what is live just before B's first non-phi instruction, minus B's own phi
destinations; `live_out[B]` is what is live on leaving B. Only SSA `Value`s are tracked.
Unreachable blocks are analysed like any other, by the same path-based definition as the
reference (`oracles.liveness_reference`): they only receive from their successors. There
SSA dominance is vacuous, so the verifier lets an instruction read its own result
(`b1: %s = iadd %s, #1 shift=0; jump -> b1` in a block nothing reaches); an instruction reads
its sources before it writes its destination, so such a %s is live into the block, live
after the instruction (the loop carries it to its next read) and not killed by it.

`liveness_live_in_first` is the order the seed replaced (local information recomputed on
every visit, live-in before live-out, worklist seeded in source order), kept to compare
costs; it returns its evaluation count and computes the same sets.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterable

from agxir.cfg import CFG
from agxir.ir import Block, Function, Instruction, Value

__all__ = ["Liveness", "liveness_live_in_first", "halves"]

EMPTY: frozenset[Value] = frozenset()


def halves(values: Iterable[Value]) -> int:
    """Register footprint in 16-bit halves (AGX registers are allocated in halves)."""
    return sum(value.size // 16 for value in values)


def _sources(ins: Instruction) -> list[Value]:
    return [src.ref for src in ins.srcs if isinstance(src.ref, Value)]


def _non_phi_start(block: Block) -> int:
    for index, ins in enumerate(block.instructions):
        if not ins.is_phi:
            return index
    return len(block.instructions)


class Liveness:
    """Liveness of every block and instruction of `fn` (see the module docstring).

    `live_in[B]`, `live_out[B]`: frozensets of Values. `kills[ins]`: the sources of `ins`
    dead after it (its last uses; a phi kills nothing). `iterations`: block evaluations the
    fixpoint took. `max_pressure`: the most 16-bit halves live at once, over every
    instruction (what is live after it, plus its destination if that is dead: a definition
    occupies a register even so) and every block entry (live_in and all phi destinations).
    `live_after(ins)`, `live_before(ins)`: the sets around one instruction.

    The fixpoint is split into small methods (`_local`, `_edge`, `_transfer`) so a variant
    of the rules is a one-method subclass; tests use that to check the reference catches
    the classic mistakes.
    """

    def __init__(self, fn: Function, cfg: CFG | None = None) -> None:
        self.fn = fn
        self.cfg = cfg if cfg is not None else CFG(fn)
        blocks = self.cfg.blocks

        self.phi_dests: dict[Block, frozenset[Value]] = {}
        # Keyed by edge, not by block: a phi source is a use on one edge only.
        self.phi_srcs: dict[tuple[Block, Block], frozenset[Value]] = {}
        self.defs: dict[Block, frozenset[Value]] = {}
        self.uses: dict[Block, frozenset[Value]] = {}
        for block in blocks:
            self._collect_phis(block)
        for block in blocks:
            self.defs[block], self.uses[block] = self._local(block)

        self.live_in: dict[Block, frozenset[Value]] = {block: EMPTY for block in blocks}
        self.live_out: dict[Block, frozenset[Value]] = {block: EMPTY for block in blocks}
        self.iterations = 0
        self._solve()

        self.kills: dict[Instruction, frozenset[Value]] = {}
        self.max_pressure = 0
        self._position: dict[Instruction, tuple[Block, int]] | None = None
        self._points_cache: dict[Block, list[frozenset[Value]]] = {}
        for block in blocks:
            self._scan_block(block)

    # --- the rules (override one of these to model a variant) -------------------------------

    def _collect_phis(self, block: Block) -> None:
        dests: set[Value] = set()
        for phi in block.phis():
            if phi.dest is not None:
                dests.add(phi.dest)
            for src, pred in zip(phi.srcs, phi.blocks, strict=False):
                value = src.value
                if value is not None:
                    key = (pred, block)
                    self.phi_srcs[key] = self.phi_srcs.get(key, EMPTY) | {value}
        self.phi_dests[block] = frozenset(dests)

    def _local(self, block: Block) -> tuple[frozenset[Value], frozenset[Value]]:
        """(defs, upward-exposed uses) of one block; phi sources are not uses here."""
        defs: set[Value] = set(self.phi_dests[block])
        uses: set[Value] = set()
        for ins in reversed(block.instructions[_non_phi_start(block) :]):
            if ins.dest is not None:
                defs.add(ins.dest)
                uses.discard(ins.dest)
            uses.update(_sources(ins))
        # Phi destinations are defined at entry, above every use in the block.
        return frozenset(defs), frozenset(uses - self.phi_dests[block])

    def _edge(self, pred: Block, succ: Block) -> frozenset[Value]:
        """What is live at the start of the edge pred -> succ.

        The phis of `succ` are a parallel copy on the edge: they kill their destinations
        and read this edge's sources. Subtracting the destinations is a no-op while live_in
        already excludes them, but keeps the rule right under Mesa's convention, where
        live_in is taken after the phis.
        """
        live = self.live_in[succ]
        dests = self.phi_dests[succ]
        if not dests:
            return live
        return (live - dests) | self.phi_srcs.get((pred, succ), EMPTY)

    def _transfer(self, block: Block, live_out: frozenset[Value]) -> frozenset[Value]:
        return self.uses[block] | (live_out - self.defs[block])

    # --- the fixpoint ---------------------------------------------------------------------------

    def _postorder(self) -> list[Block]:
        """A depth-first postorder from the entry, then from each block left unvisited in
        source order (unreachable ones): successors come before their block except over
        retreating edges. Nothing reachable depends on an unreachable block, so putting
        those last costs no extra evaluations."""
        succs = self.cfg.succs
        order: list[Block] = []
        visited: set[Block] = set()
        for root in self.cfg.blocks:
            if root in visited:
                continue
            visited.add(root)
            stack = [(root, iter(succs[root]))]
            while stack:
                block, pending = stack[-1]
                for succ in pending:
                    if succ not in visited:
                        visited.add(succ)
                        stack.append((succ, iter(succs[succ])))
                        break
                else:
                    stack.pop()
                    order.append(block)
        return order

    def _solve(self) -> None:
        order = self._postorder()
        rank = {block: i for i, block in enumerate(order)}
        # Always evaluating the pending block earliest in postorder means a block runs after
        # its successors whenever the graph allows, so changes travel a whole loop per pass.
        heap = list(range(len(order)))
        pending = set(heap)
        succs, preds = self.cfg.succs, self.cfg.preds
        while heap:
            i = heapq.heappop(heap)
            pending.discard(i)
            block = order[i]
            self.iterations += 1
            out: set[Value] = set()
            for succ in succs[block]:
                out |= self._edge(block, succ)
            live_out = frozenset(out)
            self.live_out[block] = live_out
            live_in = self._transfer(block, live_out)
            if live_in == self.live_in[block]:
                continue
            self.live_in[block] = live_in
            for pred in preds[block]:
                j = rank[pred]
                if j not in pending:
                    pending.add(j)
                    heapq.heappush(heap, j)

    # --- per instruction ------------------------------------------------------------------------

    def _scan_block(self, block: Block) -> None:
        """Kills and pressure, walking the block backwards from live_out."""
        instructions = block.instructions
        start = _non_phi_start(block)
        live = set(self.live_out[block])
        pressure = halves(live)
        best = 0
        kills = self.kills
        for index in range(len(instructions) - 1, start - 1, -1):
            ins = instructions[index]
            dest = ins.dest
            sources = _sources(ins)
            # Kills are the sources dead after the instruction. An instruction reads before
            # it writes, so a source that is also the destination (only possible in
            # unreachable code) is killed only if the value it writes is dead too.
            killed = [value for value in sources if value not in live]
            if dest is not None:
                if dest in live:
                    best = max(best, pressure)
                    live.discard(dest)
                    pressure -= dest.size // 16
                else:
                    # A dead definition still occupies a register at the instruction.
                    best = max(best, pressure + dest.size // 16)
            else:
                best = max(best, pressure)
            kills[ins] = frozenset(killed) if killed else EMPTY
            # A value read twice by one instruction is one register, live once before it.
            born = {value for value in sources if value not in live}
            if born:
                live.update(born)
                pressure += halves(born)
        for index in range(start):
            kills[instructions[index]] = EMPTY
        entry = self.live_in[block] | self.phi_dests[block]
        self.max_pressure = max(self.max_pressure, best, halves(entry))

    def _points(self, block: Block) -> list[frozenset[Value]]:
        """points[p] is what is live just before instruction p (points[len] = live_out);
        positions of phis hold the block entry set."""
        cached = self._points_cache.get(block)
        if cached is not None:
            return cached
        instructions = block.instructions
        start = _non_phi_start(block)
        points: list[frozenset[Value]] = [self.live_in[block] | self.phi_dests[block]] * (
            len(instructions) + 1
        )
        live = set(self.live_out[block])
        points[len(instructions)] = self.live_out[block]
        for index in range(len(instructions) - 1, start - 1, -1):
            ins = instructions[index]
            if ins.dest is not None:
                live.discard(ins.dest)
            live.update(_sources(ins))
            points[index] = frozenset(live)
        self._points_cache[block] = points
        return points

    def _locate(self, ins: Instruction) -> tuple[Block, int]:
        # Built on first use: most clients only read the block sets and kills.
        if self._position is None:
            self._position = {
                ins: (block, index)
                for block in self.cfg.blocks
                for index, ins in enumerate(block.instructions)
            }
        return self._position[ins]

    def live_after(self, ins: Instruction) -> frozenset[Value]:
        """Values live just after `ins`. All phis of a block share one point, the block
        entry, where live_in and every phi destination are live."""
        block, index = self._locate(ins)
        points = self._points(block)
        return points[index] if ins.is_phi else points[index + 1]

    def live_before(self, ins: Instruction) -> frozenset[Value]:
        """Values live just before `ins` (for a phi: the block entry, as `live_after`)."""
        block, index = self._locate(ins)
        return self._points(block)[index]


def liveness_live_in_first(fn: Function, cfg: CFG | None = None, reverse: bool = False) -> int:
    """Block evaluations the pre-seed algorithm takes on `fn` (see `live_in_first`)."""
    return live_in_first(fn, cfg, reverse)[2]


def live_in_first(
    fn: Function, cfg: CFG | None = None, reverse: bool = False
) -> tuple[dict[Block, frozenset[Value]], dict[Block, frozenset[Value]], int]:
    """The order the seed replaced, with today's set definitions: the worklist starts with
    every block in source order and runs first-in first-out; each visit rescans the block
    from its current live_out to get live_in, then pushes into the predecessors' live_out.
    `reverse` seeds it in reverse source order instead, which is what Mesa's
    agx_compute_liveness does (every block pushed at the head, popped from the head,
    predecessors pushed at the tail). Returns (live_in, live_out, evaluations); the sets equal
    `Liveness`'s."""
    cfg = cfg if cfg is not None else CFG(fn)
    blocks = list(reversed(cfg.blocks)) if reverse else cfg.blocks
    live_in: dict[Block, frozenset[Value]] = {block: EMPTY for block in blocks}
    live_out: dict[Block, set[Value]] = {block: set() for block in blocks}
    # The edge sources are part of the old per-predecessor step, not a local set: the old
    # code walked the phis on every visit too.
    queue = deque(blocks)
    queued = set(blocks)
    evaluations = 0
    while queue:
        block = queue.popleft()
        queued.discard(block)
        evaluations += 1
        live = set(live_out[block])
        phis: list[Instruction] = []
        for ins in reversed(block.instructions):
            if ins.is_phi:
                phis.append(ins)
                continue
            if ins.dest is not None:
                live.discard(ins.dest)
            live.update(ins.uses())
        dests = {phi.dest for phi in phis if phi.dest is not None}
        live -= dests
        live_in[block] = frozenset(live)
        for pred in cfg.preds[block]:
            incoming = set(live)
            for phi in phis:
                for src, where in zip(phi.srcs, phi.blocks, strict=False):
                    if where is pred and src.value is not None:
                        incoming.add(src.value)
            target = live_out[pred]
            if not incoming <= target:
                target |= incoming
                if pred not in queued:
                    queued.add(pred)
                    queue.append(pred)
    return live_in, {block: frozenset(out) for block, out in live_out.items()}, evaluations
