"""A wrong cmpsel fusion, to show `agxfuzz run --pass` catching it.

This is the blog post's version (seed 000): it swaps the select operands when the
*select's* invert flag is clear. An icmpsel has no invert flag, so it always swaps, which is
wrong exactly when the compare it fuses is inverted. The right rule swaps when the
*compare* is not inverted.

    agxfuzz run --pass examples/wrong_cmpsel.py:wrong_cmpsel --time 30
"""

from agxir.ir import Function
from agxir.opcodes import OPCODES
from agxir.passes.cmpsel import fusable
from agxir.passes.pass_ import definitions


def wrong_cmpsel(fn: Function) -> bool:
    defs = definitions(fn)
    changed = False
    for ins in list(fn.instructions()):
        compare = fusable(ins, defs)
        if compare is None:
            continue
        x, y = ins.srcs[2], ins.srcs[3]
        if not ins.attrs.get("inv", 0):  # the bug: the select's flag, not the compare's
            x, y = y, x
        ins.opcode = OPCODES["icmpsel" if compare.name == "icmp" else "fcmpsel"]
        ins.srcs = [compare.srcs[0], compare.srcs[1], x, y]
        ins.attrs = {"cond": compare.attrs["cond"]}
        changed = True
    return changed
