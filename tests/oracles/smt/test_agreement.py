"""The z3 encoding and the interpreter agree on every opcode, one random instruction at a time.

For each row of the opcode table (but phi, jump and stop, which compute nothing) Hypothesis
draws a legal instruction: destination and source sizes, modifiers, immediates of the row's
classes, attributes and `.sat`, with sources read from scalar uniforms (and device buffers,
or the thread id as a memory index). The function `[get_sr] ins; export; stop` runs in the
interpreter for 1..4 threads on edge-biased inputs; the same instruction is encoded with
`oracles.smt` per thread with the same concrete operands, and the two must agree on undefined
behaviour (which reason, first thread), on every exported value, and on final memory. A
ballot's mask is uninterpreted in z3: there, every thread's export is the mask of the
threads whose z3 condition holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agxir.ir import Block, Function, Immediate, Instruction, Operand, Uniform, Value
from agxir.opcodes import OPCODES, ROWS
from agxir.opcodes.operands import bits_to_float, float_to_bits
from agxir.opcodes.spec import ADDR, AT_MOST_DEST, FIMM8, IMM8, IMM16, SAME_AS_DEST, Opcode
from agxir.verifier import verify
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.outcomes import Returned, Undefined
from oracles.smt import (
    bitvec,
    buffer_base,
    encode_instruction,
    function_memory,
    uniform_terms,
    value_of,
)

NOT_COVERED = {"phi", "jump", "stop"}  # no value, no effect: nothing to agree on
TESTED_ROWS = [row for row in ROWS if row.name not in NOT_COVERED]
MEMORY_ROWS = {"device_load", "device_store"}
BRANCH_ROWS = {"if_icmp", "if_fcmp"}
EXAMPLES_PER_ROW = 120
# Rows with more to get wrong (modes, rounding, memory) get more examples.
EXAMPLES = {"convert": 500, "ffma": 300, "device_load": 250, "device_store": 250}
EXAMPLES.update(dict.fromkeys(("fcmp", "fcmpsel", "if_fcmp"), 250))
FLOAT_TYPES = {16: np.float16, 32: np.float32}

# --- edge-biased values ----------------------------------------------------------------------------

FLOAT_EDGES = {
    16: (
        0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE00, 0x7FFF, 0x0001, 0x8001,
        0x03FF, 0x0400, 0x3C00, 0xBC00, 0x3800, 0x4000, 0x7BFF, 0xFBFF, 0x7800, 0xF800,
        0x77FF, 0x3C01, 0x1400,
    ),
    32: (
        0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC00001,
        0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x3F800000, 0xBF800000, 0x3F000000,
        0x40000000, 0x7F7FFFFF, 0xFF7FFFFF, 0x4F000000, 0x4EFFFFFF, 0xCF000000, 0xCF000001,
        0x4F800000, 0x4F7FFFFF, 0x47000000, 0xC7000000, 0xC7000080, 0x477FFF00, 0x47800000,
        0x5F000000, 0xDF000000, 0x5F800000, 0x477FF000, 0x477FEFFF, 0x33800000, 0x33000000,
        0x33400000, 0x387FC000, 0x3F801000, 0x3F803000, 0x3F800800,
    ),
}  # fmt: skip


def int_edges(width: int) -> tuple[int, ...]:
    top = 1 << (width - 1)
    ones = (1 << width) - 1
    edges = {0, 1, 2, 3, 7, ones, ones - 1, top, top - 1, top + 1, 0x7F, 0x80, 0xFF, 0x100}
    if width >= 32:
        edges |= {0x7FFFFFFF, 0x80000000, 0xFFFF, 0x10000, 46340, 46341, 0x40000000, 1 << 24}
        edges |= {(1 << 24) + 1, (1 << 24) + 3}
    if width == 64:
        edges |= {buffer_base(0), buffer_base(1), (1 << 60) + (1 << 36) + 1, (1 << 53) + 1}
        edges |= {top + (1 << 40) + 1, 0xFFFFFFFF}
    return tuple(sorted(e & ones for e in edges))


def _float_bits(fw: int, **bounds) -> st.SearchStrategy[int]:
    return st.floats(width=fw, **bounds).map(lambda x: float_to_bits(x, fw))


def _rounded_bits(x: float, fw: int) -> int:
    """The bits of x rounded to the float format (numpy rounds to nearest even)."""
    with np.errstate(all="ignore"):
        return float_to_bits(float(np.array([x]).astype(FLOAT_TYPES[fw])[0]), fw)


def _signed(strategy: st.SearchStrategy[int], width: int) -> st.SearchStrategy[int]:
    return st.tuples(strategy, st.booleans()).map(lambda t: t[0] | (t[1] << (width - 1)))


def _fractional(fw: int) -> st.SearchStrategy[int]:
    """Floats with a fraction near the edges of the integer ranges, for f2u/f2s."""
    whole = st.one_of(
        st.integers(0, 40),
        st.sampled_from((1 << 15, 1 << 16, 1 << 24, 1 << 31, 1 << 32)).flatmap(
            lambda edge: st.integers(edge - 3, edge + 2)
        ),
        st.integers(0, 65504 if fw == 16 else 1 << 33),
    )
    fraction = st.sampled_from((0.0, 0.25, 0.5, 0.75, 0.9375, 0.5 + 2.0**-10))
    values = st.builds(lambda w, f, sign: sign * (w + f), whole, fraction, st.sampled_from((1, -1)))
    return values.map(lambda x: _rounded_bits(x, fw))


NEAR_ONE = {16: (0x3400, 0x4400), 32: (0x3E800000, 0x40800000)}  # [0.25, 4): full mantissas


def scalar_values(width: int) -> st.SearchStrategy[int]:
    """Edge-biased bits: integer and float edges, small ints, floats, any bits."""
    edges = int_edges(width) + FLOAT_EDGES.get(width, ())
    choices = [st.sampled_from(edges), st.integers(0, 31), st.integers(0, (1 << width) - 1)]
    if width in (16, 32):
        choices.append(_float_bits(width))
        choices.append(_signed(st.integers(*NEAR_ONE[width]), width))
        choices.append(_fractional(width))
    if width == 32:  # floats an f32 -> f16 conversion can keep
        choices.append(_float_bits(32, min_value=-70000.0, max_value=70000.0))
        choices.append(_float_bits(32, min_value=-(2.0**-13), max_value=2.0**-13))
    return st.one_of(choices)


IMMEDIATES = {
    IMM8: st.one_of(st.sampled_from((0, 1, 0x7F, 0x80, 0xFF)), st.integers(0, 0xFF)),
    IMM16: st.one_of(st.sampled_from((0, 1, 2, 0x7FFF, 0x8000, 0xFFFF)), st.integers(0, 0xFFFF)),
    FIMM8: st.integers(0, 0xFF),
}


# --- drawing one instruction ------------------------------------------------------------------------


@dataclass
class Case:
    fn: Function
    ins: Instruction
    inputs: InputSet
    tid: Value | None  # the get_sr value, when one is read


def _allowed_sizes(spec, dest_size: int | None) -> list[int]:
    if spec.kind == ADDR:
        return [64]
    sizes = list(spec.sizes)
    if dest_size is not None and spec.width_rule == SAME_AS_DEST:
        sizes = [s for s in sizes if s == dest_size]
    elif dest_size is not None and spec.width_rule == AT_MOST_DEST:
        sizes = [s for s in sizes if s <= dest_size]
    return sizes


def _draw_attr(draw, attr, dest_size: int | None):
    values = attr.values
    if isinstance(values, range) and values.stop - values.start > 4096:
        width = min(dest_size or 64, (values.stop - 1).bit_length())
        return draw(scalar_values(width) if width in (16, 32, 64) else st.sampled_from(values))
    return draw(st.sampled_from(values))


def _draw_shape(draw, row: Opcode):
    """Destination size, attributes and source sizes that pass the row's `check`."""
    for _ in range(8):
        dest_size = draw(st.sampled_from(row.dest_sizes)) if row.has_dest else None
        attrs = {attr.name: _draw_attr(draw, attr, dest_size) for attr in row.attrs}
        for _ in range(8):
            sizes = [draw(st.sampled_from(_allowed_sizes(spec, dest_size))) for spec in row.srcs]
            probe = Instruction(
                row,
                Value("probe", dest_size) if dest_size else None,
                [Operand(Value(f"s{i}", size)) for i, size in enumerate(sizes)],
                attrs,
            )
            if row.check is None or row.check(probe) is None:
                return dest_size, sizes, attrs
    assume(False)


