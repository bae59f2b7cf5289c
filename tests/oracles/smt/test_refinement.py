"""Translation validation (oracles.smt.refinement): proofs, counterexamples, unknowns.

Every counterexample here is replayed in the interpreter, and the tests insist the
interpreter confirms it: a z3 model the interpreter does not reproduce is a bug in one of
the two oracles.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from agxir.ir import clone_function
from agxir.passes import run_pipeline
from agxir.text import parse_function
from agxir.verifier import verify
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.outcomes import Returned
from oracles.smt.function import NotLoopFree, is_loop_free
from oracles.smt.refinement import (
    Counterexample,
    InterfaceMismatch,
    Proved,
    Unknown,
    check_refinement,
    tv_difference,
)

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "tests" / "golden"


def golden_passes(text: str) -> list[str]:
    """The passes a golden's `; RUN: agxfuzz opt %s -p LIST` line runs (docs/goldens.md)."""
    match = re.search(r"^; RUN: agxfuzz opt %s -p (\S+)", text, re.MULTILINE)
    return match.group(1).split(",") if match else []


def is_error_golden(text: str) -> bool:
    """A golden of a parse or verify error: its RUN line expects `agxfuzz verify` to fail."""
    return "; RUN: not agxfuzz verify %s" in text


def parse(text: str):
    fn = parse_function(text, "<test>")
    assert verify(fn) == []
    return fn


def load(path: Path):
    fn = parse_function(path.read_text(), str(path))
    assert verify(fn) == []
    return fn


def confirmed(result) -> Counterexample:
    assert isinstance(result, Counterexample), result
    assert result.replay_confirms, result
    return result


# --- proofs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["saxpy.agx"])
def test_identical_functions_are_proved(name):
    fn = load(ROOT / "examples" / name)
    assert check_refinement(fn, fn) == Proved()
    assert check_refinement(fn, clone_function(fn)) == Proved()


def test_identical_goldens_are_proved():
    for path in sorted(GOLDEN.glob("*.agx")):
        if is_error_golden(path.read_text()):
            continue
        fn = load(path)
        if not is_loop_free(fn):
            continue
        assert check_refinement(fn, fn, threads=8) == Proved(), path.name


# tv handles loop-free functions; the pass goldens with loops are run by tests/test_golden.py.
PASS_GOLDENS = [p for p in sorted(GOLDEN.glob("pass_*.agx")) if is_loop_free(load(p))]


def test_most_pass_goldens_are_loop_free():
    assert len(PASS_GOLDENS) >= len(list(GOLDEN.glob("pass_*.agx"))) - 2


@pytest.mark.parametrize("path", PASS_GOLDENS, ids=lambda p: p.stem)
def test_each_loop_free_pass_golden_is_proved(path):
    fn = load(path)
    passes = golden_passes(path.read_text())
    assert passes
    after = clone_function(fn)
    run_pipeline(after, passes)
    assert check_refinement(fn, after) == Proved()
    assert tv_difference(fn, after, 32) is None


def test_every_loop_free_golden_is_proved_under_the_default_pipeline():
    from agxir.passes import DEFAULT_PIPELINE

    checked = 0
    for path in sorted(GOLDEN.glob("*.agx")):
        if is_error_golden(path.read_text()):
            continue
        fn = load(path)
        if not is_loop_free(fn):
            continue
        after = clone_function(fn)
        run_pipeline(after, DEFAULT_PIPELINE)
        result = check_refinement(fn, after, threads=8)
        assert isinstance(result, Proved | Unknown), (path.name, result)
        checked += 1
    assert checked >= 10


# --- the wrong cmpsel --------------------------------------------------------------------------

INVERTED_COMPARE = """
func @inverted(u0:32, u1:32) {
block0:
  %tid:32 = get_sr sr=thread_id
  %t:16 = icmp %tid, u0 cond=ult inv=1
  %r:32 = icmpsel %t, #0, u1, #100 cond=ueq
  export %r slot=0
  stop
}
"""


def wrong_cmpsel():
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from wrong_cmpsel import wrong_cmpsel as rewrite
    finally:
        sys.path.remove(str(ROOT / "examples"))
    return rewrite


def test_wrong_cmpsel_on_an_inverted_compare_is_a_confirmed_counterexample():
    fn = parse(INVERTED_COMPARE)
    after = clone_function(fn)
    assert wrong_cmpsel()(after)
    result = confirmed(check_refinement(fn, after))
    assert "output slot 0" in result.description
    # The input set replays on its own: BEFORE and AFTER really differ there.
    before_out = CompiledFunction(fn).run([result.input_set])[0]
    after_out = CompiledFunction(after).run([result.input_set])[0]
    assert isinstance(before_out, Returned)
    assert before_out != after_out
    assert tv_difference(fn, after, 32).startswith(f"thread {result.thread}: output slot 0")


