"""The zoo's fuse-exec-cmp variants (fuzz.zoo.exec_cmp_variants): on a small SSA program
shaped so that the machine pipeline leaves the case the check is for, the harness runs the
variant's own pipeline (MACHINE_PIPELINE, then the wrong pass) under every step oracle and
reports a finding from the expected oracle, while the right pass passes the same program;
the variants no program from SSA can expose (an r0l write between, a result in r0l) are
caught on hand-written machine programs, and generated programs never have the r0l write
between; the campaign catches the variants its generated programs reach; and each variant
replays from the command line by its `--pass MODULE:NAME`."""

from __future__ import annotations

import pytest

from agxir.ir import R0L
from agxir.machine.fuse_exec_cmp import PASS, accesses
from agxir.machine.lower_cf import structurable
from agxir.machine.pipeline import MACHINE_PASSES, MACHINE_PIPELINE
from agxir.text import parse_function
from agxir.verifier import verify
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from fuzz.harness import Harness
from fuzz.passes_under_test import PassUnderTest, python_pass, registered
from fuzz.zoo import exec_cmp_variants as zoo
from fuzz.zoo.runner import Variant
from oracles.inputs import InputSet

IF_ELSE = """\
func @{name}(u0:32) {{
entry:
  %tid:32 = get_sr sr=thread_id
{body}  if_icmp %t, #0 cond=ueq inv=1 -> small, large
small:
  %a:32 = iadd %x, #10 shift=0
  jump -> join
large:
  %b:32 = iadd %x, #20 shift=0
  jump -> join
join:
  %r:32 = phi [%a, small], [%b, large]
  export %r slot=0
{tail}  stop
}}
"""


def _if_else(name: str, body: str, tail: str = "") -> str:
    return IF_ELSE.format(name=name, body=body, tail=tail)


COMPARE_THEN_IADD = "  %t:32 = icmp %tid, u0 cond=ult inv=0\n  %x:32 = iadd %tid, #1 shift=0\n"

# What the machine pipeline makes of each (the comment), and the oracle that catches the
# variant there.
PROGRAMS = {
    # r2 = icmp r1, u0; r3 = iadd r1, #1; if_icmp r2: the fused branch mid-block
    "fuse-exec-cmp-at-compare": (
        _if_else("at_compare", COMPARE_THEN_IADD, "  export %tid slot=1\n"), "verifier"),
    # r2 = icmp r1, u0; r1 = iadd r1, #1 (tid dies at x, x takes its register)
    "fuse-exec-cmp-source-redefined": (_if_else("source", COMPARE_THEN_IADD), "refinement"),
    # r2l = icmp r2, u0; r2h = mov_imm 0x9: one half of the 32-bit source rewritten
    "fuse-exec-cmp-overlapping-half-redefined": (_if_else(
        "half",
        "  %k:16 = mov_imm value=0x7\n  %s:32 = iadd %tid, #3 shift=0\n"
        "  %t:16 = icmp %s, u0 cond=ult inv=0\n  %h:16 = mov_imm value=0x9\n"
        "  %x:32 = iadd %tid, %h shift=0\n",
        "  export %k slot=1\n"), "refinement"),
    # r2 = icmp ...; if_icmp r2; ... export r2: the deleted compare's result read later
    "fuse-exec-cmp-result-read-later": (
        _if_else("later", COMPARE_THEN_IADD, "  export %t slot=1\n  export %tid slot=2\n"),
        "verifier"),
    # r2 = icmp r1, #1 (dead); r2 = and r1, #1; if_icmp r2: the nearest compare is not it
    "fuse-exec-cmp-nearest-compare": (_if_else(
        "nearest",
        "  %d:32 = icmp %tid, #1 cond=ult inv=0\n  %t:32 = and %tid, #1\n"
        "  %x:32 = iadd %tid, #1 shift=0\n",
        "  export %tid slot=1\n"), "refinement"),
    # entry: r1 = icmp r2, r1; head: while_icmp r1, #0; body: r1 = icmp r2, #2: the walk
    # leaves the header for the entry block and fuses the first iteration's compare
    "fuse-exec-cmp-unbounded-walk": ("""\
func @walk(u0:32) {
entry:
  %tid:32 = get_sr sr=thread_id
  %zero:32 = mov_imm value=0x0
  %t0:32 = icmp %zero, %tid cond=ult inv=0
  jump -> head
head:
  %i:32 = phi [%zero, entry], [%i2, body]
  %t:32 = phi [%t0, entry], [%t1, body]
  if_icmp %t, #0 cond=ueq inv=1 -> body, out
body:
  %i2:32 = iadd %i, #1 shift=0
  %t1:32 = icmp %i2, #2 cond=ult inv=0
  jump -> head
out:
  export %i slot=0
  stop
}
""", "refinement"),
}  # fmt: skip
INPUTS = [InputSet(4, {"u0": 2}), InputSet(8, {"u0": 5})]
VARIANTS = {v.name: v for v in zoo.VARIANTS}
RIGHT = Variant(
    "fuse-exec-cmp", "seed 003", "the right pass",
    lambda: PassUnderTest(PASS.name, PASS.run, ("--passes", PASS.name)),
    before=MACHINE_PIPELINE,
)  # fmt: skip


