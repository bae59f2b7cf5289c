"""Branch/compare fusion (Mesa `agx_optimizer_if_cmp`, forward pass step 5), as a rule table.

isel branches on a boolean as `if_icmp %t, #0 cond=ueq inv=1` ("t != 0"). When `%t` is
`icmp`/`fcmp a, b cond=c inv=d`, the branch can test the compare directly:

    taken = (t == 0) XOR I = not(c XOR d) XOR I = c XOR (d XOR not I)

so it becomes `if_icmp`/`if_fcmp a, b cond=c inv=(d XOR not I)` with the same targets: one
rule per compare opcode, applied by `agxir.rewrite.apply_rules`. The compare stays for
`dce`, as other instructions may still read `%t`.
"""

from __future__ import annotations

from agxir.ir import Function
from agxir.passes.pass_ import Pass
from agxir.rewrite import Bind, Emit, Ins, Rule, Use, any_, apply_rules, defined_by, zero

BRANCH_FOR = {"icmp": "if_icmp", "fcmp": "if_fcmp"}


def inverted(b) -> int:
    """The fused branch's invert flag: the compare's, XOR NOT the branch's."""
    return b["compare_inv"] ^ (1 - b["branch_inv"])


def _rule(compare: str) -> Rule:
    tested = Ins(compare, (any_("a"), any_("b")),
                 {"cond": Bind("cond"), "inv": Bind("compare_inv")}, name="compare")
    branch = Ins("if_icmp", (defined_by(tested, "t"), zero()),
                 {"cond": "ueq", "inv": Bind("branch_inv")}, name="branch")
    return Rule(
        compare,
        branch,
        (Emit(BRANCH_FOR[compare], (Use("a"), Use("b")), {"cond": Bind("cond"), "inv": inverted}),),
        why="(t == 0) XOR I = cond XOR (d XOR NOT I)",
    )


RULES = tuple(_rule(compare) for compare in BRANCH_FOR)


def run(fn: Function) -> bool:
    return apply_rules(fn, RULES)


PASS = Pass("branch-cmp", "branch on an icmp/fcmp's sources directly (Mesa if_cmp fusion)", run)
