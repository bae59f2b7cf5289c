"""Wrong liveness analyses for the bug zoo, each one method away from `agxir.liveness`."""

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
