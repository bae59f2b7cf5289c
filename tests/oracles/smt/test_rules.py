"""Proving rewrite rules (oracles.smt.rules): every registered rule verifies, wrong rules are
refuted with counterexamples the interpreter confirms, hard queries time out and are never
reported verified, and the premises the proof's reductions rest on hold for the whole table.
"""

from __future__ import annotations

import itertools

import pytest
import z3

from agxir.ir import Block, Immediate, Instruction, Operand, Uniform, Value
from agxir.opcodes.operands import float_to_bits, minifloat_value
from agxir.opcodes.table import ROWS
from agxir.passes import RULE_TABLES, branch_cmp, cmpsel, copyprop
from agxir.rewrite import Bind, Emit, Ins, NewImm, Rule, Use, any_, defined_by, imm, reg, zero
from agxir.rewrite.skeletons import reading, shape_function
from agxir.verifier import verify
from oracles.memory_model import buffer_base
from oracles.smt import Memory, Z3BitVectors, encode_instruction
from oracles.smt.rules import prove_rule, read_value, stand_in_term
from tests.agxir.rewrite.test_address_rules import LOWER_ULEA, amul_amul, fold_ulea, fuse_ulea

REGISTERED = [(name, rule) for name, rules in RULE_TABLES.items() for rule in rules]
# The address passes' rules are proved in the default tier by their own modules' tests
# (tests/agxir/passes/test_address_*.py, same verdict, more budget); here, at the audit's
# default budget, in the slow tier: a minute of z3 that would otherwise run twice.
OWN_PROOF_TESTS = ("address-cleanup", "address-fuse", "address-fold", "address-lower")


def plain(name: str, size: int | None = None):
    return reg(name, abs=False, neg=False, size=size)


# --- every registered rule --------------------------------------------------------------------


@pytest.mark.parametrize("pass_name, rule", [
    pytest.param(p, r, id=f"{p}/{r.name}",
                 marks=[pytest.mark.slow] if p in OWN_PROOF_TESTS else [])
    for p, r in REGISTERED
])
def test_every_registered_rule_verifies(pass_name, rule):
    proof = prove_rule(rule, pass_name=pass_name)
    assert proof.verdict == "verified", (proof.error, proof.timeouts, proof.counterexample)
    assert proof.instances > 0
    assert len(proof.times_ms) >= proof.instances


def test_rule_tables_cover_the_rewriting_passes():
    assert set(RULE_TABLES) == {
        "copyprop", "cmpsel", "cmpsel-uniform-compare", "cmpsel-uniform-select", "branch-cmp",
        "address-cleanup", "address-fuse", "address-fold", "address-lower",
        "fmov-prop", "fmov-rev", "inline-imm", "not-fuse", "not-rev", "if-not", "ext-prop",
        "shift-fuse", "ballot-fuse",
    }
    assert RULE_TABLES["copyprop"] is copyprop.RULES
    assert RULE_TABLES["branch-cmp"] is branch_cmp.RULES
    assert RULE_TABLES["cmpsel"] is cmpsel.RULES
    for rules in RULE_TABLES.values():
        assert all(rule.why for rule in rules)


# --- wrong rules ------------------------------------------------------------------------------


def assert_refuted(rule: Rule, **kwargs):
    proof = prove_rule(rule, **kwargs)
    assert proof.verdict == "counterexample", (proof.verdict, proof.error, proof.timeouts)
    found = proof.counterexample
    assert found.confirmed, found
    assert found.source_outcome != found.target_outcome or found.note
    return found


def test_cmpsel_swapping_on_the_wrong_condition_is_refuted():
    wrong = Rule(
        "swap-when-inverted",
        cmpsel.select_on("icmp", 1),
        (Emit("icmpsel", (Use("a"), Use("b"), Use("y"), Use("x")), {"cond": Bind("cond")}),),
    )
    found = assert_refuted(wrong)
    assert "icmpsel %a, %b, %y, %x" in found.target
    assert found.values["x"] != found.values["y"]


def test_branch_cmp_without_the_invert_xor_is_refuted():
    tested = Ins("icmp", (any_("a"), any_("b")), {"cond": Bind("cond"), "inv": Bind("cmp_inv")})
    wrong = Rule(
        "no-xor",
        Ins("if_icmp", (defined_by(tested), zero()), {"cond": "ueq", "inv": Bind("br_inv")}),
        (Emit("if_icmp", (Use("a"), Use("b")), {"cond": Bind("cond"), "inv": Bind("cmp_inv")}),),
    )
    found = assert_refuted(wrong)
    assert {found.source_outcome, found.target_outcome} == {"returned [0x0]", "returned [0x1]"}


