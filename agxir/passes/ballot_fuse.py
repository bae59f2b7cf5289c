"""Ballot fusion (Mesa `agx_optimizer_ballot`, forward step 7), as a rule table.

NIR's `ballot(a < b)` reaches the backend as a compare and a ballot of its result:

    %t = icmp a, b cond=c inv=I          ; t = (c(a, b) XOR I) ? 1 : 0
    %m = ballot %t                       ; bit k: thread k runs this with t != 0

and the rewrite reads the compare inside the ballot, `%m = icmp_ballot a, b cond=c inv=I`
(fcmp likewise). Per thread, `t != 0` is exactly `c(a, b) XOR I`, so every thread sets the
same bit and the masks are equal in every wave: that per-thread fact is what the audit
proves (oracles/smt makes a ballot an uninterpreted function of the thread's condition).

The compare stays for `dce`: when something else reads `%t` it is still needed, and the
ballot is fused all the same (Mesa BallotMultipleUses). Only an SSA value defined by a
compare is fused, never an immediate or a uniform: Mesa's fusion once looked the
definition up by the operand's number without checking it was an SSA value, so
`ballot #5` became the ballot of whatever compare defined value 5 (BallotConstant; the
zoo's `ballot-constant`). The fused ballot runs where the ballot ran, so the threads it
sees are the same.
"""

from __future__ import annotations

from agxir.ir import Function
from agxir.passes.pass_ import Pass
from agxir.rewrite import Bind, Emit, Ins, Rule, Use, any_, apply_rules, defined_by

FUSED = {"icmp": "icmp_ballot", "fcmp": "fcmp_ballot"}


def _ballot_of(compare: str) -> Ins:
    tested = Ins(compare, (any_("a"), any_("b")), {"cond": Bind("cond"), "inv": Bind("inv")},
                 name="compare")
    return Ins("ballot", (defined_by(tested, "t"),), name="ballot")


RULES = tuple(
    Rule(
        compare,
        _ballot_of(compare),
        (Emit(fused, (Use("a"), Use("b")), {"cond": Bind("cond"), "inv": Bind("inv")}),),
        why="t != 0 exactly when cond(a, b) XOR inv: every thread sets the same bit",
    )
    for compare, fused in FUSED.items()
)


def run(fn: Function) -> bool:
    return apply_rules(fn, RULES)


PASS = Pass("ballot-fuse", "read the compare inside the ballot of its result: "
            "icmp_ballot/fcmp_ballot (Mesa ballot fusion)", run)
