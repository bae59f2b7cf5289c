"""`agxfuzz interp` with inline input sets (--input), per-slot outputs (--by-slot), buffer
bytes (--memory) and the wave interpreter for machine-level files: the text the golden
files' CHECK lines match, and the one-line errors of a bad spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agxir.text import parse_function
from fuzz.cli import main
from fuzz.commands.errors import UsageError
from fuzz.commands.loaders import buffer_contents, parse_input_spec

GOLDEN = Path(__file__).resolve().parents[2] / "golden"

STORES = """func @stores(u0:ptr[8], u1:32, u2:16) {
b0:
  %tid:32 = get_sr sr=thread_id
  %v:32 = iadd u1, %tid shift=0
  device_store %v, u0, %tid fmt=i16 shift=0
  export %v slot=0
  export u2 slot=2
  stop
}
"""


@pytest.fixture
def stores(tmp_path) -> str:
    path = tmp_path / "stores.agx"
    path.write_text(STORES)
    return str(path)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_inline_inputs_by_slot_and_memory(capsys, stores):
    status, out, err = run(
        capsys, "interp", stores, "--by-slot", "--input", "threads=3 u1=0x10 u2=7",
        "--input", "threads=1 u0=hex:aabbccdd u1=5", "--memory", "u0:0:6", "--memory", "u0:6",
    )
    assert (status, err) == (0, "")
    assert out == (
        "input set 0 (3 threads): returned (3 threads, 1 buffers)\n"
        "  slot 0: 0x10, 0x11, 0x12\n"
        "  slot 1: -, -, -\n"
        "  slot 2: 0x7, 0x7, 0x7\n"
        "  u0[0:6]: 100011001200\n"
        "  u0[6:8]: 0000\n"
        "input set 1 (1 threads): returned (1 threads, 1 buffers)\n"
        "  slot 0: 0x5\n"
        "  slot 1: -\n"
        "  slot 2: 0x0\n"
        "  u0[0:6]: 0500ccdd0000\n"
        "  u0[6:8]: 0000\n"
    )


def test_per_thread_output_is_kept_without_by_slot(capsys, stores):
    status, out, _ = run(capsys, "interp", stores, "--input", "threads=2 u1=1")
    assert status == 0
    assert "  thread 1: slot0=0x2, slot1=-, slot2=0x0\n" in out
    assert "seed:" not in out  # given input sets involve no randomness


def test_json_with_inline_inputs(capsys, stores):
    status, out, _ = run(capsys, "interp", stores, "--json", "--input", "threads=1 u1=9")
    report = json.loads(out)
    assert status == 0 and report["seed"] is None
    assert report["input_sets"] == [{"threads": 1, "scalars": {"u1": 9},
                                     "buffers": {}}]
    assert report["outcomes"][0]["outputs"] == [[9, None, 0]]


def test_machine_files_run_on_the_wave_interpreter(capsys):
    status, out, _ = run(capsys, "interp", str(GOLDEN / "machine" / "lower_copies_Swap.agx"),
                         "--by-slot", "--input", "threads=1")
    assert status == 0
    assert out.splitlines()[1:] == ["  slot 0: 0x30d40", "  slot 1: 0x186a0",
                                    "  slot 2: 0x50006"]


def test_fuel_and_outcomes(capsys):
    status, out, _ = run(capsys, "interp", str(GOLDEN / "out_of_fuel.agx"), "--fuel", "50",
                         "--input", "threads=2")
    assert status == 0
    assert out == "input set 0 (2 threads): out of fuel after 50 instructions in one thread\n"


def test_buffer_specs():
    assert buffer_contents("zero", 3) == b"\0\0\0"
    assert buffer_contents("iota8", 4) == bytes([0, 1, 2, 3])
    assert buffer_contents("iota16", 5) == bytes([0, 0, 1, 0, 0])
    assert buffer_contents("iota32", 8) == bytes([0, 0, 0, 0, 1, 0, 0, 0])
    assert buffer_contents("iota8", 258)[256:] == bytes([0, 1])  # wraps, as a u8 would
    assert buffer_contents("hex:0102", 4) == bytes([1, 2, 0, 0])
    for bad in ("iota12", "hex:0g", "hex:010203", "ones"):
        with pytest.raises(ValueError):
            buffer_contents(bad, 2)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("u1=3", "threads=N is missing"),
        ("threads=0", "at least one thread"),
        ("threads=two", "not an integer: 'two'"),
        ("threads=1 u9=1", "stores has no uniform u9 (its uniforms: u0, u1, u2)"),
        ("threads=1 u1=1 u1=2", "u1 given twice"),
        ("threads=1 u2=0x10000", "does not fit 16 bits"),
        ("threads=1 u0=ones", "u0: expected zero, iota8, iota16, iota32 or hex:BYTES"),
        ("threads=1 u0=hex:000102030405060708", "9 bytes given, the buffer holds 8"),
        ("threads=1 u1", "expected name=value, found 'u1'"),
    ],
)
def test_bad_input_specs_are_one_line_usage_errors(spec, message):
    fn = parse_function(STORES)
    with pytest.raises(UsageError) as error:
        parse_input_spec(fn, spec)
    assert str(error.value).startswith(f"--input {spec!r}: ")
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--input", "threads=1 u9=1"], "has no uniform u9"),
        (["--input", "threads=1", "--memory", "u1"], "stores has no buffer u1 (its buffers: u0)"),
        (["--input", "threads=1", "--memory", "u0:x"], "expected NAME[:OFFSET[:LENGTH]]"),
        (["--input", "threads=1", "--memory", "u0:9"], "outside u0's 8 bytes"),
        (["--input", "threads=1", "--inputs", "sets.json"], "give the input sets one way"),
    ],
)
def test_bad_flags_exit_2_with_one_line(capsys, stores, argv, message):
    status, out, err = run(capsys, "interp", stores, *argv)
    assert status == 2 and out == ""
    assert message in err and err.count("\n") == 1