def _read_float(bits: int, size: int, operand: Operand) -> float:
    """What a float source holds, modifiers applied (as the semantics read it)."""
    value = bits_to_float(bits, size)
    value = abs(value) if operand.abs else value
    return -value if operand.neg else value


def _cancel_product(ins: Instruction, scalars: dict[str, int], fw: int) -> int | None:
    """Bits for ffma's c that cancel the rounded product a * b, so that the result is the
    product's rounding error: where a single rounding differs from two."""
    a, b, c = ins.srcs
    if not all(isinstance(x.ref, Uniform) for x in (a, b, c)):
        return None
    product = _read_float(scalars[a.ref.name], a.ref.size, a) * _read_float(
        scalars[b.ref.name], b.ref.size, b
    )
    wanted = -bits_to_float(_rounded_bits(product, fw), fw)
    return _rounded_bits(-wanted if c.neg else wanted, c.ref.size)


@st.composite
def cases(draw, row: Opcode) -> Case:
    dest_size, sizes, attrs = _draw_shape(draw, row)
    uniforms: list[Uniform] = []
    scalars: dict[str, int] = {}
    buffers: dict[str, bytes] = {}
    drawn: dict[int, list[int]] = {16: [], 32: [], 64: []}  # for related operands
    tid: Value | None = Value("tid", 32) if row.name == "get_sr" else None
    tid_used = False

    def new_buffer() -> Uniform:
        size = draw(st.integers(1, 40))
        buffer = Uniform(f"buf{len(uniforms)}", 64, buffer_bytes=size)
        uniforms.append(buffer)
        data = draw(st.binary(min_size=size, max_size=size))
        buffers[buffer.name] = data
        return buffer

    def new_scalar(size: int, values: st.SearchStrategy[int] | None = None) -> Uniform:
        pool = drawn[size]
        if values is None and pool and draw(st.integers(0, 2)) == 0:
            # The same bits as another operand, or their sign flipped: equal, opposite and
            # cancelling operands are where compares and float arithmetic are subtle.
            value = draw(st.sampled_from(pool)) ^ draw(st.sampled_from((0, 1 << (size - 1))))
        else:
            value = draw(values if values is not None else scalar_values(size))
        pool.append(value)
        uniform = Uniform(f"u{len(uniforms)}", size)
        uniforms.append(uniform)
        scalars[uniform.name] = value
        return uniform

    if row.name in MEMORY_ROWS and draw(st.booleans()):
        new_buffer()  # an unused buffer first: the accessed one is then buffer 1

    srcs = []
    for spec, size in zip(row.srcs, sizes, strict=True):
        mods = {m: spec.allows(m) and draw(st.booleans()) for m in ("abs", "neg")}
        if spec.kind == ADDR:
            if row.name in MEMORY_ROWS and draw(st.integers(0, 4)) > 0:
                ref = new_buffer()
            else:
                near = st.builds(
                    lambda k, off: buffer_base(k) + off, st.integers(0, 1), st.integers(-8, 48)
                )
                ref = new_scalar(64, st.one_of(near, scalar_values(64)))
        elif spec.imm is not None and draw(st.integers(0, 3)) == 0:
            ref = Immediate(draw(IMMEDIATES[spec.imm]))
        elif row.name in MEMORY_ROWS and spec.name == "index" and draw(st.booleans()):
            tid = Value("tid", 32)
            tid_used = True
            ref = tid
        elif row.name in MEMORY_ROWS and spec.name == "index":
            small = st.integers(-12, 12).map(lambda v: v & 0xFFFFFFFF)
            ref = new_scalar(size, st.one_of(small, scalar_values(size)))
        else:
            ref = new_scalar(size)
        srcs.append(Operand(ref, **mods))

    dest = Value("r", dest_size) if dest_size else None
    sat = row.sat and draw(st.booleans())
    ins = Instruction(row, dest, srcs, attrs, sat=sat)
    # The row's own check sees the operands as drawn: an immediate makes a 16-bit source,
    # which f2f may refuse (convert #0 mode=f2f to 16 bits converts nothing).
    assume(row.check is None or row.check(ins) is None)
    if row.name == "ffma" and draw(st.booleans()):
        cancel = _cancel_product(ins, scalars, dest_size)
        if cancel is not None:
            scalars[srcs[2].ref.name] = cancel

    entry = Block("block0")
    fn = Function("case", uniforms, [entry])
    if tid_used:
        entry.instructions.append(_ins("get_sr", tid, [], {"sr": "thread_id"}))
    entry.instructions.append(ins)
    if row.name in BRANCH_ROWS:
        taken, fallthrough = Block("block1"), Block("block2")
        for block, value in ((taken, 1), (fallthrough, 0)):
            flag = Value(f"flag{value}", 16)
            block.instructions += [
                _ins("mov_imm", flag, [], {"value": value}),
                _ins("export", None, [Operand(flag)], {"slot": 0}),
                _ins("stop", None, [], {}),
            ]
        ins.blocks = [taken, fallthrough]
        fn.blocks += [taken, fallthrough]
    else:
        if dest is not None:
            entry.instructions.append(_ins("export", None, [Operand(dest)], {"slot": 0}))
        entry.instructions.append(_ins("stop", None, [], {}))

    # Threads of one store would race on a uniform address; with the thread id as index
    # every thread has its own bytes.
    one_thread = row.name == "device_store" and not tid_used
    threads = 1 if one_thread else draw(st.integers(1, 4))
    return Case(fn, ins, InputSet(threads, scalars, buffers), tid if tid_used else None)


