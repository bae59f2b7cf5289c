"""The verifier of exec, vreg and machine functions (`agxir.verifier.verify` dispatches here).

Per level, which operands may appear: exec has SSA values and r0l; vreg has virtual
registers (one size per index) and r0l; machine has physical registers only. Everywhere:
the opcode belongs to the level's table; destination and source sizes are legal for the
row; registers are naturally aligned and inside the 256 halves; a parallel copy's
destinations do not overlap and match their sources' sizes; a phi has one source per
logical predecessor, in their order; logical successors are blocks of the function; r0l
is, when the function has exec-mask control flow, written only by begin_cf
(`r0l = mov_imm value=0x0`) or a select (Mesa's break_if lowering), and no other register
overlaps it (without control flow r0l is an ordinary register, as in Mesa); and no read finds a register (half by half), virtual register or value that no path
from the entry has written (a may-be-written forward dataflow over the logical CFG).
"""

from __future__ import annotations

from agxir.ir import (
    NUM_HALVES,
    R0L,
    Block,
    Function,
    Immediate,
    Instruction,
    Register,
    Uniform,
    Value,
    VirtualRegister,
)
from agxir.machine.opcodes import MACHINE_ROWS, opcodes_for_level
from agxir.opcodes import spec
from agxir.text.printer import format_instruction
from agxir.verifier import VerifyError

_EXEC_ROWS = frozenset(row.name for row in MACHINE_ROWS) - {"parallel_copy"}
_R0L_WRITERS = frozenset({"mov_imm", "icmpsel", "fcmpsel"})


def _key(ref) -> object:
    return ref.name if isinstance(ref, Value) else ref


