"""The liveness reference's walk (`oracles.liveness_reference`), which keeps what each
value's backward walks reach as intervals, against the definition walked one point at a
time: the same per-point sets on generated programs (SSA and, lowered, exec level) and on
a block that writes one value twice (dead-code shapes the verifier lets through)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from agxir.ir import Block, Function, Value, clone_function
from agxir.text import parse_function
from fuzz.strategies import programs
from oracles.liveness_reference import reference_liveness


def by_definition(fn: Function) -> dict[tuple[Block, int], set[Value]]:
    """Live at each point: from each use, back one point at a time, stopping just after a
    definition of the value and at a phi's own block entry, into every predecessor's end."""
    blocks = list(dict.fromkeys(fn.blocks))
    preds: dict[Block, list[Block]] = {b: [] for b in blocks}
    for block in blocks:
        for succ in dict.fromkeys(block.successors):
            if succ in preds and block not in preds[succ]:
                preds[succ].append(block)
    first = {b: next((k for k, i in enumerate(b.instructions) if not i.is_phi),
                     len(b.instructions)) for b in blocks}
    at = {(b, p): set() for b in blocks for p in range(first[b], len(b.instructions) + 1)}
    uses: dict[Value, list] = {}
    home: dict[Value, Block] = {}
    for block in blocks:
        for index, ins in enumerate(block.instructions):
            if ins.is_phi:
                home[ins.dest] = block
                for src, pred in zip(ins.srcs, ins.blocks, strict=False):
                    if isinstance(src.ref, Value):
                        uses.setdefault(src.ref, []).append((pred, len(pred.instructions)))
            else:
                for value in ins.uses():
                    uses.setdefault(value, []).append((block, index))
    for value, starts in uses.items():
        seen, stack = set(), list(starts)
        while stack:
            block, p = point = stack.pop()
            if point in seen:
                continue
            seen.add(point)
            at[point].add(value)
            if p > first[block]:
                if block.instructions[p - 1].dest is not value:
                    stack.append((block, p - 1))
            elif block is not home.get(value):
                stack.extend((pred, len(pred.instructions)) for pred in preds[block])
    return at


def agrees(fn: Function) -> None:
    assert reference_liveness(fn).at == by_definition(fn)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(size=30))
def test_the_walk_agrees_with_the_definition_on_generated_programs(fn):
    from fuzz.passes_under_test import registered

    agrees(fn)
    lowered = clone_function(fn)
    try:
        registered("lower-cf").run(lowered)
    except Exception:  # a program lower-cf cannot structure: the SSA level was checked
        return
    agrees(lowered)


def test_a_value_written_twice_in_one_block_is_live_between_each_write_and_its_reads():
    fn = parse_function("""\
func @f(u0:32) {
b0:
  %a:32 = mov_imm value=0x1
  %b:32 = iadd %a, u0 shift=0
  %c:32 = iadd %b, u0 shift=0
  %d:32 = iadd %a, %b shift=0
  jump -> b1
b1:
  %e:32 = iadd %a, %d shift=0
  jump -> b1
}
""")
    b0, b1 = fn.blocks
    a = b0.instructions[0].dest
    b0.instructions[2].dest = a  # %a written again, without being read: dead before that
    b1.instructions[0].dest = a  # and in the loop, which reads %a before writing it
    agrees(fn)
    at = reference_liveness(fn).at
    assert a in at[(b0, 1)] and a not in at[(b0, 2)] and a in at[(b0, 3)]
    assert a in at[(b0, 4)] and a in at[(b1, 0)] and a in at[(b1, 1)]
