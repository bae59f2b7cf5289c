"""address-fold: a lea or a constant offset into device_load/device_store; rules proved."""

from __future__ import annotations

import pytest

from agxir.passes import address_fold
from agxir.text import parse_function, print_function
from agxir.verifier import verify
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.smt.rules import prove_rule

PROOF_MS = 5000


@pytest.mark.parametrize("rule", address_fold.RULES, ids=lambda r: r.name)
def test_rule_is_proved(rule):
    proof = prove_rule(rule, PROOF_MS, address_fold.PASS.name)
    assert proof.verdict == "verified", (proof.error, proof.timeouts, proof.counterexample)
    assert not proof.timeouts


PROGRAM = """\
func @p(u0:ptr[4096], u1:ptr[4096], u2:32) {{
b0:
  %t:32 = get_sr sr=thread_id
  %mid:64 = iadd u1, #128 shift=0
{body}
  stop
}}
"""


def program(body: str) -> str:
    return PROGRAM.format(body="\n".join("  " + line for line in body.splitlines()))


def run(text: str) -> tuple[bool, str]:
    fn = parse_function(text)
    changed = address_fold.PASS.run(fn)
    assert [str(e) for e in verify(fn)] == []
    return changed, print_function(fn)


INPUTS = [InputSet(8, {"u2": 3}, {"u0": bytes(range(256)) * 16}),
          InputSet(3, {"u2": 0}, {"u0": bytes(4096)})]


def same_outcomes(a: str, b: str) -> None:
    assert CompiledFunction(parse_function(a)).run(INPUTS) == CompiledFunction(
        parse_function(b)).run(INPUTS)


@pytest.mark.parametrize(
    "body, expected",
    [
        ("%a:64 = ulea u0, %t shift=2\n%v:32 = device_load %a, #0 fmt=i32 shift=0",
         "%v:32 = device_load u0, %t.abs fmt=i32 shift=0"),
        ("%a:64 = ulea u0, %t shift=4\n%v:32 = device_load %a, #0 fmt=i32 shift=1",
         "%v:32 = device_load u0, %t.abs fmt=i32 shift=2"),
        ("%a:64 = ilea u0, %t shift=3\n%v:16 = device_load %a, #0 fmt=i16 shift=0",
         "%v:16 = device_load u0, %t fmt=i16 shift=2"),
        ("%a:64 = ulea u0, %t shift=0\n%v:32 = device_load %a, #0 fmt=i8 shift=0",
         "%v:32 = device_load u0, %t.abs fmt=i8 shift=0"),
        ("%a:64 = ilea u1, %t shift=1\ndevice_store %t, %a, #0 fmt=i16 shift=2\n%v:32 = mov_imm value=0",
         "device_store %t, u1, %t fmt=i16 shift=0"),
        ("%a:64 = iadd u0, #24 shift=0\n%v:32 = device_load %a, #0 fmt=i32 shift=0",
         "%v:32 = device_load u0, #3 fmt=i32 shift=1"),
        ("%a:64 = iadd #6, u0 shift=0\n%v:16 = device_load %a, #0 fmt=i16 shift=0",
         "%v:16 = device_load u0, #3 fmt=i16 shift=0"),
        ("%a:64 = iadd u0, #3 shift=2\n%v:32 = device_load %a, #0 fmt=i8 shift=0",
         "%v:32 = device_load u0, #3 fmt=i8 shift=2"),
        ("%a:64 = iadd %mid, #12.neg shift=0\n%v:32 = device_load %a, #0 fmt=i32 shift=0",
         "%v:32 = device_load %mid, #65533 fmt=i32 shift=0"),
    ],
)
def test_folds(body, expected):
    body += "\nexport %v slot=0"
    text = program(body)
    changed, after = run(text)
    assert changed
    assert f"  {expected}\n" in after, after
    same_outcomes(text, after)


@pytest.mark.parametrize(
    "body",
    [
        # a lea below the format shift: the access always scales by the element size
        "%a:64 = ulea u0, %t shift=1\n%v:32 = device_load %a, #0 fmt=i32 shift=0",
        # above fs + 2: for address-lower
        "%a:64 = ulea u0, %t shift=3\n%v:32 = device_load %a, #0 fmt=i8 shift=0",
        # the access already has an index
        "%a:64 = ulea u0, %t shift=2\n%v:32 = device_load %a, #1 fmt=i32 shift=0",
        # an offset that is not a whole element
        "%a:64 = iadd u0, #6 shift=0\n%v:32 = device_load %a, #0 fmt=i32 shift=0",
        # a 32-bit offset register, not a constant
        "%a:64 = iadd u0, u2 shift=0\n%v:32 = device_load %a, #0 fmt=i32 shift=0",
    ],
)
def test_left_alone(body):
    text = program(body + "\nexport %v slot=0")
    assert run(text) == (False, text)


def test_negative_ilea_index_stays_signed():
    """The ilea sign-extends -1 into the element before %mid; the fold keeps that (no .abs)."""
    text = program("%m1:32 = mov_imm value=0xffffffff\n"
                   "%a:64 = ilea %mid, %m1 shift=2\n%v:32 = device_load %a, #0 fmt=i32 shift=0\n"
                   "export %v slot=0")
    changed, after = run(text)
    assert changed and "device_load %mid, %m1 fmt=i32 shift=0" in after
    same_outcomes(text, after)