def test_every_reachable_variant_has_a_program():
    assert set(PROGRAMS) == set(VARIANTS)
    assert [v.name for v in zoo.UNREACHABLE] == [
        "fuse-exec-cmp-across-exec-write", "fuse-exec-cmp-result-overlaps-exec",
    ]  # fmt: skip


# tsymalla's wqm.ll sequence (`v_cmp`; `s_and_b32 exec_lo, ...`; `s_and_saveexec`) in AGX
# terms: the compare, an exec-mask update, the branch on the compare's result. Lanes 0, 1
# run the compare (0 < 3, 1 < 3); pop_exec wakes lanes 2 and up, whose r2 is the stale 0
# of the outer block, so the branch sends them to the else side (r3 stays 7); a compare
# fused across the pop tests 2 < 3 for lane 2 too, which then exports 9.
ACROSS_EXEC_WRITE = """\
func.machine @wqm(u0:32) {
b0: -> b1, b4
  r0l = mov_imm value=0x0
  r1 = get_sr sr=thread_id
  r2 = mov_imm value=0x0
  r3 = mov_imm value=0x7
  if_icmp r1, #2 cond=ult inv=0 n=1
b1: -> b2, b3
  r2 = icmp r1, #3 cond=ult inv=0
  pop_exec n=1
  if_icmp r2, #0 cond=ueq inv=1 n=1
b2: -> b3
  r3 = mov_imm value=0x9
b3: -> b4
  else_icmp #0, #0 cond=ueq inv=0 n=1
  pop_exec n=1
b4:
  export r3 slot=0
  stop
}
"""
ALL = {v.name: v for v in (*zoo.VARIANTS, *zoo.UNREACHABLE)}


def _right_unit() -> PassUnderTest:
    return PassUnderTest(PASS.name, PASS.run, ("--passes", PASS.name))


def test_the_harness_catches_across_exec_write_on_a_hand_written_machine_program():
    fn = parse_function(ACROSS_EXEC_WRITE)
    assert verify(fn) == [], verify(fn)
    assert Harness(INPUTS).check(fn, [[_right_unit()]]) == []  # the right pass declines
    unit = ALL["fuse-exec-cmp-across-exec-write"].make_pass()
    findings = Harness(INPUTS).check(fn, [[unit]])
    assert len(findings) == 1, findings
    assert findings[0].pass_name == "zoo-fuse-exec-cmp-across-exec-write"
    assert findings[0].oracle == "refinement", findings[0]


def test_no_generated_program_writes_r0l_before_a_branch_in_its_block():
    # The argument for across-exec-write being unreachable (the zoo module's docstring):
    # after MACHINE_PIPELINE, nothing before an if/while branch in its block writes r0l
    # but the entry's begin_cf, its first instruction.
    config = CampaignConfig(seed=3, pipelines=[])
    branches = 0
    for index in range(60):
        fn, _ = build_case(config.seed, index, config)
        if structurable(fn):
            continue
        for name in MACHINE_PIPELINE:
            MACHINE_PASSES[name].run(fn)
        for block in fn.blocks:
            names = [ins.name for ins in block.instructions]
            ends = [i for i, name in enumerate(names) if name in ("if_icmp", "while_icmp")]
            if not ends:
                continue
            branches += 1
            first = 1 if block is fn.entry else 0
            for ins in block.instructions[first : ends[-1]]:
                assert R0L.half not in accesses(ins)[1], (index, block.name, ins.name)
    assert branches >= 60


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_harness_catches_the_variant_where_the_right_pass_passes(name):
    text, oracle = PROGRAMS[name]
    fn = parse_function(text)
    assert Harness(INPUTS).check(fn, [RIGHT.pipeline()]) == []
    findings = Harness(INPUTS).check(fn, [VARIANTS[name].pipeline()])
    assert len(findings) == 1, findings
    finding = findings[0]
    assert finding.pass_name == f"zoo-{name}"
    assert finding.oracle == oracle, finding


