"""Address-mode rules written on the rule framework, as the address passes will be: nested
64-bit patterns through definitions, computed immediates with a precondition, a pattern on a
memory operation's operand, and a lowering that makes several instructions. Each is applied to
a program here and must keep its meaning in the interpreter; tests/oracles/smt/test_rules.py
proves them. (The address passes themselves are not written yet.)
"""

from __future__ import annotations

from agxir.ir import Function, clone_function
from agxir.rewrite import (
    Bind,
    Emit,
    Ins,
    NewImm,
    Rule,
    Use,
    apply_rules,
    defined_by,
    imm,
    reg,
    zero,
)
from agxir.text import parse_function, print_function
from agxir.verifier import verify
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction


def plain(name: str, size: int | None = None):
    """A register without modifiers (address math reads its operands as they are)."""
    return reg(name, abs=False, neg=False, size=size)


def fits(limit: int):
    """#b and #c non-zero and b * c < limit, on the BitVectors: ints when rewriting, z3 terms
    when proving."""

    def precondition(b):
        m = b.m
        product = m.mul(m.zext(b.imm("b"), 16, 32), m.zext(b.imm("c"), 16, 32), 32)
        nonzero = m.both(
            m.negate(m.eq(b.imm("b"), m.const(0, 16), 16)),
            m.negate(m.eq(b.imm("c"), m.const(0, 16), 16)),
        )
        return m.both(nonzero, m.ult(product, m.const(limit, 32), 32))

    return precondition


def amul_amul(limit: int = 256) -> Rule:
    """amul(amul(a, #b), #c) -> amul(a, #b*c) when b*c fits the 8-bit immediate."""
    inner = Ins("amul", (plain("a", 32), imm("b")))
    return Rule(
        "amul-amul",
        Ins("amul", (defined_by(inner), imm("c"))),
        (Emit("amul", (Use("a"), NewImm(lambda b: b.m.mul(b.imm("b"), b.imm("c"), 16)))),),
        fits(limit),
        why="no overflow in the source means a*b*c <= INT32_MAX, the target's premise",
    )


def fuse_ulea(s: int) -> Rule:
    """iadd64(base, u2u64(amul(b, #2^s))) -> ulea(base, b, s): amul cannot wrap, so the
    32-bit product zero-extends to the 64-bit shift."""
    scaled = Ins("amul", (plain("b", 32), imm(bits=1 << s)))
    return Rule(
        f"fuse-ulea-{s}",
        Ins("iadd", (plain("base", 64), defined_by(Ins("u2u64", (defined_by(scaled),)))),
            {"shift": 0}),
        (Emit("ulea", (Use("base"), Use("b")), {"shift": s}),),
        why="amul(b, 2^s) <= INT32_MAX, so zext64 of it is zext64(b) << s",
    )


def fold_ulea(s: int) -> Rule:
    """device_load(ulea(base, o, s), #0) fmt=i32 -> device_load(base, o.abs) shift=s-2."""
    lea = Ins("ulea", (plain("base", 64), plain("o", 32)), {"shift": s})
    return Rule(
        f"fold-ulea-{s}",
        Ins("device_load", (defined_by(lea), zero()), {"fmt": "i32", "shift": 0}),
        (Emit("device_load", (Use("base"), Use("o", abs=True)), {"fmt": "i32", "shift": s - 2}),),
        why="the load adds zext64(o) << (2 + shift) to its base itself",
    )


LOWER_ULEA = Rule(
    "lower-ulea",
    Ins("ulea", (plain("a", 64), plain("b", 32)), {"shift": Bind("s")}),
    (
        Emit("u2u64", (Use("b"),), size=64, name="wide"),
        Emit("mov_imm", (), {"value": lambda b: 1 << b["s"]}, size=64, name="scale"),
        Emit("imul", (Use("wide"), Use("scale")), size=64, name="scaled"),
        Emit("iadd", (Use("a"), Use("scaled")), {"shift": 0}),
    ),
    why="ulea is base + zext64(index) * 2^shift",
)

ADDRESS = """\
func @p(u0:ptr[256], u1:32) {
b0:
  %tid:32 = get_sr sr=thread_id
  %i:32 = amul %tid, #2
  %j:32 = amul %i, #4
  %w:64 = u2u64 %j
  %a:64 = iadd u0, %w shift=0
  %l:32 = device_load %a, #0 fmt=i32 shift=0
  export %l slot=0
  %k:32 = amul %tid, #4
  %kw:64 = u2u64 %k
  %b:64 = iadd u0, %kw shift=0
  %m:32 = device_load %b, #0 fmt=i32 shift=0
  export %m slot=1
  stop
}
"""


def outcomes(fn: Function):
    data = bytes(range(256))
    return CompiledFunction(fn).run([InputSet(8, {"u1": 3}, {"u0": data})])


def rewrite(text: str, rules, **kwargs) -> tuple[bool, Function, Function]:
    before = parse_function(text)
    after = clone_function(before)
    changed = apply_rules(after, rules, **kwargs)
    assert verify(after) == []
    return changed, before, after


def test_amul_cleanup_computes_the_immediate():
    changed, before, after = rewrite(ADDRESS, [amul_amul()])
    assert changed
    assert "  %j:32 = amul %tid, #8\n" in print_function(after)
    assert outcomes(after) == outcomes(before)


def test_amul_cleanup_declines_when_the_product_does_not_fit():
    text = ADDRESS.replace("amul %tid, #2", "amul %tid, #64")
    changed, _, after = rewrite(text, [amul_amul()])
    assert not changed and print_function(after) == text


def test_lea_fusion_through_two_definitions_then_folding_into_the_load():
    rules = [fuse_ulea(s) for s in range(1, 5)]
    changed, before, fused = rewrite(ADDRESS, rules)
    assert changed
    text = print_function(fused)
    assert "  %a:64 = ulea u0, %i shift=2\n" in text  # through u2u64 to the outer amul
    assert "  %b:64 = ulea u0, %tid shift=2\n" in text
    assert apply_rules(fused, [fold_ulea(s) for s in range(2, 5)])
    text = print_function(fused)
    assert "  %l:32 = device_load u0, %i.abs fmt=i32 shift=0\n" in text
    assert "  %m:32 = device_load u0, %tid.abs fmt=i32 shift=0\n" in text
    assert verify(fused) == [] and outcomes(fused) == outcomes(before)


def test_lowering_inserts_several_instructions_with_fresh_names():
    text = """\
func @p(u0:ptr[256]) {
b0:
  %tid:32 = get_sr sr=thread_id
  %a:64 = ulea u0, %tid shift=3
  %l:32 = device_load %a, #0 fmt=i32 shift=0
  export %l slot=0
  stop
}
"""
    changed, before, after = rewrite(text, [LOWER_ULEA])
    assert changed
    lines = print_function(after).splitlines()
    at = lines.index("  %a:64 = iadd u0, %scaled shift=0")
    assert lines[at - 3 : at] == [
        "  %wide:64 = u2u64 %tid",
        "  %scale:64 = mov_imm value=0x8",
        "  %scaled:64 = imul %wide, %scale",
    ]
    assert outcomes(after) == outcomes(before)
    # The new instructions are not rewritten again in the same walk, and names stay unique.
    assert apply_rules(after, [LOWER_ULEA]) is False
    again = parse_function(text.replace("%a:64 = ulea", "%wide:64 = ulea").replace("load %a", "load %wide"))
    assert apply_rules(again, [LOWER_ULEA])
    assert "  %wide_1:64 = u2u64 %tid\n" in print_function(again)
    assert verify(again) == []
