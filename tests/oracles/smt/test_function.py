"""encode_function (oracles.smt.function): a loop-free function for one symbolic thread.

Each test encodes a small function, fixes the inputs with concrete terms and checks the
terms against what the program does by hand (and, for a few, against the interpreter).
"""

from __future__ import annotations

import pytest

from agxir.text import parse_function
from agxir.verifier import verify
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.smt import bitvec, function_memory, uniform_terms, value_of
from oracles.smt.function import (
    NotLoopFree,
    buffer_contents,
    encode_function,
    evaluate,
    is_loop_free,
    loop_header,
    thread_bound,
)


def reads_a_ballot(term) -> bool:
    """Whether a z3 term applies the uninterpreted ballot mask anywhere inside it."""
    import z3

    from oracles.smt.bitvectors import BALLOT

    seen, stack = set(), [term]
    while stack:
        node = stack.pop()
        if node.get_id() in seen:
            continue
        seen.add(node.get_id())
        if z3.is_app(node) and node.decl().eq(BALLOT):
            return True
        stack.extend(node.children())
    return False


def parse(text: str):
    fn = parse_function(text, "<test>")
    assert verify(fn) == []
    return fn


def encode(fn, tid: int, scalars: dict[str, int] | None = None, buffers=None):
    return encode_function(
        fn,
        thread_id=tid,
        uniforms=uniform_terms(fn, scalars or {}),
        memory=function_memory(fn, buffers or {}),
    )


def export(encoded, slot: int):
    item = encoded.exports[slot]
    written = value_of(item.written)
    return value_of(item.value) if written else None


DIAMOND = """
func @diamond(u0:32) {
entry:
  %tid:32 = get_sr sr=thread_id
  %c:16 = icmp %tid, u0 cond=ult inv=0
  if_icmp %c, #0 cond=ueq inv=1 -> low, high
low:
  %a:32 = iadd %tid, #10 shift=0
  export %a slot=1
  jump -> join
high:
  %b:32 = iadd %tid, #20 shift=0
  jump -> join
join:
  %p:32 = phi [%a, low], [%b, high]
  export %p slot=0
  stop
}
"""


@pytest.mark.parametrize(("tid", "expected", "low_slot"), [(0, 10, 10), (1, 21, None), (5, 25, None)])
def test_phi_takes_the_value_of_the_edge_taken(tid, expected, low_slot):
    encoded = encode(parse(DIAMOND), tid, {"u0": 1})
    assert export(encoded, 0) == expected
    assert export(encoded, 1) == low_slot
    assert value_of(encoded.undefined) is False


def test_path_conditions_of_a_diamond():
    fn = parse(DIAMOND)
    encoded = encode(fn, 3, {"u0": 4})
    by_name = {block.name: value_of(cond) for block, cond in encoded.path.items()}
    assert by_name == {"entry": True, "low": True, "high": False, "join": True}


def test_last_export_along_the_path_wins():
    fn = parse("""
func @twice(u0:32) {
entry:
  export u0 slot=0
  if_icmp u0, #7 cond=ueq inv=0 -> seven, done
seven:
  %x:16 = mov_imm value=0x1234
  export %x slot=0
  jump -> done
done:
  stop
}
""")
    assert export(encode(fn, 0, {"u0": 7}), 0) == 0x1234
    assert export(encode(fn, 0, {"u0": 8}), 0) == 8


def test_a_store_off_the_path_leaves_memory_alone():
    fn = parse("""
func @guarded(u0:ptr[16], u1:32) {
entry:
  %tid:32 = get_sr sr=thread_id
  if_icmp u1, #0 cond=ueq inv=0 -> write, done
write:
  device_store u1, u0, %tid fmt=i32 shift=0
  jump -> done
done:
  %v:32 = device_load u0, %tid fmt=i32 shift=0
  export %v slot=0
  stop
}
""")
    start = bytes(range(16))
    taken = encode(fn, 1, {"u1": 0}, {"u0": start})
    assert export(taken, 0) == 0
    skipped = encode(fn, 1, {"u1": 5}, {"u0": start})
    assert export(skipped, 0) == int.from_bytes(start[4:8], "little")
    assert [value_of(b) for b in skipped.memory.buffer_bytes(0)] == list(start)
    assert [value_of(b) for b in taken.memory.buffer_bytes(0)][4:8] == [0, 0, 0, 0]


