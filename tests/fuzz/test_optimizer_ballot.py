"""Ballots and uadd_sat in the generator, the ballot fusion on generated programs, and the
two zoo variants (BallotConstant, 4d0233cb) caught and reduced by the zoo."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agxir.ir import Value, clone_function
from agxir.passes import ballot_fuse
from agxir.text import parse_function, print_function
from agxir.verifier import verify
from fuzz.generate import ChoiceSource, generate_inputs, generate_program
from fuzz.zoo.optimizer_variants import ballot_constant, uadd_sat_packing
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.outcomes import Returned

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = 300


def _shapes(fn) -> set[str]:
    defs = {ins.dest: ins for ins in fn.instructions() if ins.dest is not None}
    uses: dict = {}
    for ins in fn.instructions():
        for value in ins.uses():
            uses[value] = uses.get(value, 0) + 1
    found = set()
    entry = set(map(id, fn.blocks[0].instructions))
    names = {ins.dest.name: ins for ins in defs.values()}
    for ins in fn.instructions():
        if ins.name == "ballot":
            src = ins.srcs[0]
            compare = defs.get(src.ref) if isinstance(src.ref, Value) else None
            if compare is not None and compare.name in ("icmp", "fcmp"):
                found.add("ballot-of-compare")
                if uses[src.ref] > 1:
                    found.add("compare-with-another-use")
            if src.is_immediate:
                numbered = names.get(str(src.ref.bits))
                if numbered is not None and numbered.name in ("icmp", "fcmp"):
                    found.add("constant-numbered-like-a-compare")
            if id(ins) not in entry:
                found.add("ballot-outside-the-entry-block")
        if ins.name == "uadd_sat" and ins.dest.size == 32:
            if all(s.abs and not s.is_immediate and s.ref.size == 32 for s in ins.srcs):
                found.add("unsigned-full-width-uadd-sat")
    return found


def test_the_generator_makes_the_ballot_and_uadd_sat_shapes():
    found: set[str] = set()
    for seed in range(PROGRAMS):
        fn = generate_program(ChoiceSource.from_seed(seed))
        found |= _shapes(fn)
    assert found == {
        "ballot-of-compare", "compare-with-another-use", "constant-numbered-like-a-compare",
        "ballot-outside-the-entry-block", "unsigned-full-width-uadd-sat",
    }


def test_ballot_fuse_keeps_generated_programs_equivalent():
    fused = 0
    for seed in range(PROGRAMS):
        fn = generate_program(ChoiceSource.from_seed(seed))
        after = clone_function(fn)
        if not ballot_fuse.PASS.run(after):
            continue
        fused += 1
        assert not verify(after)
        inputs = generate_inputs(fn, ChoiceSource.from_seed(seed + 1))
        for before, now in zip(CompiledFunction(fn).run(inputs), CompiledFunction(after).run(inputs),
                               strict=True):
            if isinstance(before, Returned):
                assert now == before, print_function(fn)
        if fused == 10:
            break
    assert fused == 10


BALLOTS = """
func @ballots(u0:32) {
entry:
  %x:32 = get_sr sr=thread_id
  %3:16 = icmp %x, u0 cond=ult inv=0
  %a:32 = ballot #3
  %b:32 = ballot %3
  %c:32 = ballot u0
  export %a slot=0
  export %b slot=1
  export %c slot=2
  export %3 slot=3
  stop
}
"""


def test_ballot_fuse_fuses_compares_only_and_the_wrong_variant_fuses_the_constant():
    fn = parse_function(BALLOTS)
    right, wrong = clone_function(fn), clone_function(fn)
    assert ballot_fuse.PASS.run(right)
    text = print_function(right)
    assert "%a:32 = ballot #3" in text and "%c:32 = ballot u0" in text
    assert "%b:32 = icmp_ballot %x, u0 cond=ult inv=0" in text
    assert "%3:16 = icmp" in text  # its other use keeps it
    assert ballot_constant(wrong)
    assert "%a:32 = icmp_ballot %x, u0 cond=ult inv=0" in print_function(wrong)
    inputs = [InputSet(4, {"u0": 2})]
    expected = CompiledFunction(fn).run(inputs)
    assert CompiledFunction(right).run(inputs) == expected
    assert CompiledFunction(wrong).run(inputs) != expected


def test_uadd_sat_packing_reads_full_width_sources_signed():
    fn = parse_function("""
func @sat(u0:32, u1:32) {
entry:
  %s:32 = uadd_sat u0.abs, u1.abs
  export %s slot=0
  stop
}
""")
    wrong = clone_function(fn)
    assert uadd_sat_packing(wrong)
    inputs = [InputSet(1, {"u0": 0x80000000, "u1": 1})]
    assert CompiledFunction(fn).run(inputs)[0].outputs == ((0x80000001,),)
    assert CompiledFunction(wrong).run(inputs)[0].outputs == ((0,),)


def test_the_zoo_catches_and_reduces_both_variants(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "fuzz", "zoo", "--only", "ballot-constant,uadd-sat-packing",
         "--time-per-bug", "30", "--seed", "1", "--jobs", "1", "--out", str(tmp_path / "zoo"),
         "--json", str(tmp_path / "zoo.json")],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads((tmp_path / "zoo.json").read_text())
    assert [v["caught"] for v in report["variants"]] == [True, True]
    assert report["summary"]["reduced_max"] <= 8
