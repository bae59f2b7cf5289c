"""cmpsel fusion (Mesa agx_optimizer_cmpsel) and its two heuristic variants, plus the
historic wrong swap, shown to change behaviour on a concrete program."""

from __future__ import annotations

import pytest

from agxir.ir import Function, clone_function
from agxir.passes import Pass, get_pass
from agxir.passes.pass_ import instructions_backward
from agxir.rewrite import apply_rules
from agxir.text import parse_function, print_function
from agxir.verifier import verify
from fuzz.zoo.variants import blog_cmpsel, fusion_rule
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.outcomes import Returned


def apply(name: str, text: str) -> tuple[bool, str]:
    fn = parse_function(text)
    changed = get_pass(name).run(fn)
    assert [str(e) for e in verify(fn)] == []
    return changed, print_function(fn)


def program(compare: str, select: str, uniforms: str = "u0:32, u1:32, u2:32, u3:32") -> str:
    return f"""\
func @p({uniforms}) {{
b0:
  %tid:32 = get_sr sr=thread_id
  {compare}
  {select}
  export %r slot=0
  stop
}}
"""


@pytest.mark.parametrize(
    "inv, payload",
    [(0, "%tid, u2"), (1, "u2, %tid")],
    ids=["not-inverted-swaps", "inverted-keeps"],
)
def test_icmp_fusion_swaps_exactly_when_not_inverted(inv, payload):
    text = program(
        f"%t:16 = icmp u0, u1 cond=slt inv={inv}", "%r:32 = icmpsel %t, #0, u2, %tid cond=ueq"
    )
    changed, after = apply("cmpsel", text)
    assert changed
    assert f"  %r:32 = icmpsel u0, u1, {payload} cond=slt\n" in after
    assert f"  %t:16 = icmp u0, u1 cond=slt inv={inv}\n" in after  # left for dce


@pytest.mark.parametrize("inv, payload", [(0, "#5, u2"), (1, "u2, #5")])
def test_fcmp_fusion_keeps_source_modifiers(inv, payload):
    text = program(
        f"%t:32 = fcmp u0.abs, #0.5.neg cond=gtn inv={inv}",
        "%r:32 = icmpsel %t, #0, u2, #5 cond=ueq",
    )
    changed, after = apply("cmpsel", text)
    assert changed
    assert f"  %r:32 = fcmpsel u0.abs, #0.5.neg, {payload} cond=gtn\n" in after


def test_sixteen_bit_compare_feeding_a_64_bit_select():
    text = program(
        "%t:16 = icmp u0, u1 cond=ugt inv=1",
        "%r:64 = icmpsel %t, #0, u2, u3 cond=ueq",
        uniforms="u0:16, u1:16, u2:64, u3:64",
    )
    changed, after = apply("cmpsel", text)
    assert changed
    assert "  %r:64 = icmpsel u0, u1, u2, u3 cond=ugt\n" in after


@pytest.mark.parametrize(
    "select",
    [
        "%r:32 = icmpsel %t, #0, u2, u3 cond=seq",  # not ueq
        "%r:32 = icmpsel %t, #1, u2, u3 cond=ueq",  # not against #0
        "%r:32 = icmpsel #0, %t, u2, u3 cond=ueq",  # compare on the wrong side
        "%r:32 = icmpsel %tid, #0, u2, u3 cond=ueq",  # not a compare
        "%r:32 = icmpsel u0, #0, u2, u3 cond=ueq",  # a uniform, not SSA
        "%r:32 = fcmpsel %t, #0.0, u2, u3 cond=eq",  # only icmpsel is rewritten
    ],
)
def test_guard(select):
    text = program("%t:32 = icmp u0, u1 cond=ult inv=0", select)
    assert apply("cmpsel", text) == (False, text)


def test_a_select_on_a_select_result_is_not_fused():
    text = program(
        "%t:32 = icmpsel u0, u1, #1, #0 cond=ult", "%r:32 = icmpsel %t, #0, u2, u3 cond=ueq"
    )
    assert apply("cmpsel", text) == (False, text)


def test_each_select_is_fused_once_per_run():
    text = """\
func @p(u0:32, u1:32, u2:32, u3:32) {
b0:
  %a:16 = icmp u0, u1 cond=ult inv=0
  %t:16 = icmp %a, #0 cond=ueq inv=0
  %r:32 = icmpsel %t, #0, u2, u3 cond=ueq
  export %r slot=0
  stop
}
"""
    fn = parse_function(text)
    assert get_pass("cmpsel").run(fn)
    assert "  %r:32 = icmpsel %a, #0, u3, u2 cond=ueq\n" in print_function(fn)
    assert get_pass("cmpsel").run(fn)  # the new select is again a fusable pattern
    assert "  %r:32 = icmpsel u0, u1, u2, u3 cond=ult\n" in print_function(fn)


# --- heuristics -----------------------------------------------------------------------------

