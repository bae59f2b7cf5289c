"""The SSA verifier: every rule a well-formed SSA function obeys, checked against the opcode
table, and the error types every level's verifier reports with.

This module owns the definition of "valid SSA IR". It checks block structure, SSA (single
definitions, dominance of uses, phi placement and predecessor order) and, for every
instruction, the row of the opcode table: operand count, branch targets, destination,
`.sat`, attributes, uniforms, each source's immediates, modifiers and widths, and the row's
own `check`. It never changes the function and never stops at the first problem. The
front door is `agxir.verifier.verify`, which finds a function's level in `agxir.levels`;
the machine verifier (`agxir.machine.verifier`) reuses some of the checks here. An
instruction of a shape already found valid in this process (`agxir.verifier_shapes`) is
asked only what depends on its function; `reference=True` judges every one in full.

Instruction positions in errors are 0-based indices into `block.instructions`.
"""

from __future__ import annotations

from dataclasses import dataclass

from agxir.cfg import CFG, Dominators
from agxir.ir import SIZES, Block, Function, Immediate, Instruction, Operand, Uniform, Value
from agxir.opcodes.spec import (
    ADDR,
    AT_MOST_DEST,
    FIMM8,
    IMM8,
    IMM16,
    SAME_AS_DEST,
    Opcode,
    Src,
)
from agxir.verifier_shapes import ValidShapes, in_function_sound, shape_key
from agxir.verifier_wording import (
    block_list,
    describe,
    legal,
    legal_values,
    plural,
    ref_name,
    source_name,
    widths,
)

__all__ = ["VerifyError", "VerificationFailed", "Verifier", "verify_ssa"]

IMMEDIATE_LIMITS = {
    IMM8: (256, "8-bit immediate"),
    IMM16: (65536, "16-bit immediate"),
    FIMM8: (256, "8-bit float immediate"),
}
MODIFIERS = ("abs", "neg")


@dataclass(frozen=True)
class VerifyError:
    """One problem. `block` and `index` locate it; both are None for function-level ones."""

    block: str | None
    index: int | None
    message: str
    instruction: str | None = None  # e.g. "iadd %x", to recognise the instruction

    def __str__(self) -> str:
        if self.block is None:
            return self.message
        if self.index is None:
            return f"{self.block}: {self.message}"
        where = f"{self.block}, instruction {self.index}"
        if self.instruction:
            where += f" ({self.instruction})"
        return f"{where}: {self.message}"


class VerificationFailed(Exception):
    def __init__(self, errors: list[VerifyError]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(str(error) for error in self.errors))


def verify_ssa(fn: Function, *, reference: bool = False) -> list[VerifyError]:
    """Every problem with an SSA function (layout problems first, then per instruction in
    block order); empty when it is valid. The SSA level's verifying hook. `reference`
    judges every instruction in full, without the shapes already found valid (`shape_key`):
    the agreement tests' oracle."""
    return Verifier(fn, reference=reference).run()


_VALID_SHAPES = ValidShapes()  # (`shape_key`) SSA instructions found valid in this process


_ATTRIBUTE_NAMES: dict[int, tuple[Opcode, frozenset[str]]] = {}  # id(row) -> (row, names)


def _attribute_names(row: Opcode) -> frozenset[str]:
    """The names of the attributes `row` declares (worked out once per row)."""
    found = _ATTRIBUTE_NAMES.get(id(row))
    if found is None or found[0] is not row:
        found = _ATTRIBUTE_NAMES[id(row)] = (row, frozenset(attr.name for attr in row.attrs))
    return found[1]


# --- the checks ---------------------------------------------------------------------------------