def test_the_right_cmpsel_on_the_same_program_is_proved():
    fn = parse(INVERTED_COMPARE)
    after = clone_function(fn)
    run_pipeline(after, ["cmpsel"])
    assert check_refinement(fn, after) == Proved()


# --- undefined behaviour -------------------------------------------------------------------------

AMUL = """
func @amul(u0:32, u1:32) {
entry:
  %p:32 = amul u0, u1
  export %p slot=0
  stop
}
"""

# imul gives amul's low 32 bits; clearing bit 31 changes them only when the exact product
# exceeds INT32_MAX, which is exactly where amul is undefined.
MASKED_IMUL = """
func @amul(u0:32, u1:32) {
entry:
  %q:32 = imul u0, u1
  %m:32 = mov_imm value=MASK
  %p:32 = and %q, %m
  export %p slot=0
  stop
}
"""


def test_undefined_behaviour_in_before_permits_anything():
    before = parse(AMUL)
    after = parse(MASKED_IMUL.replace("MASK", "0x7fffffff"))
    # They do differ, but only where BEFORE overflows.
    overflow = InputSet(1, {"u0": 0x10000, "u1": 0x8000})
    outcomes = [CompiledFunction(f).run([overflow])[0] for f in (before, after)]
    assert outcomes[0].kind == "undefined" and outcomes[1].kind == "returned"
    assert check_refinement(before, after) == Proved()


def test_a_difference_outside_the_undefined_inputs_is_caught():
    before = parse(AMUL)
    after = parse(MASKED_IMUL.replace("MASK", "0x3fffffff"))
    result = confirmed(check_refinement(before, after))
    assert "output slot 0" in result.description


def test_after_introducing_undefined_behaviour_is_a_counterexample():
    before = parse(MASKED_IMUL.replace("MASK", "0x7fffffff"))
    after = parse(AMUL)
    result = confirmed(check_refinement(before, after))
    assert "AFTER is undefined (amul overflow in block entry)" in result.description
    assert "undefined" in result.replay


# --- stores --------------------------------------------------------------------------------------

STORE = """
func @store(u0:ptr[64], u1:32) {
entry:
  %tid:32 = get_sr sr=thread_id
  %i:32 = iadd %tid, #OFFSET shift=0
  device_store u1, u0, %i fmt=i32 shift=0
  stop
}
"""

BRANCHY_STORE = """
func @branchy(u0:ptr[64], u1:32) {
entry:
  %tid:32 = get_sr sr=thread_id
  if_icmp u1, #3 cond=ult inv=0 -> small, big
small:
  device_store u1, u0, %tid fmt=i32 shift=0
  jump -> done
big:
  BIG_STORE
  jump -> done
done:
  export %tid slot=0
  stop
}
"""


def test_a_store_to_a_different_address_is_a_counterexample():
    before = parse(STORE.replace("OFFSET", "0"))
    after = parse(STORE.replace("OFFSET", "1"))
    result = confirmed(check_refinement(before, after, threads=4))
    assert result.description.startswith("buffer u0 byte ")


def test_a_dropped_store_in_one_branch_is_caught():
    store = "device_store u1, u0, %tid fmt=i32 shift=1"
    before = parse(BRANCHY_STORE.replace("BIG_STORE", store))
    after = parse(BRANCHY_STORE.replace("BIG_STORE", "%unused:32 = mov u1"))
    result = confirmed(check_refinement(before, after, threads=8))
    assert result.input_set.scalars["u1"] >= 3  # the branch that lost its store
    assert result.description.startswith("buffer u0 byte ")
    assert check_refinement(before, parse(BRANCHY_STORE.replace("BIG_STORE", store))) == Proved()


def test_a_difference_that_depends_on_memory_builds_the_buffer():
    def program(cond):
        return parse(f"""
func @mem(u0:ptr[16]) {{
entry:
  %v:32 = device_load u0, #2 fmt=i32 shift=0
  %c:16 = icmp %v, #0xbe cond={cond} inv=0
  export %c slot=0
  stop
}}
""")

    result = confirmed(check_refinement(program("ueq"), program("ult"), threads=1))
    assert len(result.input_set.buffers["u0"]) == 16


