"""The encoding oracle (issue 19): what a pass emits must fit AGX's instruction fields."""

from __future__ import annotations

import pytest

from agxir.ir import Immediate, Operand, clone_function
from agxir.machine.pipeline import MACHINE_PASSES, MACHINE_PIPELINES
from agxir.passes import ADDRESS_PIPELINE, DEFAULT_PIPELINE, MESA_OPTIMIZER_PIPELINE, PASSES
from agxir.text import parse_function
from agxir.verifier import verify
from fuzz.harness import Harness
from fuzz.passes_under_test import PassUnderTest, registered
from oracles.encoding import encoding_failure, problems
from oracles.inputs import InputSet

ADD = """\
func @add(u0:32) {
b0:
  %a:32 = iadd u0, #255 shift=0
  %n:32 = iadd u0, %a.neg shift=0
  export %n slot=0
  stop
}
"""
BRANCH = """\
func @branch(u0:32) {
b0:
  %t:32 = get_sr sr=thread_id
  if_icmp %t, u0 cond=ult inv=0 -> b1, b2
b1:
  %x:32 = iadd %t, #1 shift=0
  jump -> b3
b2:
  %y:32 = iadd %t, #2 shift=0
  jump -> b3
b3:
  %p:32 = phi [%x, b1], [%y, b2]
  export %p slot=0
  stop
}
"""


def _with_immediate(fn, bits: int):
    changed = clone_function(fn)
    ins = changed.blocks[0].instructions[0]
    ins.srcs[1] = Operand(Immediate(bits))
    return changed


def test_an_8_bit_slot_given_256_is_a_finding():
    fn = parse_function(ADD)
    assert problems(fn) == []
    wide = _with_immediate(fn, 256)
    [problem] = problems(wide)
    assert problem.kind == ("iadd", "imm8")
    assert "#256 does not fit the 8-bit immediate field of source 1 of iadd" in str(problem)
    assert encoding_failure(fn, wide) == problem
    assert encoding_failure(fn, _with_immediate(fn, 255)) is None


def test_a_pass_is_judged_on_what_it_emitted_not_on_what_it_was_given():
    wide = _with_immediate(parse_function(ADD), 300)
    assert encoding_failure(wide, clone_function(wide)) is None


def test_a_memory_index_takes_16_bits():
    fn = parse_function("""\
func @load(u0:ptr[64]) {
b0:
  %v:32 = device_load u0, #255 fmt=i32 shift=0
  export %v slot=0
  stop
}
""")
    load = fn.blocks[0].instructions[0]
    load.srcs[1] = Operand(Immediate(0xFFFF))
    assert problems(fn) == []


@pytest.mark.parametrize("position, modifier, found", [
    (1, "neg", None),  # iadd's second source has the negate bit
    (0, "neg", ("iadd", "neg")),  # its first has none
    (0, "abs", None),  # zero-extension of an integer source
])
def test_modifiers_only_where_the_encoding_has_a_bit(position, modifier, found):
    fn = parse_function(ADD)
    ins = fn.blocks[0].instructions[1]
    src = ins.srcs[position]
    ins.srcs[position] = Operand(src.ref, abs=modifier == "abs", neg=modifier == "neg")
    kinds = [p.kind for p in problems(fn)]
    assert kinds == ([found] if found else [])


def test_a_select_payload_takes_no_modifier():
    fn = parse_function("""\
func @sel(u0:32, u1:32) {
b0:
  %r:32 = fcmpsel u0.abs, u1, u0, u1 cond=lt
  export %r slot=0
  stop
}
""")
    assert problems(fn) == []
    ins = fn.blocks[0].instructions[0]
    ins.srcs[2] = Operand(ins.srcs[2].ref, abs=True)
    assert [p.kind for p in problems(fn)] == [("fcmpsel", "abs")]


