"""The verifier of exec, vreg and machine functions (their levels' verifying hook).

Every level: the SSA verifier's per-instruction rules that still apply (the opcode belongs
to the level's table; source and target counts; destinations; `.sat`; attributes;
modifiers, immediates and uniforms per source; the row's own check); destination and
source sizes and width rules per row; logical successors are blocks of the function; phis
have one source per logical predecessor, in their order, of the destination's size; the
layout is Mesa's (`else_*cmp` first, then phis, then the body, then the trailing control:
pop_exec, push_exec, jmp_exec_*, if_*cmp, while_*cmp, break, stop, with stop last); no
read finds a register (half by half) or virtual register that no path from the entry has
written (a may-be-written forward dataflow over the logical CFG); and when the function
has exec-mask control flow, r0l is written only by the exec rows, begin_cf
(`r0l = mov_imm value=0x0`) or a select (Mesa's break_if lowering), and no other
destination overlaps it (without control flow r0l is an ordinary register, as in Mesa).

Per level, which operands may appear: exec has SSA values (each defined once, dominating
its uses over the logical CFG) and r0l; vreg has virtual registers and r0l (an index may be
accessed at several sizes: `v7:16` beside `v7:32` is the low half of v7, so a read finds
only the halves some path wrote, half by half); machine has physical registers only, naturally aligned and inside the 256
halves. Parallel copies' destinations never overlap and match their sources' sizes.

An instruction of a shape already found valid in this process, at this level and with or
without control flow (`agxir.verifier_shapes`), is asked only whether its targets and
uniforms are the function's; `reference=True` judges every one in full and finds the
undefined reads with sets (`undefined_reads_reference`), the agreement tests' oracle.
"""

from __future__ import annotations

from agxir.cfg import CFG, Dominators
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
from agxir.machine.undefined_reads import undefined_reads_reference
from agxir.opcodes import spec
from agxir.ssa_verifier import MODIFIERS, Verifier, VerifyError
from agxir.text.printer import format_instruction
from agxir.verifier_shapes import ValidShapes, in_function_sound, shape_key

_EXEC_ROWS = frozenset(row.name for row in MACHINE_ROWS) - {"parallel_copy"}
_R0L_WRITERS = frozenset({"mov_imm", "icmpsel", "fcmpsel"})
_ELSE = frozenset({"else_icmp", "else_fcmp"})
# What may end a block after its body, in Mesa's layout (agx_compile.c, agx_lower_pseudo.c).
_TRAILING = frozenset({
    "pop_exec", "push_exec", "jmp_exec_any", "jmp_exec_none", "if_icmp", "if_fcmp",
    "while_icmp", "while_fcmp", "break", "stop",
})  # fmt: skip


def _key(ref) -> object:
    return ref.name if isinstance(ref, Value) else ref


def _name(ref) -> str:
    if isinstance(ref, Value):
        return f"%{ref.name}"
    if isinstance(ref, Immediate):
        return f"#{ref.bits}"
    return ref.name


# (level, has exec-mask control) -> instruction shapes (`agxir.verifier_shapes.shape_key`)
# found valid there in this process: the level picks the opcode table and the operands
# allowed, control whether r0l is reserved; nothing else `instruction` reads is the
# function's but its targets and uniforms, asked again on every instruction
# (`in_function`).
_VALID_SHAPES: dict[tuple[str, bool], ValidShapes] = {}
_shape = shape_key  # (looked up here: test_verifier_memo.py swaps in one giving None, judging all)


