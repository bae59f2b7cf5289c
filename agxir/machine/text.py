"""The text form of exec, vreg and machine functions: the SSA syntax plus registers.

A level is named by a suffix on `func`: `func.exec @f(...)`, `func.vreg @f(...)`,
`func.machine @f(...)`. Labels list the block's logical successors (`b1: -> b2, b3`;
a bare `b4:` has none). Operands may be physical registers (`r0l`, `r0h`, `r3`, `d2`, and
`h5:32` for a misaligned one), virtual registers (`v7:32`), SSA values (exec level only),
uniforms and immediates. A destination is written `r2 = ...`, `v3:32 = ...` or
`%x:32 = ...`; a parallel copy has several: `r2, r4 = parallel_copy r4, r2`.

Parsing reuses `agxir.text.parser.Parser` for everything shared (the header, the body's
line structure, opcode lookup through the level's table, sources, immediates, attributes,
targets) and raises only `ParseError`. The levels' modules (`agxir.levels.exec`, `vreg`,
`machine`) hand their functions to `parse_machine_tokens` and `print_machine_function`.
Which registers a level may use, sizes and alignment are the machine verifier's job.
"""

from __future__ import annotations

import re

from agxir import ir
from agxir.native import CORE
from agxir.opcodes import spec
from agxir.opcodes.table import UNARY_BITOP_ALIASES
from agxir.text.lexer import EOF, IDENT, IMM, NEWLINE, VALUE, Token
from agxir.text.parser import ALIASES, Parser, Pending, Source
from agxir.text.printer import format_dest, format_instruction_reference, format_uniform

_REGISTER_RE = re.compile(r"r([0-9]+)([lh]?)|d([0-9]+)|h([0-9]+)|v([0-9]+)")


def register_from_name(name: str, size: int | None) -> ir.Register | ir.VirtualRegister | str:
    """The register `name` (with `:size` where the spelling needs one), or an error message."""
    match = _REGISTER_RE.fullmatch(name)
    if match is None:
        return f"'{name}' is not a register"
    pair, half_suffix, quad, half, virtual = match.groups()
    if len(pair or quad or half or virtual) > 6:  # out of every range; never converted
        return f"{name[:12]}... is out of range"
    if virtual is not None or half is not None:
        if size is None:
            return f"{name} needs a size: {name}:16, {name}:32 or {name}:64"
        if virtual is not None:
            return ir.VirtualRegister(int(virtual), size)
        if int(half) >= ir.NUM_HALVES:
            return f"{name} is out of range (halves h0..h{ir.NUM_HALVES - 1})"
        return ir.Register(int(half), size)
    if size is not None:
        return f"{name} has its size in its name; write it without ':{size}'"
    if quad is not None:
        index = int(quad)
        if index % 2:
            return f"d{index} is not aligned: a 64-bit register starts at an even rN (h{2 * index}:64)"
        register = ir.Register(2 * index, 64)
    elif half_suffix:
        register = ir.Register(2 * int(pair) + (half_suffix == "h"), 16)
    else:
        register = ir.Register(2 * int(pair), 32)
    if register.half + register.size // 16 > ir.NUM_HALVES:
        return f"{name} is out of range (r0..r{ir.NUM_HALVES // 2 - 1})"
    return register


def is_register_name(text: str) -> bool:
    return _REGISTER_RE.fullmatch(text) is not None


