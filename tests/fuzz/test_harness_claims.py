"""A pass's claim about change must match what it did, both ways."""

from agxir.text import parse_function
from fuzz.harness import Harness
from fuzz.passes_under_test import PassUnderTest
from oracles.inputs import InputSet

PROGRAM = "func @f() {\nb0:\n  %a:32 = mov_imm value=0x1\n  export %a slot=0\n  stop\n}\n"


def test_a_pass_that_claims_a_change_it_did_not_make_is_a_finding():
    truthy = PassUnderTest("claims", lambda fn: "yes", ("--pass", "t:claims"))
    (finding,) = Harness([InputSet(1, {}, {})]).check(parse_function(PROGRAM), [[truthy]])
    assert finding.oracle == "no-change"
    assert finding.message == "reported a change but the function is unchanged"


def test_an_honest_no_change_is_not_a_finding():
    honest = PassUnderTest("honest", lambda fn: False, ("--pass", "t:honest"))
    assert Harness([InputSet(1, {}, {})]).check(parse_function(PROGRAM), [[honest]]) == []