def _ins(name: str, dest, srcs, attrs) -> Instruction:
    return Instruction(OPCODES[name], dest, list(srcs), dict(attrs))


# --- comparing the two oracles --------------------------------------------------------------------


def check_agreement(case: Case) -> None:
    errors = verify(case.fn)
    assert not errors, "\n".join(map(str, errors))
    fn, ins, inputs = case.fn, case.ins, case.inputs
    outcome = CompiledFunction(fn).run([inputs])[0]

    operands = uniform_terms(fn, inputs.scalars)
    memory = function_memory(fn, inputs.buffers)
    encoded = []
    for thread in range(inputs.threads):
        values = dict(operands)
        if case.tid is not None:
            values[case.tid] = bitvec(thread, 32)
        enc = encode_instruction(ins, values, thread_id=thread, memory=memory)
        encoded.append(enc)
        memory = enc.memory_after  # threads touch disjoint bytes: any order will do

    # Undefined behaviour: the interpreter reports the first reason raised, first thread.
    expected_ub = None
    for position, (reason, _) in enumerate(encoded[0].reasons):
        hit = [t for t, enc in enumerate(encoded) if value_of(enc.reasons[position][1])]
        if hit:
            expected_ub = Undefined(reason, hit[0])
            break
    any_ub = any(value_of(enc.undefined) for enc in encoded)
    assert any_ub == (expected_ub is not None)
    if expected_ub is not None or isinstance(outcome, Undefined):
        assert outcome == expected_ub
        return
    assert isinstance(outcome, Returned), outcome

    wave_mask = None
    if ins.opcode.wave:
        conditions = [bool(value_of(enc.ballots[0])) for enc in encoded]
        wave_mask = sum(1 << t for t, on in enumerate(conditions) if on)
    for thread, enc in enumerate(encoded):
        outputs = outcome.outputs[thread]
        if wave_mask is not None:
            assert len(enc.ballots) == 1
            assert outputs[0] == wave_mask, f"thread {thread}: interpreter {outputs[0]:#x}"
        elif ins.name == "export":
            slot = ins.attrs["slot"]
            assert outputs[slot] == value_of(enc.exports[slot]), f"thread {thread}"
            assert set(enc.exports) == {slot}
        elif ins.name in BRANCH_ROWS:
            assert outputs[0] == int(value_of(enc.result)), f"thread {thread}"
        elif ins.dest is not None:
            z3_bits = value_of(enc.result)
            assert outputs[0] == z3_bits, (
                f"thread {thread}: interpreter {outputs[0]:#x}, z3 {z3_bits:#x}"
            )
        else:
            assert enc.result is None

    buffer_uniforms = [u for u in fn.uniforms if u.is_buffer]
    for number, uniform in enumerate(buffer_uniforms):
        z3_bytes = bytes(value_of(b) for b in memory.buffer_bytes(number))
        assert outcome.memory[uniform.name] == z3_bytes, uniform.name


