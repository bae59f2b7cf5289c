"""The liveness reference (oracles.liveness_reference): sets worked out by hand from the
definition, the wording of compare_liveness, and agreement with agxir.liveness on every
golden file that verifies."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from agxir.liveness import Liveness
from agxir.text import ParseError, parse_function
from agxir.verifier import verify
from oracles.liveness_reference import compare_liveness, reference_liveness

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def parse(text: str):
    fn = parse_function(text)
    assert verify(fn) == []
    return fn


def names(values) -> set[str]:
    return {value.name for value in values}


def by_name(fn, reference):
    return {b.name: (names(reference.live_in[b]), names(reference.live_out[b])) for b in fn.blocks}


DIAMOND = """\
func @f(u0:32) {
entry:
  %a:32 = mov_imm value=0x1
  %b:16 = mov_imm value=0x2
  if_icmp u0, #0 cond=ueq inv=0 -> left, right
left:
  %c:32 = iadd %a, %a shift=0
  jump -> join
right:
  export %b slot=0
  jump -> join
join:
  %p:32 = phi [%c, left], [%a, right]
  %q:32 = iadd %p, %a shift=0
  export %q slot=1
  stop
}
"""


def test_diamond_by_hand():
    fn = parse(DIAMOND)
    ref = reference_liveness(fn)
    assert by_name(fn, ref) == {
        "entry": (set(), {"a", "b"}),
        "left": ({"a"}, {"a", "c"}),
        # %a is read twice below the branch: by the phi on right -> join and by %q.
        "right": ({"a", "b"}, {"a"}),
        "join": ({"a"}, set()),
    }
    join = fn.block_named("join")
    # Point 1 (after the phi) holds the phi destination in use; live_in does not.
    assert names(ref.at[(join, 1)]) == {"a", "p"}
    assert names(ref.at[(join, 2)]) == {"q"}
    q = join.instructions[1]
    assert names(ref.kills[q]) == {"a", "p"}
    assert ref.kills[join.instructions[0]] == frozenset()  # a phi kills nothing
    c = fn.block_named("left").instructions[0]
    assert names(ref.kills[c]) == set()  # %a goes on to join
    # Two 32-bit values at once at most: %a and %c after %c in left, %a and %p at join's
    # entry (16-bit %b only ever sits next to %a).
    assert ref.max_pressure == 4


def test_self_referencing_phi_is_live_out_of_the_loop_not_in():
    fn = parse(
        """\
func @f() {
entry:
  %z:32 = mov_imm value=0x0
  jump -> loop
loop:
  %a:32 = phi [%z, entry], [%a, loop]
  if_icmp %a, #3 cond=ult inv=0 -> loop, exit
exit:
  stop
}
"""
    )
    ref = reference_liveness(fn)
    assert by_name(fn, ref) == {
        "entry": (set(), {"z"}),
        "loop": (set(), {"a"}),
        "exit": (set(), set()),
    }


def test_unreachable_self_loop_reading_a_later_definition():
    # Uses in unreachable blocks are not dominance-checked: %y is read before it is
    # defined, which only the path around the self-loop can supply.
    fn = parse(
        """\
