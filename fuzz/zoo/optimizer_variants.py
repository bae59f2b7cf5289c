"""Wrong versions of Mesa's optimizer rewrites for the bug zoo: the historic bugs of
agx-notes section 10, each a small change to one of the right rule tables
(agxir/passes/fmov_prop.py, fmov_rev.py, inline_imm.py, shift_fuse.py, ballot_fuse.py),
applied by the same matcher, so the audit refutes the wrong rules as a campaign catches them.

The commits are named from Mesa's history; where the fix's diff was not reachable the bug is
modelled from its commit message (or, for 4d0233cb, from its one-line description in
agx-notes section 10), as each variant's docstring says.

Each variant's function is importable (`--pass fuzz.zoo.optimizer_variants:NAME`), which is
what replay commands name.
"""

from __future__ import annotations

from agxir.ir import Function, Immediate, Operand
from agxir.opcodes import OPCODES
from agxir.opcodes.spec import INT, RAW
from agxir.passes import ballot_fuse, fmov_prop, fmov_rev, inline_imm, shift_fuse
from agxir.passes.uses import single_use, use_counts
from agxir.rewrite import Emit, Ins, NewImm, Rule, Use, any_, apply_rules, defined_by, slot_spec
from fuzz.passes_under_test import PassUnderTest
from fuzz.zoo.runner import Variant

MODULE = "fuzz.zoo.optimizer_variants"

# --- fmov-prop ----------------------------------------------------------------------------------


def _payload_slot(b) -> bool:
    spec = slot_spec(b.root, b.position)
    return (
        b.root.name == "fcmpsel"
        and spec is not None
        and spec.kind == RAW
        and b["x"].size == b.root.dest.size
        and not b["x"].is_immediate
    )


# Mesa c8e331bf: fmov propagated into fcmpsel's payload sources (s2/s3), whose packing has
# no modifier bits: the select returns x itself, not the fmov's (negated, canonical) value.
PAYLOAD_RULES = fmov_prop.RULES + (
    Rule("payload", fmov_prop.use_of(fmov_prop.FMOV, None), Use("x", abs=False, neg=False),
         _payload_slot, why="WRONG: a payload reads bits, and its packing drops the modifiers"),
)


def _or_neg(b) -> bool:
    use = b["use"]
    return use.neg if use.abs else b["x"].neg or use.neg


# Mesa 095415cd: the fmov composition ORed the negations, so neg(fmov(neg x)) read -x.
NEG_NEG_RULES = (
    Rule("compose", fmov_prop.use_of(fmov_prop.FMOV, False), Use("x", neg=_or_neg),
         fmov_prop.float_slot, why="WRONG: neg of neg does not cancel"),
) + fmov_prop.RULES[1:]


def fmov_prop_into_payload(fn: Function) -> bool:
    return apply_rules(fn, PAYLOAD_RULES)


def fmov_prop_neg_neg(fn: Function) -> bool:
    return apply_rules(fn, NEG_NEG_RULES)


# --- fmov-rev ------------------------------------------------------------------------------------


def _widening_rules(precondition) -> tuple[Rule, ...]:
    table = []
    for op, arity in fmov_rev.ARITY.items():
        names = fmov_rev.NAMES[:arity]
        inner = Ins(op, tuple(any_(n) for n in names), size=16, name="inner")
        table.append(Rule(
            f"widen-{op}", Ins("fmov", (defined_by(inner, "t"),), size=32, sat=None, name="outer"),
            (Emit(op, tuple(Use(n) for n in names), sat=fmov_rev.saturated),), precondition,
            why="WRONG: the 16-bit result was rounded to f16; computing in f32 skips that",
        ))
    return tuple(table)


def fmov_rev_widening(fn: Function) -> bool:
    """Mesa 3a0d1f83 (bit-inexact f2f16/f2f32 folding), modelled from its message: an
    `fmov.32` of a single-use 16-bit float op becomes that op at 32 bits."""
    counts = use_counts(fn)
    guard = single_use(counts, "t")
    return apply_rules(fn, fmov_rev.rules(guard) + _widening_rules(guard))


def fmov_rev_ignores_phi_uses(fn: Function) -> bool:
    """Mesa FsatWithPhi: the backward pass counted uses without the successors' phi sources
    and fused `fmov.sat` into the producer, which then wrote the saturated value for every
    reader. Modelled as Mesa did it (the producer saturates in place; the fmov becomes a
    plain copy), so a phi reading the producer sees the clamped value."""
    counts = use_counts(fn, phis=False)
    defs = {ins.dest: ins for ins in fn.instructions() if ins.dest is not None}
    changed = False
    for ins in list(fn.instructions()):
        if ins.name != "fmov" or not ins.sat or len(ins.srcs) != 1:
            continue
        src = ins.srcs[0]
        producer = defs.get(src.ref)
        if (
            src.abs or src.neg or producer is None or producer.name not in fmov_rev.ARITY
            or producer.dest.size != ins.dest.size or counts[src.ref] != 1 or producer.sat
        ):
            continue
        producer.sat = True
        ins.sat = False
        changed = True
    return changed


