"""The golden-file directives for passes: PASS, EXPECT and EXPECT-UNCHANGED."""

from __future__ import annotations

from tests.golden_directives import read_expectations


def test_pass_directives_are_read():
    found = read_expectations(
        "; PASS: copyprop, cmpsel\n"
        "; PASS: dce\n"
        "; EXPECT: %r:32 = icmpsel u0, u1, #7, u2 cond=ult\n"
        ";   EXPECT:   export %r slot=0  \n"
        "; EXPECT-UNCHANGED\n"
        "func @f() {\n"
    )
    assert found.passes == ["copyprop", "cmpsel", "dce"]
    assert found.expect == ["%r:32 = icmpsel u0, u1, #7, u2 cond=ult", "export %r slot=0"]
    assert found.expect_unchanged


def test_no_pass_directives():
    found = read_expectations("; INPUT: threads=1\nfunc @f() {\n")
    assert found.passes == [] and found.expect == [] and not found.expect_unchanged
