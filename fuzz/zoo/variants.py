"""The bug zoo's wrong variants: each a small, documented change to a pass or analysis,
drawn from the seeds and Mesa's history.

Rewrite-pass variants are the pass's rule table with one rule changed, applied by the same
matcher, so the audit can refute them as well as a campaign can catch them. Each variant's
`run` function is importable (`--pass fuzz.zoo.variants:NAME`), which is what replay
commands name.
"""

from __future__ import annotations

from agxir.ir import Function, Instruction
from agxir.opcodes.spec import INT
from agxir.passes import branch_cmp, cmpsel, copyprop, dce
from agxir.rewrite import Bind, Emit, Ins, Rule, Use, any_, apply_rules, defined_by, slot_spec, zero
from fuzz.passes_under_test import PassUnderTest
from fuzz.zoo.analyses import (
    BackEdgePhiSourcesDropped,
    DefinitionsStayLive,
    KillFlagsDropped,
    PhiDestsLiveIn,
)
from fuzz.zoo.optimizer_variants import OPTIMIZER_VARIANTS
from fuzz.zoo.runner import Variant

# --- cmpsel -------------------------------------------------------------------------------------


def fusion_rule(compare: str, inv: int, swap: bool, select: Ins | None = None) -> Rule:
    pattern = select or cmpsel.select_on(compare, inv)
    first, second = ("y", "x") if swap else ("x", "y")
    return Rule(
        f"{compare}-inv{inv}",
        pattern,
        (Emit(cmpsel.SELECT_FOR[compare], (Use("a"), Use("b"), Use(first), Use(second)),
              {"cond": Bind("cond")}),),
    )


# The blog's version (seed 000): swap when the *select's* invert flag is clear. An icmpsel
# has none, so it always swaps, which is wrong when the compare is inverted.
BLOG_CMPSEL = tuple(fusion_rule(c, inv, swap=True) for c in cmpsel.SELECT_FOR for inv in (0, 1))


def _select_on_any_second(compare: str, inv: int) -> Ins:
    tested = Ins(compare, (any_("a"), any_("b")), {"cond": Bind("cond"), "inv": inv}, name="compare")
    return Ins("icmpsel", (defined_by(tested, "t"), any_("k"), any_("x"), any_("y")),
               {"cond": "ueq"}, name="select")


# Fusion through `icmpsel t, k, x, y` for any k, not only #0: Mesa guards src1 == #0.
NONZERO_CMPSEL = tuple(
    fusion_rule(c, inv, swap=inv == 0, select=_select_on_any_second(c, inv))
    for c in cmpsel.SELECT_FOR for inv in (0, 1)
)


def _select_any_cond(compare: str, inv: int) -> Ins:
    tested = Ins(compare, (any_("a"), any_("b")), {"cond": Bind("cond"), "inv": inv}, name="compare")
    return Ins("icmpsel", (defined_by(tested, "t"), zero(), any_("x"), any_("y")), {},
               name="select")


# Fusion of a select whose own condition is not ueq (Mesa guards I->icond == UEQ).
ANY_COND_CMPSEL = tuple(
    fusion_rule(c, inv, swap=inv == 0, select=_select_any_cond(c, inv))
    for c in cmpsel.SELECT_FOR for inv in (0, 1)
)


def blog_cmpsel(fn: Function) -> bool:
    return apply_rules(fn, BLOG_CMPSEL)


def cmpsel_nonzero_operand(fn: Function) -> bool:
    return apply_rules(fn, NONZERO_CMPSEL)


def cmpsel_any_condition(fn: Function) -> bool:
    return apply_rules(fn, ANY_COND_CMPSEL)


# --- branch-cmp ------------------------------------------------------------------------------------


def _branch_rule(compare: str, branch_op: str, inversion) -> Rule:
    tested = Ins(compare, (any_("a"), any_("b")),
                 {"cond": Bind("cond"), "inv": Bind("compare_inv")}, name="compare")
    branch = Ins("if_icmp", (defined_by(tested, "t"), zero()),
                 {"cond": "ueq", "inv": Bind("branch_inv")}, name="branch")
    return Rule(compare, branch,
                (Emit(branch_op, (Use("a"), Use("b")), {"cond": Bind("cond"), "inv": inversion}),))


# inv = compare.inv, forgetting the XOR with NOT branch.inv.
NO_XOR_BRANCH = tuple(
    _branch_rule(c, branch_cmp.BRANCH_FOR[c], lambda b: b["compare_inv"])
    for c in branch_cmp.BRANCH_FOR
)
# An fcmp fused as if it were an icmp (cf. Mesa 93d15c2b, fcmp handled like fcmpsel).
FCMP_AS_ICMP_BRANCH = tuple(
    _branch_rule(c, "if_icmp", branch_cmp.inverted) for c in branch_cmp.BRANCH_FOR
)


def branch_cmp_no_xor(fn: Function) -> bool:
    return apply_rules(fn, NO_XOR_BRANCH)


def branch_cmp_fcmp_as_icmp(fn: Function) -> bool:
    return apply_rules(fn, FCMP_AS_ICMP_BRANCH)


# --- copyprop --------------------------------------------------------------------------------------


def _zero_extension_any_kind(b) -> bool:
    """The zero-extension rule without its INT-kind requirement."""
    x, user = b["x"], b.root
    spec = copyprop.slot_spec(user, b.position)
    return (
        copyprop.copyable(b)
        and x.size < b["mov"].dest.size
        and spec is not None
        and x.size in spec.sizes
        and copyprop.width_ok(spec, x.size, user)
    )


