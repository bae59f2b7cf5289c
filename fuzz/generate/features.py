"""Swarm-testing feature flags: which groups of constructs a generated program may use.

Swarm testing (Groce et al.) switches whole feature groups off at random per program, so a
campaign also explores programs that are dense in the remaining groups. `Features` is a
frozen dataclass of booleans, one per group. `all_on()` is the default; `from_source` draws
each group on with probability 0.75 (a 0 choice keeps it on, so a byte source that runs out
gives all on, matching the Hypothesis strategy, which shrinks towards all on).

`irreducible` is not a swarm group: irreducible CFGs appear only on request (passes written
for a structured backend may assume reducible control flow). Every loop the program
generator builds terminates either way.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from fuzz.generate.choices import ChoiceSource

__all__ = ["Features"]


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
    # on request only, not part of the swarm
    irreducible: bool = False

    @classmethod
    def groups(cls) -> tuple[str, ...]:
        """The swarm groups, in declaration order (every field but `irreducible`)."""
        return tuple(f.name for f in fields(cls) if f.name != "irreducible")

    @classmethod
    def all_on(cls, *, irreducible: bool = False) -> Features:
        return cls(**dict.fromkeys(cls.groups(), True), irreducible=irreducible)

    @classmethod
    def from_source(
        cls, source: ChoiceSource, *, irreducible: bool = False, p_on: float = 0.75
    ) -> Features:
        """Each group on with probability `p_on`; a 0 choice means on."""
        on = {name: not source.boolean(1.0 - p_on) for name in cls.groups()}
        return cls(**on, irreducible=irreducible)

    def disabled(self) -> tuple[str, ...]:
        return tuple(name for name in self.groups() if not getattr(self, name))

    def describe(self) -> str:
        off = self.disabled()
        text = "all on" if not off else "off: " + ", ".join(off)
        return text + (", irreducible" if self.irreducible else "")
