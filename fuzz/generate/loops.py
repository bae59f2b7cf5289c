"""The program builder's loops and guarded back edges (a mixin of `program._Program`).

A loop's preheader computes its counter's bound and start (`loop_setup`), its latch the
counter's next value and the loop-carried values (`loop_step`: integer rows from the phi,
half of the narrow ones a float accumulator of ordinary floats, some saturated beside with
the phi kept, Mesa FsatWithPhi), and its test branches while counter < bound (`loop_test`,
often in the fusable `if_icmp t, #0` form). An unstructured region's back edge is taken
only while the region counter is below its bound (`guard`). `LoopState` is one loop's
counter while the walk builds it. The module docstring of `fuzz.generate.program` says why
every loop ends.
"""

from __future__ import annotations

from agxir.ir import Instruction, Operand
from agxir.opcodes import OPCODES
from fuzz.generate import pressure_shapes as pressure
from fuzz.generate.cfg_shapes import BRANCH, Loop
from fuzz.generate.observe import keep
from fuzz.generate.operations import IMM0, immediate
from fuzz.generate.optimizer_shapes import ordinary_float
from fuzz.generate.phi_kinds import CARRIED

R = OPCODES
# Rows that can compute a loop-carried value from the phi (the phi as the first source).
_CARRY_ROWS = {
    16: ("iadd", "bitop", "imul", "fadd", "fmul", "imad", "ffma", "asr"),
    32: ("iadd", "bitop", "imul", "fadd", "fmul", "imad", "ffma", "asr"),
    64: ("iadd", "bitop", "imul", "imad", "asr", "bfi"),
}
# A float accumulator adds: a product with its start (often zero or tiny: an integer's bits
# as a float) would stay there.
_FLOAT_CARRY_ROWS = ("fadd", "ffma")


class LoopState:
    __slots__ = ("loop", "phi", "start", "bound", "next", "size")

    def __init__(self, loop: Loop):
        self.loop = loop
        self.phi: Instruction | None = None
        self.start: Operand = IMM0
        self.bound: Operand = IMM0
        self.next: Operand = IMM0
        self.size = 32


