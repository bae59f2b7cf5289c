"""Compare/select fusion (Mesa `agx_optimizer_cmpsel`, mesa#7539) and two heuristic variants,
as rule tables.

NIR has no fused compare-and-select, so `bcsel(a < b, x, y)` reaches the backend as

    %t = fcmp a, b cond=lt inv=I          ; t = (lt(a, b) XOR I) ? 1 : 0
    %r = icmpsel %t, #0, x, y cond=ueq    ; r = (t == 0) ? x : y

and the rewrite turns the select into `fcmpsel a, b, ..., cond=lt`. Since `t == 0` exactly
when `lt(a, b) XOR I` is false, `r = (lt XOR I) ? y : x`; `*cmpsel` has no invert bit, so
the payloads are swapped EXACTLY WHEN the compare is not inverted (I = 0):

    I = 0:  r = lt ? y : x   ->  fcmpsel a, b, y, x
    I = 1:  r = lt ? x : y   ->  fcmpsel a, b, x, y

(The historic bug swaps on the *select's* invert flag, which an icmpsel never sets.)

Each case is one rule (icmp/fcmp x inv 0/1), applied by `agxir.rewrite.apply_rules`. The
compare stays: other instructions may read `%t`, and `dce` removes it when none do. Each
select is rewritten at most once per run, as in Mesa's single forward walk.

Three variants share the rules and differ only in the precondition (the blog post's
heuristics; "cmpsel" is what Mesa merged):
- `cmpsel` (heuristic 4): always.
- `cmpsel-uniform-compare` (heuristic 1): both compare sources are uniforms or immediates,
  so fusing adds no register pressure.
- `cmpsel-uniform-select` (heuristic 3): both payloads are uniforms or immediates, visited
  backward as the blog's backward-pass version.
"""

from __future__ import annotations

from agxir.ir import Function, Instruction, Operand
from agxir.passes.pass_ import Pass
from agxir.rewrite import Bind, Emit, Ins, Rule, Use, any_, apply_rules, defined_by, match_at, zero

SELECT_FOR = {"icmp": "icmpsel", "fcmp": "fcmpsel"}


def select_on(compare: str, inv: int) -> Ins:
    """`icmpsel %t, #0, x, y cond=ueq` where `%t = <compare> a, b cond=c inv=<inv>`."""
    tested = Ins(compare, (any_("a"), any_("b")), {"cond": Bind("cond"), "inv": inv}, name="compare")
    return Ins(
        "icmpsel",
        (defined_by(tested, "t"), zero(), any_("x"), any_("y")),
        {"cond": "ueq"},
        name="select",
    )


def rules(precondition=None) -> tuple[Rule, ...]:
    """The four fusion rules, each guarded by `precondition` (None: always)."""
    table = []
    for compare, select in SELECT_FOR.items():
        for inv, (first, second) in ((0, ("y", "x")), (1, ("x", "y"))):
            table.append(
                Rule(
                    f"{compare}-inv{inv}-{'swap' if inv == 0 else 'keep'}",
                    select_on(compare, inv),
                    (Emit(select, (Use("a"), Use("b"), Use(first), Use(second)),
                          {"cond": Bind("cond")}),),
                    precondition,
                    why=f"t == 0 iff cond XOR {inv} is false, so the select picks "
                    f"{'y when cond holds: swap' if inv == 0 else 'x when cond holds: keep'}",
                )
            )
    return tuple(table)


def fusable(ins: Instruction, defs) -> Instruction | None:
    """The compare to fuse into `ins`, when `ins` is `icmpsel t, #0, x, y cond=ueq` on a compare."""
    for rule in RULES:
        found = match_at(rule, ins, defs)
        if found is not None:
            return found.bindings["compare"]
    return None


def _in_sgpr(operand: Operand) -> bool:
    return operand.is_uniform or operand.is_immediate


def always(select: Instruction, compare: Instruction) -> bool:
    return True


def uniform_compare(select: Instruction, compare: Instruction) -> bool:
    return all(_in_sgpr(src) for src in compare.srcs)


def uniform_select(select: Instruction, compare: Instruction) -> bool:
    return all(_in_sgpr(src) for src in select.srcs[2:4])


# The preconditions look the heuristics up when they run, so tests can replace them.
def _uniform_compare(b) -> bool:
    return uniform_compare(b.root, b["compare"])


def _uniform_select(b) -> bool:
    return uniform_select(b.root, b["compare"])


RULES = rules()
UNIFORM_COMPARE_RULES = rules(_uniform_compare)
UNIFORM_SELECT_RULES = rules(_uniform_select)


def run(fn: Function) -> bool:
    return apply_rules(fn, RULES)


def run_uniform_compare(fn: Function) -> bool:
    return apply_rules(fn, UNIFORM_COMPARE_RULES)


def run_uniform_select(fn: Function) -> bool:
    return apply_rules(fn, UNIFORM_SELECT_RULES, order="backward")


PASS = Pass("cmpsel", "fuse icmp/fcmp into the icmpsel testing it (Mesa; heuristic 4)", run)
UNIFORM_COMPARE = Pass(
    "cmpsel-uniform-compare",
    "cmpsel fusion only when both compare sources are uniforms or immediates (heuristic 1)",
    run_uniform_compare,
)
UNIFORM_SELECT = Pass(
    "cmpsel-uniform-select",
    "cmpsel fusion only when both selected values are uniforms or immediates, "
    "visited backward (heuristic 3)",
    run_uniform_select,
)
