"""Rewrite rules as data: operand and instruction patterns, replacement templates, rules.

A `Rule` is (pattern, replacement, precondition). The pattern is a tree: an `Ins` matches
one instruction (opcode, destination size, attributes, `.sat`, sources), and each source is
an `Opnd` that matches an operand by kind (SSA value, uniform, immediate), immediate value,
modifiers and size, or by the instruction that defines it (`defined_by`, which follows SSA
definitions). Names bind what matched: operands, attributes (`Bind`), sizes (a string
where an int would fix the size), opcodes (`Ins.op`) and instructions (`Ins.name`). A name
bound twice must match the same thing twice.

The replacement is a tuple of `Emit` templates. The last one replaces the matched root in
place (keeping its destination, branch targets and identity); earlier ones are inserted
before the root with fresh destinations, which later templates read by their `name`. A
source template is `Use` (a bound operand or an earlier template's result, with optional
modifier overrides) or `NewImm` (an immediate computed from the bindings). A rule whose root
pattern has a `focus` (one source, at any position) instead rewrites just that source, and
its replacement is a single source template: that is how copy propagation is a rule.

Computed things are small functions of a `Bindings` (see `agxir.rewrite.matcher`):
immediates and preconditions are written against the bit-vector `BitVectors` (`b.m`), so the
same function runs on Python ints when a pass rewrites and on z3 terms when the audit proves
the rule. Attribute values, sizes and opcodes are computed from bound attributes and sizes
only, which are concrete in both places; a value that depends on an immediate is written
as a family of rules, one per value, each with a precondition (as Mesa does for lea shifts).
A precondition returns a Python bool for what depends on the program's shape (operand kinds,
the use site's Src spec) and a BitVectors truth value for what depends on immediates, combined
with `b.m.both`/`either`/`negate` (Python's `and` may join a bool to a truth value, but
`not` and `if` on one only work on ints, not in a proof).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from agxir.opcodes.table import OPCODES

KINDS = frozenset({"value", "uniform", "immediate"})
REGISTER = frozenset({"value", "uniform"})


@dataclass(frozen=True)
class Bind:
    """In a pattern's `attrs`: bind the attribute to this name. In a template: the value
    bound to this name (an attribute, size or opcode)."""

    name: str


@dataclass(frozen=True)
class OneOf:
    """In a pattern's `attrs`: the attribute is one of `values` (bound to `name` if given).
    The audit enumerates exactly these values, so a family over an attribute with a huge
    range (`mov_imm`'s value) can still be proved value by value."""

    values: tuple
    name: str | None = None

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError("OneOf needs at least one value")
        if len({type(v) for v in self.values}) != 1:
            raise ValueError("OneOf values must all have one type")

    @cached_property
    def members(self) -> frozenset:
        return frozenset(self.values)


@dataclass(frozen=True, eq=False)
class Opnd:
    """Matches one source operand.

    `kinds`: which references match (see KINDS). `bits`: an immediate's fixed value.
    `abs`/`neg`: None matches either, a bool requires it. `size`: the operand's natural
    size (immediates are 16-bit), an int to fix it or a name to bind it. `defined_by`: the
    operand is an SSA value whose definition matches this instruction pattern.
    """

    name: str | None = None
    kinds: frozenset[str] = KINDS
    bits: int | None = None
    abs: bool | None = None
    neg: bool | None = None
    size: int | str | None = None
    defined_by: Ins | None = None

    def __post_init__(self) -> None:
        if not self.kinds or not self.kinds <= KINDS:
            raise ValueError(f"operand kinds must be a non-empty subset of {sorted(KINDS)}")
        if self.bits is not None and self.kinds != {"immediate"}:
            raise ValueError("a fixed immediate value needs kinds={'immediate'}")
        if self.defined_by is not None and self.kinds != {"value"}:
            raise ValueError("an operand defined by an instruction is an SSA value")


@dataclass(frozen=True, eq=False)
class Ins:
    """Matches one instruction.

    `opcode`: a name, a tuple of alternatives, or None for any opcode (only with `focus`).
    `srcs`: one `Opnd` per source, or None (any sources; only with `focus`). `attrs`: name ->
    fixed value or `Bind`; attributes not listed match any value. `size`: the destination's
    size (int) or a name binding it. `sat`: None for either. `name` binds the instruction,
    `op` its opcode name. `focus`: one source, at any position, must match this; the rule then
    rewrites only that source.
    """

    opcode: str | tuple[str, ...] | None
    srcs: tuple[Opnd, ...] | None = ()
    attrs: Mapping[str, Any] = field(default_factory=dict)
    size: int | str | None = None
    sat: bool | None = None
    name: str | None = None
    op: str | None = None
    focus: Opnd | None = None

    def __post_init__(self) -> None:
        if self.opcode is None or self.srcs is None:
            if self.focus is None or self.srcs is not None:
                raise ValueError("an opcode or sources wildcard needs a focus and srcs=None")
        for name in self.opcodes:
            row = OPCODES.get(name)
            if row is None:
                raise ValueError(f"unknown opcode {name!r} in a pattern")
            declared = {attr.name for attr in row.attrs}
            unknown = set(self.attrs) - declared
            if unknown:
                raise ValueError(f"{name} has no attribute {', '.join(sorted(unknown))}")
            for attr_name, wanted in self.attrs.items():
                if isinstance(wanted, OneOf):
                    legal = row.attr(attr_name).values
                    if any(v not in legal for v in wanted.values):
                        raise ValueError(f"OneOf lists a value {attr_name} of {name} cannot take")
            if self.srcs is not None and not row.variadic and len(self.srcs) != len(row.srcs):
                raise ValueError(f"{name} takes {len(row.srcs)} sources, pattern has {len(self.srcs)}")

    @property
    def opcodes(self) -> tuple[str, ...]:
        """The opcode names this pattern accepts; empty for the wildcard."""
        if self.opcode is None:
            return ()
        return (self.opcode,) if isinstance(self.opcode, str) else tuple(self.opcode)


# --- replacement templates ------------------------------------------------------------------


@dataclass(frozen=True)
class Use:
    """A bound operand (or an earlier template's result) as a source. `abs`/`neg`: None
    keeps the bound operand's modifier, a bool sets it, a function of the bindings computes
    it (e.g. the modifiers of the use being rewritten)."""

    name: str
    abs: bool | Callable | None = None
    neg: bool | Callable | None = None

    @property
    def verbatim(self) -> bool:
        """The bound operand exactly as it matched, modifiers included."""
        return self.abs is None and self.neg is None


@dataclass(frozen=True)
class NewImm:
    """An immediate computed from the bindings: `bits(b)` returns its 16-bit value as a
    machine value (`b.m.const(...)`, arithmetic on `b.imm(name)`), or `bits` is an int."""

    bits: Callable | int
    abs: bool = False
    neg: bool = False


SourceTemplate = Use | NewImm


@dataclass(frozen=True)
class Emit:
    """One instruction of a replacement. `opcode`: a name, a `Bind` or a function of the
    bindings. `attrs`: name -> constant, `Bind` or function; every attribute of the row must
    be given. `size`: the new destination's size (int, bound name, `Bind` or function); the
    last template keeps the root's destination and leaves it None. `name` lets later
    templates `Use` this result. `sat`: a bool or a function."""

    opcode: str | Bind | Callable
    srcs: tuple[SourceTemplate, ...]
    attrs: Mapping[str, Any] = field(default_factory=dict)
    size: int | str | Bind | Callable | None = None
    name: str | None = None
    sat: bool | Callable = False

    def __post_init__(self) -> None:
        if isinstance(self.opcode, str):
            row = OPCODES.get(self.opcode)
            if row is None:
                raise ValueError(f"unknown opcode {self.opcode!r} in a template")
            missing = {attr.name for attr in row.attrs} - set(self.attrs)
            extra = set(self.attrs) - {attr.name for attr in row.attrs}
            if missing or extra:
                raise ValueError(
                    f"template {self.opcode} attributes: missing {sorted(missing)}, "
                    f"unknown {sorted(extra)}"
                )
            if not row.variadic and len(self.srcs) != len(row.srcs):
                raise ValueError(f"{self.opcode} takes {len(row.srcs)} sources")


@dataclass(frozen=True, eq=False)
class Rule:
    """A rewrite: where `pattern` matches and `precondition(b)` holds, the root becomes
    `replacement`. `why` says in one line what makes the rule right."""

    name: str
    pattern: Ins
    replacement: tuple[Emit, ...] | SourceTemplate
    precondition: Callable | None = None
    why: str = ""

    def __post_init__(self) -> None:
        focused = self.pattern.focus is not None
        if focused != isinstance(self.replacement, (Use, NewImm)):
            raise ValueError(
                f"rule {self.name}: a focus pattern takes one source template as its "
                "replacement, any other pattern a tuple of Emit templates"
            )
        if not focused and not self.replacement:
            raise ValueError(f"rule {self.name}: empty replacement")

    @property
    def focused(self) -> bool:
        return self.pattern.focus is not None

    @property
    def emits(self) -> tuple[Emit, ...]:
        return () if self.focused else self.replacement  # type: ignore[return-value]


# --- shorthands ---------------------------------------------------------------------------


def any_(name: str | None = None, **constraints) -> Opnd:
    """Any operand; modifiers unconstrained unless given."""
    return Opnd(name, **constraints)


def reg(name: str | None = None, **constraints) -> Opnd:
    """An SSA value or a uniform."""
    return Opnd(name, kinds=REGISTER, **constraints)


def value(name: str | None = None, **constraints) -> Opnd:
    return Opnd(name, kinds=frozenset({"value"}), **constraints)


def uniform(name: str | None = None, **constraints) -> Opnd:
    return Opnd(name, kinds=frozenset({"uniform"}), **constraints)


def imm(name: str | None = None, bits: int | None = None, **constraints) -> Opnd:
    """An immediate; `bits` fixes its value. Modifiers default to none."""
    constraints.setdefault("abs", False)
    constraints.setdefault("neg", False)
    return Opnd(name, kinds=frozenset({"immediate"}), bits=bits, **constraints)


def zero() -> Opnd:
    """`#0` with no modifiers (what Mesa's agx_is_equiv(src, agx_zero()) accepts)."""
    return imm(bits=0)


def defined_by(pattern: Ins, name: str | None = None, abs: bool | None = False,
               neg: bool | None = False, size: int | str | None = None) -> Opnd:
    """An SSA value defined by an instruction matching `pattern`; by default read without
    modifiers (a modifier on it would change what the definition's value means)."""
    return Opnd(name, kinds=frozenset({"value"}), abs=abs, neg=neg, size=size, defined_by=pattern)
