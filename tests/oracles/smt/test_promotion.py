"""The promotion invariant: after the address passes, every access uses BEFORE's address
wherever BEFORE is defined (oracles.smt.promotion)."""

from __future__ import annotations

import pytest

from agxir.ir import clone_function
from agxir.passes import address_cleanup, address_fold, address_fuse, address_lower, dce
from agxir.text import parse_function
from fuzz.harness import Harness
from fuzz.passes_under_test import PassUnderTest
from fuzz.zoo import address_variants
from oracles.inputs import InputSet
from oracles.smt.promotion import memory_accesses, promotion_failures

LIMIT_MS = 30000  # generous: these queries take well under a second unless the machine is loaded
PIPELINE = (address_cleanup.PASS, address_fuse.PASS, address_fold.PASS, address_lower.PASS,
            dce.PASS)

# thread t reads byte t + u1 of u0 (u1 + t wraps in 32 bits, which BEFORE's u2u64 keeps)
WRAPPING = """\
func @p(u0:ptr[256], u1:32) {
b0:
  %t:32 = get_sr sr=thread_id
  %s:32 = iadd %t, u1 shift=0
  %w:64 = u2u64 %s
  %a:64 = iadd u0, %w shift=0
  %v:32 = device_load %a, #0 fmt=i8 shift=0
  export %v slot=0
  stop
}
"""

# a struct array: relaxed math, fused and folded
RELAXED = """\
func @p(u0:ptr[1024], u1:ptr[256]) {
b0:
  %t:32 = get_sr sr=thread_id
  %m:32 = amul #3, %t
  %s:32 = amul %m, #4
  %f:32 = aadd %s, #8
  %w:64 = u2u64 %f
  %a:64 = iadd u0, %w shift=0
  %v:32 = device_load %a, #0 fmt=i32 shift=0
  %b:64 = ulea u1, %t shift=2
  device_store %v, %b, #0 fmt=i32 shift=0
  %dead:32 = device_load u1, %t fmt=i8 shift=0
  stop
}
"""


def after(text: str, run) -> tuple:
    fn = parse_function(text)
    out = clone_function(fn)
    assert run(out)
    return fn, out


def right(fn) -> bool:
    changed = False
    for p in PIPELINE:
        changed |= p.run(fn)
    return changed


@pytest.mark.parametrize("text", [WRAPPING, RELAXED])
def test_the_right_pipeline_keeps_every_address(text):
    fn, out = after(text, right)
    assert promotion_failures(fn, out, timeout_ms=LIMIT_MS) == []


def test_dead_loads_are_not_matched():
    fn = parse_function(RELAXED)
    assert [ins.name for _, ins in memory_accesses(fn)] == ["device_load", "device_store"]


def test_a_wrap_the_inputs_never_reach_is_found():
    """The plain-iadd variant promotes t + u1 to 64 bits. With u1 = 0 or 3 nothing wraps, so
    the interpreter oracles see no difference; the invariant, over all inputs, does."""
    fn, out = after(WRAPPING, address_variants.plain_iadd_promoted)
    inputs = [InputSet(4, {"u1": 0}, {"u0": bytes(range(256))}), InputSet(4, {"u1": 3})]
    variant = address_variants.make_pass("plain-iadd-promoted")
    assert Harness(inputs).check(fn, [[variant]]) == []
    failures = promotion_failures(fn, out, timeout_ms=LIMIT_MS)
    assert len(failures) >= 1
    assert failures[0].startswith("access 0 (")
    assert "address" in failures[0] and "uniform" not in failures[0]


@pytest.mark.parametrize("name", list(address_variants.RUNS))
def test_every_wrong_variant_breaks_it(name):
    programs = {
        "old-shift-model": """\
func @p(u0:ptr[256], u1:32) {
b0:
  %t:32 = get_sr sr=thread_id
  %x:32 = iadd %t, u1 shift=0
  %s:32 = bfi #0, %x, #2 mask=0
  %w:64 = u2u64 %s
  %a:64 = iadd u0, %w shift=0
  %v:32 = device_load %a, #0 fmt=i32 shift=0
  export %v slot=0
  stop
}
""",
        "fold-below-format-shift": RELAXED.replace("ulea u1, %t shift=2", "ulea u1, %t shift=1"),
        "ilea-zero-extended": """\
func @p(u0:ptr[256]) {
b0:
  %t:32 = get_sr sr=thread_id
  %mid:64 = iadd u0, #128 shift=0
  %e:32 = iadd %t, #8.neg shift=0
  %a:64 = ilea %mid, %e shift=2
  %v:32 = device_load %a, #0 fmt=i32 shift=0
  export %v slot=0
  stop
}
""",
        "plain-iadd-promoted": WRAPPING,
    }
    fn, out = after(programs[name], address_variants.RUNS[name])
    failures = promotion_failures(fn, out, timeout_ms=LIMIT_MS)
    assert failures and "address" in failures[0], failures


