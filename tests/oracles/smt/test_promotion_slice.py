"""The promotion invariant's cheaper way (oracles.smt.promotion_slice and the default path of
oracles.smt.promotion) against the reference way (`promotion_failures(reference=True)`).

Pairs are generated as the fuzzer makes them: address-heavy programs of a fixed seed, each
right address pass applied in turn (every changed step is a pair) and each of the zoo's wrong
address variants (fuzz/zoo/address_variants.py) applied to the program, so that both verdicts
are compared on failing steps as well as passing ones. z3 budgets are resource limits here
(tests/conftest.py), so verdicts do not depend on the machine's load.
"""

from __future__ import annotations

import re

import pytest

from agxir.ir import Immediate, Operand, clone_function
from agxir.passes import address_cleanup, address_fold, address_fuse, address_lower, dce
from agxir.text import parse_function, print_function
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from fuzz.zoo import address_variants
from oracles.smt import function_memory, uniform_terms
from oracles.smt.function import encode_function, is_loop_free
from oracles.smt.promotion import memory_accesses, promotion_failures
from oracles.smt.promotion_slice import query_slice

SEED = 1
PROGRAMS = 60  # about 270 pairs, 17 of them failing
SIZE = 30
BUDGET_MS = 2000  # the harness's default
RIGHT_STEPS = (address_cleanup.PASS, address_fuse.PASS, address_fold.PASS, address_lower.PASS,
               dce.PASS)


def generated_pairs():
    """(label, before, after, threads) for every changed step, as described above."""
    config = CampaignConfig(seed=SEED, pipelines=[], size=SIZE, address_heavy=True)
    pairs = []
    for index in range(PROGRAMS):
        fn, inputs = build_case(SEED, index, config)
        if not is_loop_free(fn):
            continue
        threads = max(s.threads for s in inputs)
        current = fn
        for step in RIGHT_STEPS:
            out = clone_function(current)
            if step.run(out):
                pairs.append((f"{index}:{step.name}", current, out, threads))
                current = out
        for name, run in address_variants.RUNS.items():
            out = clone_function(fn)
            if run(out):
                pairs.append((f"{index}:{name}", fn, out, threads))
    return pairs


PAIRS = generated_pairs()


def verdicts(failures: list[str]) -> dict[str, str]:
    """What a verdict decides, per item: "refuted" or "unknown". An item is an access (its
    position and instruction), the added-undefined-behaviour query, or the failure's text. A
    refutation's model (the thread, scalars and addresses shown, and so which undefined
    reasons it happens to make true, or whether an access runs on one side or reads another
    address) is whichever one z3 picks, and that depends on the order terms were made in the
    process; so does whether a query at the edge of its resource budget is decided."""
    decided = {}
    for failure in failures:
        access = re.match(r"access \d+ \(.*? in \w+\)", failure)
        if access:
            key = access.group(0)
        elif failure.startswith("AFTER undefined where BEFORE is not"):
            key = "AFTER undefined where BEFORE is not"
        else:
            key = failure
        decided[key] = "unknown" if "unknown" in failure else "refuted"
    return decided


def test_the_pairs_cover_passes_and_failures():
    labels = [label for label, *_ in PAIRS]
    assert len(PAIRS) >= 180
    for name in list(address_variants.RUNS) + [step.name for step in RIGHT_STEPS[:4]]:
        assert any(label.endswith(f":{name}") for label in labels), name


def test_the_default_path_decides_what_the_reference_decides():
    """Sound against the reference, item by item: an item the reference refutes fails the
    step on the default path too (refuted, or unknown, which is a failure as well: never a
    green), and the default path refutes nothing the reference proves. Where the reference's
    own query ran out of its budget ("unknown"), the default path's smaller query may decide
    it: which queries sit at the edge of the budget depends on what the process asked z3
    before (the test's order under xdist), so that is not compared."""
    failing = set()
    differ = 0
    for label, before, after, threads in PAIRS:
        reference = verdicts(promotion_failures(before, after, timeout_ms=BUDGET_MS,
                                                threads=threads, reference=True))
        default = verdicts(promotion_failures(before, after, timeout_ms=BUDGET_MS,
                                              threads=threads))
        for item, kind in reference.items():
            if kind == "refuted":
                assert item in default, (label, item, reference, default)
        for item, kind in default.items():
            if kind == "refuted":
                assert reference.get(item) in ("refuted", "unknown"), (label, item, reference,
                                                                        default)
        differ += reference != default
        if "refuted" in reference.values():
            failing.add(label.split(":")[1])
    # Almost always the two decide alike, unknowns included.
    assert differ <= len(PAIRS) // 50, differ
    # Failures were compared, not only passes: every wrong variant broke the invariant on
    # some program, and no right pass did.
    assert failing == set(address_variants.RUNS), failing