# --- inline-imm ------------------------------------------------------------------------------------


def _ignoring_neg(size: int) -> Rule:
    values = tuple(range(256)) + tuple((1 << size) - k for k in range(1, 256))
    use = Ins(inline_imm.use_rows((INT, RAW)), srcs=None, name="user",
              focus=defined_by(inline_imm.mov_imm_pattern(size, values), "use", abs=False, neg=True))
    return Rule(f"ignores-neg-{size}", use,
                NewImm(lambda b, size=size: b.m.const(_as_imm8(b["v"], size), 16),
                       neg=False),
                lambda b: inline_imm.int_slot(b) and b["v"] < 256,
                why="WRONG: the use's .neg is dropped with the mov_imm")


def _as_imm8(value: int, size: int) -> int:
    return value if value < 256 else (1 << size) - value


IGNORES_NEG_RULES = tuple(_ignoring_neg(size) for size in inline_imm.SIZES)


def inline_imm_ignores_neg(fn: Function) -> bool:
    """Mesa 3a87d2cf: inline_imm did not check the source's `.neg` (usub_sat with a
    constant): `iadd a, %k.neg` with `%k = mov_imm 5` became `iadd a, #5`."""
    return apply_rules(fn, IGNORES_NEG_RULES + inline_imm.RULES)


def _inline_wide(fn: Function, wanted, bits: int) -> bool:
    """Each 64-bit `mov_imm` read without modifiers where `wanted(ins, position)` holds is
    replaced by an immediate of its low `bits` bits (the wrong step of the two variants)."""
    defs = {ins.dest: ins for ins in fn.instructions() if ins.dest is not None}
    changed = False
    for ins in fn.instructions():
        for position, src in enumerate(ins.srcs):
            move = defs.get(src.ref)
            if (
                move is None or move.name != "mov_imm" or move.dest.size != 64
                or src.abs or src.neg or not wanted(ins, position)
            ):
                continue
            ins.srcs[position] = Operand(Immediate(move.attrs["value"] & ((1 << bits) - 1)))
            changed = True
    return changed


def inline_imm_64bit_phi(fn: Function) -> bool:
    """Mesa 5b50040c (64-bit phis with inlined immediates), modelled from its message: a
    64-bit `mov_imm` read by a phi is inlined as a 16-bit immediate, losing the high bits."""
    changed = _inline_wide(fn, lambda ins, position: ins.is_phi, 16)
    return inline_imm.PASS.run(fn) or changed


def inline_imm_64bit_address(fn: Function) -> bool:
    """Mesa 9f5a4a96 (64-bit immediate in an address add), modelled from its message: a
    64-bit `mov_imm` read by a 64-bit iadd is inlined as its low 8 bits."""
    changed = _inline_wide(
        fn, lambda ins, position: ins.name == "iadd" and ins.dest.size == 64, 8
    )
    return inline_imm.PASS.run(fn) or changed


# --- shift-fuse ------------------------------------------------------------------------------------


def _packed(s: int, drop_neg: bool, two_bits: bool) -> tuple[Rule, ...]:
    shifted = defined_by(shift_fuse.shift_pattern(s), "t", neg=None)
    neg = (lambda b: False) if drop_neg else (lambda b: b["t"].neg)
    field = s & 3 if two_bits else s
    return (
        Rule(f"iadd-{s}", Ins("iadd", (any_("a"), shifted), {"shift": 0}, size="w"),
             (Emit("iadd", (Use("a"), Use("x", neg=neg)), {"shift": field}),)),
        Rule(f"imad-{s}", Ins("imad", (any_("a"), any_("b"), shifted), {"shift": 0}, size="w"),
             (Emit("imad", (Use("a"), Use("b"), Use("x", neg=neg)), {"shift": field}),)),
    )


TWO_BIT_SHIFT_RULES = tuple(r for s in shift_fuse.SHIFTS for r in _packed(s, False, True))
IMSUB_RULES = tuple(r for s in shift_fuse.SHIFTS for r in _packed(s, True, False))


def shift_fuse_two_bit_field(fn: Function) -> bool:
    """Mesa e13f9caa (packing iadd with a shift), modelled from its message: the shift is
    packed into a 2-bit field, so a fused shift of 4 becomes 0."""
    return apply_rules(fn, TWO_BIT_SHIFT_RULES)


def shift_fuse_imsub_drops_neg(fn: Function) -> bool:
    """Mesa c2793a30 (imsub packing), modelled from its message: fusing a shift into a
    subtracting add (`.neg` on the shifted source) packs it as an add."""
    return apply_rules(fn, IMSUB_RULES)


# --- ballot-fuse ----------------------------------------------------------------------------------


