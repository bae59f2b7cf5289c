"""`agxfuzz liveness`: the live-in and live-out values of every block of an SSA function
and its maximum register pressure, from agxir.liveness, checked against the reference.

The output is one line per set, stable so FileCheck can match it (docs/goldens.md):

    live-in entry: -
    live-out entry: %tid %zero
    ...
    max-pressure: 6

Values are listed in the order the function defines them. When agxir.liveness and the
path-based reference (oracles.liveness_reference) disagree anywhere (a block's sets, an
instruction's kills, the sets between instructions, the pressure), the sets are still
printed and the command exits 1 with the first difference.
"""

from __future__ import annotations

from agxir.ir import SSA
from agxir.liveness import Liveness
from fuzz.commands.errors import UsageError, UserError
from fuzz.commands.loaders import load_function
from oracles.liveness_reference import compare_liveness


def _names(values, order: dict) -> str:
    if not values:
        return "-"
    return " ".join(f"%{value.name}" for value in sorted(values, key=order.__getitem__))


def run_liveness(args) -> int:
    fn = load_function(args.file, interpreted=False)
    if fn.level != SSA:
        raise UsageError(f"{args.file}: liveness is computed for SSA functions; this one is "
                         f"func.{fn.level}")
    order = {}
    for ins in fn.instructions():
        for value in ins.defs():
            order.setdefault(value, len(order))
    found = Liveness(fn)
    for block in fn.blocks:
        print(f"live-in {block.name}: {_names(found.live_in[block], order)}")
        print(f"live-out {block.name}: {_names(found.live_out[block], order)}")
    print(f"max-pressure: {found.max_pressure}")
    difference = compare_liveness(fn, found)
    if difference:
        raise UserError(f"{args.file}: agxir.liveness disagrees with the reference: "
                        f"{difference}")
    return 0
