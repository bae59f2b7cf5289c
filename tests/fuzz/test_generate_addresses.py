"""Address-heavy generation (`fuzz.generate.addresses`): the programs verify, stay defined,
in bounds, aligned and race free on generated inputs, contain the shapes Mesa's AGX address
lowering matches (and their near misses) often, and the near misses have teeth: an unsound
promotion of plain 32-bit math or a swapped extension changes what some programs do."""

from __future__ import annotations

import collections

from hypothesis import HealthCheck, Phase, given, settings

from agxir.ir import Immediate, Instruction, Operand, Value, clone_function
from agxir.opcodes import OPCODES
from agxir.text import print_function
from agxir.verifier import verify
from fuzz.generate import (
    ADDRESS_SHAPES,
    GENERATOR_VERSION,
    MAX_THREADS,
    ChoiceSource,
    Features,
    address_shapes,
    generate_inputs,
    generate_program,
)
from fuzz.generate.addresses import AddressEmitter, program_table
from fuzz.generate.features import ADDRESS_GROUPS
from fuzz.strategies import programs
from oracles.interp import CompiledFunction
from oracles.outcomes import first_difference
from tests.fuzz.test_generate import DELIBERATE_UB

SIZES = (10, 50, 50, 100, 200)
HEAVY = Features.all_on(address_heavy=True)


def heavy(seed: int, *, size: int = 50, swarm: bool = False):
    source = ChoiceSource.from_seed(seed)
    features = Features.from_source(source, address_heavy=True) if swarm else HEAVY
    return generate_program(source, features, size=size)


def run(fn, seed: int, threads: int = 32, sets: int = 8):
    inputs = generate_inputs(fn, ChoiceSource.from_seed(10**6 + seed), threads=threads, sets=sets)
    return inputs, CompiledFunction(fn).run(inputs)


# --- API ------------------------------------------------------------------------------------


def test_address_is_a_swarm_group_and_heavy_is_requested():
    assert "address" in Features.groups()
    assert "address_heavy" not in Features.groups()
    assert GENERATOR_VERSION >= 2
    assert HEAVY.address_heavy and all(getattr(HEAVY, g) for g in ADDRESS_GROUPS)
    swarm = Features(address=False, loads=False, address_math=False).with_address_heavy()
    assert swarm.address and swarm.loads and swarm.address_math
    assert "address-heavy" in HEAVY.describe()
    source = ChoiceSource.from_seed(3)
    drawn = Features.from_source(source, address_heavy=True)
    assert drawn.address_heavy and drawn.address
    # The address emitters are in the table exactly when the group is on.
    names = {fn.__name__ for fn in program_table(Features.all_on()).items}
    assert {"e_array_load", "e_array_store"} <= names
    off = {fn.__name__ for fn in program_table(Features(address=False)).items}
    assert not off & {"e_array_load", "e_array_store"}
    # generate_program(address_heavy=True) is the same as the preset.
    a = generate_program(ChoiceSource.from_seed(5), Features.all_on(), address_heavy=True)
    b = generate_program(ChoiceSource.from_seed(5), HEAVY)
    assert print_function(a) == print_function(b)


def test_heavy_programs_declare_arrays_sized_for_their_indices():
    from fuzz.generate.program import _Program

    strides = collections.Counter()
    for seed in range(100):
        builder = _Program(ChoiceSource.from_seed(seed), HEAVY, 50, "fuzz")
        fn = builder.build()
        assert builder.in_arrays and builder.out_arrays, seed
        declared = {u.name for u in fn.uniforms}
        for array in builder.in_arrays + builder.out_arrays:
            assert array.buffer.name in declared
            assert array.size_bytes <= array.buffer.buffer_bytes
            strides[array.stride] += 1
            end = 0
            for offset, _, nbytes in array.fields:
                assert offset % nbytes == 0 and offset + nbytes <= array.stride
                assert array.stride % nbytes == 0
                end = max(end, offset + nbytes)
            assert not array.fields or end == array.stride
        for array in builder.out_arrays:
            assert array.count == MAX_THREADS * array.owned
            assert array.buffer not in builder.inputs  # outputs are never loaded
    assert all(strides[s] >= 10 for s in (1, 2, 4, 8, 12, 16, 24)), strides


