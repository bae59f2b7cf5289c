"""Wrong liveness analyses for the bug zoo, each one method away from `agxir.liveness`.

The first two get block live-in/live-out wrong; `KillFlagsDropped` and
`DefinitionsStayLive` keep every block set right and corrupt only the per-instruction
results (kill flags, the sets around each instruction) that RA and pressure consume."""

from __future__ import annotations

from agxir.liveness import Liveness


class PhiDestsLiveIn(Liveness):
    """Seed 004's old result: phi destinations count as live into their own block."""

    def _transfer(self, block, live_out):
        return super()._transfer(block, live_out) | self.phi_dests[block]


class BackEdgePhiSourcesDropped(Liveness):
    """Phi sources read on a retreating edge (loop latch -> header) are forgotten."""

    def _edge(self, pred, succ):
        if (pred, succ) in self.cfg.back_edges:
            return self.live_in[succ] - self.phi_dests[succ]
        return super()._edge(pred, succ)


class KillFlagsDropped(Liveness):
    """Only an instruction's first dying source (in source order) keeps its kill flag: an
    allocator reading these flags never frees the other registers. Block sets, pressure
    and the per-point sets are untouched, so only a per-instruction check catches it."""

    def _scan_block(self, block):
        super()._scan_block(block)
        for ins in block.instructions:
            killed = self.kills[ins]
            if len(killed) > 1:
                first = next(src.ref for src in ins.srcs if src.ref in killed)
                self.kills[ins] = frozenset({first})


class DefinitionsStayLive(Liveness):
    """The per-point sets (`live_before`/`live_after`) forget that a definition ends a
    live range going backwards: a value looks live above its definition in its block.
    Block sets and kill flags are untouched."""

    def _points(self, block):
        cached = self._points_cache.get(block)
        if cached is not None:
            return cached
        start = next((i for i, ins in enumerate(block.instructions) if not ins.is_phi),
                     len(block.instructions))
        entry = self.live_in[block] | self.phi_dests[block]
        points = [entry] * (len(block.instructions) + 1)
        live = set(self.live_out[block])
        points[len(block.instructions)] = self.live_out[block]
        for index in range(len(block.instructions) - 1, start - 1, -1):
            ins = block.instructions[index]
            live.update(src.ref for src in ins.srcs if src.value is not None)  # no discard
            points[index] = frozenset(live)
        self._points_cache[block] = points
        return points