class _MachineVerifier:
    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.table = opcodes_for_level(fn.level)
        self.errors: list[VerifyError] = []
        self.control = any(ins.name in _EXEC_ROWS for ins in fn.instructions())
        self.vreg_sizes: dict[int, int] = {}

    def error(self, block: Block | None, index: int | None, message: str, ins=None) -> None:
        text = format_instruction(ins) if ins is not None else None
        self.errors.append(VerifyError(block.name if block else None, index, message, text))

    def run(self) -> list[VerifyError]:
        fn = self.fn
        if not fn.blocks:
            self.error(None, None, "a function needs at least one block")
            return self.errors
        members = set(fn.blocks)
        for block in fn.blocks:
            for succ in block.logical_successors or []:
                if succ not in members:
                    self.error(block, None, f"logical successor {succ.name} is not a block here")
        for block in fn.blocks:
            for index, ins in enumerate(block.instructions):
                self.instruction(block, index, ins)
        self.phis()
        if not self.errors:
            self.undefined_reads()
        return self.errors

    # --- one instruction ------------------------------------------------------------------------
    def instruction(self, block: Block, index: int, ins: Instruction) -> None:
        if self.table.get(ins.name) is not ins.opcode:
            self.error(block, index, f"{ins.name} is not an opcode of the {self.fn.level} level", ins)
            return
        for ref in [src.ref for src in ins.srcs] + ins.defs():
            problem = self.operand_problem(ref)
            if problem:
                self.error(block, index, problem, ins)
        row = ins.opcode
        if row.has_dest and ins.dest is not None and ins.dest.size not in row.dest_sizes:
            sizes = "/".join(str(s) for s in row.dest_sizes)
            self.error(block, index, f"{ins.name} writes {sizes} bits, not {ins.dest.size}", ins)
        if not row.variadic:
            for position, (src, declared) in enumerate(zip(ins.srcs, row.srcs, strict=False)):
                self.source_size(block, index, ins, position, src, declared)
        if ins.name == "parallel_copy":
            self.parallel_copy(block, index, ins)
        if self.control and R0L in ins.defs() and ins.name not in _R0L_WRITERS:
            self.error(block, index, f"{ins.name} writes r0l, the exec-mask counter", ins)
        if self.control:
            for dest in ins.defs():
                if isinstance(dest, Register) and dest != R0L and dest.overlaps(R0L):
                    self.error(block, index, f"{dest.name} overlaps r0l, reserved for control flow", ins)

    def operand_problem(self, ref) -> str | None:
        level = self.fn.level
        if isinstance(ref, Register):
            if level != "machine" and ref != R0L:
                return f"register {ref.name} at the {level} level (only r0l is allowed)"
            if ref.size not in (16, 32, 64):
                return f"{ref.name}: no {ref.size}-bit registers"
            if not ref.aligned:
                return f"{ref.name} is not aligned: a {ref.size}-bit register starts at a multiple of {ref.size // 16} halves"
            if ref.half + ref.size // 16 > NUM_HALVES:
                return f"{ref.name} is beyond the {NUM_HALVES} halves"
            return None
        if isinstance(ref, VirtualRegister):
            if level != "vreg":
                return f"virtual register {ref!r} at the {level} level"
            size = self.vreg_sizes.setdefault(ref.index, ref.size)
            if size != ref.size:
                return f"v{ref.index} is used as {size} and {ref.size} bits"
            return None
        if isinstance(ref, Value) and level != "exec":
            return f"SSA value %{ref.name} at the {level} level"
        return None

    def source_size(self, block, index, ins, position, src, declared: spec.Src) -> None:
        ref = src.ref
        if isinstance(ref, Immediate):
            return
        if ref.size not in declared.sizes:
            sizes = "/".join(str(s) for s in declared.sizes)
            self.error(block, index, f"source {declared.name} must be {sizes} bits, not {ref.size}", ins)
            return
        dest = ins.dest
        if dest is None or isinstance(ref, Uniform) and declared.width_rule is None:
            return
        if declared.width_rule == spec.AT_MOST_DEST and ref.size > dest.size:
            self.error(block, index, f"source {declared.name} is {ref.size} bits, wider than the {dest.size}-bit destination", ins)
        elif declared.width_rule == spec.SAME_AS_DEST and ref.size != dest.size:
            self.error(block, index, f"source {declared.name} must be as wide as the {dest.size}-bit destination", ins)

    def parallel_copy(self, block, index, ins) -> None:
        written: set[object] = set()
        for dest, src in zip(ins.dests, ins.srcs, strict=True):
            if not isinstance(src.ref, Immediate | Uniform) and src.ref.size != dest.size:
                self.error(block, index, f"copy of {src.ref.size} bits into {dest.size}", ins)
            places = set(dest.halves) if isinstance(dest, Register) else {_key(dest)}
            if places & written:
                self.error(block, index, f"{getattr(dest, 'name', dest)} is written twice", ins)
            written |= places

    # --- phis -------------------------------------------------------------------------------------
    def phis(self) -> None:
        preds: dict[Block, list[Block]] = {b: [] for b in self.fn.blocks}
        for block in self.fn.blocks:
            for succ in block.logical_successors or []:
                if succ in preds:
                    preds[succ].append(block)
        for block in self.fn.blocks:
            for index, ins in enumerate(block.instructions):
                if ins.is_phi and ins.blocks != preds[block]:
                    names = ", ".join(b.name for b in preds[block])
                    self.error(block, index, f"phi sources must come from {names or 'no block'}, in that order", ins)

    # --- reads nothing wrote -------------------------------------------------------------------
    def places(self, ref) -> list[object]:
        if isinstance(ref, Register):
            return list(ref.halves)
        if isinstance(ref, VirtualRegister | Value):
            return [_key(ref)]
        return []

    def undefined_reads(self) -> None:
        fn = self.fn
        written_out: dict[Block, set[object]] = {}
        preds: dict[Block, list[Block]] = {b: [] for b in fn.blocks}
        for block in fn.blocks:
            for succ in block.logical_successors or []:
                preds[succ].append(block)

        def transfer(block: Block, state: set[object], report: bool) -> set[object]:
            state = set(state)
            phis = [ins for ins in block.instructions if ins.is_phi]
            for ins in phis:
                state.update(self.places(ins.dest))
            for index, ins in enumerate(block.instructions):
                if ins.is_phi:
                    continue
                if report:
                    for src in ins.srcs:
                        if src.ref == R0L:
                            continue
                        missing = [p for p in self.places(src.ref) if p not in state]
                        if missing:
                            name = getattr(src.ref, "name", src.ref)
                            self.error(block, index, f"reads {name}, which no path from the entry writes", ins)
                for dest in ins.defs():
                    state.update(self.places(dest))
            return state

        changed = True
        while changed:
            changed = False
            for block in fn.blocks:
                state: set[object] = set()
                for pred in preds[block]:
                    state |= written_out.get(pred, set())
                out = transfer(block, state, False)
                if written_out.get(block) != out:
                    written_out[block] = out
                    changed = True
        for block in fn.blocks:
            state = set()
            for pred in preds[block]:
                state |= written_out.get(pred, set())
            for ins in block.instructions:
                if ins.is_phi:
                    for src, pred in zip(ins.srcs, ins.blocks, strict=False):
                        missing = [p for p in self.places(src.ref) if p not in written_out.get(pred, set())]
                        if missing:
                            name = getattr(src.ref, "name", src.ref)
                            self.error(block, None, f"phi source {name} is not written on the path from {pred.name}", ins)
            transfer(block, state, True)


def verify_machine(fn: Function) -> list[VerifyError]:
    """Every problem with an exec, vreg or machine function; empty when it is valid."""
    return _MachineVerifier(fn).run()