def test_undefined_only_on_the_path_taken():
    fn = parse("""
func @maybe(u0:32, u1:32) {
entry:
  if_icmp u1, #0 cond=ueq inv=0 -> risky, done
risky:
  %p:32 = amul u0, u0
  export %p slot=0
  jump -> done
done:
  stop
}
""")
    assert value_of(encode(fn, 0, {"u0": 0x10000, "u1": 0}).undefined) is True
    assert value_of(encode(fn, 0, {"u0": 0x10000, "u1": 1}).undefined) is False
    assert value_of(encode(fn, 0, {"u0": 3, "u1": 0}).undefined) is False
    reasons = encode(fn, 0, {"u0": 0x10000, "u1": 0}).reasons
    assert [(reason, block) for reason, block, _ in reasons] == [("amul overflow", "risky")]


def test_out_of_bounds_load_is_undefined():
    fn = parse("""
func @oob(u0:ptr[8]) {
entry:
  %tid:32 = get_sr sr=thread_id
  %v:32 = device_load u0, %tid fmt=i32 shift=0
  export %v slot=0
  stop
}
""")
    assert value_of(encode(fn, 1).undefined) is False
    assert value_of(encode(fn, 2).undefined) is True


def test_agrees_with_the_interpreter_on_the_readme_example():
    fn = parse("""
func @saxpy(u0:ptr[256], u1:ptr[256], u2:32) {
block0:
  %tid:32 = get_sr sr=thread_id
  %inside:16 = icmp %tid, #64 cond=ult inv=0
  if_icmp %inside, #0 cond=ueq inv=1 -> body, done
body:
  %x:32 = device_load u0, %tid fmt=i32 shift=0
  %y:32 = device_load u1, %tid fmt=i32 shift=0
  %r:32 = ffma u2, %x, %y
  device_store %r, u1, %tid fmt=i32 shift=0
  export %r slot=0
  jump -> done
done:
  stop
}
""")
    a = bytes((7 * i + 3) & 0xFF for i in range(256))
    b = bytes((11 * i + 5) & 0xFF for i in range(256))
    inputs = InputSet(4, {"u2": 0x3FC00000}, {"u0": a, "u1": b})
    outcome = CompiledFunction(fn).run([inputs])[0]
    for tid in range(4):
        encoded = encode(fn, tid, inputs.scalars, inputs.buffers)
        assert value_of(encoded.undefined) is False
        assert export(encoded, 0) == outcome.outputs[tid][0]
        stored = bytes(value_of(x) for x in encoded.memory.buffer_bytes(1))
        assert stored[4 * tid : 4 * tid + 4] == outcome.memory["u1"][4 * tid : 4 * tid + 4]


def test_phi_immediates_and_unreachable_predecessors():
    fn = parse("""
func @imm(u0:32) {
entry:
  if_icmp u0, #1 cond=ueq inv=0 -> one, join
one:
  jump -> join
dead:
  jump -> join
join:
  %p:32 = phi [#5, entry], [#9, one], [u0, dead]
  export %p slot=0
  stop
}
""")
    assert export(encode(fn, 0, {"u0": 1}), 0) == 9
    assert export(encode(fn, 0, {"u0": 2}), 0) == 5


def test_symbolic_thread_id_defaults_and_bound():
    fn = parse(DIAMOND)
    encoded = encode_function(fn)
    assert str(encoded.thread_id) == "thread_id"
    assert "thread_id" in str(thread_bound(encoded.thread_id, 4))
    with pytest.raises(ValueError):
        thread_bound(encoded.thread_id, 0)