# --- the tests ----------------------------------------------------------------------------------------


def test_every_row_with_an_effect_is_covered():
    assert {row.name for row in TESTED_ROWS} == set(OPCODES) - NOT_COVERED
    assert NOT_COVERED <= set(OPCODES)


def single(name: str, dest_size: int | None, srcs, attrs=None, sat=False, threads=1) -> Case:
    """A hand-made case: `srcs` holds (size, bits, modifiers...) for a scalar uniform, or an
    `Immediate`."""
    uniforms, scalars, operands = [], {}, []
    for src in srcs:
        if isinstance(src, Immediate):
            operands.append(Operand(src))
            continue
        size, bits, *mods = src
        uniform = Uniform(f"u{len(uniforms)}", size)
        uniforms.append(uniform)
        scalars[uniform.name] = bits
        operands.append(Operand(uniform, abs="abs" in mods, neg="neg" in mods))
    dest = Value("r", dest_size) if dest_size else None
    ins = Instruction(OPCODES[name], dest, operands, dict(attrs or {}), sat=sat)
    body = [ins, _ins("export", None, [Operand(dest)], {"slot": 0})] if dest else [ins]
    fn = Function("case", uniforms, [Block("block0", body + [_ins("stop", None, [], {})])])
    return Case(fn, ins, InputSet(threads, scalars), None)