def test_a_difference_in_one_thread_only_is_found_for_that_thread():
    def program(constant):
        return parse(f"""
func @one(u0:32) {{
entry:
  %tid:32 = get_sr sr=thread_id
  %x:32 = icmpsel %tid, #5, #{constant}, u0 cond=ueq
  export %x slot=0
  stop
}}
""")

    result = confirmed(check_refinement(program(1), program(2), threads=8))
    assert result.thread == 5 and result.input_set.threads == 6
    assert check_refinement(program(1), program(2), threads=5) == Proved()


def test_an_export_only_after_writes_differs_in_writtenness():
    before = parse(AMUL.replace("  export %p slot=0\n", ""))
    after = parse(AMUL)
    result = confirmed(check_refinement(before, after))
    assert result.description.startswith("output slot 0: BEFORE -, AFTER 0x")


# --- unknown, loops, interfaces ------------------------------------------------------------------


def float_chain(fused: bool):
    lines = ["func @hard(u0:32, u1:32, u2:32) {", "entry:", "  %x0:32 = fadd u0, u1"]
    for i in range(1, 7):
        if fused:
            lines.append(f"  %x{i}:32 = ffma %x{i - 1}, u1, u2")
        else:
            lines.append(f"  %m{i}:32 = fmul %x{i - 1}, u1")
            lines.append(f"  %x{i}:32 = fadd %m{i}, u2")
    lines += ["  export %x6 slot=0", "  stop", "}", ""]
    return parse("\n".join(lines))


def test_a_timeout_is_unknown_never_proved():
    result = check_refinement(float_chain(True), float_chain(False), timeout_ms=1)
    assert isinstance(result, Unknown)
    assert result.reason
    assert tv_difference(float_chain(True), float_chain(False), 32, timeout_ms=1) is None


LOOP = (GOLDEN / "pass_dce_phi_cycle.agx")


def test_loops_are_rejected():
    fn = load(LOOP)
    with pytest.raises(NotLoopFree, match="has a loop at block head"):
        check_refinement(fn, fn)
    assert tv_difference(fn, fn, 32) is None


def test_different_buffers_are_an_interface_mismatch():
    a = parse("func @a(u0:ptr[16]) {\nentry:\n  stop\n}\n")
    b = parse("func @a(u0:ptr[32]) {\nentry:\n  stop\n}\n")
    with pytest.raises(InterfaceMismatch, match="different buffers"):
        check_refinement(a, b)
    assert "different buffers" in tv_difference(a, b, 4)
    c = parse("func @a(u0:16) {\nentry:\n  stop\n}\n")
    d = parse("func @a(u0:32) {\nentry:\n  stop\n}\n")
    with pytest.raises(InterfaceMismatch, match="u0 is 16-bit"):
        check_refinement(c, d)


def test_scalars_match_by_name():
    a = parse("func @a(u0:32, u1:32) {\nentry:\n  export u1 slot=0\n  stop\n}\n")
    b = parse("func @a(u1:32, u0:32) {\nentry:\n  export u1 slot=0\n  stop\n}\n")
    assert check_refinement(a, b) == Proved()


# --- the two oracles agree on generated programs ---------------------------------------------


def test_the_interpreter_and_z3_agree_on_generated_programs():
    """Both decide the relation of oracles/refinement_relation.py; on generated loop-free
    programs under wrong passes (a lost export: written-ness; lost stores: memory; a
    compare fused under any condition: values), one thread at a time (z3's scope), a
    difference the interpreter sees is never proved, and every z3 counterexample replays."""
    from fuzz.campaign import CampaignConfig
    from fuzz.generate.cases import build_case
    from fuzz.zoo import variants
    from oracles.outcomes import first_difference

    wrong = (variants.dce_removes_exports, variants.dce_removes_stores,
             variants.cmpsel_any_condition)  # fmt: skip
    config = CampaignConfig(seed=5, pipelines=[])
    seen = {"interpreter": 0, "z3": 0}
    for index in range(30):
        fn, inputs = build_case(5, index, config)
        if not is_loop_free(fn):
            continue
        for variant in wrong:
            after = clone_function(fn)
            if not variant(after):
                continue
            result = check_refinement(fn, after, threads=1, timeout_ms=3000)
            if isinstance(result, Counterexample):
                assert result.replay_confirms, (index, variant.__name__, result)
                seen["z3"] += 1
            one_thread = [InputSet(1, s.scalars, s.buffers) for s in inputs]
            sources = CompiledFunction(fn).run(one_thread)
            targets = CompiledFunction(after).run(one_thread)
            for source, target in zip(sources, targets, strict=True):
                if isinstance(source, Returned) and first_difference(source, target):
                    assert not isinstance(result, Proved), (index, variant.__name__)
                    seen["interpreter"] += 1
    assert seen["z3"] >= 3 and seen["interpreter"] >= 3, seen