class Verifier:
    def __init__(self, fn: Function, *, reference: bool = False) -> None:
        self.fn = fn
        self.errors: list[VerifyError] = []
        self.reference = reference

    def error(self, block: Block | None, index: int | None, message: str, ins=None) -> None:
        self.errors.append(
            VerifyError(
                block.name if block is not None else None,
                index,
                message,
                describe(ins) if ins is not None else None,
            )
        )

    def run(self) -> list[VerifyError]:
        fn = self.fn
        if not fn.blocks:
            self.error(None, None, "function has no blocks")
            return self.errors
        self.check_names()
        self.check_uniforms()
        self.cfg = CFG(fn)
        self.doms = Dominators(self.cfg)
        self.block_set = set(fn.blocks)
        self.uniform_set = set(fn.uniforms)

        entry_preds = self.cfg.preds[fn.entry]
        if entry_preds:
            who = (
                f"{entry_preds[0].name} branches"
                if len(entry_preds) == 1
                else f"{block_list(entry_preds)} branch"
            )
            self.error(
                fn.entry, None, f"the entry block must have no predecessors, but {who} to it"
            )
        for block in self.cfg.blocks:
            self.check_layout(block)
        self.collect_definitions()
        if self.reference:
            for block in self.cfg.blocks:
                for index, ins in enumerate(block.instructions):
                    self.check_instruction(block, index, ins)
        else:
            self.check_instructions()
        return self.errors

    def check_instructions(self) -> None:
        """`check_instruction` on every instruction, but one of a shape found valid
        (`shape_key`) only asks what depends on the function: its targets and uniforms
        (`check_in_function`) and its uses (`check_uses`), first without a word and, only
        when something is wrong, through those two for the errors' words and order."""
        errors = self.errors
        valid = _VALID_SHAPES
        block_set, uniform_set, defs = self.block_set, self.uniform_set, self.defs
        reachable, dominates = self.cfg.reachable, self.doms.dominates
        for block in self.cfg.blocks:
            live = block in reachable
            for index, ins in enumerate(block.instructions):
                key = shape_key(ins)
                row = ins.opcode
                try:
                    known = key is not None and valid.get(key) is row
                except TypeError:  # an attribute a wrong pass set to a list: no shape
                    known = False
                if not known:
                    before = len(errors)
                    self.check_instruction(block, index, ins)
                    if len(errors) == before:
                        valid.remember(key, row)
                    continue
                if not in_function_sound(
                    ins, block, index, live, block_set, uniform_set, defs, dominates
                ):
                    self.check_in_function(block, index, ins)
                    self.check_uses(block, index, ins)

    def check_in_function(self, block: Block, index: int, ins: Instruction) -> None:
        """What `check_instruction` asks of a non-phi instruction besides its shape and its
        uses, in its order: are the targets and the uniforms the function's?"""
        for target in ins.blocks:
            if target not in self.block_set:
                self.error(
                    block, index, f"target {target.name} is not a block of this function", ins
                )
        for src in ins.srcs:
            if isinstance(src.ref, Uniform) and src.ref not in self.uniform_set:
                self.error(
                    block, index, f"uniform {src.ref.name} is not declared by the function", ins
                )

    # 1. names and uniforms

    def check_names(self) -> None:
        listed: set[Block] = set()
        named: set[str] = set()
        for block in self.fn.blocks:
            if block in listed:
                self.error(block, None, "block appears more than once in the function")
                continue
            listed.add(block)
            if block.name in named:
                self.error(block, None, f"block name {block.name} is used by two blocks")
            named.add(block.name)

    def check_uniforms(self) -> None:
        names: set[str] = set()
        for uniform in self.fn.uniforms:
            if uniform.name in names:
                self.error(None, None, f"uniform name {uniform.name} is declared twice")
            names.add(uniform.name)
            if uniform.size not in SIZES:
                self.error(
                    None,
                    None,
                    f"uniform {uniform.name} is {uniform.size}-bit; uniforms are {widths(SIZES)}",
                )
            if uniform.is_buffer and uniform.size != 64:
                self.error(None, None, f"buffer uniform {uniform.name} must be 64-bit")

    # 2. block layout

    def check_layout(self, block: Block) -> None:
        instructions = block.instructions
        if not instructions:
            self.error(block, None, "block is empty; it must end in a terminator")
            return
        last = len(instructions) - 1
        seen_non_phi = False
        for index, ins in enumerate(instructions):
            row = ins.opcode  # (what is_terminator and is_phi read, without their calls)
            if row.terminator and index != last:
                self.error(block, index, f"terminator {ins.name} must be the last instruction", ins)
            if row.name != "phi":
                seen_non_phi = True
            elif seen_non_phi:
                self.error(
                    block, index, "phi after a non-phi instruction; phis must come first", ins
                )
        if not instructions[last].opcode.terminator:
            self.error(
                block,
                None,
                f"block does not end in a terminator (its last instruction is "
                f"{instructions[last].name})",
            )

    # 3. single definition

    def collect_definitions(self) -> None:
        self.defs: dict[Value, tuple[Block, int]] = {}
        self.by_name: dict[str, Value] = {}
        for block in self.cfg.blocks:
            for index, ins in enumerate(block.instructions):
                value = ins.dest
                if not isinstance(value, Value):
                    continue
                if value in self.defs:
                    first, at = self.defs[value]
                    self.error(
                        block,
                        index,
                        f"%{value.name} is defined more than once (first in {first.name}, "
                        f"instruction {at})",
                        ins,
                    )
                    continue
                self.defs[value] = (block, index)
                other = self.by_name.setdefault(value.name, value)
                if other is not value:
                    first, at = self.defs[other]
                    self.error(
                        block,
                        index,
                        f"value name %{value.name} is already used by another value (defined "
                        f"in {first.name}, instruction {at})",
                        ins,
                    )

    # 4-8. per instruction

    def check_instruction(self, block: Block, index: int, ins: Instruction) -> None:
        before = len(self.errors)
        row = ins.opcode
        if not row.variadic and len(ins.srcs) != len(row.srcs):
            self.error(
                block,
                index,
                f"{ins.name} takes {plural(len(row.srcs), 'source')}, found {len(ins.srcs)}",
                ins,
            )
        is_phi = row.name == "phi"
        if not is_phi:
            self.check_targets(block, index, ins)
        self.check_dest(block, index, ins)
        if ins.sat and not row.sat:
            self.error(block, index, f".sat is not allowed on {ins.name}", ins)
        self.check_attrs(block, index, ins)
        structural_ok = len(self.errors) == before

        declared = row.srcs
        for position, src in enumerate(ins.srcs):
            if isinstance(src.ref, Uniform) and src.ref not in self.uniform_set:
                self.error(
                    block,
                    index,
                    f"uniform {src.ref.name} is not declared by the function",
                    ins,
                )
            if is_phi:
                self.check_phi_source(block, index, ins, position, src)
            elif position < len(declared):
                self.check_source(block, index, ins, position, src, declared[position])
        if is_phi:
            self.check_phi_blocks(block, index, ins)
        self.check_uses(block, index, ins)

        # Row checks index attrs, dest and srcs freely, so they run only on a sound shape.
        if structural_ok and row.check is not None:
            message = row.check(ins)
            if message:
                self.error(block, index, message, ins)

    def check_targets(self, block: Block, index: int, ins: Instruction) -> None:
        row = ins.opcode
        if not ins.blocks and not row.targets:
            return  # no targets, none wanted: nothing below can fail
        if len(ins.blocks) != row.targets:
            wanted = plural(row.targets, "target block") if row.targets else "no target blocks"
            self.error(block, index, f"{ins.name} takes {wanted}, found {len(ins.blocks)}", ins)
        for target in ins.blocks:
            if target not in self.block_set:
                self.error(
                    block, index, f"target {target.name} is not a block of this function", ins
                )
        if row.targets == 2 and len(ins.blocks) == 2 and ins.blocks[0] is ins.blocks[1]:
            self.error(
                block,
                index,
                f"the two targets of {ins.name} must differ (both are {ins.blocks[0].name})",
                ins,
            )

    def check_dest(self, block: Block, index: int, ins: Instruction) -> None:
        row = ins.opcode
        dest = ins.dest
        if row.has_dest and dest is None:
            self.error(block, index, f"{ins.name} needs a destination", ins)
        elif not row.has_dest and dest is not None:
            self.error(
                block, index, f"{ins.name} has no destination, but %{dest.name} is given", ins
            )
        elif dest is not None and dest.size not in row.dest_sizes:
            self.error(
                block,
                index,
                f"destination %{dest.name} is {dest.size}-bit; {ins.name} writes "
                f"{widths(row.dest_sizes)}",
                ins,
            )

    def check_attrs(self, block: Block, index: int, ins: Instruction) -> None:
        row = ins.opcode
        given = ins.attrs
        if given.keys() == _attribute_names(row):
            # exactly the declared names (the common case): only the values can be wrong
            for attr in row.attrs:
                value = given[attr.name]
                if not legal(attr, value):
                    self.error(
                        block,
                        index,
                        f"{attr.name}={value!r} is not a valid value for attribute {attr.name} "
                        f"(expected {legal_values(attr)})",
                        ins,
                    )
            return
        declared = {attr.name: attr for attr in row.attrs}
        for name in ins.attrs:
            if name not in declared:
                self.error(block, index, f"{ins.name} has no attribute {name}", ins)
        for name, attr in declared.items():
            if name not in ins.attrs:
                self.error(block, index, f"missing attribute {name}", ins)
                continue
            value = ins.attrs[name]
            if not legal(attr, value):
                self.error(
                    block,
                    index,
                    f"{name}={value!r} is not a valid value for attribute {name} "
                    f"(expected {legal_values(attr)})",
                    ins,
                )

    def check_source(
        self, block: Block, index: int, ins: Instruction, position: int, src: Operand, spec: Src
    ) -> None:
        # `what` names the source in messages; it is spelled only when there is one
        if (src.abs and not spec.allows("abs")) or (src.neg and not spec.allows("neg")):
            what = source_name(ins, position, spec)
            for modifier in MODIFIERS:
                if getattr(src, modifier) and not spec.allows(modifier):
                    self.error(block, index, f"modifier .{modifier} is not allowed on {what}", ins)
        ref = src.ref
        if isinstance(ref, Immediate):
            if spec.imm is None:
                what = source_name(ins, position, spec)
                self.error(block, index, f"{what} cannot be an immediate", ins)
                return
            limit, kind = IMMEDIATE_LIMITS[spec.imm]
            if not 0 <= ref.bits < limit:
                what = source_name(ins, position, spec)
                self.error(
                    block, index, f"immediate #{ref.bits} does not fit the {kind} of {what}", ins
                )
            return
        if isinstance(ref, Uniform) and not spec.uniform:
            what = source_name(ins, position, spec)
            self.error(block, index, f"{what} cannot be a uniform", ins)
        size = ref.size
        if spec.kind == ADDR and size != 64:
            what = source_name(ins, position, spec)
            self.error(
                block, index, f"{what} is an address and must be 64-bit, found {size}-bit", ins
            )
        elif size not in spec.sizes:
            what = source_name(ins, position, spec)
            self.error(
                block,
                index,
                f"{what} ({ref_name(ref)}) is {size}-bit; it must be {widths(spec.sizes)}",
                ins,
            )
        dest = ins.dest
        if not isinstance(dest, Value) or spec.width_rule is None:
            return
        if spec.width_rule == SAME_AS_DEST and size != dest.size:
            what = source_name(ins, position, spec)
            self.error(
                block,
                index,
                f"{what} ({ref_name(ref)}) is {size}-bit but the destination is "
                f"{dest.size}-bit; they must match",
                ins,
            )
        elif spec.width_rule == AT_MOST_DEST and size > dest.size:
            what = source_name(ins, position, spec)
            self.error(
                block,
                index,
                f"{what} ({ref_name(ref)}) is {size}-bit, wider than the {dest.size}-bit destination",
                ins,
            )

    # 5. phis

    def check_phi_source(
        self, block: Block, index: int, ins: Instruction, position: int, src: Operand
    ) -> None:
        for modifier in MODIFIERS:
            if getattr(src, modifier):
                self.error(
                    block,
                    index,
                    f"phi sources cannot carry modifiers (.{modifier} on source {position})",
                    ins,
                )
        if isinstance(ins.dest, Value) and not src.is_immediate and src.size != ins.dest.size:
            self.error(
                block,
                index,
                f"phi source {ref_name(src.ref)} is {src.size}-bit but the destination is "
                f"{ins.dest.size}-bit",
                ins,
            )

    def check_phi_blocks(self, block: Block, index: int, ins: Instruction) -> None:
        preds = self.cfg.preds[block]
        if not preds:
            self.error(block, index, "phi in a block with no predecessors", ins)
        if len(ins.srcs) != len(ins.blocks):
            self.error(
                block,
                index,
                f"phi has {plural(len(ins.srcs), 'source')} but "
                f"{plural(len(ins.blocks), 'incoming block')}",
                ins,
            )
        if len(ins.srcs) != len(preds):
            self.error(
                block,
                index,
                f"phi has {plural(len(ins.srcs), 'source')} but {block.name} has "
                f"{plural(len(preds), 'predecessor')}",
                ins,
            )
        if list(ins.blocks) == preds:
            return
        if sorted(map(id, ins.blocks)) == sorted(map(id, preds)):
            self.error(
                block,
                index,
                f"phi sources must follow predecessor order: expected {block_list(preds)}, "
                f"found {block_list(ins.blocks)}",
                ins,
            )
        else:
            self.error(
                block,
                index,
                f"phi incoming blocks must be the predecessors: expected {block_list(preds)}, "
                f"found {block_list(ins.blocks)}",
                ins,
            )

    # 4. uses

    def check_uses(self, block: Block, index: int, ins: Instruction) -> None:
        live = block in self.cfg.reachable
        for position, src in enumerate(ins.srcs):
            value = src.ref
            if not isinstance(value, Value):
                continue
            site = self.defs.get(value)
            if site is None:
                hint = ""
                if value.name in self.by_name:
                    hint = (
                        f" (a different value named %{value.name} is defined; values are "
                        "matched by identity)"
                    )
                self.error(block, index, f"%{value.name} is used but never defined{hint}", ins)
                continue
            if not live:
                continue
            def_block, def_index = site
            if ins.is_phi:
                if position >= len(ins.blocks):
                    continue
                pred = ins.blocks[position]
                # A phi reads its source at the end of the incoming edge's source block.
                if pred in self.cfg.reachable and not self.doms.dominates(def_block, pred):
                    self.error(
                        block,
                        index,
                        f"phi source %{value.name} for predecessor {pred.name} is not "
                        f"available there: its definition in {def_block.name} does not "
                        f"dominate {pred.name}",
                        ins,
                    )
            elif def_block is block:
                if def_index >= index:
                    self.error(
                        block,
                        index,
                        f"use of %{value.name} is not dominated by its definition (it is "
                        f"defined at instruction {def_index} of this block)",
                        ins,
                    )
            elif not self.doms.dominates(def_block, block):
                self.error(
                    block,
                    index,
                    f"use of %{value.name} is not dominated by its definition",
                    ins,
                )