def test_without_address_math_the_shapes_use_plain_math_only():
    features = Features(address_math=False, stores=False)
    relaxed = {"amul", "aadd", "ulea", "ilea", "u2u64", "i2i64"}
    seen = collections.Counter()
    for seed in range(200):
        fn = generate_program(ChoiceSource.from_seed(seed), features)
        assert verify(fn) == []
        names = {ins.name for ins in fn.instructions()}
        assert not names & relaxed, (seed, names & relaxed)
        seen.update(address_shapes(fn))
    assert seen["64-bit offset"] >= 20 and seen["negative index"] >= 20, seen


# --- validity -----------------------------------------------------------------------------------


def test_address_heavy_programs_verify():
    for seed in range(1000):
        fn = heavy(seed, size=SIZES[seed % len(SIZES)], swarm=seed % 3 == 0)
        errors = verify(fn)
        assert errors == [], f"seed {seed}: {errors[:3]}\n{print_function(fn)}"


def test_address_heavy_byte_programs_verify():
    import random

    rng = random.Random(17)
    for case in range(300):
        source = ChoiceSource.from_bytes(rng.randbytes(rng.randrange(0, 3000)))
        fn = generate_program(source, Features.from_source(source, address_heavy=True))
        assert verify(fn) == [], f"case {case}"


def test_address_heavy_programs_stay_defined_in_bounds_and_race_free():
    kinds: collections.Counter = collections.Counter()
    reasons: collections.Counter = collections.Counter()
    for seed in range(300):
        fn = heavy(seed, swarm=seed % 2 == 1)
        threads = MAX_THREADS if seed % 4 == 0 else 32
        _, outcomes = run(fn, seed, threads=threads)
        for outcome in outcomes:
            kinds[outcome.kind] += 1
            assert outcome.kind != "out_of_fuel", f"seed {seed}"
            if outcome.kind == "undefined":
                reasons[outcome.reason] += 1
                # No out-of-bounds access, data race or misaligned access: only the rare
                # deliberately unbounded amul/aadd of the generic emitters, and the ballots
                # placed in divergent code on purpose, may trap.
                assert outcome.reason in DELIBERATE_UB, (seed, outcome)
    rate = kinds["undefined"] / sum(kinds.values())
    print(f"address-heavy UB skip rate: {rate:.2%} ({dict(reasons)})")
    assert rate < 0.20
    assert rate < 0.05


def test_default_programs_with_address_accesses_stay_defined():
    kinds: collections.Counter = collections.Counter()
    for seed in range(200):
        source = ChoiceSource.from_seed(seed)
        fn = generate_program(source, Features.from_source(source))
        _, outcomes = run(fn, seed)
        for outcome in outcomes:
            kinds[outcome.kind] += 1
            if outcome.kind == "undefined":
                assert outcome.reason in DELIBERATE_UB, (seed, outcome)
    assert kinds["undefined"] < 0.05 * sum(kinds.values())


# --- the shapes ---------------------------------------------------------------------------------

# The share of 50-instruction address-heavy programs each shape must appear in, at least.
MINIMUM_SHARE = dict.fromkeys(ADDRESS_SHAPES, 0.25) | {
    "u2u64(amul #2^s)": 0.4,
    "u2u64(amul #c)": 0.18,  # only the struct strides 12 and 24, without a field offset
    "u2u64(aadd #f, amul)": 0.3,
    "computed base, #0": 0.8,
    "fused index": 0.6,
    "ulea": 0.5,
    "i8": 0.7,
    "i16": 0.7,
    "i32": 0.7,
}


def shape_shares(count: int, **kwargs) -> dict[str, float]:
    found: collections.Counter = collections.Counter()
    for seed in range(count):
        found.update(address_shapes(heavy(seed, **kwargs)))
    return {shape: found[shape] / count for shape in ADDRESS_SHAPES}


def test_each_address_shape_is_common_in_heavy_programs():
    shares = shape_shares(300)
    print("\n".join(f"{shape:24} {share:.0%}" for shape, share in shares.items()))
    low = {s: v for s, v in shares.items() if v < MINIMUM_SHARE[s]}
    assert not low, low


def test_shapes_appear_in_swarm_heavy_programs_too():
    shares = shape_shares(300, swarm=True)
    assert all(share >= 0.1 for share in shares.values()), shares


def test_default_programs_contain_some_address_shapes():
    found: collections.Counter = collections.Counter()
    for seed in range(300):
        found.update(address_shapes(generate_program(ChoiceSource.from_seed(seed))))
    for shape in ("u2u64(aadd #f, amul)", "ulea", "ilea", "negative index", "stride 12"):
        assert found[shape] >= 15, found