# A 16-bit value copied into a 32-bit float operand: the float op converts it from f16.
NARROW_INTO_FLOAT = copyprop.RULES[:1] + (
    Rule("zero-extension", copyprop.use_of_mov(True), Use("x", abs=True, neg=copyprop.use_neg),
         _zero_extension_any_kind),
)
# A narrower source copied with .abs although the mov sign-extended it.
NARROW_WITHOUT_ABS = copyprop.RULES[:1] + (
    Rule("zero-extension", copyprop.use_of_mov(False), Use("x", abs=True, neg=copyprop.use_neg),
         copyprop.zero_extension),
)
_MOV_OF_ANYTHING = Ins("bitop", (any_("x", neg=False), zero()), {"tt": 0xA}, name="mov")


def _immediate_mov(b) -> bool:
    """x is an immediate and the use's slot takes it (as inline-imm asks; only the neg is
    wrong), so the variant makes a legal program that computes something else."""
    spec = slot_spec(b.root, b.position)
    return b["x"].is_immediate and spec is not None and spec.kind == INT and spec.imm is not None


# Mesa 3a87d2cf: an immediate inlined into a source carrying .neg, the neg dropped.
IMMEDIATE_DROPS_NEG = copyprop.RULES + (
    Rule("immediate", Ins(None, srcs=None, name="user",
                          focus=defined_by(_MOV_OF_ANYTHING, "use", abs=None, neg=None)),
         Use("x", neg=False), _immediate_mov),
)


def _fixed_point(rules):
    def run(fn: Function) -> bool:
        changed = False
        for _ in range(len(list(fn.instructions())) + 1):
            if not apply_rules(fn, rules):
                break
            changed = True
        return changed

    return run


copyprop_narrow_into_float = _fixed_point(NARROW_INTO_FLOAT)
copyprop_narrow_without_abs = _fixed_point(NARROW_WITHOUT_ABS)
copyprop_immediate_drops_neg = _fixed_point(IMMEDIATE_DROPS_NEG)


# --- dce --------------------------------------------------------------------------------------------


def dce_removes_stores(fn: Function) -> bool:
    return dce.mark_and_sweep(fn, roots=lambda ins: dce.is_root(ins) and ins.name != "device_store")


def dce_removes_exports(fn: Function) -> bool:
    return dce.mark_and_sweep(fn, roots=lambda ins: dce.is_root(ins) and ins.name != "export")


def dce_ignores_phi_uses(fn: Function) -> bool:
    def needs(ins: Instruction):
        return () if ins.is_phi else ins.uses()

    return dce.mark_and_sweep(fn, needs=needs)


# --- the zoo -----------------------------------------------------------------------------------------


def _unit(attribute: str):
    """The variant named by its module attribute, which is also how a replay names it."""
    function = globals()[attribute]
    return lambda: PassUnderTest(
        attribute.replace("_", "-"), function, ("--pass", f"fuzz.zoo.variants:{attribute}")
    )


VARIANTS: tuple[Variant, ...] = (
    Variant("cmpsel-blog-swap", "seed 000: the blog post's version", "swaps the select operands on the select's own (absent) invert flag", _unit("blog_cmpsel"), of="cmpsel"),
    Variant("cmpsel-nonzero-operand", "Mesa agx_optimizer_cmpsel guard", "fuses icmpsel t, k, x, y for any k, not only #0", _unit("cmpsel_nonzero_operand"), of="cmpsel"),
    Variant("cmpsel-any-condition", "Mesa agx_optimizer_cmpsel guard", "fuses a select whose condition is not ueq", _unit("cmpsel_any_condition"), of="cmpsel"),
    Variant("branch-cmp-no-xor", "Mesa if_cmp fusion (e7ffc799)", "takes the compare's invert flag and forgets the XOR with NOT the branch's", _unit("branch_cmp_no_xor"), of="branch-cmp"),
    Variant("branch-cmp-fcmp-as-icmp", "Mesa 93d15c2b", "fuses an fcmp into an integer branch", _unit("branch_cmp_fcmp_as_icmp"), of="branch-cmp"),
    Variant("copyprop-narrow-into-float", "agx-notes: copyprop size rule", "copies a 16-bit value into a 32-bit float operand", _unit("copyprop_narrow_into_float"), of="copyprop"),
    Variant("copyprop-narrow-without-abs", "agx-notes: zext copyprop sets .abs", "copies a narrower value with .abs though the mov sign-extended it", _unit("copyprop_narrow_without_abs"), of="copyprop"),
    Variant("copyprop-immediate-drops-neg", "Mesa 3a87d2cf (inline_imm ignored neg)", "copies an immediate into a source carrying .neg and drops the neg", _unit("copyprop_immediate_drops_neg"), of="copyprop"),
    Variant("dce-removes-stores", "issue 5", "treats stores as removable", _unit("dce_removes_stores"), of="dce"),
    Variant("dce-removes-exports", "issue 5", "treats exports as removable", _unit("dce_removes_exports"), of="dce"),
    Variant("dce-ignores-phi-uses", "Mesa FsatWithPhi (backward pass missed phi uses)", "does not count phi sources as uses", _unit("dce_ignores_phi_uses"), of="dce"),
    Variant("liveness-phi-dests-live-in", "seed 004: the old liveness", "phi destinations live into their own block", liveness=PhiDestsLiveIn),
    Variant("liveness-back-edge-phi-sources", "issue 5", "phi sources on back edges dropped from the predecessor's live-out", liveness=BackEdgePhiSourcesDropped),
    Variant("liveness-kill-flags-dropped", "issue 8", "only an instruction's first dying source keeps its kill flag", liveness=KillFlagsDropped),
    Variant("liveness-defs-stay-live", "issue 8", "per-instruction live sets keep a value live above its definition", liveness=DefinitionsStayLive),
    *OPTIMIZER_VARIANTS,
)  # fmt: skip
