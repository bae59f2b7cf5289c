"""RA-checker findings' signatures come from the errors' kind and fields, not from the
message: and they are the signatures the messages gave when they were read off messages."""

from __future__ import annotations

import random

import pytest

from agxir.ir import R0L, Register, clone_function
from agxir.machine.out_of_ssa import out_of_ssa
from agxir.machine.regalloc import run_ra
from agxir.machine.vreg_alloc import vreg_ra
from agxir.text import parse_function, print_function
from fuzz.findings import finding_from_record, finding_record
from fuzz.harness import Harness, normalized
from fuzz.step_oracles import ra_signature_key
from fuzz.zoo.machine_variants import MACHINE_VARIANTS
from oracles.inputs import random_input_sets
from oracles.machine.ra_checker import AlignmentError, RAError, RAErrorKind, check_allocation

CARRIED = """\
func.exec @carried(u0:32) {
entry: -> pre1
  r0l = mov_imm value=0x0
  %tid:32 = get_sr sr=thread_id
  %k:32 = iadd u0, #5 shift=0
  %wide:64 = mov_imm value=0x123456789
  %zero:32 = mov_imm value=0x0
pre1: -> loop
loop: -> cont2, exit3
  %i:32 = phi [%zero, pre1], [%next, cont2]
  %acc:32 = phi [%zero, pre1], [%sum, cont2]
  %t:32 = iadd %acc, %k shift=0
  %u:32 = iadd %t, #3 shift=0
  %sum:32 = iadd %u, %i shift=0
  %next:32 = iadd %i, #1 shift=0
  while_icmp %next, %tid cond=ugt inv=1 n=1
cont2: -> loop
  jmp_exec_any -> loop
  pop_exec n=1
exit3:
  export %sum slot=0
  export %wide slot=1
  stop
}
"""


def _mutants(route: str, count: int = 60):
    """The reference and allocations of CARRIED with one register changed, on `route`."""
    reference = parse_function(CARRIED)
    if route == "vreg-ra":
        out_of_ssa(reference)
    allocated = clone_function(reference)
    (run_ra if route == "ra" else vreg_ra)(allocated)
    assert check_allocation(reference, allocated) == []
    sites = [(i, k) for i, ins in enumerate(allocated.instructions())
             for k, ref in enumerate([s.ref for s in ins.srcs] + list(ins.dests))
             if isinstance(ref, Register) and ref != R0L]
    rng = random.Random(3)
    for _ in range(count):
        mutant = clone_function(allocated)
        position, k = rng.choice(sites)
        ins = list(mutant.instructions())[position]
        old = ins.srcs[k].ref if k < len(ins.srcs) else ins.dests[k - len(ins.srcs)]
        width = old.size // 16
        new = Register(rng.choice([h for h in range(width, 24, width) if h != old.half]), old.size)
        if k < len(ins.srcs):
            ins.srcs[k] = ins.srcs[k].with_ref(new)
        else:
            dests = list(ins.dests)
            dests[k - len(ins.srcs)] = new
            ins.dests = dests
        yield reference, mutant


@pytest.mark.parametrize("route", ["ra", "vreg-ra"])
def test_the_structured_key_is_the_key_the_message_gave(route):
    kinds = set()
    for reference, mutant in _mutants(route):
        for error in check_allocation(reference, mutant):
            kinds.add(error.kind)
            assert ra_signature_key(error) == normalized(str(error)), str(error)
    assert RAErrorKind.WRONG_VALUE in kinds


def test_alignment_errors_have_kinds_and_the_keys_their_messages_gave():
    reference = parse_function(CARRIED)
    allocated = clone_function(reference)
    run_ra(allocated)
    text = print_function(allocated)
    cases = {
        RAErrorKind.MISSING_INSTRUCTION: text.replace("  stop\n", ""),
        RAErrorKind.UNEXPECTED_INSTRUCTION: text.replace("#3 shift=0", "#4 shift=0"),
        RAErrorKind.BLOCKS_DIFFER: text.replace("exit3", "exit4"),
    }
    for kind, wrong in cases.items():
        (error,) = check_allocation(reference, parse_function(wrong))
        assert isinstance(error, AlignmentError) and error.kind is kind
        assert ra_signature_key(error) == normalized(str(error))
        assert error.message == str(error)


def test_a_wrong_value_error_names_its_half_value_and_what_the_half_holds():
    reference, mutant = next(
        (r, m) for r, m in _mutants("ra") if check_allocation(r, m))
    error = check_allocation(reference, mutant)[0]
    assert isinstance(error, RAError) and error.kind is RAErrorKind.WRONG_VALUE
    assert error.expected == str(error.value) and error.value.name
    (block,) = [b for b in mutant.blocks if b.name == error.block]
    read = block.instructions[error.index]
    registers = [s.ref for s in read.srcs if isinstance(s.ref, Register)]
    assert any(r.name == error.register and error.half in r.halves for r in registers)


def test_an_ra_finding_carries_its_key_through_the_harness_and_a_record():
    fn = parse_function(CARRIED)
    (wrong,) = [v.make_pass() for v in MACHINE_VARIANTS
                if v.make_pass().name == "zoo-ra-free-at-last-use-in-loop"]
    harness = Harness(random_input_sets(fn, 8, seed=5, count=2))
    (finding,) = harness.check(fn, [[wrong]])
    assert finding.oracle == "ra-checker" and finding.signature_key is not None
    assert finding.signature == f"{wrong.name}|ra-checker|{normalized(finding.message)}"
    restored, _ = finding_from_record(
        finding_record(finding, seed=1, index=0, shard=None, flags=[]))
    assert restored == finding and restored.signature == finding.signature