def _encodings(fn):
    """The whole function's encoding and its slice's, over the same names."""
    accesses = [ins for _, ins in memory_accesses(fn)]
    sliced = query_slice(fn, accesses)
    memory = function_memory(fn, name="initial_memory")
    whole = encode_function(fn, memory=memory, uniforms=uniform_terms(fn))
    part = encode_function(sliced.function, memory=memory,
                           uniforms=uniform_terms(sliced.function))
    return fn, accesses, sliced, whole, part


@pytest.mark.parametrize("side", ["before", "after"])
def test_a_slice_encodes_to_the_terms_the_queries_read(side):
    """Every term a query reads (each block's path condition, each undefined reason, each
    access's address) is the same z3 term from the slice as from the whole function."""
    from agxir.opcodes.effects import effective_address
    from oracles.smt import Z3BitVectors
    from oracles.smt.promotion import ACCESSES

    def address(encoded, ins):
        machine = Z3BitVectors(encoded.values, encoded.thread_id, encoded.memory)
        machine.instruction = ins
        return effective_address(machine, ins, *ACCESSES[ins.name])[0]

    checked = 0
    for _, before, after, _ in PAIRS[::3]:
        fn, accesses, sliced, whole, part = _encodings(before if side == "before" else after)
        by_name = {block.name: pc for block, pc in part.path.items()}
        for block, pc in whole.path.items():
            assert pc.eq(by_name[block.name]), block.name
        assert [(r, b) for r, b, _ in whole.reasons] == [(r, b) for r, b, _ in part.reasons]
        assert all(w.eq(p) for (_, _, w), (_, _, p) in zip(whole.reasons, part.reasons))
        assert whole.undefined.eq(part.undefined)
        for ins, (b, i) in zip(accesses, sliced.positions, strict=True):
            twin = sliced.function.blocks[b].instructions[i]
            assert twin.name == ins.name
            assert address(whole, ins).eq(address(part, twin))
        checked += 1
    assert checked >= 40


STORED_FLOAT = """\
func @p(u0:ptr[256], u1:32) {
b0:
  %t:32 = get_sr sr=thread_id
  %f:32 = fmul u1, u1
  %g:32 = fadd %f, #1.0
  %b:64 = ulea u0, %t shift=2
  device_store %g, %b, #0 fmt=i32 shift=0
  export %g slot=0
  stop
}
"""

LOADED_INDEX = """\
func @p(u0:ptr[256], u1:32) {
b0:
  %t:32 = get_sr sr=thread_id
  %f:32 = fmul u1, u1
  device_store %f, u0, %t fmt=i32 shift=0
  %i:32 = device_load u0, #0 fmt=i8 shift=0
  %v:32 = device_load u0, %i fmt=i8 shift=0
  export %v slot=0
  stop
}
"""


def test_a_stored_value_nothing_loads_is_blanked():
    fn = parse_function(STORED_FLOAT)
    sliced = query_slice(fn, [ins for _, ins in memory_accesses(fn)])
    text = print_function(sliced.function)
    assert not sliced.reads_memory
    assert "fmul" not in text and "fadd" not in text and "export" not in text
    assert "%g:32 = mov_imm value=0x0" in text and "device_store %g, %b" in text


def test_a_loaded_index_keeps_every_stored_value():
    fn = parse_function(LOADED_INDEX)
    sliced = query_slice(fn, [ins for _, ins in memory_accesses(fn)])
    text = print_function(sliced.function)
    assert sliced.reads_memory
    assert "%f:32 = fmul u1, u1" in text  # the store before the loads writes what they read
    assert "export" not in text