class MachineParser(Parser):
    """Parses a `func.LEVEL` function (the exec, vreg and machine levels' parsing hook):
    the shared `Parser` with notes in the header, successor lists on labels, registers
    among the operands and several destinations."""

    def __init__(
        self, tokens: list[Token], filename: str, level: ir.Level, table: dict[str, spec.Opcode]
    ) -> None:
        super().__init__(tokens, filename, level, table)
        self.successor_tokens: list[tuple[ir.Block, list[Token]]] = []
        self.register_of: dict[int, ir.Register | ir.VirtualRegister] = {}

    def after_uniforms(self, function: ir.Function) -> None:
        for uniform in function.uniforms:
            if is_register_name(uniform.name):
                raise self.error(self.tok, f"uniform '{uniform.name}' is spelled like a register")
        while self.at_attribute():
            note = self.advance()
            self.no_suffixes(note)
            self.advance()  # '='
            if note.text in function.notes:
                raise self.error(note, f"duplicate note '{note.text}'")
            _, function.notes[note.text] = self.number(f"a number for '{note.text}'")

    def finish(self) -> None:
        for block, targets in self.successor_tokens:
            block.logical_successors = [self.block(target) for target in targets]

    def at_label(self) -> bool:
        if self.tok.kind != IDENT or not self.peek().is_punct(":"):
            return False
        after = self.peek(2)
        return after.kind in (NEWLINE, EOF) or after.is_punct("->")

    def label(self) -> ir.Block:
        token = self.advance()
        self.no_suffixes(token)
        if token.text in self.blocks:
            raise self.error(token, f"duplicate label '{token.text}'")
        self.advance()  # the colon
        block = ir.Block(token.text, logical_successors=[])
        targets: list[Token] = []
        if self.at_punct("->"):
            self.advance()
            targets.append(self.expect_plain(IDENT, "a block label"))
            while self.at_punct(","):
                self.advance()
                targets.append(self.expect_plain(IDENT, "a block label"))
        self.expect_newline()
        self.blocks[token.text] = block
        self.successor_tokens.append((block, targets))
        return block

    def lookup(self, mnemonic: Token) -> tuple[spec.Opcode, dict[str, int | str]]:
        if mnemonic.text in self.table:
            return self.table[mnemonic.text], {}
        if mnemonic.text in ALIASES and ALIASES[mnemonic.text][0].name in self.table:
            row, attrs = ALIASES[mnemonic.text]
            return row, attrs
        raise self.error(mnemonic, f"unknown opcode '{mnemonic.text}' at the {self.level} level")

    def destination(self) -> ir.Value | ir.Register | ir.VirtualRegister:
        token = self.advance()
        self.no_suffixes(token)
        if token.kind == VALUE:
            self.expect_punct(":", "and a size after the destination")
            size = self.size()
            if token.text in self.values:
                raise self.error(token, f"redefinition of %{token.text}")
            value = ir.Value(token.text, size)
            self.values[token.text] = value
            return value
        return self.register(token)

    def register(self, token: Token) -> ir.Register | ir.VirtualRegister:
        size = None
        if self.at_punct(":"):
            self.advance()
            size = self.size()
        found = register_from_name(token.text, size)
        if isinstance(found, str):
            raise self.error(token, found)
        return found

    def instruction(self) -> ir.Instruction:
        dests: list[ir.Value | ir.Register | ir.VirtualRegister] = []
        if self.tok.kind == VALUE or (
            self.tok.kind == IDENT and is_register_name(self.tok.text)
            and (self.peek().is_punct("=") or self.peek().is_punct(",") or self.peek().is_punct(":"))
        ):
            dests.append(self.destination())
            while self.at_punct(","):
                self.advance()
                if self.tok.kind not in (VALUE, IDENT):
                    raise self.error(self.tok, f"expected a destination, found {self.tok.describe()}")
                dests.append(self.destination())
            self.expect_punct("=", "after the destination")
        mnemonic = self.tok
        if mnemonic.kind != IDENT:
            raise self.error(mnemonic, f"expected an opcode, found {mnemonic.describe()}")
        self.advance()
        row, fixed_attrs = self.lookup(mnemonic)
        unary = mnemonic.text not in self.table and mnemonic.text in UNARY_BITOP_ALIASES
        sat = self.saturate(mnemonic, row)
        multi = row.name == "parallel_copy"
        if row.has_dest and len(dests) != 1:
            raise self.error(mnemonic, f"{mnemonic.text} needs one destination")
        if not row.has_dest and not multi and dests:
            raise self.error(mnemonic, f"{mnemonic.text} has no destination")
        is_phi = row.name == "phi"
        sources = self.sources(is_phi)
        if multi and len(sources) != len(dests):
            raise self.error(
                mnemonic, f"parallel_copy has {len(dests)} destinations and {len(sources)} sources"
            )
        kinds = self.check_sources(mnemonic, row, sources, is_phi, unary)
        attrs = self.attributes(mnemonic, row, fixed_attrs)
        targets = self.targets(mnemonic, row)
        if unary:
            sources.append(Source(Token(IMM, "0", mnemonic.line, mnemonic.col), False, False))
            kinds.append(row.srcs[-1].kind)
        dest = dests[0] if row.has_dest else None
        instruction = ir.Instruction(row, dest, [], attrs, [], sat, dests if multi else [])
        self.pending.append(Pending(instruction, sources, kinds, targets))
        return instruction

    def operand(self) -> Source:
        token = self.tok
        if token.kind == IDENT and is_register_name(token.text) and token.text not in self.uniforms:
            self.advance()
            size = None
            if self.at_punct(":"):
                self.advance()
                size_token, size = self.number("a size (16, 32 or 64)")
                if size not in ir.SIZES:
                    raise self.error(size_token, f"size must be 16, 32 or 64, not {size_token.text}")
            found = register_from_name(token.text, size)
            if isinstance(found, str):
                raise self.error(token, found)
            seen = self.modifiers(token)
            self.register_of[id(token)] = found
            return Source(token, "abs" in seen, "neg" in seen)
        return super().operand()

    def modifiers(self, token: Token) -> set[str]:
        seen: set[str] = set()
        for suffix in token.suffixes:
            where = (suffix.line, suffix.col)
            if suffix.name not in ("abs", "neg"):
                raise self.error(where, f"unknown modifier '.{suffix.name}' (expected .abs or .neg)")
            if suffix.name in seen:
                raise self.error(where, f"duplicate modifier '.{suffix.name}'")
            seen.add(suffix.name)
        return seen

    def reference(self, token: Token, kind: str):
        register = self.register_of.get(id(token))
        if register is not None:
            return register
        return super().reference(token, kind)


