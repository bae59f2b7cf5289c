"""address-cleanup: amul chains, amul of a small shift, iadd(a, #0); every rule proved."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agxir.passes import address_cleanup
from agxir.rewrite import Ins, any_, defined_by, imm, zero
from agxir.text import parse_function, print_function
from agxir.verifier import verify
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.smt.rules import prove_rule

PROOF_MS = 5000


@pytest.mark.parametrize("rule", address_cleanup.RULES, ids=lambda r: r.name)
def test_rule_is_proved(rule):
    proof = prove_rule(rule, PROOF_MS, address_cleanup.PASS.name)
    assert proof.verdict == "verified", (proof.error, proof.timeouts, proof.counterexample)
    assert not proof.timeouts


def test_the_32_bit_shift_form_is_refuted():
    """Mesa's `amul(ishl(a, #b), #c) -> amul(a, c << b)` with a 32-bit a: the shift wraps
    in 32 bits (our amul is 32-bit), so z3 finds an input and the interpreter shows it."""
    (rule,) = [r for r in address_cleanup.RULES if r.name == "amul-of-bfi-shift-1"]
    shift = Ins("bfi", (zero(), any_("a", size=32), imm(bits=1)), {"mask": 0}, size=32)
    wrong = replace(rule, name="amul-of-bfi-shift-32bit",
                    pattern=Ins("amul", (defined_by(shift), imm("c"))))
    proof = prove_rule(wrong, PROOF_MS)
    assert proof.verdict == "counterexample"
    assert proof.counterexample.confirmed, proof.counterexample


def run(text: str) -> tuple[bool, str]:
    fn = parse_function(text)
    changed = address_cleanup.PASS.run(fn)
    assert [str(e) for e in verify(fn)] == []
    return changed, print_function(fn)


PROGRAM = """\
func @p(u0:32, u1:16) {{
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
        ("%m:32 = amul %t, #3\n%r:32 = amul %m, #4", "%r:32 = amul %t, #12"),
        ("%m:32 = amul #3, %t\n%r:32 = amul #8, %m", "%r:32 = amul %t, #24"),
        ("%m:32 = amul %t, #2\n%n:32 = amul %m, #2\n%r:32 = amul %n, #4", "%r:32 = amul %t, #16"),
        ("%s:32 = bfi #0, u1, #3 mask=0\n%r:32 = amul %s, #5", "%r:32 = amul u1, #40"),
        ("%s:32 = iadd #0, u1.abs shift=2\n%r:32 = amul %s, #3", "%r:32 = amul u1.abs, #12"),
        ("%s:32 = imul #4, u1\n%r:32 = amul %s, #3", "%r:32 = amul u1, #12"),
        ("%z:32 = iadd %t, #0 shift=3\n%r:32 = iadd %z, u0.neg shift=0",
         "%r:32 = iadd %t, u0.neg shift=0"),
        ("%z:32 = iadd #0, u0 shift=0\n%y:32 = iadd %z, #0 shift=0\n%r:32 = amul %y.abs, #2",
         "%r:32 = amul u0.abs, #2"),
    ],
)
def test_rewrites(body, expected):
    text = program(body)
    changed, after = run(text)
    assert changed
    assert f"  {expected}\n" in after
    inputs = [InputSet(4, {"u0": 5, "u1": 7}), InputSet(4, {"u0": 0x7FFF, "u1": 0xFFFF})]
    assert CompiledFunction(parse_function(after)).run(inputs) == CompiledFunction(
        parse_function(text)).run(inputs)


@pytest.mark.parametrize(
    "body",
    [
        "%m:32 = amul %t, #16\n%r:32 = amul %m, #16",  # 256 does not fit 8 bits
        "%m:32 = amul %t, #3\n%r:32 = amul %m, #5",  # odd by odd: not in the table
        "%s:32 = bfi #0, %t, #1 mask=0\n%r:32 = amul %s, #3",  # 32-bit shift: wraps
        "%s:32 = imul %t, #2\n%r:32 = amul %s, #3",
        "%r:32 = iadd u1, #0 shift=0",  # a sign extension, not a copy
        "%m:32 = mov_imm value=0x5\n%r:32 = amul %m, #3",
    ],
)
def test_left_alone(body):
    text = program(body)
    assert run(text) == (False, text)


def test_iadd_zero_keeps_a_narrow_use_reading_its_own_way():
    text = program("%z:16 = iadd u1, #0 shift=0\n%r:32 = iadd %t, %z.abs shift=1")
    changed, after = run(text)
    assert changed and "  %r:32 = iadd %t, u1.abs shift=1\n" in after
