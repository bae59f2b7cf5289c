"""The encoding oracle's fast pass over instructions that fit (`_fits`) changes no problem:
on generated functions of every level and on copies broken the ways wrong passes break
them, `problems` lists what asking every instruction in full (`reference=True`) lists, and
`encoding_failure` picks the same one."""

from __future__ import annotations

import collections

from agxir.ir import Immediate, Operand, Register, clone_function
from oracles.encoding import encoding_failure, problems
from tests.agxir.verifier_corpus import broken, functions


def test_every_function_and_every_broken_copy_gets_the_reference_problems():
    kinds = collections.Counter()
    programs = functions()
    for fn in programs:
        assert problems(fn) == problems(fn, reference=True)
    for seed in range(3):
        for original, fn in zip(programs, broken(seed, programs), strict=True):
            found = problems(fn)
            assert found == problems(fn, reference=True), str(fn.level)
            kinds.update(problem.kind[1] for problem in found)
            failure = encoding_failure(original, fn)
            reference = problems(fn, reference=True)
            given = {p.kind for p in problems(original, reference=True)}
            assert failure == next((p for p in reference if p.kind not in given), None)
    # every sort of problem the oracle spells was met
    assert {"imm8", "neg", "abs", "nest", "shift", "alignment"} <= set(kinds), kinds


def test_memory_indices_and_the_register_file_end_are_judged_alike():
    checked, kinds = 0, collections.Counter()
    for original in functions():
        fn = clone_function(original)
        for ins in fn.instructions():
            position = {"device_load": 1, "device_store": 2}.get(ins.name)
            if position is not None and position < len(ins.srcs):
                ins.srcs[position] = Operand(Immediate(65535 + checked % 2))  # fits, then not
                checked += 1
            for k, src in enumerate(ins.srcs):
                if isinstance(src.ref, Register) and checked % 3 == 0:
                    half = 256 - src.ref.size // 16 + checked % 2  # the last one, or a half on
                    ins.srcs[k] = Operand(Register(half, src.ref.size), src.abs, src.neg)
                    checked += 1
        found = problems(fn)
        assert found == problems(fn, reference=True)
        kinds.update(problem.kind[1] for problem in found)
    assert checked > 10 and kinds["imm16"] > 0 and kinds["register"] > 0, (checked, kinds)