F32_ONE_PLUS = 0x3F800800  # 1 + 2**-12: its square 1 + 2**-11 + 2**-24 is an f32 midpoint
HAND_PICKED = [
    # ffma rounds once: the product's rounding error survives the cancellation...
    (single("ffma", 32, [(32, F32_ONE_PLUS), (32, F32_ONE_PLUS), (32, 0xBF801000)]), 0x33800000),
    (single("ffma", 16, [(16, 0x3C10), (16, 0x3C10), (16, 0xBC20)]), 0x0C00),
    # ... and a tiny addend breaks the product's tie (float64 alone would round twice).
    (single("ffma", 32, [(32, F32_ONE_PLUS), (32, F32_ONE_PLUS), (32, 0x0D800000)]), 0x3F801001),
    # 64-bit integers to f32 in one rounding (through float64 it would be 0x5d800000).
    (single("convert", 32, [(64, (1 << 60) + (1 << 36) + 1)], {"mode": "u2f"}), 0x5D800001),
    (single("convert", 32, [(64, -((1 << 60) + (1 << 36) + 1) % (1 << 64))], {"mode": "s2f"}),
     0xDD800001),
    (single("convert", 32, [(32, (1 << 24) + 3)], {"mode": "u2f"}), 0x4B800002),
    (single("convert", 16, [(16, 0xFFFF)], {"mode": "u2f"}), 0x7C00),
    (single("convert", 16, [(16, 0x8000)], {"mode": "s2f"}), 0xF800),
    # f32 -> f16: ties to even, overflow at 65520, subnormals kept, NaN canonical.
    (single("convert", 16, [(32, 0x3F801000)], {"mode": "f2f"}), 0x3C00),
    (single("convert", 16, [(32, 0x3F803000)], {"mode": "f2f"}), 0x3C02),
    (single("convert", 16, [(32, 0x477FF000)], {"mode": "f2f"}), 0x7C00),
    (single("convert", 16, [(32, 0x477FEFFF)], {"mode": "f2f"}), 0x7BFF),
    (single("convert", 16, [(32, 0x33000000)], {"mode": "f2f"}), 0x0000),
    (single("convert", 16, [(32, 0x33400000)], {"mode": "f2f"}), 0x0001),
    (single("convert", 16, [(32, 0xFF800001)], {"mode": "f2f"}), 0x7E00),
    (single("convert", 32, [(16, 0x0001)], {"mode": "f2f"}), 0x33800000),
    # float -> int truncates and saturates; NaN gives 0.
    (single("convert", 32, [(32, 0x4F000000)], {"mode": "f2s"}), 0x7FFFFFFF),
    (single("convert", 32, [(32, 0xCF000001)], {"mode": "f2s"}), 0x80000000),
    (single("convert", 32, [(32, 0xBFC00000)], {"mode": "f2s"}), 0xFFFFFFFF),
    (single("convert", 32, [(32, 0x4F7FFFFF)], {"mode": "f2u"}), 0xFFFFFF00),
    (single("convert", 32, [(32, 0xBF000000)], {"mode": "f2u"}), 0),
    (single("convert", 16, [(16, 0xFC00)], {"mode": "f2s"}), 0x8000),
    (single("convert", 16, [(16, 0x7C00)], {"mode": "f2u"}), 0xFFFF),
    (single("convert", 16, [(16, 0x7E01)], {"mode": "f2s"}), 0),
    # RNE ties, signed zeros, subnormals, NaN, .sat.
    (single("fadd", 16, [(16, 0x6800), (16, 0x3C00)]), 0x6800),
    (single("fadd", 16, [(16, 0x6801), (16, 0x3C00)]), 0x6802),
    (single("fadd", 32, [(32, 0x3F800001), (32, 0x33800000)]), 0x3F800002),
    (single("fadd", 32, [(32, 0x80000000), (32, 0x80000000)]), 0x80000000),
    (single("fadd", 32, [(32, 0x3F800000), (32, 0x3F800000, "neg")]), 0x00000000),
    (single("fadd", 32, [(16, 0x0001), (32, 0x80000000)]), 0x33800000),
    (single("fmul", 32, [(32, 0x00800000), (32, 0x3F000000)]), 0x00400000),
    (single("fmul", 32, [(32, 0x7F800000), (32, 0x00000000)]), 0x7FC00000),
    (single("fmov", 32, [(32, 0x80000000)]), 0x80000000),
    (single("fmov", 16, [(16, 0xFE01)]), 0x7E00),
    (single("fmov", 32, [(32, 0x7F800001)], sat=True), 0),
    (single("fmov", 32, [(32, 0x80000000)], sat=True), 0),
    (single("fmul", 16, [(16, 0x4000), (16, 0x3C00)], sat=True), 0x3C00),
    (single("fcmp", 16, [(32, 0), (32, 0x80000000)], {"cond": "eq", "inv": 0}), 1),
    (single("fcmp", 16, [(32, 0x7FC00000), (32, 0x7FC00000)], {"cond": "eq", "inv": 0}), 0),
]  # fmt: skip


def _hand_picked_id(value) -> str:
    if isinstance(value, Case):
        return value.ins.name + (".sat" if value.ins.sat else "")
    return f"{value:#x}"


@pytest.mark.parametrize(("case", "expected"), HAND_PICKED, ids=_hand_picked_id)
def test_hand_picked_cases(case: Case, expected: int) -> None:
    assert not verify(case.fn)
    outcome = CompiledFunction(case.fn).run([case.inputs])[0]
    assert outcome.outputs[0][0] == expected
    check_agreement(case)


@pytest.mark.parametrize("row", TESTED_ROWS, ids=lambda row: row.name)
def test_z3_agrees_with_the_interpreter(row: Opcode) -> None:
    @settings(
        derandomize=True,
        max_examples=EXAMPLES.get(row.name, EXAMPLES_PER_ROW),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(case=cases(row))
    def agree(case: Case) -> None:
        check_agreement(case)

    agree()
