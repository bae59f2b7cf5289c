"""The emit cache's keys built in C (oracles/interp/lanevm_src/keys.c) against the reference
(`emit_cache.unit_keys_reference`): part for part the same, of the same types, for every
unit the interpreters key over the SSA and wave corpora of the emit-cache tests, with and
without the optional context (escaping values, wave branch targets, vreg widths); the same
all-None list where a name stands for two objects or an operand is of no known kind; and
NotImplemented, so the reference runs, where the arguments are not what the C expects."""

from __future__ import annotations

from functools import cache

import pytest

from agxir.ir import Immediate, Operand, Uniform, Value, VirtualRegister
from agxir.text import parse_function
from oracles.interp import CompiledFunction, emit_cache
from oracles.machine import CompiledWave
from tests.oracles.interp.test_emit_cache import ssa_corpus
from tests.oracles.machine.test_wave_emit_cache import wave_corpus

native = emit_cache.native_unit_keys
needs_native = pytest.mark.skipif(native is None, reason="the lane VM is not built")


def same(got, want) -> bool:
    """Equal, and of the same type, part by part (True is not 1, a tuple not a list)."""
    if type(got) is not type(want):
        return False
    if type(got) in (tuple, list):
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    return got == want


@cache
def key_calls() -> tuple:
    """The arguments of every unit_keys call the interpreters make on the corpora: the SSA
    functions and pipeline steps, and the wave ones with writes forwarded and not."""
    calls = []

    def spy(units, prefixes, number, escaping=None, first_unit=None, vreg_widths=None):
        calls.append((units, prefixes, number, escaping, first_unit, vreg_widths))
        return [None] * len(units)

    was, real = emit_cache.enabled, emit_cache.unit_keys
    emit_cache.enabled, emit_cache.unit_keys = True, spy
    try:
        for fn, _ in ssa_corpus():
            CompiledFunction(fn)
        for fn, _ in wave_corpus():
            CompiledWave(fn, True)
            CompiledWave(fn, False)
    finally:
        emit_cache.enabled, emit_cache.unit_keys = was, real
    return tuple(calls)


def _variants(call):
    """The call as made, then with each optional part swapped: absent where it was given,
    made up where it was not (every value destination escaping; every block a unit; every
    virtual register accessed wider), in every combination."""
    units, prefixes, number, escaping, first_unit, vreg_widths = call
    instructions = [ins for unit in units for ins in unit]
    all_values = {d for ins in instructions for d in ins.defs() if type(d) is Value}
    vregs = {ref.name for ins in instructions
             for ref in [s.ref for s in ins.srcs] + ins.defs() if type(ref) is VirtualRegister}
    swapped_escaping = None if escaping is not None else all_values
    swapped_first = None if first_unit is not None else {block: k for k, block in enumerate(number)}
    swapped_widths = None if vreg_widths else {name: 64 for name in sorted(vregs)}
    for e in (escaping, swapped_escaping):
        for f in (first_unit, swapped_first):
            for w in (vreg_widths, swapped_widths):
                yield units, prefixes, number, e, f, w


@needs_native
def test_the_c_keys_are_the_references_on_every_unit_of_the_corpora():
    kinds = set()
    units = 0
    for call in key_calls():
        for args in _variants(call):
            got, want = native(*args), emit_cache.unit_keys_reference(*args)
            assert same(got, want), args[0]
            assert same(emit_cache.unit_keys(*args), want)
            units += len(want)
            for key in want:
                if key is None:
                    continue
                kinds |= {type(part).__name__ for part in key}
                kinds |= {part[0] for part in key if type(part) is tuple and part and type(part[0]) is str}
                kinds |= {"r" for part in key if part == "r"} | {"#" for part in key if part == "#"}
    assert units > 5000
    # every kind of part is met: widths and counts, texts, flags of escaping values, phis'
    # block numbers, uniforms, virtual registers, registers, immediates, wave prefixes
    assert {"int", "str", "bool", "tuple", "NoneType", "u", "v", "r", "#"} <= kinds


@needs_native
def test_rows_named_by_c_keys_are_held_as_the_reference_holds_them():
    for units, *_ in key_calls()[:40]:
        for unit in units:
            for ins in unit:
                assert emit_cache._ROWS[id(ins.opcode)] is ins.opcode