def test_copyprop_of_a_narrower_value_without_abs_is_refuted():
    def narrow(b):  # the zero-extension rule's conditions, without requiring the mov's .abs
        spec = copyprop.slot_spec(b.root, b.position)
        return (
            copyprop.copyable(b)
            and b["x"].size < b["mov"].dest.size
            and spec is not None
            and spec.kind == "int"
            and spec.allows("abs")
            and b["x"].size in spec.sizes
            and copyprop.width_ok(spec, b["x"].size, b.root)
        )

    wrong = Rule("narrow-no-abs", copyprop.use_of_mov(False), Use("x", abs=True, neg=copyprop.use_neg), narrow)
    found = assert_refuted(wrong)
    assert found.values["x"] >> 15  # negative: sign- and zero-extension differ


def test_promoting_a_wrapping_add_is_refuted():
    """u2u64(iadd(a, b)) -> iadd64(u2u64 a, u2u64 b): wrong because a 32-bit iadd wraps."""
    add = Ins("iadd", (plain("a", 32), plain("b", 32)), {"shift": 0}, size=32)
    wrong = Rule(
        "promote-add",
        Ins("u2u64", (defined_by(add),)),
        (
            Emit("u2u64", (Use("a"),), size=64, name="wa"),
            Emit("u2u64", (Use("b"),), size=64, name="wb"),
            Emit("iadd", (Use("wa"), Use("wb")), {"shift": 0}),
        ),
    )
    found = assert_refuted(wrong)
    assert found.values["a"] + found.values["b"] >= 1 << 32
    assert "%wa:64 = u2u64 %a" in found.target


def test_wrong_float_immediate_is_refuted_with_its_value():
    wrong = Rule(
        "fmul-as-fadd",
        Ins("fmul", (plain("a", 32), imm("k")), sat=False),
        (Emit("fadd", (Use("a"), Use("k"))),),
    )
    found = assert_refuted(wrong)
    assert 0 <= found.values["#k"] < 256
    assert "fadd %a, #" in found.target


def test_folding_a_lea_with_the_wrong_shift_is_refuted_on_memory():
    lea = Ins("ulea", (plain("base", 64), plain("o", 32)), {"shift": 3})
    wrong = Rule(
        "fold-off-by-one",
        Ins("device_load", (defined_by(lea), zero()), {"fmt": "i32", "shift": 0}),
        (Emit("device_load", (Use("base"), Use("o", abs=True)), {"fmt": "i32", "shift": 2}),),
    )
    found = assert_refuted(wrong)
    assert found.memory is not None and len(found.memory) == 64


def test_a_replacement_that_is_not_valid_ir_is_a_counterexample():
    # #b * #c can exceed the 8-bit immediate amul takes: without a precondition it is not IR.
    inner = Ins("amul", (plain("a", 32), imm("b")))
    rule = Rule(
        "amul-amul-unchecked",
        Ins("amul", (defined_by(inner), imm("c"))),
        (Emit("amul", (Use("a"), NewImm(lambda b: b.m.mul(b.imm("b"), b.imm("c"), 16)))),),
    )
    proof = prove_rule(rule)
    assert proof.verdict == "counterexample"
    assert "not valid IR" in proof.counterexample.note


# --- address-style rules on the same framework ------------------------------------------------


@pytest.mark.parametrize(
    "rule",
    [fuse_ulea(1), fuse_ulea(4), fold_ulea(2), fold_ulea(4), LOWER_ULEA, amul_amul(16)],
    ids=lambda r: r.name,
)
def test_address_rules_verify(rule):
    proof = prove_rule(rule)
    assert proof.verdict == "verified", (proof.error, proof.timeouts, proof.counterexample)


def test_lowering_is_proved_for_every_shift():
    proof = prove_rule(LOWER_ULEA)
    assert proof.instances == 32  # one per legal value of the bound shift


def test_hard_product_is_split_on_its_immediates():
    # Associativity of three 64-bit products is out of z3's reach symbolically; with the
    # immediates' values fixed one case at a time it is easy.
    proof = prove_rule(amul_amul(16), timeout_ms=2000)
    assert proof.verdict == "verified"
    assert proof.max_ms > 250  # the symbolic attempt gave up first


# --- timeouts ---------------------------------------------------------------------------------

HARD_FLOAT = Rule(
    "fmul-2-as-fadd",
    Ins("fmul", (plain("a", 32), imm(bits=0x40)), sat=False),  # #2.0
    (Emit("fadd", (Use("a"), Use("a"))),),
)


def test_a_timeout_is_reported_as_timeout_never_verified():
    proof = prove_rule(HARD_FLOAT, timeout_ms=1)
    assert proof.verdict == "timeout"
    assert proof.timeouts and proof.counterexample is None


def test_the_same_rule_verifies_with_time():
    assert prove_rule(HARD_FLOAT, timeout_ms=20000).verdict == "verified"


# --- the premises of the reductions, over the whole table ------------------------------------

