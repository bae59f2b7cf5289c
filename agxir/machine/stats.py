"""Mesa's statistics line for a function (agx_calc_stats / the old shader-db line).

`instrs`: instructions (pseudo-ops such as phis and parallel copies count, as they are
still in the program); `halfregs`: one past the highest 16-bit half a register names, the
register-file footprint occupancy is read from (r0l counts: it is a register); `threads`:
the occupancy for that footprint; `copies`: parallel copies plus register-to-register
moves, what out-of-SSA and RA cost. For an SSA function, halfregs is the liveness demand.
"""

from __future__ import annotations

from dataclasses import dataclass

from agxir.ir import Function, Register
from agxir.machine.occupancy import threads_for_halves


@dataclass(frozen=True)
class Stats:
    instrs: int
    halfregs: int
    threads: int
    copies: int

    def line(self) -> str:
        return (f"{self.instrs} instrs, {self.halfregs} halfregs, {self.threads} threads, "
                f"{self.copies} copies")


def _is_register_move(ins) -> bool:
    return (
        ins.name == "bitop" and ins.attrs.get("tt") == 0xA
        and isinstance(ins.srcs[0].ref, Register) and isinstance(ins.dest, Register)
    )


def function_stats(fn: Function) -> Stats:
    instructions = list(fn.instructions())
    if fn.level == "ssa" or fn.level == "exec":
        from agxir.liveness import Liveness

        halfregs = Liveness(fn).max_pressure
    else:
        halves = [
            ref.half + ref.size // 16
            for ins in instructions
            for ref in [src.ref for src in ins.srcs] + ins.defs()
            if isinstance(ref, Register)
        ]
        halfregs = max(halves, default=0)
    copies = sum(1 for ins in instructions if ins.name == "parallel_copy" or _is_register_move(ins))
    return Stats(len(instructions), halfregs, threads_for_halves(halfregs), copies)