def parse_machine_tokens(
    tokens: list[Token], filename: str, level: ir.Level, table: dict[str, spec.Opcode]
) -> ir.Function:
    """The parsing hook of the exec, vreg and machine levels: `tokens` of a `func.LEVEL`
    text (its header keyword checked by `agxir.text.front`), opcodes from `table`."""
    return MachineParser(tokens, filename, level, table).parse()


def format_storage(ref: ir.Value | ir.Register | ir.VirtualRegister) -> str:
    """A destination as written: `%x:32`, `r2`, `h5:32` or `v3:32`."""
    return format_dest(ref)


def print_machine_function_reference(fn: ir.Function) -> str:
    """The reference `print_machine_function` (agxir/ccore_src/print.c follows it)."""
    uniforms = ", ".join(format_uniform(u) for u in fn.uniforms)
    notes = "".join(f" {name}={value}" for name, value in fn.notes.items())
    lines = [f"func.{fn.level} @{fn.name}({uniforms}){notes} {{"]
    for block in fn.blocks:
        successors = block.logical_successors or []
        arrow = " -> " + ", ".join(s.name for s in successors) if successors else ""
        lines.append(f"{block.name}:{arrow}")
        for ins in block.instructions:
            lines.append("  " + format_instruction_reference(ins))
    lines.append("}")
    return "\n".join(lines) + "\n"


if CORE is not None and hasattr(CORE, "print_function"):
    _core_print = CORE.print_function

    def print_machine_function(fn: ir.Function) -> str:
        """The canonical text of an exec, vreg or machine function (the compiled core's,
        the same as the reference's)."""
        text = _core_print(fn, True)
        return print_machine_function_reference(fn) if text is NotImplemented else text
else:
    print_machine_function = print_machine_function_reference