# --- all None ------------------------------------------------------------------------------
TWO_BLOCKS = """func @f(u0:32, u1:ptr[16]) {
entry:
  %x:32 = iadd u0, #1 shift=0
  jump -> next
next:
  %y:32 = iadd %x, u0 shift=0
  device_store %y, u1, #0 fmt=i32 shift=0
  export %y slot=0
  stop
}
"""


def _keys_both(fn) -> tuple:
    units = [block.instructions for block in fn.blocks]
    number = {block: k for k, block in enumerate(fn.blocks)}
    args = (units, [()] * len(units), number, None, None, None)
    return emit_cache.unit_keys_reference(*args), emit_cache.unit_keys(*args), args


def _replace_source(fn, block: str, index: int, source: int, ref) -> None:
    ins = fn.block_named(block).instructions[index]
    ins.srcs[source] = ins.srcs[source].with_ref(ref)


def _twin_value(fn):
    _replace_source(fn, "next", 0, 0, Value("x", 32))


def _twin_uniform(fn):
    _replace_source(fn, "next", 0, 1, Uniform("u0", 32))


class _OddValue(Value):
    """A kind the keys do not know (they ask for the exact classes)."""


def _odd_source(fn):
    _replace_source(fn, "next", 0, 0, _OddValue("x", 32))


def _odd_destination(fn):
    fn.block_named("entry").instructions[0].dest = Uniform("w", 32)  # (printed as a value)


def _twin_destination(fn):
    fn.block_named("next").instructions[0].dest = Value("x", 32)


@pytest.mark.parametrize("spoil", [_twin_value, _twin_uniform, _odd_source, _odd_destination,
                                   _twin_destination])
def test_a_function_the_emitters_cannot_key_gets_no_keys_either_way(spoil):
    fn = parse_function(TWO_BLOCKS)
    want, got, _ = _keys_both(fn)
    assert all(key is not None for key in want) and same(got, want)
    spoil(fn)
    want, got, args = _keys_both(fn)
    assert want == [None, None] and same(got, want)
    if native is not None:
        assert same(native(*args), want)


# --- NotImplemented: the reference runs -------------------------------------------------------
class _Numbers(dict):
    """A dict of another class: its `get` could be its own."""


@needs_native
def test_arguments_the_c_does_not_expect_are_left_to_the_reference():
    fn = parse_function(TWO_BLOCKS)
    _, _, (units, prefixes, number, *_) = _keys_both(fn)
    want = emit_cache.unit_keys_reference(units, prefixes, number)
    odd = [
        (iter(units), prefixes, number, None, None, None),
        (units, iter(prefixes), number, None, None, None),
        (units, prefixes[:1], number, None, None, None),
        (units, prefixes, _Numbers(number), None, None, None),
        (units, prefixes, number, None, _Numbers(), None),
        (units, prefixes, number, None, None, _Numbers(v1=32)),
    ]
    for args in odd:
        assert native(*args) is NotImplemented
    for args in odd[3:]:
        assert same(emit_cache.unit_keys(*args), want)
    with pytest.raises(ValueError):  # zip(strict=True): the reference says what is wrong
        emit_cache.unit_keys(units, prefixes[:1], number)


@needs_native
def test_an_exception_on_the_way_is_the_references_to_raise():
    """A C walk that meets an exception declines; the reference meets it too and raises it."""
    fn = parse_function(TWO_BLOCKS)
    units = [block.instructions for block in fn.blocks]
    number = {block: k for k, block in enumerate(fn.blocks)}
    broken = [units[0] + [Operand(Immediate(1))]]  # not an instruction: no `opcode`
    assert native(broken, [()], number, None, None, None) is NotImplemented
    with pytest.raises(AttributeError):
        emit_cache.unit_keys(broken, [()], number)


def test_without_the_c_the_interpreters_build_as_with_it(monkeypatch):
    """The reference path, as where the extension is not built: the same keys, so the same
    cache entries (test_emit_cache compares what is built from them)."""
    fn = parse_function(TWO_BLOCKS)
    with_c = _keys_both(fn)[1]
    monkeypatch.setattr(emit_cache, "native_unit_keys", None)
    without = _keys_both(fn)[1]
    assert same(with_c, without)
