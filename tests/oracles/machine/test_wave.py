"""The wave interpreter: exec-mask rules, masked writes, stale inactive lanes, phis by the
last active block, and wave branches."""

import pytest

from agxir.text import parse_function
from oracles.inputs import InputSet
from oracles.machine import CompiledWave, run_wave


def _outputs(text: str, threads: int = 4, **scalars):
    (outcome,) = run_wave(parse_function(text), [InputSet(threads, scalars, {})])
    assert outcome.kind == "returned", outcome
    return [row[0] for row in outcome.outputs]


def _counter_after(control: str, start: list[int], condition: list[bool]) -> list[int]:
    """r0l of four lanes after one exec row: lane i starts at start[i], and the row's
    condition `r3 == 1` holds where condition[i]."""
    bits = sum(1 << i for i, c in enumerate(condition) if c)
    lines = [
        "func.machine @r() {",
        "b0:",
        "  r1 = get_sr sr=thread_id",
        f"  r2 = mov_imm value={bits:#x}",
        "  r3 = asr r2, r1",
        "  r3 = and r3, #1",
    ]
    for lane, value in enumerate(start):
        lines.append(f"  r4l = mov_imm value={value:#x}")
        lines.append(f"  r8l = icmpsel r1, #{lane}, r4l, r8l cond=ueq")
    lines += [
        "  r0l = mov r8l",  # no exec row has run yet: every lane is active and writes
        "  " + control.replace("C", "r3, #1 cond=ueq inv=0"),
        "  stop",
        "}",
    ]
    wave = CompiledWave(parse_function("\n".join(lines) + "\n"))
    captured = {}
    unit = wave.blocks[-1]
    original = unit.run

    def spy(V, H, U, C, here, act, LB, X, TID):
        result = original(V, H, U, C, here, act, LB, X, TID)
        captured["r0l"] = [int(x) for x in H[0]]
        return result

    unit.run = spy
    # While every wave is at one unit the VM's unit runs without the wrapper: watched too.
    blocks = wave.vm.blocks if wave.vm is not None else None
    if blocks is not None:
        block, row = blocks[-1], wave.vm.rows_of["H"][0]

        class Watched:
            result_kind, result_row = block.result_kind, block.result_row

            def run(self, R, X, unmasked):
                result = block.run(R, X, unmasked)
                captured["r0l"] = [int(x) for x in R[row]]
                return result

        blocks[-1] = Watched()
    try:
        wave.run([InputSet(4, {}, {})])
    finally:
        if blocks is not None:
            blocks[-1] = block
    return captured["r0l"]


@pytest.mark.parametrize(
    "control, start, condition, expected",
    [
        # if_*cmp n: r0l != 0: r0l += n; else !c: r0l = 1
        ("if_icmp C n=2", [0, 0, 1, 3], [True, False, True, False], [0, 1, 3, 5]),
        # else_*cmp n: r0l == 0: r0l = n; r0l == 1: r0l = c ? 0 : 1
        ("else_icmp C n=2", [0, 1, 1, 3], [True, True, False, True], [2, 0, 1, 3]),
        # while_*cmp n: r0l < n: r0l = c ? 0 : n
        ("while_icmp C n=2", [0, 1, 2, 0], [True, False, True, False], [0, 2, 2, 2]),
        # pop_exec n: r0l = max(0, r0l - n)
        ("pop_exec n=2", [0, 1, 2, 5], [True] * 4, [0, 0, 0, 3]),
        # push_exec n: inactive lanes get + n
        ("push_exec n=1", [0, 1, 2, 0], [True] * 4, [0, 2, 3, 0]),
        # break n: active lanes leave with r0l = n
        ("break n=3", [0, 1, 0, 2], [True] * 4, [3, 1, 3, 2]),
    ],
)
def test_each_exec_row_follows_the_hardware_rule(control, start, condition, expected):
    assert _counter_after(control, start, condition) == expected


STALE = """\
func.machine @stale() {
b0:
  r0l = mov_imm value=0x0
  r1 = get_sr sr=thread_id
  r2 = mov_imm value=0x7
  if_icmp r1, #2 cond=ult inv=0 n=1
  r2 = mov_imm value=0x9
  pop_exec n=1
  export r2 slot=0
  stop
}
"""


def test_inactive_lanes_keep_their_old_register_values():
    assert _outputs(STALE) == [9, 9, 7, 7]


def test_jmp_exec_any_loops_until_no_lane_is_active():
    text = """\
func.machine @loop() {
b0: -> b1
  r0l = mov_imm value=0x0
  r1 = get_sr sr=thread_id
  r2 = mov_imm value=0x0
b1: -> b1
  r2 = iadd r2, #1 shift=0
  while_icmp r2, r1 cond=ugt inv=1 n=1
  jmp_exec_any -> b1
  pop_exec n=1
  export r2 slot=0
  stop
}
"""
    assert _outputs(text) == [1, 2, 3, 4]


def test_a_wave_that_never_leaves_its_loop_runs_out_of_fuel():
    text = "func.machine @spin() {\nb0: -> b0\n  jmp_exec_any -> b0\n  stop\n}\n"
    (outcome,) = run_wave(parse_function(text), [InputSet(2, {}, {})], fuel=50)
    assert outcome.kind == "out_of_fuel"