MIXED = """\
func @p(u0:32, u1:32, u2:32, u3:32) {
b0:
  %tid:32 = get_sr sr=thread_id
  %cu:16 = icmp u0, #3 cond=ult inv=0
  %cv:16 = icmp %tid, u1 cond=ult inv=1
  %s1:32 = icmpsel %cu, #0, u2, %tid cond=ueq
  %s2:32 = icmpsel %cv, #0, u2, #9 cond=ueq
  %s3:32 = icmpsel %cu, #0, #1, u3 cond=ueq
  %s4:32 = icmpsel %cv, #0, %tid, u3 cond=ueq
  export %s1 slot=0
  export %s2 slot=1
  export %s3 slot=2
  export %s4 slot=3
  stop
}
"""
FUSED = {
    "s1": "  %s1:32 = icmpsel u0, #3, %tid, u2 cond=ult\n",
    "s2": "  %s2:32 = icmpsel %tid, u1, u2, #9 cond=ult\n",
    "s3": "  %s3:32 = icmpsel u0, #3, u3, #1 cond=ult\n",
    "s4": "  %s4:32 = icmpsel %tid, u1, %tid, u3 cond=ult\n",
}


@pytest.mark.parametrize(
    "name, fused",
    [
        ("cmpsel", {"s1", "s2", "s3", "s4"}),
        ("cmpsel-uniform-compare", {"s1", "s3"}),
        ("cmpsel-uniform-select", {"s2", "s3"}),
    ],
)
def test_heuristics_choose_which_selects_fuse(name, fused):
    changed, after = apply(name, MIXED)
    assert changed
    for select, line in FUSED.items():
        assert (line in after) == (select in fused), (select, after)


def test_heuristics_decline_without_change():
    text = program(
        "%t:16 = icmp %tid, u1 cond=ult inv=0", "%r:32 = icmpsel %t, #0, %tid, u2 cond=ueq"
    )
    assert apply("cmpsel-uniform-compare", text) == (False, text)
    assert apply("cmpsel-uniform-select", text) == (False, text)


def test_uniform_select_visits_backward(monkeypatch):
    import agxir.passes.cmpsel as module

    seen = []

    def recording(select, compare):
        seen.append(select.dest.name)
        return True

    monkeypatch.setattr(module, "uniform_select", recording)
    module.run_uniform_select(parse_function(MIXED))
    assert seen == ["s4", "s3", "s2", "s1"]
    fn = parse_function(MIXED)
    assert [i.name for i in instructions_backward(fn)] == [
        i.name for i in reversed(list(fn.instructions()))
    ]


# --- the historic wrong swap ------------------------------------------------------------------


# The wrong variants are the zoo's: the blog's version (swap on the select's own flag, which
# an icmpsel never sets, so always) and the swap condition negated.
SWAP_WHEN_INVERTED = tuple(
    fusion_rule(compare, inv, swap=inv == 1) for compare in ("icmp", "fcmp") for inv in (0, 1)
)
WRONG = [
    Pass("cmpsel-swap-on-select", "historic bug: swap on the select's own flag", blog_cmpsel),
    Pass(
        "cmpsel-swap-when-inverted",
        "bug: swap when inverted",
        lambda fn: apply_rules(fn, SWAP_WHEN_INVERTED),
    ),
]

# bcsel(tid != u0, 100, 200), as isel emits it: ine is icmp ueq inv=1, and bcsel c, a, b
# is icmpsel c, #0, b, a.
BCSEL = """\
func @bcsel(u0:32) {
b0:
  %tid:32 = get_sr sr=thread_id
  %c:16 = icmp %tid, u0 cond=ueq inv=1
  %r:32 = icmpsel %c, #0, #200, #100 cond=ueq
  export %r slot=0
  stop
}
"""
BCSEL_INPUT = [InputSet(4, {"u0": 2})]
BCSEL_OUTPUT = ((100,), (100,), (200,), (100,))


def outputs(fn: Function):
    (outcome,) = CompiledFunction(fn).run(BCSEL_INPUT)
    assert isinstance(outcome, Returned)
    return outcome.outputs


def test_bcsel_program_meaning():
    assert outputs(parse_function(BCSEL)) == BCSEL_OUTPUT


def test_correct_fusion_keeps_the_meaning():
    fn = parse_function(BCSEL)
    assert get_pass("cmpsel").run(fn)
    assert "  %r:32 = icmpsel %tid, u0, #200, #100 cond=ueq\n" in print_function(fn)
    assert outputs(fn) == BCSEL_OUTPUT


@pytest.mark.parametrize("wrong", WRONG, ids=lambda p: p.name)
def test_wrong_swap_changes_behaviour(wrong):
    fn = parse_function(BCSEL)
    assert wrong.run(fn)
    assert verify(fn) == []  # well-formed: only running it shows the bug
    assert "  %r:32 = icmpsel %tid, u0, #100, #200 cond=ueq\n" in print_function(fn)
    assert outputs(fn) == ((200,), (200,), (100,), (200,))


def test_swap_when_inverted_is_also_wrong_for_uninverted_compares():
    text = BCSEL.replace("inv=1", "inv=0")
    expected = ((200,), (200,), (100,), (200,))
    assert outputs(parse_function(text)) == expected
    good, bad = parse_function(text), parse_function(text)
    assert get_pass("cmpsel").run(good) and WRONG[1].run(bad)
    assert outputs(good) == expected
    assert outputs(bad) != expected
    # The blog version happens to be right here: it always swaps, which inv=0 needs.
    blog = parse_function(text)
    blog_cmpsel(blog)
    assert outputs(blog) == expected


def test_clone_keeps_the_original_intact():
    fn = parse_function(BCSEL)
    get_pass("cmpsel").run(clone_function(fn))
    assert print_function(fn) == BCSEL