class _MachineVerifier:
    # The SSA verifier's checks that only need `fn`, `error` and `block_set` are shared.
    check_names = Verifier.check_names
    check_uniforms = Verifier.check_uniforms
    check_targets = Verifier.check_targets
    check_attrs = Verifier.check_attrs
    check_source = Verifier.check_source

    def __init__(self, fn: Function, *, reference: bool = False) -> None:
        self.fn = fn
        self.table = opcodes_for_level(fn.level)
        self.level = str(fn.level)  # compared per operand: the name, a plain string
        self.errors: list[VerifyError] = []
        self.control = any(ins.opcode.name in _EXEC_ROWS for b in fn.blocks for ins in b.instructions)
        self.block_set = set(fn.blocks)
        self.uniform_set = set(fn.uniforms)
        self.virtual_places: dict[tuple[int, int], tuple[object, ...]] = {}
        self.reference = reference  # every instruction judged in full (the tests' oracle)

    def error(self, block: Block | None, index: int | None, message: str, ins=None) -> None:
        text = format_instruction(ins) if ins is not None else None
        self.errors.append(VerifyError(block.name if block else None, index, message, text))

    def run(self) -> list[VerifyError]:
        fn = self.fn
        if not fn.blocks:
            self.error(None, None, "a function needs at least one block")
            return self.errors
        self.check_names()
        self.check_uniforms()
        for block in fn.blocks:
            successors = block.logical_successors or []
            for succ in successors:
                if succ not in self.block_set:
                    self.error(block, None, f"logical successor {succ.name} is not a block here")
            for twice in {succ for succ in successors if successors.count(succ) > 1}:
                # as the SSA verifier's "the two targets must differ": one logical edge per
                # pair of blocks, which phis (a source per predecessor) and edge splitting
                # (out-of-ssa) rely on
                self.error(block, None, f"logical successor {twice.name} is listed twice")
        errors = self.errors
        valid = None
        if not self.reference:
            valid = _VALID_SHAPES.setdefault((self.level, self.control), ValidShapes())
        block_set, uniform_set = self.block_set, self.uniform_set
        for block in fn.blocks:
            self.layout(block)
            for index, ins in enumerate(block.instructions):
                if valid is None:
                    self.instruction(block, index, ins)
                    continue
                key = _shape(ins)
                row = ins.opcode
                try:
                    known = key is not None and valid.get(key) is row
                except TypeError:  # an attribute a wrong pass set to a list: no shape
                    known = False
                if known:
                    if not in_function_sound(ins, block, index, True, block_set, uniform_set):
                        self.in_function(block, index, ins)
                    continue
                before = len(errors)
                self.instruction(block, index, ins)
                if len(errors) == before:
                    valid.remember(key, row)
        if self.errors:
            return self.errors
        self.phis()
        if self.level == "exec" and not self.errors:
            self.ssa_values()
        if not self.errors:
            if self.reference:
                self.undefined_reads_reference()
            else:
                self.undefined_reads()
        return self.errors

    def in_function(self, block: Block, index: int, ins: Instruction) -> None:
        """What `instruction` asks of an instruction of a valid shape (never a phi or a
        copy), in its order: are its targets and uniforms the function's?"""
        for target in ins.blocks:
            if target not in self.block_set:
                self.error(block, index, f"target {target.name} is not a block of this function", ins)
        for src in ins.srcs:
            if isinstance(src.ref, Uniform) and src.ref not in self.uniform_set:
                self.error(block, index, f"uniform {src.ref.name} is not declared by the function", ins)

    # --- layout -----------------------------------------------------------------------------------
    def layout(self, block: Block) -> None:
        """else_*cmp first, then phis, then the body, then trailing control; stop last."""
        instructions = block.instructions
        trailing: Instruction | None = None
        body: Instruction | None = None
        for index, ins in enumerate(instructions):
            name = ins.opcode.name
            if name in _ELSE:
                if index != 0:
                    self.error(block, index, f"{ins.name} must be the first instruction of its block", ins)
            elif name == "phi":
                if body is not None or trailing is not None:
                    self.error(block, index, "phi after a non-phi instruction; phis come first (after an else)", ins)
            elif name in _TRAILING:
                trailing = trailing or ins
                if name == "stop" and index != len(instructions) - 1:
                    self.error(block, index, "stop must be the last instruction of its block", ins)
            else:
                body = ins
                if trailing is not None:
                    self.error(block, index, f"{ins.name} follows the block's trailing {trailing.name}; "
                               "control flow ends a block", ins)

    # --- one instruction ------------------------------------------------------------------------
    def instruction(self, block: Block, index: int, ins: Instruction) -> None:
        row = ins.opcode
        name = row.name
        if self.table.get(name) is not row:
            self.error(block, index, f"{ins.name} is not an opcode of the {self.fn.level} level", ins)
            return
        errors = self.errors
        before = len(errors)
        srcs = ins.srcs
        if not row.variadic and len(srcs) != len(row.srcs):
            self.error(block, index, f"{ins.name} takes {len(row.srcs)} source(s), found {len(srcs)}", ins)
        is_phi = name == "phi"
        copy = name == "parallel_copy"
        if not is_phi:
            self.check_targets(block, index, ins)
        self.destination(block, index, ins)
        if ins.sat and not row.sat:
            self.error(block, index, f".sat is not allowed on {ins.name}", ins)
        self.check_attrs(block, index, ins)
        operand_problem = self.operand_problem
        for src in srcs:
            problem = operand_problem(src.ref)
            if problem:
                self.error(block, index, problem, ins)
        for ref in (ins.dest,) if ins.dest is not None else ins.dests:  # (ins.defs())
            problem = operand_problem(ref)
            if problem:
                self.error(block, index, problem, ins)
        structural_ok = len(errors) == before
        declared = row.srcs
        register_dest = not isinstance(ins.dest, Value)
        for position, src in enumerate(srcs):
            if isinstance(src.ref, Uniform) and src.ref not in self.uniform_set:
                self.error(block, index, f"uniform {src.ref.name} is not declared by the function", ins)
            if is_phi or copy:
                for modifier in MODIFIERS:
                    if getattr(src, modifier):
                        self.error(block, index, f"{ins.name} sources cannot carry .{modifier}", ins)
            elif position < len(declared):
                self.check_source(block, index, ins, position, src, declared[position])
                if register_dest and declared[position].width_rule is not None:
                    self.width_rule(block, index, ins, src, declared[position])
        if is_phi:
            self.phi_sizes(block, index, ins)
        if copy:
            self.parallel_copy(block, index, ins)
        if structural_ok and row.check is not None:
            message = row.check(ins)
            if message:
                self.error(block, index, message, ins)
        if self.control:
            self.r0l_writes(block, index, ins)

    def destination(self, block: Block, index: int, ins: Instruction) -> None:
        row = ins.opcode
        if ins.name == "parallel_copy":
            if ins.dest is not None or len(ins.dests) != len(ins.srcs):
                self.error(block, index, "a parallel copy has one destination per source", ins)
            return
        dest = ins.dest
        if row.has_dest and dest is None:
            self.error(block, index, f"{ins.name} needs a destination", ins)
        elif not row.has_dest and dest is not None:
            self.error(block, index, f"{ins.name} has no destination, but {_name(dest)} is given", ins)
        elif dest is not None and dest.size not in row.dest_sizes:
            sizes = "/".join(str(s) for s in row.dest_sizes)
            self.error(block, index, f"{ins.name} writes {sizes} bits, not {dest.size} ({_name(dest)})", ins)

    def r0l_writes(self, block: Block, index: int, ins: Instruction) -> None:
        if not self.control:
            return
        for dest in ins.defs():
            if dest == R0L:
                if ins.name not in _R0L_WRITERS:
                    self.error(block, index, f"{ins.name} writes r0l, the exec-mask counter", ins)
                elif ins.name == "mov_imm" and ins.attrs.get("value") != 0:
                    self.error(block, index, "r0l = mov_imm must write 0 (begin_cf); the exec rows "
                               "update r0l", ins)
            elif isinstance(dest, Register) and dest.overlaps(R0L):
                self.error(block, index, f"{dest.name} overlaps r0l, reserved for control flow", ins)

    def operand_problem(self, ref) -> str | None:
        level = self.level
        if isinstance(ref, Value):
            return None if level == "exec" else f"SSA value %{ref.name} at the {level} level"
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
            return None
        return None

    def width_rule(self, block, index, ins, src, declared: spec.Src) -> None:
        """The row's width rule against a register or vreg destination (the SSA verifier's
        check_source applies it to SSA destinations)."""
        ref, dest = src.ref, ins.dest
        if dest is None or isinstance(ref, Immediate) or declared.width_rule is None:
            return
        if declared.width_rule == spec.AT_MOST_DEST and ref.size > dest.size:
            self.error(block, index, f"source {declared.name} is {ref.size} bits, wider than the {dest.size}-bit destination", ins)
        elif declared.width_rule == spec.SAME_AS_DEST and ref.size != dest.size:
            self.error(block, index, f"source {declared.name} must be as wide as the {dest.size}-bit destination", ins)

    def phi_sizes(self, block, index, ins) -> None:
        if self.level == "machine" and not isinstance(ins.dest, Register):
            self.error(block, index, "a machine-level phi writes a register", ins)
        for src in ins.srcs:
            if not isinstance(src.ref, Immediate) and ins.dest is not None and src.ref.size != ins.dest.size:
                self.error(block, index, f"phi source {_name(src.ref)} is {src.ref.size} bits, the "
                           f"destination {ins.dest.size}", ins)

    def parallel_copy(self, block, index, ins) -> None:
        written: set[object] = set()
        for dest, src in zip(ins.dests, ins.srcs, strict=False):
            if not isinstance(src.ref, Immediate | Uniform) and src.ref.size != dest.size:
                self.error(block, index, f"copy of {src.ref.size} bits into {dest.size}", ins)
            places = set(self.places(dest)) if isinstance(dest, Register | VirtualRegister) else {_key(dest)}
            if places & written:
                self.error(block, index, f"{_name(dest)} is written twice", ins)
            written |= places

    # --- SSA values at the exec level ------------------------------------------------------------
    def ssa_values(self) -> None:
        """Each value defined once; each use dominated by its definition over the logical
        CFG (a phi's source by the end of its predecessor)."""
        cfg = CFG(self.fn)
        doms = Dominators(cfg)
        defs: dict[Value, tuple[Block, int]] = {}
        names: dict[str, Value] = {}
        for block in self.fn.blocks:
            for index, ins in enumerate(block.instructions):
                value = ins.dest
                if not isinstance(value, Value):
                    continue
                if value in defs or names.get(value.name, value) is not value:
                    self.error(block, index, f"%{value.name} is defined more than once", ins)
                    continue
                defs[value] = (block, index)
                names[value.name] = value
        for block in self.fn.blocks:
            if block not in cfg.reachable:
                continue
            for index, ins in enumerate(block.instructions):
                for position, src in enumerate(ins.srcs):
                    value = src.ref
                    if not isinstance(value, Value):
                        continue
                    site = defs.get(value)
                    if site is None:
                        self.error(block, index, f"%{value.name} is used but never defined", ins)
                        continue
                    def_block, def_index = site
                    if ins.is_phi:
                        pred = ins.blocks[position]
                        if pred in cfg.reachable and not doms.dominates(def_block, pred):
                            self.error(block, index, f"phi source %{value.name} for {pred.name} is not "
                                       f"available there: {def_block.name} does not dominate it", ins)
                    elif def_block is block and def_index >= index:
                        self.error(block, index, f"use of %{value.name} before its definition", ins)
                    elif def_block is not block and not doms.dominates(def_block, block):
                        self.error(block, index, f"use of %{value.name} is not dominated by its "
                                   f"definition in {def_block.name} (over the logical CFG)", ins)

    # --- phis -------------------------------------------------------------------------------------
    def phis(self) -> None:
        preds: dict[Block, list[Block]] = {b: [] for b in self.fn.blocks}
        for block in self.fn.blocks:
            for succ in block.logical_successors or []:
                if succ in preds:
                    preds[succ].append(block)
        for block in self.fn.blocks:
            for index, ins in enumerate(block.instructions):
                name = ins.opcode.name
                if name != "phi":
                    if index == 0 and name in _ELSE:
                        continue
                    break  # (run asks only of a sound layout: no phi follows)
                if len(ins.srcs) != len(ins.blocks):
                    self.error(block, index, f"phi has {len(ins.srcs)} sources but {len(ins.blocks)} blocks", ins)
                elif ins.blocks != preds[block]:
                    names = ", ".join(b.name for b in preds[block])
                    self.error(block, index, f"phi sources must come from {names or 'no block'}, in that order", ins)

    # --- reads nothing wrote -------------------------------------------------------------------
    def places(self, ref) -> range | tuple[object, ...] | list[object]:
        if isinstance(ref, Register):
            return ref.halves
        if isinstance(ref, VirtualRegister):  # its halves: a narrow access is the low ones
            key = (ref.index, ref.size)
            found = self.virtual_places.get(key)
            if found is None:
                found = self.virtual_places[key] = tuple((ref.index, piece) for piece in range(ref.size // 16))
            return found
        return []

    def undefined_reads(self) -> None:
        """`undefined_reads_reference` with each set of places an int, a bit per place: a
        register half inside the file is its own bit, any other place (a virtual register's
        piece, a half past the file) one numbered from 256 as first met. The same unions,
        the same questions, the same errors."""
        fn = self.fn
        places = self.places
        bit_of: dict[object, int] = {}
        mask_of: dict[object, int] = {}

        def mask(ref) -> int:
            kind = ref.__class__
            if kind is Register:
                half, count = ref.half, ref.size // 16
                if 0 <= half and 0 <= count and half + count <= NUM_HALVES:
                    return ((1 << count) - 1) << half  # (no dataclass hash on the way)
                key = (kind, half, ref.size)
            elif kind is VirtualRegister:
                key = (ref.index, ref.size)
            elif isinstance(ref, Register | VirtualRegister):
                key = ref
            else:
                return 0  # (no places: a value, uniform or immediate)
            found = mask_of.get(key)
            if found is None:
                found = 0
                for place in places(ref):
                    if place.__class__ is int and 0 <= place < NUM_HALVES:
                        bit = place
                    else:
                        bit = bit_of.get(place)
                        if bit is None:
                            bit = bit_of[place] = NUM_HALVES + len(bit_of)
                    found |= 1 << bit
                mask_of[key] = found
            return found

        preds: dict[Block, list[Block]] = {b: [] for b in fn.blocks}
        written: dict[Block, int] = {}
        # per block: what its phis write, and what its other instructions read before the
        # block writes it (the walk below reports a read iff such a place is missing from
        # what comes in and the phis write, so a block without one is not walked)
        phi_written: dict[Block, int] = {}
        exposed: dict[Block, int] = {}
        for block in fn.blocks:
            for succ in block.logical_successors or []:
                preds[succ].append(block)
            found = phis = local = reads = 0
            for ins in block.instructions:
                if ins.opcode.name == "phi":
                    if ins.dest is not None:
                        bits = mask(ins.dest)
                        found |= bits
                        phis |= bits
                    continue
                for src in ins.srcs:
                    ref = src.ref
                    if ref.__class__ is Register:  # (mask's first case inline: most reads)
                        half, size = ref.half, ref.size
                        if half == 0 and size == 16:
                            continue  # r0l
                        count = size // 16
                        if 0 <= half and 0 <= count and half + count <= NUM_HALVES:
                            reads |= (((1 << count) - 1) << half) & ~local
                            continue
                    elif isinstance(ref, Register):
                        if ref.half == 0 and ref.size == 16 and ref.__class__ is Register:
                            continue  # r0l
                    elif not isinstance(ref, VirtualRegister):
                        continue
                    reads |= mask(ref) & ~local
                dest = ins.dest
                if dest.__class__ is Register:
                    half, count = dest.half, dest.size // 16
                    if 0 <= half and 0 <= count and half + count <= NUM_HALVES:
                        bits = ((1 << count) - 1) << half
                    else:
                        bits = mask(dest)
                elif dest is not None:
                    bits = mask(dest)
                else:
                    bits = 0
                    for dest in ins.dests:
                        bits |= mask(dest)
                found |= bits
                local |= bits
            written[block] = found
            phi_written[block] = phis
            exposed[block] = reads
        written_out: dict[Block, int] = {}
        changed = True
        while changed:
            changed = False
            for block in fn.blocks:
                state = 0
                for pred in preds[block]:
                    state |= written_out.get(pred, 0)
                out = state | written[block]
                if written_out.get(block) != out:
                    written_out[block] = out
                    changed = True
        for block in fn.blocks:
            state = 0
            for pred in preds[block]:
                state |= written_out.get(pred, 0)
            instructions = block.instructions
            for index, ins in enumerate(instructions):
                name = ins.opcode.name
                if name != "phi":
                    if index == 0 and name in _ELSE:
                        continue
                    break  # (run asks only of a sound layout: no phi follows)
                for src, pred in zip(ins.srcs, ins.blocks, strict=False):
                    if mask(src.ref) & ~written_out.get(pred, 0):
                        name = getattr(src.ref, "name", src.ref)
                        self.error(block, None, f"phi source {name} is not written on the path from {pred.name}", ins)
                state |= mask(ins.dest)
            if not exposed[block] & ~(state | phi_written[block]):
                continue  # every read finds its places written: nothing to report
            for index, ins in enumerate(instructions):
                if ins.opcode.name == "phi":
                    continue
                for src in ins.srcs:
                    ref = src.ref
                    if isinstance(ref, Register):
                        if ref.half == 0 and ref.size == 16 and ref.__class__ is Register:
                            continue  # r0l
                    elif not isinstance(ref, VirtualRegister):
                        continue  # (nothing to find written)
                    if mask(ref) & ~state:
                        name = getattr(ref, "name", ref)
                        self.error(block, index, f"reads {name}, which no path from the entry writes", ins)
                if ins.dest is not None:
                    state |= mask(ins.dest)
                else:
                    for dest in ins.dests:
                        state |= mask(dest)

    def undefined_reads_reference(self) -> None:
        undefined_reads_reference(self)  # (today's sets of places: the tests' oracle)


def verify_machine(fn: Function, *, reference: bool = False) -> list[VerifyError]:
    """Every problem with an exec, vreg or machine function; empty when it is valid.
    `reference` judges every instruction in full and finds undefined reads with sets of
    places (`undefined_reads_reference`): the agreement tests' oracle."""
    return _MachineVerifier(fn, reference=reference).run()
