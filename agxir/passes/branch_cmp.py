"""Branch/compare fusion (Mesa `agx_optimizer_if_cmp`, forward pass step 5).

isel branches on a boolean as `if_icmp %t, #0 cond=ueq inv=1` ("t != 0"). When `%t` is
`icmp`/`fcmp a, b cond=c inv=d`, the branch can test the compare directly:

    taken = (t == 0) XOR I = not(c XOR d) XOR I = c XOR (d XOR not I)

so it becomes `if_icmp`/`if_fcmp a, b cond=c inv=(d XOR not I)` with the same targets.
The compare stays for `dce`, as other instructions may still read `%t`.
"""

from __future__ import annotations

from agxir.ir import Function
from agxir.opcodes.table import OPCODES
from agxir.passes.pass_ import Pass, compared_value, definitions

BRANCH_FOR = {"icmp": "if_icmp", "fcmp": "if_fcmp"}


def run(fn: Function) -> bool:
    defs = definitions(fn)
    changed = False
    for block in fn.blocks:
        branch = block.terminator
        if branch is None or branch.name != "if_icmp":
            continue
        compare = compared_value(branch, defs)
        if compare is None:
            continue
        inv = compare.attrs["inv"] ^ (1 - branch.attrs["inv"])
        branch.opcode = OPCODES[BRANCH_FOR[compare.name]]
        branch.srcs = [compare.srcs[0], compare.srcs[1]]
        branch.attrs = {"cond": compare.attrs["cond"], "inv": inv}
        changed = True
    return changed


PASS = Pass("branch-cmp", "branch on an icmp/fcmp's sources directly (Mesa if_cmp fusion)", run)