def test_a_nesting_count_past_two_bits_is_a_finding_the_verifier_does_not_see():
    before = parse_function(BRANCH)
    after = clone_function(before)
    assert MACHINE_PASSES["lower-cf"].run(after)
    assert encoding_failure(before, after) is None
    pops = [ins for ins in after.instructions() if ins.name == "pop_exec"]
    assert pops
    pops[0].attrs["n"] = 4
    assert verify(after) == []  # the table allows any 16-bit count
    problem = encoding_failure(before, after)
    assert problem is not None and problem.kind == ("pop_exec", "nest")
    assert "n=4 does not fit the 2-bit nesting count of pop_exec" in problem.message


def test_registers_are_aligned_and_inside_the_file():
    from agxir.ir import Register

    fn = parse_function(BRANCH)
    after = clone_function(fn)
    for name in ("lower-cf", "ra", "lower-phis", "lower-copies"):
        MACHINE_PASSES[name].run(after)
    assert after.level == "machine" and problems(after) == []
    target = next(ins for ins in after.instructions()
                  if isinstance(ins.dest, Register) and ins.dest.size == 32)
    target.dest = Register(target.dest.half + 1, 32)
    assert ("alignment" in {p.kind[1] for p in problems(after)})
    target.dest = Register(254 + 2, 32)
    assert ("register" in {p.kind[1] for p in problems(after)})


# --- a planted wrong variant: inline-imm inlining a 9-bit immediate ---------------------


def _wide_inline_imm(fn) -> bool:
    """inline-imm with its width check one bit off: a mov_imm below 512 (not 256) is read
    as an immediate by any integer source that takes one. (Written out by hand: the rule
    matcher itself refuses to build an immediate wider than the table's slot.)"""
    defs = {ins.dest: ins for ins in fn.instructions() if ins.dest is not None}
    changed = False
    for ins in fn.instructions():
        for position, src in enumerate(ins.srcs):
            spec = ins.opcode.srcs[position] if not ins.opcode.variadic else None
            move = defs.get(src.ref)
            if (spec is not None and spec.imm == "imm8" and move is not None
                    and move.name == "mov_imm" and move.attrs["value"] < 512
                    and not src.abs and not src.neg):
                ins.srcs[position] = Operand(Immediate(move.attrs["value"]))
                changed = True
    return changed


NINE_BITS = """\
func @nine(u0:32) {
b0:
  %k:32 = mov_imm value=0x1ff
  %r:32 = iadd u0, %k shift=0
  export %r slot=0
  stop
}
"""


def test_a_planted_inline_imm_that_inlines_9_bits_is_caught():
    before = parse_function(NINE_BITS)
    after = clone_function(before)
    assert not PASSES["inline-imm"].run(clone_function(before))  # the right pass leaves it
    assert _wide_inline_imm(after)
    problem = encoding_failure(before, after)
    assert problem is not None and problem.kind == ("iadd", "imm8")
    harness = Harness([InputSet(threads=4, scalars={"u0": 7})])
    variant = PassUnderTest("inline-imm-9-bits", _wide_inline_imm, ("--pass", "x:y"))
    findings = harness.check(before, [[variant]])
    assert [(f.pass_name, f.oracle) for f in findings] in (
        [("inline-imm-9-bits", "verifier")], [("inline-imm-9-bits", "encoding")])


def test_the_registered_pipelines_emit_only_encodable_instructions():
    """No false findings: programs of the campaign's stream through every pipeline it runs."""
    from fuzz.campaign import CampaignConfig
    from fuzz.generate.cases import build_case

    pipelines = [(name,) for name in PASSES] + [
        DEFAULT_PIPELINE, ADDRESS_PIPELINE, MESA_OPTIMIZER_PIPELINE, *MACHINE_PIPELINES]
    steps = 0
    for index in range(24):
        fn, _ = build_case(1, index, CampaignConfig(seed=1, pipelines=[],
                                                    address_heavy=index % 3 == 2))
        for pipeline in pipelines:
            current = fn
            for name in pipeline:
                work = clone_function(current)
                try:
                    registered(name).run(work)
                except Exception as error:
                    assert type(error).__name__ == "Unstructurable", error
                    break
                assert encoding_failure(current, work) is None, (index, pipeline, name)
                current, steps = work, steps + 1
    assert steps > 24 * len(pipelines)
