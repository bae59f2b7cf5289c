"""`not` fusions (Mesa forward step 8 and the backward `not` rule) and the inverted branch
(forward step 4, IfInverted), as rule tables.

A `not` is `bitop x, #0 tt=0x5`. A bitop's truth table bit k is its result for
`(a | b << 1) == k`, so reading `not x` in source a swaps the table's columns for a
(`tt' = ((tt & 5) << 1) | ((tt & 0xA) >> 1)`) and in source b swaps its rows
(`tt' = ((tt & 3) << 2) | (tt >> 2)`): `not-fuse` makes `and(not x, y)` into `andn1 x, y`,
`xor(not x, not y)` into `xor x, y`, and so on. x must have the not's width: `not` of a
narrower x inverts the extended value, and x is read without its `.abs` (a no-op in the
not, but a zero-extension in a wider bitop, where t is sign-extended).

`not-rev` (backward) turns `not(bitop a, b tt)` into `bitop a, b (tt ^ 0xF)` (nand, nor,
xnor, ...) when the inner bitop's only use is the not; the inner bitop stays for `dce`.

`if-not` turns a branch on `xor t, #1` into the inverted branch on t when t is an icmp or
fcmp result (0 or 1): Mesa assumes every branch condition is a boolean; the model requires
it to be one, so the rule holds for every value it can meet.
"""

from __future__ import annotations

from agxir.ir import Function
from agxir.passes.pass_ import Pass
from agxir.passes.uses import single_use, use_counts
from agxir.rewrite import Bind, Emit, Ins, Rule, Use, any_, apply_rules, defined_by, imm, zero

NOT = Ins("bitop", (any_("x", size="w", neg=False), zero()), {"tt": 0x5}, size="w", name="not")


def swap_a(b) -> int:
    tt = b["tt"]
    return ((tt & 5) << 1) | ((tt & 0xA) >> 1)


def swap_b(b) -> int:
    tt = b["tt"]
    return ((tt & 3) << 2) | (tt >> 2)


def _other(name: str):
    return any_(name)


FUSE_RULES = (
    Rule(
        "not-a",
        Ins("bitop", (defined_by(NOT, "t"), _other("y")), {"tt": Bind("tt")}, name="bitop"),
        (Emit("bitop", (Use("x", abs=False), Use("y")), {"tt": swap_a}),),
        why="reading not x in source a swaps the truth table's a columns",
    ),
    Rule(
        "not-b",
        Ins("bitop", (_other("y"), defined_by(NOT, "t")), {"tt": Bind("tt")}, name="bitop"),
        (Emit("bitop", (Use("y"), Use("x", abs=False)), {"tt": swap_b}),),
        why="reading not x in source b swaps the truth table's b rows",
    ),
)

INNER = Ins("bitop", (any_("a"), any_("b")), {"tt": Bind("tt")}, size="w", name="inner")


def rev_rules(precondition=None) -> tuple[Rule, ...]:
    return (
        Rule(
            "not-of-bitop",
            Ins("bitop", (defined_by(INNER, "t"), zero()), {"tt": 0x5}, size="w", name="not"),
            (Emit("bitop", (Use("a"), Use("b")), {"tt": lambda b: b["tt"] ^ 0xF}),),
            precondition,
            why="not(f(a, b)) has the complemented truth table",
        ),
    )


# What the audit proves: the rewrite for every use count (the single-use guard `run_rev`
# adds only keeps the inner bitop from being computed twice).
REV_RULES = rev_rules()

COMPARE = Ins(("icmp", "fcmp"), (any_(), any_()), name="compare")
XOR_ONE = Ins("bitop", (defined_by(COMPARE, "t"), imm(bits=1)), {"tt": 0x6}, name="xor")

IF_NOT_RULES = (
    Rule(
        "xor-one",
        Ins("if_icmp", (defined_by(XOR_ONE, "c"), imm("zero", bits=0)),
            {"cond": "ueq", "inv": Bind("inv")}, name="branch"),
        (Emit("if_icmp", (Use("t"), Use("zero")), {"cond": "ueq", "inv": lambda b: 1 - b["inv"]}),),
        why="t is 0 or 1, so (t XOR 1) == 0 exactly when t != 0",
    ),
)


def run_fuse(fn: Function) -> bool:
    # Both sources of one bitop may read nots: rewrite a root until no rule applies.
    return apply_rules(fn, FUSE_RULES, once_per_root=False)


def run_rev(fn: Function) -> bool:
    counts = use_counts(fn)
    return apply_rules(fn, rev_rules(single_use(counts, "t")), order="backward")


def run_if_not(fn: Function) -> bool:
    return apply_rules(fn, IF_NOT_RULES)


FUSE = Pass("not-fuse", "read x in a bitop source instead of not x, adjusting the truth "
            "table (Mesa forward not fusion)", run_fuse)
REV = Pass("not-rev", "fold a not into the single-use bitop it inverts (Mesa backward)", run_rev)
IF_NOT = Pass("if-not", "branch on t inverted instead of on xor t, #1 for a compare result t "
              "(Mesa if_not)", run_if_not)
