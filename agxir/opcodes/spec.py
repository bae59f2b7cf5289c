"""The shape of one row of the opcode table: sources, destination, attributes, traits.

A row is data. The parser, printer, verifier, interpreter, z3 encoding and fuzzer all read
these rows; none of them switches on mnemonics to learn what an opcode means.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

# Source kinds: how the semantics read the operand.
INT = "int"  # extended to the working width: sign unless `.abs` (zero)
FLOAT = "float"  # f16 or f32 bits; `.abs`/`.neg` act on the sign bit
RAW = "raw"  # taken bit for bit; must be exactly the width the row names
ADDR = "addr"  # a 64-bit base address

# Immediate classes a source may accept.
IMM8 = "imm8"  # integer 0..255
IMM16 = "imm16"  # integer 0..65535
FIMM8 = "fimm8"  # 8-bit AGX minifloat

# How a source's width relates to the destination's.
SAME_AS_DEST = "dest"
AT_MOST_DEST = "le_dest"


@dataclass(frozen=True)
class Src:
    name: str
    kind: str
    sizes: tuple[int, ...] = (16, 32)
    mods: frozenset[str] = frozenset()
    imm: str | None = IMM8
    uniform: bool = True
    width_rule: str | None = None

    def allows(self, modifier: str) -> bool:
        return modifier in self.mods


@dataclass(frozen=True)
class Attr:
    """An immediate field. `values` lists every legal value, ints or names."""

    name: str
    values: tuple[int | str, ...] | range
    hex: bool = False

    @property
    def is_enum(self) -> bool:
        return isinstance(self.values, tuple) and any(isinstance(v, str) for v in self.values)


@dataclass(frozen=True)
class Opcode:
    name: str
    summary: str
    srcs: tuple[Src, ...]
    dest_sizes: tuple[int, ...] | None
    semantics: Callable | None
    attrs: tuple[Attr, ...] = ()
    variadic: bool = False  # phi: any number of sources of the dest's size
    sat: bool = False  # accepts `.sat`
    terminator: bool = False
    targets: int = 0
    pure: bool = True
    commutative: bool = False
    side_effect: bool = False
    may_ub: bool = False
    wave: bool = False  # reads the other threads of its wave (a ballot)
    aliases: dict[str, dict[str, int | str]] = field(default_factory=dict)
    # Row-specific constraints beyond per-source sizes: returns an error message or None.
    check: Callable | None = None

    def attr(self, name: str) -> Attr:
        for attr in self.attrs:
            if attr.name == name:
                return attr
        raise KeyError(name)

    @property
    def has_dest(self) -> bool:
        return self.dest_sizes is not None

    def __repr__(self) -> str:
        return f"<opcode {self.name}>"
