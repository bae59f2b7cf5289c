"""The pressure invariant's reference (oracles/machine/schedule_oracle.py): per-block
pressure from the reference liveness, and where a rewritten function's pressure rose."""

from __future__ import annotations

from agxir.text import parse_function
from oracles.machine.schedule_oracle import block_pressures, max_point_pressure, pressure_rise

LOOP = """\
func @loop(u0:32) {
b0:
  %t:32 = get_sr sr=thread_id
  %w:64 = u2u64 %t
  jump -> b1
b1:
  %i:32 = phi [#0, b0], [%n, b1]
  %dead:16 = icmp %i, #3 cond=ult inv=0
  %n:32 = iadd %i, #1 shift=0
  if_icmp %n, u0 cond=ult inv=0 -> b1, b2
b2:
  export %w slot=0
  stop
}
"""


def test_block_pressure_is_the_most_halves_live_at_one_point():
    fn = parse_function(LOOP)
    # b0: %t and then %w (4 halves, live around the loop); b1: %w with %i, then %n (6);
    # a dead result is live nowhere and adds nothing; b2: %w before the export.
    assert block_pressures(fn) == {"b0": 4, "b1": 6, "b2": 4}
    assert max_point_pressure(fn) == 6


SPREAD = """\
func @spread(u0:32) {
b0:
  %a:32 = iadd u0, #1 shift=0
  %b:32 = iadd u0, #2 shift=0
  %s:32 = iadd %a, %b shift=0
  export %s slot=0
  stop
}
"""

WIDER = """\
func @spread(u0:32) {
b0:
  %a:32 = iadd u0, #1 shift=0
  %b:32 = iadd u0, #2 shift=0
  %c:32 = iadd u0, #3 shift=0
  %s:32 = iadd %a, %b shift=0
  %r:32 = iadd %s, %c shift=0
  export %r slot=0
  stop
}
"""


def test_a_rise_is_reported_by_block_and_a_fall_or_tie_is_not():
    narrow, wide = parse_function(SPREAD), parse_function(WIDER)
    assert pressure_rise(narrow, wide) == (
        "the register pressure of b0 rose from 4 to 6 halves (most halves live at one point)"
    )
    assert pressure_rise(wide, narrow) is None
    assert pressure_rise(narrow, parse_function(SPREAD)) is None


def test_functions_with_different_blocks_compare_their_maximum():
    renamed = parse_function(WIDER.replace("b0", "entry"))
    assert pressure_rise(parse_function(SPREAD), renamed) == (
        "the maximum register pressure rose from 4 to 6 halves"
    )
    assert pressure_rise(renamed, parse_function(SPREAD)) is None