func @f() {
entry:
  stop
dead:
  %x:32 = iadd %y, #1 shift=0
  %y:32 = iadd %x, #1 shift=0
  jump -> dead
}
"""
    )
    ref = reference_liveness(fn)
    assert by_name(fn, ref)["dead"] == ({"y"}, {"y"})
    assert compare_liveness(fn, Liveness(fn)) is None


def test_seed_example_by_the_definition():
    fn = parse_function((GOLDEN / "liveness_seed_example.agx").read_text())
    assert by_name(fn, reference_liveness(fn)) == {
        "block0": (set(), {"15"}),
        "block1": ({"15"}, {"22", "46", "47", "48"}),
        "block2": ({"15"}, {"50", "51", "52", "53"}),
        "block3": (set(), set()),
    }


# --- compare_liveness ---------------------------------------------------------------------


def tampered(fn, *changes):
    """A copy of the reference answer as a plain object, with some entries replaced."""
    ref = reference_liveness(fn)
    found = SimpleNamespace(
        live_in=dict(ref.live_in),
        live_out=dict(ref.live_out),
        kills=dict(ref.kills),
        max_pressure=ref.max_pressure,
    )
    for change in changes:
        change(found, fn)
    return found


def value(fn, name):
    return next(v for v in fn.values() if v.name == name)


def test_compare_agrees_with_itself():
    fn = parse(DIAMOND)
    assert compare_liveness(fn, tampered(fn)) is None


def test_compare_reports_the_first_difference_in_block_order():
    fn = parse(DIAMOND)
    join, left = fn.block_named("join"), fn.block_named("left")

    def extra_in_join(found, fn):
        found.live_in[join] = found.live_in[join] | {value(fn, "p"), value(fn, "q")}

    def missing_out_left(found, fn):
        found.live_out[left] = found.live_out[left] - {value(fn, "c")}

    found = tampered(fn, extra_in_join, missing_out_left)
    assert compare_liveness(fn, found) == "live_out[left]: analysis is missing %c"
    found = tampered(fn, extra_in_join)
    assert compare_liveness(fn, found) == "live_in[join]: analysis has extra %p, %q"


def test_compare_reports_both_extra_and_missing():
    fn = parse(DIAMOND)
    right = fn.block_named("right")

    def swap(found, fn):
        found.live_in[right] = frozenset({value(fn, "a"), value(fn, "c")})

    assert compare_liveness(fn, tampered(fn, swap)) == (
        "live_in[right]: analysis has extra %c; analysis is missing %b"
    )


def test_compare_reports_kills_and_pressure():
    fn = parse(DIAMOND)
    q = fn.block_named("join").instructions[1]

    def wrong_kill(found, fn):
        found.kills[q] = frozenset({value(fn, "p")})

    assert compare_liveness(fn, tampered(fn, wrong_kill)) == (
        "kills[join, instruction 1 (%q = iadd)]: analysis is missing %a"
    )

    def more_pressure(found, fn):
        found.max_pressure += 1

    assert compare_liveness(fn, tampered(fn, more_pressure)) == (
        "max_pressure: analysis has 5, reference has 4 halves"
    )


def test_compare_treats_a_missing_block_as_empty():
    fn = parse(DIAMOND)
    entry = fn.block_named("entry")

    def forget(found, fn):
        del found.live_out[entry]

    assert compare_liveness(fn, tampered(fn, forget)) == (
        "live_out[entry]: analysis is missing %a, %b"
    )


# --- agreement on the golden files ----------------------------------------------------------


def _verified_goldens():
    for path in sorted(GOLDEN.glob("*.agx")):
        try:
            fn = parse_function(path.read_text(), filename=path.name)
        except ParseError:
            continue
        if not verify(fn):
            yield path


@pytest.mark.parametrize("path", list(_verified_goldens()), ids=lambda p: p.name)
def test_analysis_agrees_with_the_reference_on_golden_files(path):
    fn = parse_function(path.read_text(), filename=path.name)
    assert compare_liveness(fn, Liveness(fn)) is None


def test_a_liveness_with_right_block_sets_and_kills_but_wrong_points_is_caught():
    """RA and pressure read the per-point sets: corrupting only those must not pass."""
    from agxir.liveness import Liveness
    from agxir.text import parse_function
    from oracles.liveness_reference import compare_liveness

    fn = parse_function(open("tests/golden/liveness_loop_back_edge.agx").read())

    class DropsAPoint(Liveness):
        def live_after(self, ins):
            found = super().live_after(ins)
            return frozenset(list(found)[1:]) if len(found) > 1 else found

    assert compare_liveness(fn, Liveness(fn)) is None
    assert "live after [" in compare_liveness(fn, DropsAPoint(fn))