LOOP = """
func @loop(u0:32) {
entry:
  jump -> head
head:
  %i:32 = phi [#0, entry], [%j, head]
  %j:32 = iadd %i, #1 shift=0
  if_icmp %j, u0 cond=ult inv=0 -> head, done
done:
  export %j slot=0
  stop
}
"""


def test_loops_are_rejected_naming_the_header():
    fn = parse(LOOP)
    assert not is_loop_free(fn)
    assert loop_header(fn).name == "head"
    with pytest.raises(NotLoopFree, match="@loop has a loop at block head") as caught:
        encode_function(fn)
    assert caught.value.block.name == "head"
    assert is_loop_free(parse(DIAMOND))


def test_uniform_terms_are_used_as_given():
    fn = parse(DIAMOND)
    (u0,) = fn.uniforms
    encoded = encode_function(fn, thread_id=bitvec(3, 32), uniforms={u0: bitvec(9, 32)})
    assert export(encoded, 0) == 13


# --- agreement with the interpreter on generated loop-free programs ----------------------------


def _memory(encoded, fn):
    buffers = [u for u in fn.uniforms if u.is_buffer]
    return {u.name: buffer_contents(encoded.memory, k) for k, u in enumerate(buffers)}


@pytest.mark.parametrize("seed", range(12))
def test_generated_loop_free_programs_agree_with_the_interpreter(seed):
    from fuzz import generate
    source = generate.ChoiceSource.from_seed(seed)
    fn = generate.generate_program(source, generate.Features(loops=False, unstructured=False),
                                   size=40)
    assert is_loop_free(fn)
    threads = 1 if seed % 2 == 0 else 3
    (inputs,) = generate.generate_inputs(fn, source, threads=threads, sets=1)
    outcome = CompiledFunction(fn).run([inputs])[0]
    if outcome.kind == "undefined" and outcome.reason == "data race":
        return  # a race between threads is outside one thread's encoding: nothing to compare
    for tid in range(threads):
        encoded = encode(fn, tid, inputs.scalars, inputs.buffers)
        slots = sorted(encoded.exports)
        flat = [encoded.undefined]
        for slot in slots:
            flat += [encoded.exports[slot].written, encoded.exports[slot].value]
        undefined, *pairs = evaluate(flat)
        if outcome.kind == "undefined":
            if outcome.thread == tid:
                assert undefined, outcome
            continue
        assert outcome.kind == "returned" and not undefined
        got = {slot: (v if w else None) for slot, w, v in zip(slots, pairs[::2], pairs[1::2])}
        want = {slot: outcome.outputs[tid][slot] for slot in slots}
        # A ballot's mask is uninterpreted in the one-thread encoding (it depends on the
        # other lanes: Z3BitVectors.ballot), so only whether such a slot is written is compared.
        for slot in slots:
            if got[slot] is not None and reads_a_ballot(encoded.exports[slot].value):
                assert want[slot] is not None
                got[slot] = want[slot] = "a ballot"
        assert got == want
        assert all(v is None for s, v in enumerate(outcome.outputs[tid]) if s not in got)
        if threads == 1:
            assert _memory(encoded, fn) == outcome.memory


def test_buffer_contents_reads_big_buffers_back():
    fn = parse("func @big(u0:ptr[4096], u1:ptr[3]) {\nentry:\n  stop\n}\n")
    data = bytes((i * 37 + 11) & 0xFF for i in range(4096))
    memory = function_memory(fn, {"u0": data, "u1": b"\x01\x02\x03"})
    assert buffer_contents(memory, 0) == data
    assert buffer_contents(memory, 1) == b"\x01\x02\x03"
    assert evaluate([bitvec(5, 16), encode(fn, 0).undefined]) == [5, False]
