"""Functions of every level for the verifiers' and the encoding oracle's agreement tests:
generated SSA programs and every step of every default pipeline on them (`functions`), and
copies broken the ways wrong passes break programs (`broken`): operands swapped, sizes,
registers, attributes, immediates, modifiers, destinations and opcodes changed,
instructions dropped or duplicated, branches retargeted, uniforms undeclared."""

from __future__ import annotations

import random
from functools import cache

from agxir.ir import (
    Block,
    Immediate,
    Operand,
    Register,
    Uniform,
    Value,
    VirtualRegister,
    clone_function,
)
from agxir.machine.opcodes import opcodes_for_level
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from tests.oracles.machine.pipeline_programs import default_pipelines, pipeline_steps


@cache
def functions(count: int = 11, seed: int = 3, per_level: int = 10) -> tuple:
    """Each generated program (SSA) and, of every level, up to `per_level` of its pipeline
    steps' results (spread over all the pipelines' steps)."""
    pipelines = default_pipelines()
    config = CampaignConfig(seed=seed, pipelines=pipelines)
    found = []
    for index in range(count):
        fn, _inputs = build_case(seed, index, config)
        found.append(fn)
        steps: dict[str, list] = {}
        for _step, _before, work in pipeline_steps(fn, pipelines):
            steps.setdefault(str(work.level), []).append(work)
        for results in steps.values():
            stride = max(1, len(results) // per_level)
            found += results[::stride][:per_level]
    return tuple(found)


def _wrong_ref(rng: random.Random, ref, immediate: bool = True):
    size = rng.choice((16, 32, 64, 48, 8))
    choices = [
        Register(rng.randrange(0, 260), max(size, 16)),  # (no register is named at 8 bits)
        Register(rng.randrange(0, 8) * 2, 32), Value("w", size),
        VirtualRegister(rng.randrange(3), size), Uniform("undeclared", size), ref,
    ]
    if immediate:
        choices += [Immediate(rng.choice((0, 7, 255, 256, 65535, 1 << 20, -1))),
                    Immediate(rng.choice((True, 1.0)))]
    return rng.choice(choices)


def _wrong_attr(rng: random.Random, value):
    return rng.choice((0, 1, 3, 4, 5, 9, 300, -1, True, 1.0, "ult", "nope", value))


def _break_instruction(rng: random.Random, fn, ins, level: str) -> None:
    roll = rng.randrange(14)
    if roll == 0 and len(ins.srcs) > 1:
        i, j = rng.sample(range(len(ins.srcs)), 2)
        ins.srcs[i], ins.srcs[j] = ins.srcs[j], ins.srcs[i]
    elif roll == 1 and ins.srcs:
        k = rng.randrange(len(ins.srcs))
        src = ins.srcs[k]
        ins.srcs[k] = Operand(_wrong_ref(rng, src.ref), src.abs, src.neg)
    elif roll == 2 and ins.srcs:
        k = rng.randrange(len(ins.srcs))
        src = ins.srcs[k]
        ins.srcs[k] = Operand(src.ref, rng.random() < 0.5, rng.random() < 0.5)
    elif roll == 3 and ins.dest is not None:
        ins.dest = _wrong_ref(rng, ins.dest, immediate=False)
    elif roll == 4 and ins.attrs:
        name = rng.choice(sorted(ins.attrs))
        ins.attrs[name] = _wrong_attr(rng, ins.attrs[name])
    elif roll == 5:
        if ins.attrs and rng.random() < 0.5:
            del ins.attrs[rng.choice(sorted(ins.attrs))]
        else:
            ins.attrs["bogus"] = 1
    elif roll == 6:
        ins.sat = not ins.sat
    elif roll == 7 and ins.blocks:
        k = rng.randrange(len(ins.blocks))
        ins.blocks[k] = rng.choice(fn.blocks) if rng.random() < 0.5 else Block("elsewhere")
    elif roll == 8:
        rows = [row for row in opcodes_for_level(level).values()
                if len(row.srcs) == len(ins.srcs) and not row.variadic]
        if rows:
            ins.opcode = rng.choice(rows)
    elif roll == 9 and "n" in ins.attrs:
        ins.attrs["n"] = rng.choice((0, 3, 4, 70000))
    elif roll == 10 and "shift" in ins.attrs:
        ins.attrs["shift"] = rng.choice((0, 3, 4, 5, 9))
    elif roll == 11 and not ins.opcode.terminator:  # a write dropped: reads nothing wrote
        for block in fn.blocks:
            if ins in block.instructions:
                block.instructions.remove(ins)
    elif roll == 13:  # an immediate past its slot
        for k, src in enumerate(ins.srcs):
            if isinstance(src.ref, Immediate):
                ins.srcs[k] = Operand(Immediate(rng.choice((256, 65536, -1, 1 << 20))))
    elif roll == 12:  # a register read elsewhere, of the same size, aligned
        for k, src in enumerate(ins.srcs):
            ref = src.ref
            if isinstance(ref, Register | VirtualRegister):
                step = ref.size // 16 or 1
                moved = (Register(rng.randrange(0, 256 // step + 1) * step, ref.size)  # (or past)
                         if isinstance(ref, Register) else VirtualRegister(ref.index + 50, ref.size))
                ins.srcs[k] = Operand(moved, src.abs, src.neg)


def broken(seed: int, functions_: tuple) -> list:
    """A copy of each function with a few random breakages (some copies stay valid)."""
    rng = random.Random(seed)
    found = []
    for original in functions_:
        fn = clone_function(original)
        level = str(fn.level)
        everything = [ins for block in fn.blocks for ins in block.instructions]
        if everything and rng.random() < 0.5:  # one breakage: most shapes stay valid
            _break_instruction(rng, fn, rng.choice(everything), level)
            found.append(fn)
            continue
        rate = rng.choice((0.02, 0.1, 0.3))
        for block in fn.blocks:
            for ins in list(block.instructions):
                if rng.random() < rate:
                    _break_instruction(rng, fn, ins, level)
            if block.instructions and rng.random() < rate:
                k = rng.randrange(len(block.instructions))
                if rng.random() < 0.5:
                    del block.instructions[k]
                else:
                    block.instructions.insert(k, block.instructions[k])
        if fn.uniforms and rng.random() < 0.05:
            fn.uniforms.pop()
        found.append(fn)
    return found