def ballot_constant(fn: Function) -> bool:
    """Mesa BallotConstant (the test's comment; dEQP-VK subgroups vote): the fusion looked
    up `defs[src.value]` without checking that the source was an SSA value, so `ballot #5`
    was fused with the compare defining value 5, as if it were `ballot %5`. Values are
    named by number here as in Mesa (the generator's are), and the constant's bits are the
    number looked up. The right fusion then runs as usual."""
    compares = {
        ins.dest.name: ins for ins in fn.instructions()
        if ins.dest is not None and ins.name in ballot_fuse.FUSED
    }
    changed = False
    for ins in fn.instructions():
        if ins.name != "ballot" or not ins.srcs[0].is_immediate:
            continue
        compare = compares.get(str(ins.srcs[0].ref.bits))
        if compare is None:
            continue
        ins.opcode = OPCODES[ballot_fuse.FUSED[compare.name]]
        ins.srcs = list(compare.srcs)
        ins.attrs = {"cond": compare.attrs["cond"], "inv": compare.attrs["inv"]}
        changed = True
    return ballot_fuse.PASS.run(fn) or changed


# --- uadd_sat ------------------------------------------------------------------------------------------


def _unsigned_dropped(position: int) -> Rule:
    names = ("a", "b")
    srcs = tuple(any_(n, size="w", abs=True) if i == position else any_(n)
                 for i, n in enumerate(names))
    uses = tuple(Use(n, abs=False) if i == position else Use(n) for i, n in enumerate(names))
    return Rule(f"packs-{names[position]}-signed", Ins("uadd_sat", srcs, size="w"),
                (Emit("uadd_sat", uses),),
                why="WRONG: a full-width source's zero-extension bit is not packed")


UADD_SAT_PACKING_RULES = (_unsigned_dropped(0), _unsigned_dropped(1))


def uadd_sat_packing(fn: Function) -> bool:
    """Mesa 4d0233cb (uadd_sat packing), modelled from its one-line description (the commit
    was not reachable): uadd_sat is `iadd.sat |a|, |b|`, and the encoder set a source's
    zero-extension bit only when the source was narrower than the add, where a wrapping add
    needs it. A saturating add is wider than its destination, so a full-width source then
    reads sign-extended: `uadd_sat a.abs, b.abs` with a >= 2^31 clamps low instead of high."""
    return apply_rules(fn, UADD_SAT_PACKING_RULES)


# --- the zoo ------------------------------------------------------------------------------------------


def _unit(attribute: str):
    function = globals()[attribute]
    return lambda: PassUnderTest(
        attribute.replace("_", "-"), function, ("--pass", f"{MODULE}:{attribute}")
    )


OPTIMIZER_VARIANTS: tuple[Variant, ...] = (
    Variant("fmov-prop-into-payload", "Mesa c8e331bf", "propagates an fmov into fcmpsel's payloads, dropping its modifiers", _unit("fmov_prop_into_payload"), of="fmov-prop"),
    Variant("fmov-prop-neg-neg", "Mesa 095415cd", "composes neg of neg as neg", _unit("fmov_prop_neg_neg"), of="fmov-prop"),
    Variant("inline-imm-ignores-neg", "Mesa 3a87d2cf", "inlines a mov_imm into a source carrying .neg and drops the neg", _unit("inline_imm_ignores_neg"), of="inline-imm"),
    Variant("fmov-rev-widening", "Mesa 3a0d1f83 (modelled)", "folds fmov.32 of a 16-bit float op into the op at 32 bits", _unit("fmov_rev_widening"), of="fmov-rev"),
    Variant("fmov-rev-ignores-phi-uses", "Mesa FsatWithPhi", "fuses fmov.sat into a producer that a phi also reads", _unit("fmov_rev_ignores_phi_uses"), of="fmov-rev"),
    Variant("inline-imm-64bit-phi", "Mesa 5b50040c (modelled)", "inlines a 64-bit mov_imm into a phi as its low 16 bits", _unit("inline_imm_64bit_phi"), of="inline-imm"),
    Variant("inline-imm-64bit-address", "Mesa 9f5a4a96 (modelled)", "inlines a 64-bit mov_imm into a 64-bit iadd as its low 16 bits", _unit("inline_imm_64bit_address"), of="inline-imm"),
    Variant("shift-fuse-two-bit-field", "Mesa e13f9caa (modelled)", "packs a fused iadd/imad shift into 2 bits", _unit("shift_fuse_two_bit_field"), of="shift-fuse"),
    Variant("shift-fuse-imsub-drops-neg", "Mesa c2793a30 (modelled)", "fuses a shift into imsub/isub and drops the subtraction", _unit("shift_fuse_imsub_drops_neg"), of="shift-fuse"),
    Variant("ballot-constant", "Mesa BallotConstant", "fuses ballot #k with the compare defining value k", _unit("ballot_constant"), of="ballot-fuse"),
    # of no registered pass: packing uadd_sat's sources is Mesa's encoder's, not a pass here
    Variant("uadd-sat-packing", "Mesa 4d0233cb (modelled)", "packs uadd_sat's full-width .abs sources sign-extended", _unit("uadd_sat_packing")),
)  # fmt: skip