def test_heavy_memory_accesses_mostly_use_computed_addresses():
    shaped = total = 0
    for seed in range(100):
        fn = heavy(seed)
        defs = {ins.dest: ins for ins in fn.instructions() if ins.dest is not None}
        for ins in fn.instructions():
            if ins.name not in ("device_load", "device_store"):
                continue
            total += 1
            base, index = ins.srcs[-2], ins.srcs[-1]
            computed_base = isinstance(base.ref, Value)
            computed_index = isinstance(index.ref, Value) and defs[index.ref].name != "get_sr"
            shaped += computed_base or computed_index
    assert shaped >= 0.8 * total, (shaped, total)


def test_loop_counters_index_arrays():
    seen = 0
    for seed in range(200):
        fn = heavy(seed, size=100)
        phis = {ins.dest for ins in fn.instructions() if ins.is_phi}
        seen += any(
            ins.name in ("amul", "imul", "imad", "ulea", "ilea", "iadd", "device_load")
            and any(isinstance(s.ref, Value) and s.ref in phis for s in ins.srcs)
            for ins in fn.instructions()
        )
    assert seen >= 40, seen


def test_strategy_draws_address_heavy_programs():
    found: collections.Counter = collections.Counter()
    drawn = []

    @settings(derandomize=True, database=None, deadline=None, max_examples=100,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(programs(address_heavy=True))
    def probe(fn):
        assert verify(fn) == []
        drawn.append(fn)
        found.update(address_shapes(fn))

    probe()
    for shape in ("u2u64(amul #2^s)", "ulea", "computed base, #0", "i8", "i16", "i32"):
        assert found[shape] >= len(drawn) // 10, found


# --- the near misses have teeth -------------------------------------------------------------------


def _defs(fn):
    return {ins.dest: ins for ins in fn.instructions() if ins.dest is not None}


def _imm(op: Operand) -> int | None:
    return op.ref.bits if isinstance(op.ref, Immediate) and not op.neg and not op.abs else None


def _mul_by_constant(op: Operand, defs):
    """(x, c) when `op` is a plain `imul x, #c`, else None."""
    mul = defs.get(op.ref) if isinstance(op.ref, Value) else None
    if mul is None or mul.name != "imul":
        return None
    a, b = mul.srcs
    if _imm(b) and not isinstance(a.ref, Immediate):
        return a, _imm(b)
    if _imm(a) and not isinstance(b.ref, Immediate):
        return b, _imm(a)
    return None


def promote_plain_math(fn):
    """The relaxed rules applied to plain iadd/imul as if they were aadd/amul (unsound: they
    may wrap): `a + u2u64(imul(x, #c))` becomes `ulea(a, imul(x, #(c >> s)), s)` and
    `a + u2u64(iadd(#b, imul(x, #d)))` becomes `ulea(a, iadd(#(b >> s), imul(x, #(d >> s))),
    s)`; the same with i2i64 and ilea. Returns (mutant, rewrites)."""
    fn = clone_function(fn)
    defs = _defs(fn)
    rewrites = 0

    def fresh() -> Value:
        nonlocal rewrites
        return Value(f"m{rewrites}_{len(out)}", 32)

    for block in fn.blocks:
        out: list[Instruction] = []
        for ins in block.instructions:
            if ins.name == "iadd" and ins.dest.size == 64 and not ins.attrs["shift"]:
                for k in (0, 1):
                    wide, base = ins.srcs[k], ins.srcs[1 - k]
                    u = defs.get(wide.ref) if isinstance(wide.ref, Value) else None
                    if u is None or u.name not in ("u2u64", "i2i64") or base.abs or base.neg:
                        continue
                    if getattr(base.ref, "size", None) != 64:
                        continue  # a 64-bit iadd may read a narrower value; ulea's base may not
                    found = _mul_by_constant(u.srcs[0], defs)
                    offset = 0
                    add = defs.get(u.srcs[0].ref) if isinstance(u.srcs[0].ref, Value) else None
                    if found is None and add is not None and add.name == "iadd":
                        for j in (0, 1):
                            b = _imm(add.srcs[j])
                            inner = _mul_by_constant(add.srcs[1 - j], defs)
                            if b is not None and inner is not None and not add.attrs["shift"]:
                                found, offset = inner, b
                    if found is None:
                        continue
                    x, c = found
                    s = min(((c | offset or c) & -(c | offset or c)).bit_length() - 1, 4)
                    if not s:
                        continue
                    scaled = fresh()
                    out.append(
                        Instruction(OPCODES["imul"], scaled, [x, Operand(Immediate(c >> s))])
                    )
                    index = scaled
                    if offset:
                        index = fresh()
                        out.append(
                            Instruction(
                                OPCODES["iadd"],
                                index,
                                [Operand(Immediate(offset >> s)), Operand(scaled)],
                                {"shift": 0},
                            )
                        )
                    lea = OPCODES["ulea" if u.name == "u2u64" else "ilea"]
                    ins = Instruction(lea, ins.dest, [base, Operand(index)], {"shift": s})
                    rewrites += 1
                    break
            out.append(ins)
        block.instructions = out
    return fn, rewrites


def swap_extensions(fn, signed_to_unsigned: bool):
    """ilea/i2i64 made ulea/u2u64 and 32-bit addends of iadd64 and access indices given
    `.abs` (or the reverse): a pass that mixes up sign and zero extension."""
    fn = clone_function(fn)
    pairs = {"ilea": "ulea", "i2i64": "u2u64"}
    if not signed_to_unsigned:
        pairs = {v: k for k, v in pairs.items()}
    rewrites = 0
    for ins in fn.instructions():
        if ins.name == "iadd" and ins.dest.size == 64:
            for k, src in enumerate(ins.srcs):  # implicit extension of a 32-bit addend
                if isinstance(src.ref, Value) and src.ref.size == 32 and not src.neg:
                    if src.abs != signed_to_unsigned:
                        ins.srcs[k] = Operand(src.ref, signed_to_unsigned, False)
                        rewrites += 1
        elif ins.name in pairs:
            ins.opcode = OPCODES[pairs[ins.name]]
            rewrites += 1
        elif ins.name in ("device_load", "device_store"):
            index = ins.srcs[-1]
            if isinstance(index.ref, Value) and index.abs != signed_to_unsigned:
                ins.srcs[-1] = Operand(index.ref, signed_to_unsigned, index.neg)
                rewrites += 1
    return fn, rewrites


def detected(fn, mutant, seed: int) -> bool:
    inputs, before = run(fn, seed)
    after = CompiledFunction(mutant).run(inputs)
    return any(
        b.kind == "returned" and first_difference(b, a) is not None
        for b, a in zip(before, after, strict=True)
    )


def test_an_unsound_promotion_of_plain_math_is_caught():
    applicable = caught = 0
    for seed in range(300):
        fn = heavy(seed)
        mutant, rewrites = promote_plain_math(fn)
        if not rewrites:
            continue
        assert verify(mutant) == []
        applicable += 1
        caught += detected(fn, mutant, seed)
    print(f"promotion of plain iadd/imul: applies to {applicable}, caught in {caught}")
    assert applicable >= 100 and caught >= 30, (applicable, caught)


def test_swapped_extensions_are_caught():
    for signed_to_unsigned in (True, False):
        applicable = caught = 0
        for seed in range(200):
            fn = heavy(seed)
            mutant, rewrites = swap_extensions(fn, signed_to_unsigned)
            if not rewrites:
                continue
            applicable += 1
            caught += detected(fn, mutant, seed)
        print(f"extension swap (signed to unsigned: {signed_to_unsigned}): "
              f"applies to {applicable}, caught in {caught}")  # fmt: skip
        assert applicable >= 150 and caught >= 50, (signed_to_unsigned, applicable, caught)


def test_input_driven_wraps_happen_for_some_inputs_only():
    """`iadd e, (u & 0x80000000)`: the generated inputs set u's sign bit in some sets."""
    high = low = 0
    for seed in range(300):
        fn = heavy(seed)
        defs = _defs(fn)
        masked = set()
        for ins in fn.instructions():
            if (
                ins.name == "bitop"
                and ins.attrs["tt"] == 0x8
                and not isinstance(ins.srcs[0].ref, (Value, Immediate))
            ):
                m = ins.srcs[1]
                if isinstance(m.ref, Value) and defs[m.ref].name == "mov_imm":
                    if defs[m.ref].attrs["value"] == 1 << 31:
                        masked.add(ins.srcs[0].ref.name)
        if not masked:
            continue
        inputs, _ = run(fn, seed)
        for input_set in inputs:
            for name in masked:
                if input_set.scalars[name] >> 31:
                    high += 1
                else:
                    low += 1
    assert high >= 0.1 * (high + low) and low >= 0.1 * (high + low), (high, low)


def test_emitter_is_the_program_builder_base():
    from fuzz.generate.program import _Program

    assert issubclass(_Program, AddressEmitter)
