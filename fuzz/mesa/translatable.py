"""Programs Mesa's backend can take: the generator's programs restricted to what the opcode
table (`fuzz/mesa/opcodes.py`) translates, for `agxfuzz run --mesa` and the round-trip
property.

`translatable_program(source)` draws swarm features with the address groups off (their
opcodes are NIR's, folded before the backend), generates a program, and spells three model
opcodes the way Mesa's isel does, each by the model's own definition of it: `imul a, b` as
`imad a, b, #0`, `signext a` as `iadd a, #0`, `fmov a` as `fadd a, #-0.0`; a phi's
immediate source gets a `mov_imm` in its predecessor (Mesa's phis take none). A program that
still holds something untranslatable (a ballot, an f2f or 64-bit convert) is dropped and
the next one drawn from the same source, so the result is a function of the seed; after
`MAX_DRAWS` it gives up (`NoTranslatableProgram`), which no seed tried has needed.
"""

from __future__ import annotations

import os
from dataclasses import replace

from agxir.ir import Function, Immediate, Instruction, Operand, Value
from agxir.opcodes.table import OPCODES
from fuzz.generate import Features, generate_inputs, generate_program
from fuzz.mesa.opcodes import untranslatable

MAX_DRAWS = 64
# agx_ra bounds the register file by the occupancy tier its demand falls in; the three
# smallest tiers' register counts (halves), which a pressure block fills (add_pressure)
PRESSURE_TIERS = (104, 112, 128)
NEG_ZERO = 0x80  # the 8-bit minifloat -0.0
# The SSA branches become exec-mask control flow in lower-cf, which Mesa takes.
SSA_ONLY = frozenset({"jump", "if_icmp (ssa)", "if_fcmp (ssa)"})


class NoTranslatableProgram(Exception):
    pass


def _materialize_phi_sources(fn: Function) -> None:
    """Phi sources Mesa's IR never has (an immediate, a 64-bit uniform) become a mov_imm
    (or a 64-bit mov) at the end of their predecessor, before the branch, as Mesa's isel
    gives NIR constants an instruction of their own."""
    count = 0
    for block in fn.blocks:
        for phi in block.phis():
            for k, src in enumerate(phi.srcs):
                if src.is_immediate:
                    bits = src.ref.bits & ((1 << phi.dest.size) - 1)
                    make = (OPCODES["mov_imm"], [], {"value": bits})
                elif src.is_uniform and src.size == 64:
                    make = (OPCODES["bitop"], [src, Operand(Immediate(0))], {"tt": 0xA})
                else:
                    continue
                count += 1
                value = Value(f"phic{count}", phi.dest.size)
                pred = phi.blocks[k]
                at = len(pred.instructions) - (1 if pred.terminator is not None else 0)
                pred.instructions.insert(at, Instruction(make[0], value, make[1], make[2]))
                phi.srcs[k] = Operand(value)


def _export_dead_values(fn: Function) -> None:
    """NIR's DCE runs before Mesa's isel, so its backend never sees a value nothing reads:
    each such value is exported right after its definition, to the output slots the
    program's own exports leave free (round robin), so whatever a pass does to it is seen.
    Without this a planted bug in agx_optimizer mostly rewrote dead code (issue 21)."""
    used = {src.ref for block in fn.blocks for ins in block.instructions for src in ins.srcs}
    taken = {ins.attrs["slot"] for block in fn.blocks for ins in block.instructions
             if ins.name == "export"}
    free = [slot for slot in range(8) if slot not in taken]
    if not free:
        return
    count = 0
    for block in fn.blocks:
        out = []
        for ins in block.instructions:
            out.append(ins)
            dest = ins.dest
            if (isinstance(dest, Value) and dest not in used and ins.name != "phi"
                    and not ins.is_terminator):
                out.append(Instruction(OPCODES["export"], None, [Operand(dest)],
                                       {"slot": free[count % len(free)]}))
                count += 1
        block.instructions = out


