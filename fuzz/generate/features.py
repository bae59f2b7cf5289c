"""Swarm-testing feature flags: which groups of constructs a generated program may use.

Swarm testing (Groce et al.) switches whole feature groups off at random per program, so a
campaign also explores programs that are dense in the remaining groups. `Features` is a
frozen dataclass of booleans, one per group. `all_on()` is the default; `from_source` draws
each group on with probability 0.75 (a 0 choice keeps it on, so a byte source that runs out
gives all on, matching the Hypothesis strategy, which shrinks towards all on).

`irreducible` is not a swarm group: irreducible CFGs appear only on request (passes written
for a structured backend may assume reducible control flow). Every loop the program
generator builds terminates either way.

`address_heavy` is not a swarm group either: it asks for programs whose memory accesses
mostly go through the address shapes of `fuzz.generate.addresses` (arrays and arrays of
structs with computed addresses, as NIR hands them to Mesa's AGX address lowering). It
forces the groups those shapes need on (`address`, `address_math`, `loads`, `stores`) and
`pressure` off.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from fuzz.generate.choices import ChoiceSource

__all__ = ["ADDRESS_GROUPS", "Features"]


@dataclass(frozen=True)
class Features:
    # control flow
    branches: bool = True  # if / if-else regions
    loops: bool = True  # bounded counter loops (do-while and top-tested)
    unstructured: bool = True  # arbitrary reducible regions with guarded back edges
    phis: bool = True  # data phis at joins, loop-carried phis at headers
    # values and operands
    values16: bool = True
    values64: bool = True
    uniforms: bool = True
    immediates: bool = True
    modifiers: bool = True  # .abs / .neg / .sat
    # opcode families
    int_arith: bool = True  # iadd imad imul mov_imm
    bit_ops: bool = True  # bitop bfi bfeil extr asr
    compares: bool = True  # icmp icmpsel
    floats: bool = True  # fadd fmul ffma fmov fcmp fcmpsel if_fcmp
    conversions: bool = True  # convert signext
    address_math: bool = True  # amul aadd ulea ilea u2u64 i2i64, computed bases
    loads: bool = True
    stores: bool = True
    exports: bool = True
    # pass-targeted patterns
    cmpsel_fusion: bool = True  # icmp/fcmp feeding icmpsel t, #0, x, y cond=ueq
    branch_fusion: bool = True  # icmp/fcmp feeding if_icmp t, #0 cond=ueq
    mov_chains: bool = True  # mov (bitop x, #0 tt=0xa) chains, narrow-to-wide, of uniforms
    uniform_operands: bool = True  # compare and select operands drawn from uniforms
    address: bool = True  # array / array-of-struct accesses through NIR-style address math
    pressure: bool = True  # register pressure and copy shapes (fuzz.generate.pressure_shapes)
    # on request only, not part of the swarm
    irreducible: bool = False
    address_heavy: bool = False

    @classmethod
    def groups(cls) -> tuple[str, ...]:
        """The swarm groups, in declaration order (every field but the requested ones)."""
        return tuple(f.name for f in fields(cls) if f.name not in _REQUESTED)

    @classmethod
    def all_on(cls, *, irreducible: bool = False, address_heavy: bool = False) -> Features:
        flags = cls(**dict.fromkeys(cls.groups(), True), irreducible=irreducible)
        return flags.with_address_heavy() if address_heavy else flags

    @classmethod
    def from_source(
        cls,
        source: ChoiceSource,
        *,
        irreducible: bool = False,
        address_heavy: bool = False,
        p_on: float = 0.75,
    ) -> Features:
        """Each group on with probability `p_on`; a 0 choice means on. With `address_heavy`
        every group is still drawn (the stream does not shift), then the address groups are
        forced on."""
        on = {name: not source.boolean(1.0 - p_on) for name in cls.groups()}
        flags = cls(**on, irreducible=irreducible)
        return flags.with_address_heavy() if address_heavy else flags

    def with_address_heavy(self) -> Features:
        """These flags with `address_heavy` set and the groups it needs on; `pressure` off
        (its shapes would take the share of the program the address shapes are for)."""
        return replace(self, address_heavy=True, pressure=False,
                       **dict.fromkeys(ADDRESS_GROUPS, True))

    def disabled(self) -> tuple[str, ...]:
        return tuple(name for name in self.groups() if not getattr(self, name))

    def describe(self) -> str:
        off = self.disabled()
        text = "all on" if not off else "off: " + ", ".join(off)
        text += ", irreducible" if self.irreducible else ""
        return text + (", address-heavy" if self.address_heavy else "")


_REQUESTED = frozenset({"irreducible", "address_heavy"})
ADDRESS_GROUPS = ("address", "address_math", "loads", "stores")
