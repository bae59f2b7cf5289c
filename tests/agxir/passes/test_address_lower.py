"""address-lower: leftover leas into 64-bit adds (and shifts), amul/aadd into imul/iadd."""

from __future__ import annotations

import pytest

from agxir.passes import address_lower
from agxir.text import parse_function, print_function
from agxir.verifier import verify
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.smt.rules import prove_rule

PROOF_MS = 5000


@pytest.mark.parametrize("rule", address_lower.RULES, ids=lambda r: r.name)
def test_rule_is_proved(rule):
    proof = prove_rule(rule, PROOF_MS, address_lower.PASS.name)
    assert proof.verdict == "verified", (proof.error, proof.timeouts, proof.counterexample)
    assert not proof.timeouts


def test_the_wide_rule_makes_several_instructions():
    (wide,) = [r for r in address_lower.RULES if r.name == "lea-wide"]
    assert len(wide.emits) == 3


PROGRAM = """\
func @p(u0:64, u1:32) {{
b0:
  %t:32 = get_sr sr=thread_id
  %n:32 = iadd %t, u1 shift=0
{body}
  export %r slot=0
  stop
}}
"""


@pytest.mark.parametrize(
    "body, expected",
    [
        ("%r:64 = ulea u0, %n shift=3", ["%r:64 = iadd u0, %n.abs shift=3"]),
        ("%r:64 = ilea u0, %n shift=0", ["%r:64 = iadd u0, %n shift=0"]),
        ("%r:64 = ulea u0, %n shift=9",
         ["%wide:64 = u2u64 %n", "%scaled:64 = bfi #0, %wide, #9 mask=0",
          "%r:64 = iadd u0, %scaled shift=0"]),
        ("%r:64 = ilea u0, %n shift=31",
         ["%wide:64 = i2i64 %n", "%scaled:64 = bfi #0, %wide, #31 mask=0",
          "%r:64 = iadd u0, %scaled shift=0"]),
        ("%r:32 = amul %t, #12", ["%r:32 = imul %t, #12"]),
        ("%r:32 = aadd #7, %t", ["%r:32 = iadd #7, %t shift=0"]),
    ],
)
def test_lowers(body, expected):
    text = PROGRAM.format(body="  " + body)
    fn = parse_function(text)
    assert address_lower.PASS.run(fn)
    assert [str(e) for e in verify(fn)] == []
    after = print_function(fn)
    for line in expected:
        assert f"  {line}\n" in after, after
    assert "lea" not in after and "amul" not in after and "aadd" not in after
    inputs = [InputSet(4, {"u0": 0x123456789, "u1": u1}) for u1 in (0, 0x7FFFFFF0, 0xFFFFFFFE)]
    assert CompiledFunction(fn).run(inputs) == CompiledFunction(parse_function(text)).run(inputs)