def test_the_right_pass_fuses_each_program_that_is_a_near_miss_only_for_the_variant():
    # at-compare's program is the plain case: the right pass fuses it (at the branch)
    fn = parse_function(PROGRAMS["fuse-exec-cmp-at-compare"][0])
    for step in RIGHT.pipeline()[:-1]:
        step.run(fn)
    assert PASS.run(fn)
    assert [ins.name for ins in fn.entry.instructions][-2:] == ["iadd", "if_icmp"]


def test_the_campaign_catches_result_read_later_on_generated_programs():
    pipeline = VARIANTS["fuse-exec-cmp-result-read-later"].pipeline()
    config = CampaignConfig(seed=1, pipelines=[pipeline])
    for index in range(40):
        fn, inputs = build_case(config.seed, index, config)
        findings = Harness(inputs).check(fn, [pipeline])
        if findings:
            assert findings[0].pass_name == "zoo-fuse-exec-cmp-result-read-later"
            assert findings[0].oracle in ("verifier", "refinement"), findings[0]
            return
    pytest.fail("result-read-later not caught in 40 generated programs")


# Per reachable variant: (campaign seed, first program index, programs checked), a window
# of the campaign's own stream in which the generated programs reach the variant's case
# (found by running the campaign: `agxfuzz zoo --seed 1` catches each at the program
# numbered one past the window's last index or earlier; see docs/exec-compare-fusion.md for the rates).
# A generator change that moves the stream moves these windows: re-find them with the
# campaign, do not widen them past a few seconds.
CAMPAIGN_WINDOWS = {  # re-found for generator version 10
    "fuse-exec-cmp-at-compare": (1, 47, 8),
    "fuse-exec-cmp-source-redefined": (1, 2, 8),
    "fuse-exec-cmp-overlapping-half-redefined": (1, 2, 8),
    "fuse-exec-cmp-result-read-later": (1, 15, 8),
    "fuse-exec-cmp-unbounded-walk": (1, 2, 8),
    "fuse-exec-cmp-nearest-compare": (1, 22, 8),
}


def test_every_reachable_variant_has_a_campaign_window():
    # The unbounded walk too: it differs from the pass only where a loop header's branch
    # tests a phi coalesced with a compare of the preheader, which the generator now makes
    # in every top-level do-while header that starts an if (exec_cmp_shapes.loop_phi).
    assert set(CAMPAIGN_WINDOWS) == set(VARIANTS)


@pytest.mark.parametrize("name", sorted(CAMPAIGN_WINDOWS))
def test_the_campaign_catches_the_variant_on_generated_programs(name):
    seed, start, count = CAMPAIGN_WINDOWS[name]
    pipeline = VARIANTS[name].pipeline()
    right = [*RIGHT.pipeline()]
    config = CampaignConfig(seed=seed, pipelines=[pipeline])
    for index in range(start, start + count):
        fn, inputs = build_case(config.seed, index, config)
        findings = Harness(inputs).check(fn, [pipeline])
        if findings:
            assert findings[0].pass_name == f"zoo-{name}", findings[0]
            assert findings[0].oracle in ("verifier", "refinement"), findings[0]
            assert Harness(inputs).check(fn, [right]) == []  # the right pass is fine there
            return
    pytest.fail(f"{name} not caught in programs {start}..{start + count - 1} of seed {seed}")


@pytest.mark.parametrize("variant", zoo.VARIANTS + zoo.UNREACHABLE, ids=lambda v: v.name)
def test_replayable_from_the_command_line(variant):
    unit = variant.make_pass()
    flag, spec = unit.flag
    assert flag == "--pass" and spec.startswith("fuzz.zoo.exec_cmp_variants:")
    loaded = python_pass(spec)  # what `agxfuzz run --pass SPEC` loads
    assert loaded.flag == unit.flag
    module, _, attribute = spec.partition(":")
    assert getattr(zoo, attribute) is unit.run and module == zoo.MODULE
    assert [step.name for step in variant.pipeline()[:-1]] == list(MACHINE_PIPELINE)
    assert registered("lower-copies").name == variant.pipeline()[-2].name
