"""The machine verifier's memo of valid instruction shapes (`_shape`) changes no verdict:
on every default pipeline's exec, vreg and machine programs, and on copies of them with
operands swapped for wrong ones (so that some shapes are invalid and others repeat), the
errors are those of judging every instruction."""

import random

import pytest

from agxir.ir import Immediate, Operand, Register, Value, VirtualRegister, clone_function
from agxir.machine import verifier
from tests.oracles.machine.pipeline_programs import pipeline_programs


def _unmemoized(fn, monkeypatch) -> list[str]:
    with monkeypatch.context() as patch:
        patch.setattr(verifier, "_shape", lambda ins: None)
        return [str(e) for e in verifier.verify_machine(fn)]


def _judged(fn) -> list[str]:
    return [str(e) for e in verifier.verify_machine(fn)]


def test_the_memo_gives_the_same_verdicts_on_every_pipelines_programs(monkeypatch):
    programs = pipeline_programs()
    assert {str(p[2].level) for p in programs} == {"exec", "vreg", "machine"}
    for _name, _before, after, _inputs in programs:
        assert _judged(after) == _unmemoized(after, monkeypatch) == []


def _wrong_ref(rng: random.Random, ref, immediate: bool = True):
    size = rng.choice((16, 32, 64, 48))
    choices = [Register(rng.randrange(0, 260), size), Value("w", size),
               VirtualRegister(rng.randrange(3), size), ref]
    if immediate:
        choices.append(Immediate(rng.choice((0, 7, 255, 1 << 20))))
    return rng.choice(choices)


@pytest.mark.parametrize("seed", range(3))
def test_the_memo_gives_the_same_errors_on_broken_programs(monkeypatch, seed):
    rng = random.Random(seed)
    broken = 0
    for _name, _before, after, _inputs in pipeline_programs():
        fn = clone_function(after)
        for ins in fn.instructions():
            if ins.srcs and rng.random() < 0.2:
                k = rng.randrange(len(ins.srcs))
                src = ins.srcs[k]
                ins.srcs[k] = Operand(_wrong_ref(rng, src.ref), rng.random() < 0.2, src.neg)
            if ins.dest is not None and rng.random() < 0.1:
                ins.dest = _wrong_ref(rng, ins.dest, immediate=False)
            if "shift" in ins.attrs and rng.random() < 0.2:
                ins.attrs["shift"] = rng.choice((0, 1, 9))
            if rng.random() < 0.05:
                ins.sat = not ins.sat
        errors = _judged(fn)
        assert errors == _unmemoized(fn, monkeypatch)
        broken += bool(errors)
    assert broken > 50


def test_repeated_invalid_instructions_are_each_reported():
    from agxir.text import parse_function

    text = ("func.machine @v(u0:32) {\nb0:\n  r1 = mov_imm value=0x1\n"
            "  r2 = iadd r1, r1 shift=1\n  r2 = iadd r1, r1 shift=1\n  r2 = iadd r1, r1 shift=0\n"
            "  r2 = iadd r1, r1 shift=1\n  export r2 slot=0\n  stop\n}\n")
    fn = parse_function(text)
    for ins in fn.instructions():
        if ins.attrs.get("shift") == 1:
            ins.attrs["shift"] = 9  # out of range, and the same shape three times
    errors = verifier.verify_machine(fn)
    assert [e.index for e in errors] == [1, 2, 4]
