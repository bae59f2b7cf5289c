"""The instruction memo of oracles.smt.function (`InstructionMemo`), held to encoding afresh.

The promotion invariant encodes a step's BEFORE and AFTER, which share most instructions;
the memo hands an instruction the terms an equal one (same text, attribute types, operand
terms, memory and thread id) got before. z3 hash-conses terms, so a sound memo gives the
very terms fresh encoding gives: every term of every encoding is compared with `eq`.
"""

from __future__ import annotations

import z3

from agxir.ir import clone_function
from agxir.passes import address_cleanup, address_fold, address_fuse, address_lower, dce
from agxir.text import parse_function
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from oracles.smt import function_memory, uniform_terms
from oracles.smt.function import InstructionMemo, encode_function, is_loop_free

SEED = 3
PROGRAMS = 40
STEPS = (address_cleanup.PASS, address_fuse.PASS, address_fold.PASS, address_lower.PASS,
         dce.PASS)


def chains():
    """Each loop-free address-heavy program, then the output of every address pass that
    changes it, in pipeline order: the functions the promotion oracle encodes in turn."""
    config = CampaignConfig(seed=SEED, pipelines=[], size=30, address_heavy=True)
    found = []
    for index in range(PROGRAMS):
        fn, _ = build_case(SEED, index, config)
        if not is_loop_free(fn):
            continue
        chain = [fn]
        for step in STEPS:
            out = clone_function(chain[-1])
            if step.run(out):
                chain.append(out)
        found.append(chain)
    return found


def encode(fn, memo=None):
    memory = function_memory(fn, name="initial_memory")
    return encode_function(fn, thread_id=z3.BitVec("thread_id", 32), memory=memory,
                           uniforms=uniform_terms(fn), memo=memo)


def same_terms(a, b) -> None:
    assert a.undefined.eq(b.undefined)
    assert a.memory.array.eq(b.memory.array) and a.memory.buffers == b.memory.buffers
    assert sorted(a.exports) == sorted(b.exports)
    for slot, export in a.exports.items():
        assert export.written.eq(b.exports[slot].written)
        assert export.value.eq(b.exports[slot].value)
    assert [(r, blk) for r, blk, _ in a.reasons] == [(r, blk) for r, blk, _ in b.reasons]
    assert all(x.eq(y) for (_, _, x), (_, _, y) in zip(a.reasons, b.reasons))
    paths = {block.name: pc for block, pc in b.path.items()}
    assert {block.name for block in a.path} == set(paths)
    assert all(pc.eq(paths[block.name]) for block, pc in a.path.items())
    values = {ref.name: term for ref, term in b.values.items()}
    assert {ref.name for ref in a.values} == set(values)
    assert all(term.eq(values[ref.name]) for ref, term in a.values.items())


def test_memoized_encodings_are_the_fresh_terms():
    memo = InstructionMemo()
    functions = 0
    for chain in chains():
        for fn in chain:
            same_terms(encode(fn, memo), encode(fn))
            functions += 1
    assert functions >= 60
    # The chains share instructions, so the memo answered many of them.
    assert memo.hits > memo.misses // 2, (memo.hits, memo.misses)


def test_a_full_memo_starts_again_and_stays_sound():
    memo = InstructionMemo(limit=7)
    for chain in chains()[:10]:
        for fn in chain:
            same_terms(encode(fn, memo), encode(fn))
            assert len(memo.entries) <= 7


TWO_SOURCES = """\
func @p(u0:32, u1:32) {
b0:
  %a:32 = iadd u0, u1 shift=0
  %b:32 = imul %a, %a
  export %b slot=0
  stop
}
"""


def test_an_instruction_reading_other_terms_is_not_answered_from_the_memo():
    """The same text over other operand terms (here `%a` shifted another way) is encoded
    afresh."""
    memo = InstructionMemo()
    first = parse_function(TWO_SOURCES)
    second = parse_function(TWO_SOURCES.replace("iadd u0, u1 shift=0", "iadd u0, u1 shift=1"))
    same_terms(encode(first, memo), encode(first))
    same_terms(encode(second, memo), encode(second))
    assert memo.hits == 1  # only `stop`: iadd, imul and export read other terms
    same_terms(encode(first, memo), encode(first))
    assert memo.hits == 5  # all four, as first encoded


def test_attribute_types_are_part_of_the_key():
    """`shift=1` and `shift=True` print alike; the semantics may read them differently."""
    memo = InstructionMemo()
    fn = parse_function(TWO_SOURCES)
    ins = fn.blocks[0].instructions[0]
    ins.attrs["probe"] = 1
    operands = {ref: z3.BitVec(ref.name, 32) for ref in fn.uniforms}
    tid, memory = z3.BitVec("thread_id", 32), function_memory(fn)
    key_int, _ = memo.key(ins, operands, tid, memory)
    ins.attrs["probe"] = True
    key_bool, _ = memo.key(ins, operands, tid, memory)
    assert key_int != key_bool
