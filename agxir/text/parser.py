"""Parsing the IR text form into an `ir.Function`.

This module owns the syntax checks listed in docs/grammar.md: header, uniforms, labels,
instruction lines, operand counts, source immediates, attributes, aliases and targets, and
name resolution (forward references allowed, resolved after the whole function is read).
Whether sizes, modifiers and immediate ranges are legal for an opcode is the verifier's job.

Every malformed input raises `ParseError`; nothing else escapes `parse_function`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agxir import ir
from agxir.opcodes import spec
from agxir.opcodes.operands import minifloat_encode
from agxir.opcodes.table import OPCODES, UNARY_BITOP_ALIASES
from agxir.text.lexer import (
    EOF,
    FUNCNAME,
    IDENT,
    IMM,
    NEWLINE,
    NUMBER,
    PUNCT,
    VALUE,
    ParseError,
    Token,
)
from agxir.text.literals import (
    ALIASES,
    FLOAT_RE,
    MAX_BUFFER_BYTES,
    MAX_INT_IMMEDIATE,
    MAX_LITERAL_CHARS,
    TOO_LARGE,
    describe_values,
    parse_int_literal,
)
from agxir.text.plain import plain_line

__all__ = ["ALIASES", "MAX_LITERAL_CHARS", "TOO_LARGE", "Parser", "Pending", "Source",
           "describe_values", "parse_int_literal"]

MODIFIERS = ("abs", "neg")

@dataclass(slots=True)
class Source:
    """A source as written, before names are resolved."""

    token: Token
    abs: bool
    neg: bool
    label: Token | None = None  # the incoming block of a phi source


@dataclass(slots=True)
class Pending:
    """An instruction whose sources and targets still name things by text."""

    instruction: ir.Instruction
    sources: list[Source]
    kinds: list[str]
    targets: list[Token] = field(default_factory=list)


class Parser:
    """The syntax every level shares, and the SSA level's own lines.

    `parse` reads the header (its `func` or `func.LEVEL` keyword already checked by the
    front door, `agxir.text.front`), the uniforms and the body; the hooks a level overrides
    (`agxir.machine.text.MachineParser`) are `after_uniforms`, `at_label`, `label`,
    `instruction`, `lookup`, `operand`, `reference` and `finish`. Opcodes are looked up in
    the level's table.
    """

    def __init__(
        self,
        tokens: list[Token],
        filename: str,
        level: ir.Level = ir.SSA,
        table: dict[str, spec.Opcode] = OPCODES,
    ) -> None:
        self.filename = filename
        self.tokens = tokens
        self.pos = 0
        self.level = level
        self.table = table
        self.uniforms: dict[str, ir.Uniform] = {}
        self.values: dict[str, ir.Value] = {}
        self.blocks: dict[str, ir.Block] = {}
        self.pending: list[Pending] = []

    # --- token helpers ----------------------------------------------------------------------

    def error(self, token: Token | tuple[int, int], message: str) -> ParseError:
        if isinstance(token, Token):
            return ParseError(self.filename, token.line, token.col, message)
        return ParseError(self.filename, token[0], token[1], message)

    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def peek(self, offset: int = 1) -> Token:
        index = min(self.pos + offset, len(self.tokens) - 1)
        return self.tokens[index]

    def advance(self) -> Token:
        token = self.tokens[self.pos]
        if token[0] != EOF:  # (token kinds are the module's constants)
            self.pos += 1
        return token

    def at_punct(self, text: str) -> bool:
        token = self.tokens[self.pos]
        return token[1] == text and token[0] == PUNCT

    def expect_punct(self, text: str, context: str = "") -> Token:
        token = self.tokens[self.pos]
        if token[1] == text and token[0] == PUNCT:
            self.pos += 1
            return token
        if not self.at_punct(text):
            where = f" {context}" if context else ""
            raise self.error(self.tok, f"expected '{text}'{where}, found {self.tok.describe()}")
        return self.advance()

    def expect_plain(self, kind: str, what: str) -> Token:
        """A token of `kind` that carries no `.suffix`."""
        token = self.tok
        if token.kind != kind:
            raise self.error(token, f"expected {what}, found {token.describe()}")
        self.no_suffixes(token)
        return self.advance()

    def no_suffixes(self, token: Token) -> None:
        if token.suffixes:
            suffix = token.suffixes[0]
            raise self.error((suffix.line, suffix.col), f"unexpected '.{suffix.name}'")

    def expect_newline(self) -> None:
        kind = self.tokens[self.pos][0]
        if kind == NEWLINE:
            self.pos += 1
            return
        if kind != EOF:
            raise self.error(self.tok, f"expected end of line, found {self.tok.describe()}")

    def skip_newlines(self) -> None:
        tokens, pos = self.tokens, self.pos
        while tokens[pos][0] == NEWLINE:
            pos += 1
        self.pos = pos

    def at_attribute(self) -> bool:
        tokens, pos = self.tokens, self.pos
        if tokens[pos][0] != IDENT:
            return False
        after = tokens[pos + 1] if pos + 1 < len(tokens) else tokens[-1]
        return after[1] == "=" and after[0] == PUNCT

    def number(self, what: str) -> tuple[Token, int]:
        token = self.tokens[self.pos]
        value = parse_int_literal(token.text) if token.kind == NUMBER else None
        if value is None:
            raise self.error(token, f"expected {what}, found {token.describe()}")
        return self.advance(), value

    def size(self) -> int:
        token, value = self.number("a size (16, 32 or 64)")
        if value not in ir.SIZES:
            raise self.error(token, f"size must be 16, 32 or 64, not {token.text}")
        return value

    # --- function ---------------------------------------------------------------------------

    def parse(self) -> ir.Function:
        self.skip_newlines()
        self.advance()  # `func` or `func.LEVEL`, checked by the front door
        name = self.expect_plain(FUNCNAME, "a function name '@NAME'")
        function = ir.Function(name.text, level=self.level)
        self.expect_punct("(", "after the function name")
        if not self.at_punct(")"):
            function.uniforms.append(self.uniform())
            while self.at_punct(","):
                self.advance()
                function.uniforms.append(self.uniform())
        self.expect_punct(")", "after the uniforms")
        self.after_uniforms(function)
        self.expect_punct("{", "to open the function body")
        self.expect_newline()

        block: ir.Block | None = None
        while True:
            self.skip_newlines()
            token = self.tok
            if token.is_punct("}"):
                break
            if token.kind == EOF:
                raise self.error(token, "expected '}' to close the function")
            if self.at_label():
                block = self.label()
                function.blocks.append(block)
                continue
            if block is None:
                raise self.error(token, "instruction before the first label")
            block.instructions.append(self.instruction())
            self.expect_newline()
        self.advance()  # the closing brace
        self.expect_newline()
        self.skip_newlines()
        if self.tok.kind != EOF:
            raise self.error(self.tok, "unexpected text after the function (one function per file)")
        self.resolve()
        self.finish()
        return function

    def after_uniforms(self, function: ir.Function) -> None:
        """What a level's header holds between the uniforms and `{` (nothing at SSA)."""

    def finish(self) -> None:
        """What a level resolves once every name is known (nothing more at SSA)."""

    def at_label(self) -> bool:
        return self.tok.kind == IDENT and self.peek().is_punct(":")

    def uniform(self) -> ir.Uniform:
        name = self.expect_plain(IDENT, "a uniform name")
        if name.text in self.uniforms:
            raise self.error(name, f"duplicate uniform '{name.text}'")
        self.expect_punct(":", "after the uniform name")
        token = self.tok
        if token.kind == IDENT and token.text == "ptr":
            self.no_suffixes(token)
            self.advance()
            self.expect_punct("[", "after 'ptr'")
            count, nbytes = self.number("a buffer size in bytes")
            if nbytes == 0:
                raise self.error(count, "a buffer must have at least one byte")
            if nbytes > MAX_BUFFER_BYTES:
                raise self.error(count, f"a buffer holds at most {MAX_BUFFER_BYTES:#x} bytes")
            self.expect_punct("]", "after the buffer size")
            uniform = ir.Uniform(name.text, 64, buffer_bytes=nbytes)
        elif token.kind == NUMBER:
            uniform = ir.Uniform(name.text, self.size())
        else:
            raise self.error(token, f"expected a size or 'ptr[BYTES]', found {token.describe()}")
        self.uniforms[name.text] = uniform
        return uniform

    def label(self) -> ir.Block:
        token = self.advance()
        self.no_suffixes(token)
        if token.text in self.blocks:
            raise self.error(token, f"duplicate label '{token.text}'")
        self.advance()  # the colon
        self.expect_newline()
        block = ir.Block(token.text)
        self.blocks[token.text] = block
        return block

    # --- instructions -----------------------------------------------------------------------

    def instruction(self) -> ir.Instruction:
        plain = plain_line(self.tokens, self.pos, self.table, self.uniforms, self.values)
        if plain is not None:  # the fast path's reading is the general path's
            row, dest_token, size, operands, attrs, targets, self.pos = plain
            dest = None
            if dest_token is not None:
                dest = self.values[dest_token[1]] = ir.Value(dest_token[1], size)
            instruction = ir.Instruction(row, dest, [], attrs, [], False)
            sources = [Source(token, False, False) for token in operands]
            kinds = [src.kind for src in row.srcs]
            self.pending.append(Pending(instruction, sources, kinds, targets))
            return instruction
        dest_token = None
        size = 0
        if self.tokens[self.pos][0] == VALUE:
            dest_token = self.advance()
            self.no_suffixes(dest_token)
            self.expect_punct(":", "and a size after the destination")
            size = self.size()
            self.expect_punct("=", "after the destination")
        mnemonic = self.tok
        if mnemonic.kind != IDENT:
            raise self.error(mnemonic, f"expected an opcode, found {mnemonic.describe()}")
        self.advance()
        row, fixed_attrs = self.lookup(mnemonic)
        unary = mnemonic.text not in self.table and mnemonic.text in UNARY_BITOP_ALIASES
        sat = self.saturate(mnemonic, row)

        if row.has_dest and dest_token is None:
            raise self.error(mnemonic, f"{mnemonic.text} needs a destination '%NAME:SIZE = '")
        if not row.has_dest and dest_token is not None:
            raise self.error(dest_token, f"{mnemonic.text} has no destination")
        dest = None
        if dest_token is not None:
            if dest_token.text in self.values:
                raise self.error(dest_token, f"redefinition of %{dest_token.text}")
            dest = ir.Value(dest_token.text, size)
            self.values[dest_token.text] = dest

        is_phi = row.name == "phi"
        sources = self.sources(is_phi)
        kinds = self.check_sources(mnemonic, row, sources, is_phi, unary)
        attrs = self.attributes(mnemonic, row, fixed_attrs)
        targets = self.targets(mnemonic, row)
        if unary:  # `mov x` / `not x` are bitop x, #0
            sources.append(Source(Token(IMM, "0", mnemonic.line, mnemonic.col), False, False))
            kinds.append(row.srcs[-1].kind)

        instruction = ir.Instruction(row, dest, [], attrs, [], sat)
        self.pending.append(Pending(instruction, sources, kinds, targets))
        return instruction

    def lookup(self, mnemonic: Token) -> tuple[spec.Opcode, dict[str, int | str]]:
        if mnemonic.text in self.table:
            return self.table[mnemonic.text], {}
        if mnemonic.text in ALIASES:
            row, attrs = ALIASES[mnemonic.text]
            return row, attrs
        raise self.error(mnemonic, f"unknown opcode '{mnemonic.text}'")

    def saturate(self, mnemonic: Token, row: spec.Opcode) -> bool:
        sat = False
        for suffix in mnemonic.suffixes:
            where = (suffix.line, suffix.col)
            if suffix.name != "sat":
                raise self.error(where, f"unknown suffix '.{suffix.name}' on {mnemonic.text}")
            if sat:
                raise self.error(where, "duplicate '.sat'")
            if not row.sat:
                raise self.error(where, f"{mnemonic.text} does not accept .sat")
            sat = True
        return sat

    def sources(self, is_phi: bool) -> list[Source]:
        starts_operand = self.tokens[self.pos][0] in (VALUE, IDENT, IMM) or self.at_punct("[")
        if not starts_operand or self.at_attribute():
            return []
        read = self.incoming if is_phi else self.operand
        sources = [read()]
        tokens = self.tokens
        while True:
            token = tokens[self.pos]
            if token[1] != "," or token[0] != PUNCT:
                return sources
            self.pos += 1
            sources.append(read())

    def incoming(self) -> Source:
        self.expect_punct("[", "to start a phi source '[OPERAND, LABEL]'")
        source = self.operand()
        self.expect_punct(",", "between the phi source and its block")
        source.label = self.expect_plain(IDENT, "a block label")
        self.expect_punct("]", "to end the phi source")
        return source

    def operand(self) -> Source:
        token = self.tokens[self.pos]
        if token[0] == VALUE and not token[4]:  # the common case: a plain value
            self.pos += 1
            return Source(token, False, False)
        if token.kind not in (VALUE, IDENT, IMM):
            raise self.error(token, f"expected an operand, found {token.describe()}")
        if token.kind == IDENT and self.peek().is_punct("="):
            raise self.error(token, f"expected an operand, found attribute '{token.text}='")
        self.advance()
        seen: set[str] = set()
        for suffix in token.suffixes:
            where = (suffix.line, suffix.col)
            if suffix.name not in MODIFIERS:
                raise self.error(where, f"unknown modifier '.{suffix.name}' (expected .abs or .neg)")
            if suffix.name in seen:
                raise self.error(where, f"duplicate modifier '.{suffix.name}'")
            seen.add(suffix.name)
        if token.kind == IDENT and token.text not in self.uniforms:
            raise self.error(token, f"undefined uniform '{token.text}'")
        return Source(token, "abs" in seen, "neg" in seen)

    def check_sources(
        self,
        mnemonic: Token,
        row: spec.Opcode,
        sources: list[Source],
        is_phi: bool,
        unary: bool,
    ) -> list[str]:
        """Check the operand count and each immediate; return each source's kind."""
        if is_phi or row.variadic:
            kinds = [spec.RAW] * len(sources)
        else:
            expected = len(row.srcs)
            if unary:
                expected -= 1
            if len(sources) != expected:
                plural = "operand" if expected == 1 else "operands"
                where = sources[expected].token if len(sources) > expected else mnemonic
                raise self.error(
                    where, f"{mnemonic.text} expects {expected} {plural}, found {len(sources)}"
                )
            kinds = [src.kind for src in row.srcs[:expected]]
        for source, kind in zip(sources, kinds, strict=True):
            if source.token.kind == IMM:
                self.immediate(source.token, kind)
        return kinds

    def immediate(self, token: Token, kind: str) -> ir.Immediate:
        text = token.text
        if kind == spec.FLOAT:
            if not FLOAT_RE.fullmatch(text):
                raise self.error(token, f"malformed float immediate '#{text}'")
            bits = minifloat_encode(float(text))
            if bits is None:
                raise self.error(token, f"not an 8-bit minifloat: #{text}")
            return ir.Immediate(bits)
        negative = text.startswith("-")
        value = parse_int_literal(text[1:] if negative else text)
        if value is None:
            if FLOAT_RE.fullmatch(text):
                raise self.error(token, f"expected an integer immediate, found '#{text}'")
            raise self.error(token, f"malformed immediate '#{text}'")
        if negative:
            raise self.error(
                token, f"negative immediate '#{text}': write '#{text[1:]}.neg' instead"
            )
        if value > MAX_INT_IMMEDIATE:
            shown = text if len(text) <= MAX_LITERAL_CHARS else text[:MAX_LITERAL_CHARS] + "..."
            raise self.error(token, f"immediate #{shown} does not fit in 16 bits (max 0xffff)")
        return ir.Immediate(value)

    def attributes(
        self, mnemonic: Token, row: spec.Opcode, fixed: dict[str, int | str]
    ) -> dict[str, int | str]:
        declared = {attr.name: attr for attr in row.attrs if attr.name not in fixed}
        given: dict[str, int | str] = {}
        while self.at_attribute():
            name = self.advance()
            self.no_suffixes(name)
            self.advance()  # '='
            attr = declared.get(name.text)
            if attr is None:
                raise self.error(name, f"unknown attribute '{name.text}' for {mnemonic.text}")
            if name.text in given:
                raise self.error(name, f"duplicate attribute '{name.text}'")
            given[name.text] = self.attribute_value(attr)
        for attr in row.attrs:
            if attr.name not in fixed and attr.name not in given:
                raise self.error(mnemonic, f"missing attribute '{attr.name}'")
        attrs: dict[str, int | str] = {}
        for attr in row.attrs:
            attrs[attr.name] = fixed[attr.name] if attr.name in fixed else given[attr.name]
        return attrs

    def attribute_value(self, attr: spec.Attr) -> int | str:
        token = self.tok
        if token.kind not in (IDENT, NUMBER):
            raise self.error(token, f"expected a value for '{attr.name}', found {token.describe()}")
        self.advance()
        self.no_suffixes(token)
        value: int | str | None
        if attr.is_enum:
            value = token.text if token.kind == IDENT else None
        else:
            value = parse_int_literal(token.text) if token.kind == NUMBER else None
        if value is None or value not in attr.values:
            raise self.error(
                token, f"{attr.name}={token.text} is not one of {describe_values(attr)}"
            )
        return value

    def targets(self, mnemonic: Token, row: spec.Opcode) -> list[Token]:
        targets: list[Token] = []
        if self.at_punct("->"):
            arrow = self.advance()
            if row.targets == 0:
                raise self.error(arrow, f"{mnemonic.text} takes no targets")
            targets.append(self.expect_plain(IDENT, "a block label"))
            while self.at_punct(","):
                self.advance()
                targets.append(self.expect_plain(IDENT, "a block label"))
        if len(targets) != row.targets:
            plural = "target" if row.targets == 1 else "targets"
            where = targets[row.targets] if len(targets) > row.targets else mnemonic
            raise self.error(
                where, f"{mnemonic.text} expects {row.targets} {plural}, found {len(targets)}"
            )
        return targets

    # --- name resolution --------------------------------------------------------------------

    def resolve(self) -> None:
        """Fill in sources and targets in text order, reporting the first undefined name."""
        reference, values, operand = self.reference, self.values, ir.Operand
        for pending in self.pending:
            ins = pending.instruction
            srcs = ins.srcs
            for source, kind in zip(pending.sources, pending.kinds, strict=True):
                token = source.token
                # a plain value, the common case, is looked up here; anything else (and an
                # undefined value, for its error) by `reference`, which a level overrides
                ref = values.get(token[1]) if token[0] == VALUE else None
                if ref is None:
                    ref = reference(token, kind)
                srcs.append(operand(ref, source.abs, source.neg))
                if source.label is not None:
                    ins.blocks.append(self.block(source.label))
            for target in pending.targets:
                ins.blocks.append(self.block(target))

    def reference(self, token: Token, kind: str) -> ir.Value | ir.Uniform | ir.Immediate:
        if token.kind == IMM:
            return self.immediate(token, kind)
        if token.kind == IDENT:
            return self.uniforms[token.text]
        value = self.values.get(token.text)
        if value is None:
            raise self.error(token, f"undefined value %{token.text}")
        return value

    def block(self, token: Token) -> ir.Block:
        block = self.blocks.get(token.text)
        if block is None:
            raise self.error(token, f"unknown block '{token.text}'")
        return block
