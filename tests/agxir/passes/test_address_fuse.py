"""address-fuse: 64-bit address adds into ulea/ilea; every rule proved, plain math kept."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agxir.passes import address_fuse
from agxir.rewrite import Ins, defined_by, imm, reg
from agxir.text import parse_function, print_function
from agxir.verifier import verify
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.smt.rules import prove_rule

PROOF_MS = 5000


@pytest.mark.parametrize("rule", address_fuse.RULES, ids=lambda r: r.name)
def test_rule_is_proved(rule):
    proof = prove_rule(rule, PROOF_MS, address_fuse.PASS.name)
    assert proof.verdict == "verified", (proof.error, proof.timeouts, proof.counterexample)
    assert not proof.timeouts


def test_relaxed_rules_say_they_need_no_overflow():
    for rule in address_fuse.RELAXED:
        assert "never overflow" in rule.why, rule.name
    for rule in address_fuse.STRICT + address_fuse.EXTEND:
        assert "overflow" not in rule.why, rule.name


def test_the_relaxed_rule_is_wrong_for_a_plain_imul():
    """`a + u2u64(imul(b, #4))` is not `ulea(a, b, 2)`: imul wraps, amul promises not to."""
    (rule,) = [r for r in address_fuse.RULES if r.name == "relaxed-amul-pow2-2"]
    plain = Ins("u2u64", (defined_by(Ins("imul", (reg("b", size=32), imm(bits=4)))),), size=64)
    wrong = replace(rule, name="plain-imul-pow2-2", pattern=Ins(
        "iadd", (address_fuse.BASE, defined_by(plain)), {"shift": 0}, size=64))
    proof = prove_rule(wrong, PROOF_MS)
    assert proof.verdict == "counterexample" and proof.counterexample.confirmed


def run(text: str) -> tuple[bool, str]:
    fn = parse_function(text)
    changed = address_fuse.PASS.run(fn)
    assert [str(e) for e in verify(fn)] == []
    return changed, print_function(fn)


PROGRAM = """\
func @p(u0:64, u1:32, u2:16) {{
b0:
  %t:32 = get_sr sr=thread_id
{body}
  export %r slot=0
  stop
}}
"""


def program(body: str) -> str:
    return PROGRAM.format(body="\n".join("  " + line for line in body.splitlines()))


@pytest.mark.parametrize(
    "body, expected",
    [
        ("%m:32 = amul %t, #16\n%w:64 = u2u64 %m\n%r:64 = iadd u0, %w shift=0",
         ["%r:64 = ulea u0, %t shift=4"]),
        ("%m:32 = amul %t, #4\n%w:64 = i2i64 %m\n%r:64 = iadd %w, u0 shift=0",
         ["%r:64 = ulea u0, %t shift=2"]),
        ("%m:32 = amul %t, #24\n%w:64 = u2u64 %m\n%r:64 = iadd u0, %w shift=0",
         ["%index:32 = amul %t, #3", "%r:64 = ulea u0, %index shift=3"]),
        ("%m:32 = amul u2, #12\n%f:32 = aadd %m, #4\n%w:64 = u2u64 %f\n%r:64 = iadd u0, %w shift=0",
         ["%scaled:32 = amul u2, #3", "%index:32 = aadd %scaled, #1", "%r:64 = ulea u0, %index shift=2"]),
        ("%w:64 = i2i64 %t\n%s:64 = bfi #0, %w, #3 mask=61\n%r:64 = iadd u0, %s shift=0",
         ["%r:64 = ilea u0, %t shift=3"]),
        ("%w:64 = u2u64 %t\n%s:64 = imul #8, %w\n%r:64 = iadd %s, u0 shift=0",
         ["%r:64 = ulea u0, %t shift=3"]),
        ("%w:64 = i2i64 %t\n%r:64 = iadd u0, %w shift=2", ["%r:64 = ilea u0, %t shift=2"]),
        ("%r:64 = iadd u0, %t.abs shift=1", ["%r:64 = ulea u0, %t shift=1"]),
        ("%r:64 = iadd u1, u0 shift=0", ["%r:64 = ilea u0, u1 shift=0"]),
        # an odd stride: only the lowest-priority rule applies
        ("%m:32 = amul %t, #3\n%w:64 = u2u64 %m\n%r:64 = iadd u0, %w shift=0",
         ["%r:64 = ulea u0, %m shift=0"]),
        # plain 32-bit math is extended as it is, never promoted
        ("%m:32 = imul %t, #16\n%w:64 = u2u64 %m\n%r:64 = iadd u0, %w shift=0",
         ["%r:64 = ulea u0, %m shift=0"]),
        ("%s:32 = bfi #0, %t, #2 mask=0\n%w:64 = u2u64 %s\n%r:64 = iadd u0, %w shift=0",
         ["%r:64 = ulea u0, %s shift=0"]),
    ],
)
def test_rewrites(body, expected):
    text = program(body)
    changed, after = run(text)
    assert changed
    for line in expected:
        assert f"  {line}\n" in after, after
    inputs = [InputSet(4, {"u0": 0x1000, "u1": 5, "u2": 3}),
              InputSet(4, {"u0": 1 << 40, "u1": 0xFFFFFFF0, "u2": 0x7FF})]
    assert CompiledFunction(parse_function(after)).run(inputs) == CompiledFunction(
        parse_function(text)).run(inputs)


@pytest.mark.parametrize(
    "body",
    [
        "%r:64 = iadd u0, #8 shift=0",
        "%r:64 = iadd u0, u0 shift=0",
        "%w:64 = u2u64 u2\n%r:64 = iadd u0, %w shift=0",  # a 16-bit index is no lea index
        "%w:64 = u2u64 %t\n%r:64 = iadd %w, u0 shift=1",  # the base is the shifted one
        "%r:32 = iadd %t, u1 shift=0",
    ],
)
def test_left_alone(body):
    text = program(body)
    assert run(text) == (False, text)
