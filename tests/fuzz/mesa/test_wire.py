"""Text -> Mesa IR -> text is the identity: on every machine-level golden and example that
translates (SSA ones after lower-cf), and on generated translatable programs. The wire's
short paths for its commonest rows give what its general paths give."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agxir.text import parse_function, print_function
from agxir.text.printer import format_instruction
from fuzz.mesa import wire, wire_decode, wire_encode
from fuzz.mesa.client import output_level, run_passes
from fuzz.mesa.opcodes import untranslatable
from fuzz.passes_under_test import registered

from .conftest import translatable_exec

ROOT = Path(__file__).resolve().parents[3]
GOLDENS = sorted((ROOT / "tests" / "golden" / "machine").glob("*.agx"))
GOLDENS += sorted((ROOT / "examples").glob("*.agx"))


def _round_trip(client, fn) -> str:
    outcome = run_passes(client, fn, [])
    assert outcome.result.status == "ok", outcome.result.lines
    return print_function(outcome.function)


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: p.name)
def test_goldens_round_trip(client, path):
    fn = parse_function(path.read_text(), str(path))
    if fn.level == "ssa":
        registered("lower-cf").run(fn)
    assert not untranslatable(fn), f"{path.name} no longer translates: {untranslatable(fn)}"
    assert _round_trip(client, fn) == print_function(fn)


def test_registers_halves_and_copies_round_trip(client):
    text = (
        "func.machine @regs(u0:32, u1:64) {\n"
        "b0:\n"
        "  r5h = mov_imm value=0x7\n"
        "  r3 = iadd u0, r5h.abs shift=2\n"
        "  d2 = bitop u1, #0 tt=0xa\n"
        "  r3, r4l = parallel_copy r4, r5h\n"
        "  r6 = icmpsel r3, #5, r3, u0 cond=sgt\n"
        "  export r6 slot=1\n"
        "  export d2 slot=2\n"
        "  stop\n"
        "}\n"
    )
    fn = parse_function(text)
    assert _round_trip(client, fn) == print_function(fn)


@settings(max_examples=25)
@given(st.integers(0, 2**32 - 1))
def test_generated_translatable_programs_round_trip(client_for_hypothesis, seed):
    fn = translatable_exec(seed)
    if fn is None:  # not structurable: lower-cf declines it, Mesa never sees it
        return
    assert not untranslatable(fn)
    assert _round_trip(client_for_hypothesis, fn) == print_function(fn)


@pytest.fixture(scope="module")
def client_for_hypothesis(bridge):
    """One bridge for every example (function-scoped fixtures and @given do not mix)."""
    from fuzz.mesa.client import BridgeClient

    with BridgeClient(bridge.path, timeout=20.0) as c:
        yield c


def test_64_bit_immediates_round_trip_whole(client):
    """A 64-bit mov_imm's value crosses the wire in full, up to 2**64 - 1."""
    text = ("func.exec @wide(u0:32) {\n"
            "b0:\n"
            "  %a:64 = mov_imm value=0xffffffffffffffff\n"
            "  %b:64 = mov_imm value=0xfffffffffffffffa\n"
            "  %c:64 = mov_imm value=0x8000000000000000\n"
            "  export %a slot=0\n"
            "  export %b slot=1\n"
            "  export %c slot=2\n"
            "  stop\n"
            "}\n")
    fn = parse_function(text)
    assert _round_trip(client, fn) == print_function(fn)


def test_fast_constructors_make_what_the_classes_make():
    """The decoder makes operands and instructions past their dataclass constructors: the
    same attributes, in the same order."""
    from agxir import ir
    from agxir.machine.opcodes import opcodes_for_level

    value = ir.Value("a", 32)
    for mods in ((False, False), (True, False), (False, True), (True, True)):
        made, real = wire_decode._operand(value, *mods), ir.Operand(value, *mods)
        assert made == real and hash(made) == hash(real)
        assert list(vars(made).items()) == list(vars(real).items())
    row = opcodes_for_level("exec")["iadd"]
    args = (row, value, [ir.Operand(value), ir.Operand(ir.Immediate(3))], {"shift": 1}, [], True)
    made, real = wire_decode._make_instruction(*args), ir.Instruction(*args)
    assert list(vars(made).items()) == list(vars(real).items())


PASS_LISTS = ([], ["optimizer", "dce"], ["cse", "schedule"], ["dce", "ra"],
              ["dce", "ra", "lower-copies", "lower-pseudo"], ["liveness"],
              ["dce-instructions", "cse", "optimizer", "lower-uniform-sources", "dce",
               "schedule", "ra-direct", "lower-pseudo"])


def _spelled(ins) -> tuple:
    return format_instruction(ins), [block.name for block in ins.blocks]


def test_short_paths_agree_with_the_general_ones(client):
    """Every instruction the encoder spells directly is the line its general path makes, and
    every answer line the decoder reads directly is the instruction its general path reads
    (line by line, and whole answers: decoded with its fast readers and with none), on
    generated programs and the machine-level goldens through several pass lists."""
    functions = [fn for fn in map(translatable_exec, range(12)) if fn is not None]
    functions += [fn for fn in (parse_function(p.read_text(), str(p)) for p in GOLDENS)
                  if fn.level == "machine" and not untranslatable(fn)]
    shorts = {"encode": 0, "decode": 0}
    for fn in functions:
        encoder = wire_encode._Encoder(fn)
        preds = encoder.predecessors()
        for block in fn.blocks:
            for ins in block.instructions:
                line = encoder.instruction(ins, preds[block])
                assert line == encoder._instruction(ins, preds[block]), format_instruction(ins)
                shorts["encode"] += ins.name in ("mov_imm", "export", "iadd", "fadd")
        lines, names = wire.encode(fn)
        for passes in PASS_LISTS if fn.level == "exec" else (["lower-copies"],):
            result = client.request(passes, lines)
            if result.status != "ok":
                continue
            level = output_level(fn, passes)
            fast = wire_decode._Decoder(names, level).decode(result.lines)
            general = wire_decode._Decoder(names, level)
            general.readers = {}
            general = general.decode(result.lines)
            assert print_function(fast[0]) == print_function(general[0])
            assert [_spelled(ins) for ins in fast[0].instructions()] == [
                _spelled(ins) for ins in general[0].instructions()]
            assert (fast[1] and vars(fast[1])) == (general[1] and vars(general[1]))
            decoder = wire_decode._Decoder(names, level)
            decoder._seed()
            for tokens in (line.split() for line in result.lines):
                if tokens[0] != "i" or tokens[1] not in wire_decode.SIMPLE_READBACK:
                    continue
                preds_here = [decoder.block(0)]
                assert _spelled(decoder.instruction(tokens, preds_here)) == _spelled(
                    decoder._instruction(tokens, preds_here)), " ".join(tokens)
                shorts["decode"] += 1
    assert shorts["encode"] > 100 and shorts["decode"] > 500, shorts