def test_dead_loads_stay_in_the_slice_but_are_not_accesses():
    # A load nothing reads is no access (dce would drop it) but its undefined condition
    # still counts, as in the whole encoding; a slice keeps it and says where the accesses are.
    fn = parse_function(STORED_FLOAT.replace("  stop", "  %d:32 = device_load u0, %t fmt=i32 shift=0\n  stop"))
    accesses = [ins for _, ins in memory_accesses(fn)]
    assert [ins.name for ins in accesses] == ["device_store"]
    sliced = query_slice(fn, accesses)
    names = [ins.name for ins in sliced.function.blocks[0].instructions]
    assert "device_load" in names
    (b, i), = sliced.positions
    assert sliced.function.blocks[b].instructions[i].name == "device_store"


def test_a_wrong_step_in_a_slice_only_the_solver_sees_is_still_found():
    # The address changes only through a value the slice keeps; the result is a failure on
    # the default path as on the reference path.
    fn = parse_function(STORED_FLOAT.replace("shift=2", "shift=1").replace(
        "device_store %g, %b, #0 fmt=i32 shift=0", "device_store %g, %b, #0 fmt=i16 shift=0"))
    out = clone_function(fn)
    lea = next(ins for ins in out.instructions() if ins.name == "ulea")
    lea.attrs["shift"] = 2
    for reference in (True, False):
        failures = promotion_failures(fn, out, timeout_ms=BUDGET_MS, reference=reference)
        assert failures and failures[0].startswith("access 0 ("), failures


TWO_LOADS = """\
func @p(u0:ptr[256]) {
b0:
  %t:32 = get_sr sr=thread_id
  %x:32 = device_load u0, %t fmt=i8 shift=0
  %s:32 = iadd %t, #1 shift=0
  %y:32 = device_load u0, %s fmt=i8 shift=0
  export %x slot=0
  stop
}
"""


def test_equal_slices_with_other_accesses_still_go_to_the_solver():
    # Exports are not in a slice, so these two slices print alike; but BEFORE's access is
    # the first load and AFTER's the second, at another address: a failure, not "equal".
    fn = parse_function(TWO_LOADS)
    out = parse_function(TWO_LOADS.replace("export %x", "export %y"))
    slices = [query_slice(f, [ins for _, ins in memory_accesses(f)]) for f in (fn, out)]
    assert print_function(slices[0].function) == print_function(slices[1].function)
    assert slices[0].positions != slices[1].positions
    failures = promotion_failures(fn, out, timeout_ms=BUDGET_MS)
    assert failures and failures[0].startswith("access 0 (") and "address" in failures[0]


def test_a_slice_prints_every_part_the_encoding_reads():
    """The equal-slices shortcut compares printed slices: a change to any part the encoding
    reads (an attribute, a modifier, a source, a destination width, a buffer's size, a
    branch target) prints differently."""
    fn = parse_function(RELAXED_WITH_BRANCH)
    base = print_function(query_slice(fn, [i for _, i in memory_accesses(fn)]).function)

    def changed(edit) -> str:
        other = clone_function(fn)
        edit(other)
        return print_function(query_slice(other, [i for _, i in memory_accesses(other)]).function)

    def find(f, name):
        return next(ins for ins in f.instructions() if ins.name == name)

    def shift(f):
        find(f, "ulea").attrs["shift"] = 3

    def modifier(f):
        store = find(f, "device_store")
        store.srcs[2] = Operand(store.srcs[2].ref, abs=True)

    def source(f):
        amul = find(f, "amul")
        amul.srcs[0] = Operand(Immediate(5))

    def width(f):
        find(f, "device_load").dest.size = 16

    def buffer(f):
        f.uniforms[0].buffer_bytes = 512

    def target(f):
        branch = f.blocks[0].instructions[-1]
        branch.blocks = list(reversed(branch.blocks))

    for edit in (shift, modifier, source, width, buffer, target):
        assert changed(edit) != base, edit.__name__


RELAXED_WITH_BRANCH = """\
func @p(u0:ptr[1024], u1:ptr[256]) {
b0:
  %t:32 = get_sr sr=thread_id
  %m:32 = amul #3, %t
  %s:32 = amul %m, #4
  %w:64 = u2u64 %s
  %a:64 = iadd u0, %w shift=0
  %v:32 = device_load %a, #0 fmt=i32 shift=0
  if_icmp %v, #0 cond=ueq inv=0 -> b1, b2
b1:
  %b:64 = ulea u1, %t shift=2
  device_store %v, %b, #0 fmt=i32 shift=0
  jump -> b2
b2:
  stop
}
"""