def mesa_spelling(fn: Function) -> Function:
    """`fn` with imul, signext and fmov spelled as Mesa's isel spells them, large phi
    sources Mesa never has given an instruction, and its dead values exported (in place)."""
    _materialize_phi_sources(fn)
    _export_dead_values(fn)
    zero = Operand(Immediate(0))
    for block in fn.blocks:
        for index, ins in enumerate(block.instructions):
            if ins.name == "imul":
                new = Instruction(OPCODES["imad"], ins.dest, [*ins.srcs, zero], {"shift": 0})
            elif ins.name == "signext":
                new = Instruction(OPCODES["iadd"], ins.dest, [ins.srcs[0], zero], {"shift": 0})
            elif ins.name == "fmov":
                new = Instruction(OPCODES["fadd"], ins.dest,
                                  [ins.srcs[0], Operand(Immediate(NEG_ZERO))], {}, sat=ins.sat)
            else:
                continue
            block.instructions[index] = new
    return fn


def blockers(fn: Function) -> set[str]:
    """What keeps an SSA program from Mesa once lowered (empty: it translates)."""
    return set(untranslatable(fn)) - SSA_ONLY


def translatable_program(source, *, size: int = 50, name: str = "fuzz") -> Function:
    for _ in range(MAX_DRAWS):
        features = replace(Features.from_source(source), address_math=False, address=False)
        fn = mesa_spelling(generate_program(source, features, size=size, name=name))
        if not blockers(fn):
            return fn
    raise NoTranslatableProgram(f"no translatable program in {MAX_DRAWS} draws")


def add_pressure(fn: Function, source) -> None:
    """A block of register pressure at the end of the entry block (in place), the one way a
    campaign reaches agx_ra's live-range splitting (find_best_region_to_evict,
    assign_regs_by_copying, insert_copies_for_clobbered_killed: 110 lines no program of the
    profile reached, `agxfuzz mesa coverage`): about as many 16-bit values as the smallest
    occupancy tiers hold, all live at once; the even ones summed (their registers freed
    one by one, every other register), then one 32- or 64-bit value, which finds no
    aligned free range left and makes agx_ra evict; then the odd ones summed. The sums and
    the wide value are exported (`_export_dead_values`)."""
    block = fn.entry
    at = len(block.instructions) - (1 if block.terminator is not None else 0)
    count = PRESSURE_TIERS[source.below(len(PRESSURE_TIERS))] - source.below(8)
    new: list[Instruction] = []
    halves = []
    for k in range(count):
        halves.append(Value(f"pr{k}", 16))
        new.append(Instruction(OPCODES["mov_imm"], halves[-1], [], {"value": source.bits(16)}))

    def chain(values: list[Value]) -> None:
        total = values[0]
        for value in values[1:]:
            out = Value(f"pr{len(halves) + len(new)}", 16)
            new.append(Instruction(OPCODES["iadd"], out, [Operand(total), Operand(value)],
                                   {"shift": 0}))
            total = out

    chain(halves[0::2])
    wide = Value("prw", (32, 64)[source.below(2)])
    new.append(Instruction(OPCODES["mov_imm"], wide, [], {"value": source.bits(16)}))
    chain(halves[1::2])
    block.instructions[at:at] = new
    _export_dead_values(fn)


def pressure_every() -> int:
    """$AGXFUZZ_MESA_PRESSURE: one program in K gets a pressure block (0, the default: none;
    `agxfuzz mesa coverage --pressure K` sets it for its campaign)."""
    try:
        return max(0, int(os.environ.get("AGXFUZZ_MESA_PRESSURE") or 0))
    except ValueError:
        return 0


def translatable_case(source, config):
    """`fuzz.generate.cases.build_case` for a campaign over Mesa's passes."""
    fn = translatable_program(source, size=config.size)
    every = pressure_every()
    if every and source.below(every) == 0:
        add_pressure(fn, source)
    inputs = generate_inputs(fn, source, threads=config.threads, sets=config.sets)
    return fn, inputs