class LoopEmitter:
    """The loop and guard methods of the program builder; they use its emitter's state
    (`emit`, `below`, the pools, `phis`, `phi_next`, `shape`) and are tested through it."""

    def exec_header(self, state: LoopState) -> bool:
        """A top-level do-while whose header starts an if: where exec_cmp_shapes' loop phi
        tells the unbounded walk apart (only there does the walk reach a compare of another
        block without crossing an exec row), so the header gets a phi for it. Top-level:
        its preheader is on every path (dominates the stop block), so in no if or loop."""
        loop, f = state.loop, self.f
        return (loop.pre in self.on_every_path and not loop.top_tested
                and self.shape.roles[loop.header] == BRANCH and f.branch_fusion and f.compares)  # fmt: skip

    def note_counter(self, state: LoopState, op: Operand) -> None:
        """A 32-bit counter that starts at #0 or `u & 3` stays below 8 (bounds are at most
        7): an element index for the array accesses of the loop body."""
        if state.size == 32 and (state.start is IMM0 or state.start.value is not None):
            self.counters.append((op, 8))

    def loop_setup(self, state: LoopState) -> None:
        """At the end of the preheader: the bound and the start of the counter."""
        below = self.below
        size = state.size
        narrow = [u for s in (16, 32) if s <= size for u in self.scalars[s]]
        r = below(3)
        if r == 1 and narrow:
            u = narrow[below(len(narrow))]
            state.bound = self.emit(R["bitop"], size, [u, immediate(7)], {"tt": 0x8})
        elif r == 2:
            masked = self.emit(R["bitop"], 32, [self.tid(), immediate(3)], {"tt": 0x8})
            state.bound = self.emit(R["iadd"], 32, [masked, immediate(1)], {"shift": 0})
        else:
            # exec_cmp_shapes' loop phi shows only from the second iteration on
            state.bound = immediate(1 + below(6) + (state.loop.header in self.exec_headers))
        r = below(3)
        same = self.scalars[size]
        if r == 1 and same:
            state.start = same[below(len(same))]
        elif r == 2 and narrow:
            u = narrow[below(len(narrow))]
            state.start = self.emit(R["bitop"], size, [u, immediate(3)], {"tt": 0x8})
        else:
            state.start = IMM0

    def loop_step(self, state: LoopState, b: int) -> None:
        """At the end of the latch: the counter's next value and the carried values."""
        counter = Operand(state.phi.dest)
        one = immediate(1)
        srcs = [counter, one] if self.below(3) else [one, counter]
        state.next = self.emit(R["iadd"], state.size, srcs, {"shift": 0})
        for group in self.rotations.get(state.loop.header, ()):
            broken = pressure.broken_rotation(self, group)
            if broken is not None:
                self.phi_next[id(group[broken[0]])] = broken[1]
        for phi, kind in self.phis[state.loop.header]:
            inverse = self.exec_phis.get(id(phi))
            if inverse is not None:  # exec_cmp_shapes._phi: the preheader's compare, inverted
                srcs, attrs = inverse
                attrs = {**attrs, "inv": attrs["inv"] ^ 1}
                self.phi_next[id(phi)] = self.emit(R["icmp"], phi.dest.size, srcs, attrs)
                continue
            if kind != CARRIED or not self.below(8):
                continue
            size = phi.dest.size
            accumulator = size != 64 and self.f.floats and self.below(2)
            if accumulator:
                # Half the time a float accumulator, of ordinary floats (an integer's bits
                # as a float are mostly tiny and positive, which saturating leaves alone).
                row = R[_FLOAT_CARRY_ROWS[self.below(2)]]
                srcs = [Operand(phi.dest)] + [ordinary_float(self, size) for _ in row.srcs[1:]]
                carried = self.emit(row, size, srcs, {})
            else:
                rows = [name for name in _CARRY_ROWS[size] if self.allowed(name)] or ["iadd"]
                row = R[rows[self.below(len(rows))]]
                carried = self.generic(row, size, Operand(phi.dest))
            self.phi_next[id(phi)] = carried
            float_row = row.name in ("fadd", "fmul", "ffma")
            if float_row and self.f.modifiers and (accumulator or self.below(3) == 0):
                # Mesa FsatWithPhi: the carried value also saturated; the back edge's phi
                # reads it unsaturated, and its value (the last iteration's, from the one
                # before) is kept, so a saturation fused into the producer shows.
                self.emit(R["fmov"], size, [carried], {}, sat=True)
                keep(self, Operand(phi.dest))

    def allowed(self, name: str) -> bool:
        f = self.f
        if name in ("fadd", "fmul", "ffma"):
            return f.floats
        if name in ("bitop", "asr", "bfi"):
            return f.bit_ops
        return f.int_arith

    def loop_test(self, value: Operand, bound: Operand, continue_first: bool, targets) -> None:
        """Branch to the continuing target while value < bound (unsigned)."""
        r = self.below(3) if self.f.branch_fusion else 0
        flip = 0 if continue_first else 1
        if r == 1:
            inv = self.below(2)
            size = 16 if 16 in self.sizes and self.below(2) else 32
            t = self.emit(R["icmp"], size, [value, bound], {"cond": "ult", "inv": inv})
            attrs = {"cond": "ueq", "inv": flip ^ inv ^ 1}
            self.branch("if_icmp", [t, IMM0], attrs, targets)
        elif r == 2:
            self.branch("if_icmp", [bound, value], {"cond": "ugt", "inv": flip}, targets)
        else:
            self.branch("if_icmp", [value, bound], {"cond": "ult", "inv": flip}, targets)

    def guard(self, b: int, targets: list[int]) -> None:
        """Take the back edge only while the region counter is below its bound."""
        region = self.shape.region_of[b]
        back = next(t for s, t in region.back_edges if s == b)
        c_in = self.c_in[b]
        self.c_out[b] = self.emit(R["iadd"], 32, [c_in, immediate(1)], {"shift": 0})
        bound = self.region_bound[id(region)]
        back_first = targets[0] == back
        blocks = [self.blocks[t] for t in targets]
        if self.tested is not None or self.below(3):
            t = self.tested if self.tested is not None else self.compare_result()
            g = self.emit(R["icmpsel"], t.ref.size, [c_in, bound, t, IMM0], {"cond": "ult"})
            self.branch("if_icmp", [g, IMM0], {"cond": "ueq", "inv": int(back_first)}, blocks)
        else:
            self.branch(
                "if_icmp", [c_in, bound], {"cond": "ult", "inv": int(not back_first)}, blocks
            )