def test_loops_are_out_of_scope():
    looped = WRAPPING.replace("  stop\n}", "  if_icmp %t, #7 cond=ult inv=0 -> b0, b1\nb1:\n  stop\n}")
    fn, out = after(looped, address_variants.plain_iadd_promoted)
    assert promotion_failures(fn, out) == []


def test_unknown_is_a_failure():
    """(u1 + u2)^2 against its expansion is beyond z3 in a millisecond; the invariant says
    "unknown" instead of passing it."""
    before = """\
func @p(u0:ptr[256], u1:32, u2:32) {
b0:
  %s:32 = iadd u1, u2 shift=0
  %y:32 = imul %s, %s
  %w:64 = u2u64 %y
  %a:64 = iadd u0, %w shift=0
  %v:32 = device_load %a, #0 fmt=i8 shift=0
  export %v slot=0
  stop
}
"""
    expanded = ("%p:32 = imul u1, u1\n  %q:32 = imul u2, u2\n  %r:32 = imul u1, u2\n"
                "  %t:32 = iadd %p, %q shift=0\n  %y:32 = iadd %t, %r shift=1")
    after_text = before.replace("%s:32 = iadd u1, u2 shift=0\n  %y:32 = imul %s, %s", expanded)
    failures = promotion_failures(parse_function(before), parse_function(after_text), timeout_ms=1)
    assert failures and all("unknown" in f for f in failures), failures


def test_a_new_overflow_is_a_failure():
    before = WRAPPING.replace("%s:32 = iadd %t, u1 shift=0", "%s:32 = imul %t, u1")
    after_text = before.replace("imul %t, u1", "amul %t, u1")
    failures = promotion_failures(parse_function(before), parse_function(after_text),
                                  timeout_ms=LIMIT_MS)
    assert any("AFTER undefined" in f and "amul overflow" in f for f in failures), failures


def test_a_lost_access_is_a_failure():
    fn = parse_function(RELAXED)
    out = clone_function(fn)
    store = next(ins for ins in out.instructions() if ins.name == "device_store")
    out.blocks[0].instructions.remove(store)  # and with it the use of the first load
    assert promotion_failures(fn, out) == ["2 memory accesses before, 0 after: cannot match them"]


class PromotionBroken(Exception):
    pass


def with_invariant(step: PassUnderTest, threads: int) -> PassUnderTest:
    """What the harness hook does, as a wrapper pass: the invariant between the pass's input
    and its output (a failure becomes a crash finding here, a "promotion" one in the hook)."""

    def run(fn) -> bool:
        before = clone_function(fn)
        changed = step.run(fn)
        failures = promotion_failures(before, fn, timeout_ms=LIMIT_MS, threads=threads)
        if failures:
            raise PromotionBroken(failures[0])
        return changed

    return PassUnderTest(step.name, run, step.flag)


def test_the_hook_catches_in_the_harness_what_the_interpreter_cannot():
    fn = parse_function(WRAPPING)
    inputs = [InputSet(4, {"u1": 0}, {"u0": bytes(range(256))}), InputSet(4, {"u1": 3})]
    variant = address_variants.make_pass("plain-iadd-promoted")
    assert Harness(inputs).check(fn, [[variant]]) == []
    (finding,) = Harness(inputs).check(fn, [[with_invariant(variant, threads=4)]])
    assert finding.oracle == "crash" and finding.pass_name == "plain-iadd-promoted"
    assert finding.message.startswith("PromotionBroken: access 0 ("), finding.message
    right_pass = PassUnderTest("address", right, ("--passes", "address"))
    assert Harness(inputs).check(fn, [[with_invariant(right_pass, threads=4)]]) == []


def test_address_math_left_alone_is_proved_without_the_solver(monkeypatch):
    # The same function on both sides: every access's path and address, and the
    # undefinedness, are the same z3 terms, so no query reaches the solver (issue 23).
    from oracles.smt import promotion

    def no_solver(self, bad):
        raise AssertionError("the solver was asked")

    monkeypatch.setattr(promotion._Prover, "check", no_solver)
    fn = parse_function(RELAXED)
    assert promotion_failures(fn, clone_function(fn), timeout_ms=LIMIT_MS) == []


def test_changed_address_math_still_goes_to_the_solver(monkeypatch):
    from oracles.smt import promotion

    asked = []
    real = promotion._Prover.check

    def counting(self, bad):
        asked.append(bad)
        return real(self, bad)

    monkeypatch.setattr(promotion._Prover, "check", counting)
    fn, out = after(RELAXED, address_fuse.PASS.run)
    assert promotion_failures(fn, out, timeout_ms=LIMIT_MS) == []
    assert asked
