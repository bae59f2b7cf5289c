"""branch-cmp (Mesa if_cmp fusion): `if_icmp t, #0 ueq inv=I` on a compare's result."""

from __future__ import annotations

import itertools

import pytest

from agxir.ir import clone_function
from agxir.passes import get_pass
from agxir.text import parse_function, print_function
from agxir.verifier import verify
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction


def branch_program(compare: str, branch_inv: int, branch: str | None = None) -> str:
    branch = branch or f"if_icmp %t, #0 cond=ueq inv={branch_inv} -> yes, no"
    return f"""\
func @p(u0:32, u1:32) {{
entry:
  %tid:32 = get_sr sr=thread_id
  {compare}
  {branch}
yes:
  export %tid slot=0
  stop
no:
  export u0 slot=1
  stop
}}
"""


def apply(text: str) -> tuple[bool, str]:
    fn = parse_function(text)
    changed = get_pass("branch-cmp").run(fn)
    assert [str(e) for e in verify(fn)] == []
    return changed, print_function(fn)


@pytest.mark.parametrize(
    "kind, cmp_inv, br_inv", list(itertools.product(("icmp", "fcmp"), (0, 1), (0, 1)))
)
def test_inversion_rule(kind, cmp_inv, br_inv):
    cond = "ult" if kind == "icmp" else "lt"
    text = branch_program(f"%t:16 = {kind} %tid, u0 cond={cond} inv={cmp_inv}", br_inv)
    changed, after = apply(text)
    assert changed
    inv = cmp_inv ^ (1 - br_inv)
    assert f"  if_{kind} %tid, u0 cond={cond} inv={inv} -> yes, no\n" in after
    # Same threads go the same way (u0 = 2: tid 0, 1 are below it).
    sets = [InputSet(4, {"u0": 2 if kind == "icmp" else 0x40000000})]
    before = CompiledFunction(parse_function(text)).run(sets)
    assert CompiledFunction(parse_function(after)).run(sets) == before


@pytest.mark.parametrize(
    "branch",
    [
        "if_icmp %t, #0 cond=seq inv=1 -> yes, no",
        "if_icmp %t, #1 cond=ueq inv=1 -> yes, no",
        "if_icmp #0, %t cond=ueq inv=1 -> yes, no",
        "if_icmp %tid, #0 cond=ueq inv=1 -> yes, no",
        "if_fcmp %t, #0.0 cond=eq inv=1 -> yes, no",
    ],
)
def test_guard(branch):
    text = branch_program("%t:16 = icmp %tid, u0 cond=ult inv=0", 0, branch)
    assert apply(text) == (False, text)


def test_targets_and_the_compare_are_kept():
    text = branch_program("%t:32 = fcmp u0.neg, u1.abs cond=ge inv=1", 1)
    changed, after = apply(text)
    assert changed
    assert "  %t:32 = fcmp u0.neg, u1.abs cond=ge inv=1\n" in after
    assert "  if_fcmp u0.neg, u1.abs cond=ge inv=1 -> yes, no\n" in after


def test_nan_takes_the_same_side():
    # An inverted float compare is unordered; fusing keeps that because inv is carried over.
    text = branch_program("%t:16 = fcmp u0, u1 cond=lt inv=1", 0)
    fn = parse_function(text)
    fused = clone_function(fn)
    assert get_pass("branch-cmp").run(fused)
    sets = [InputSet(2, {"u0": 0x7FC00000, "u1": 0x3F800000}), InputSet(2, {"u1": 0x7FC00000})]
    assert CompiledFunction(fused).run(sets) == CompiledFunction(fn).run(sets)