MEMORY = Memory(z3.Array("memory", z3.BitVecSort(64), z3.BitVecSort(8)), ((buffer_base(0), 64),))


def _slot_cases():
    """(row, position, dest size, source sizes, attrs) for each slot with typical partners."""
    for row in ROWS:
        if not row.srcs or row.variadic:
            continue
        dests = row.dest_sizes or (None,)
        enums = [a for a in row.attrs if not isinstance(a.values, range) or len(a.values) <= 8]
        ranges = [a for a in row.attrs if a not in enums]
        for dest in dests:
            for values in itertools.product(*[a.values for a in enums]):
                attrs = dict(zip([a.name for a in enums], values))
                attrs.update({a.name: a.values[len(a.values) // 2] for a in ranges})
                for position in range(len(row.srcs)):
                    yield row, position, dest, attrs


def _forms(spec, dest):
    sizes = [s for s in spec.sizes if dest is None or spec.width_rule is None or s <= dest]
    if spec.width_rule == "dest":
        sizes = [s for s in sizes if s == dest]
    mods = [(a, n) for a in (False, True) for n in (False, True)
            if (not a or spec.allows("abs")) and (not n or spec.allows("neg"))]
    for size, (a, n) in itertools.product(sizes, mods):
        yield Uniform("x", size), a, n
    if spec.imm is not None:
        for bits, (a, n) in itertools.product((0x85, 0xF3), mods):
            yield Immediate(bits), a, n


def _partner(spec, dest):
    sizes = [s for s in spec.sizes if dest is None or spec.width_rule is None or s <= dest]
    return sizes[-1] if spec.width_rule != "dest" else dest


def _equal(e1, e2) -> z3.BoolRef:
    parts = [e1.undefined == e2.undefined]
    if e1.result is not None:
        parts.append(e1.result == e2.result)
    parts.append(e1.memory_after.array == e2.memory_after.array)
    parts += [e1.exports[k] == e2.exports[k] for k in e1.exports]
    return z3.And(*parts)


def test_every_slot_is_read_as_reading_says():
    """Replacing a source by a plain register holding `read_value` of it changes nothing:
    semantics read each source only through its reading, which the collapse and the focus
    shortcut rely on. Checked for every slot, form (size, modifiers, immediate) and enum
    attribute of the table."""
    checked = 0
    for row, position, dest, attrs in _slot_cases():
        spec = row.srcs[position]
        for ref, a, n in _forms(spec, dest):
            srcs = [Operand(Uniform(f"s{i}", _partner(s, dest))) for i, s in enumerate(row.srcs)]
            srcs[position] = Operand(ref, a, n)
            ins = Instruction(row, Value("d", dest) if dest else None, srcs, dict(attrs), [], False)
            if row.targets:
                ins.blocks = [Block("t"), Block("f")]
            if _invalid(ins):
                continue
            terms = {s.ref: z3.BitVec(s.ref.name, s.ref.size) for s in srcs if isinstance(s.ref, Uniform)}
            m = Z3BitVectors(terms, 0, MEMORY)
            m.instruction = ins
            value = read_value(m, ins, position)
            probe = Uniform("probe", value.size())
            plain_srcs = list(srcs)
            plain_srcs[position] = Operand(probe)
            plain_ins = Instruction(row, ins.dest, plain_srcs, dict(attrs), ins.blocks, False)
            assert reading(plain_ins, position) == reading(ins, position)
            e1 = encode_instruction(ins, terms, thread_id=0, memory=MEMORY)
            e2 = encode_instruction(plain_ins, {**terms, probe: value}, thread_id=0, memory=MEMORY)
            solver = z3.Solver()
            solver.add(z3.Not(_equal(e1, e2)))
            assert solver.check() == z3.unsat, (row.name, position, ref, a, n, attrs)
            checked += 1
    assert checked > 500


def _invalid(ins: Instruction) -> bool:
    inputs = [s.ref for s in ins.srcs if isinstance(s.ref, Uniform)]
    return bool(verify(shape_function([], [ins], list(dict.fromkeys(inputs)))))


@pytest.mark.parametrize("how, width", [("int", 16), ("int_cmp", 32), ("raw", 32), ("raw", 16),
                                        ("float", 32), ("float_cmp", 16)])
def test_stand_in_of_an_immediate(how, width):
    """The stand-in register for immediate #k holds what the slot would read for #k
    (before modifiers): the 16 bits, zero-extended for raw reads, the minifloat's value."""
    for k in (0, 1, 0x40, 0x85, 0xFF):
        term = z3.simplify(stand_in_term(z3.BitVecVal(k, 16), how, width))
        if how.startswith("float"):
            assert term.as_long() == float_to_bits(minifloat_value(k), width)
        else:
            assert term.as_long() == k and term.size() == (16 if how.startswith("int") else width)
