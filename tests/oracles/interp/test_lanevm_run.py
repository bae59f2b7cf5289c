"""The lane VM's executor (`oracles.interp.lanevm.run`, lanevm_src/run.c): its integer,
selection, commit, call and shift ops against the numpy expressions vm.h defines them by,
and its checks of what it is given (a bad program or R raises, never crashes, and releases
what it held). The float ops are in test_lanevm_run_floats.py.

The extension must be built in this checkout (`python setup.py build_ext --inplace`): a
failed build is red here, not silently skipped.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from oracles.interp import floats, lanevm

OP = dict(
    END=0, MOVE=1, ADD=2, SUB=3, MUL=4, AND=5, OR=6, XOR=7, SHL=8, SHR=9, NOT=10, LNOT=11,
    EQ=12, LT=13, LE=14, WHERE=15, MERGE=16, COMMIT=17, FADD=18, FMUL=19, FFMA=20, FEQ=21,
    FLT=22, FLE=23, FISNAN=24, FCONVERT=25, I2F=26, F2I=27, ASHR=28, CALL=29, CALLIF=30,
    COUNT=31,
)
U64 = np.uint64
SPECIAL = [0, 1, 2, 3, 7, 31, 32, 33, 63, 64, 65, 70, 127, 128, 255, 2**31, 2**32 - 1,
           2**32, 2**62, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 2, 2**64 - 1]


def program(*records) -> bytes:
    """Records (op name, d, a, b, c, imm) with the trailing fields optional, then OP_END."""
    rows = [[OP[r[0]], *r[1:], *([0] * (6 - len(r)))] for r in records]
    return np.array(rows + [[OP["END"], 0, 0, 0, 0, 0]], np.int64).tobytes()


def operands(lanes: int = 1000, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Two rows holding the cross product of SPECIAL, then random values and small shift
    amounts (0..70), so every op sees its edge cases and the common ones."""
    rng = np.random.default_rng(seed)
    special = np.array(SPECIAL, U64)
    cross_a, cross_b = (g.ravel() for g in np.meshgrid(special, special))
    count = lanes - cross_a.size
    a = np.concatenate([cross_a, rng.integers(0, 2**64, count, U64,
                                                          endpoint=False)])
    b = rng.integers(0, 2**64, count, U64, endpoint=False)
    b[: count // 2] = rng.integers(0, 71, count // 2).astype(U64)
    return a, np.concatenate([cross_b, b])


def run_op(name, a, b, c=None, imm=0, unmasked=True) -> np.ndarray:
    """Row 3 = op(rows 0, 1, 2); the rows given are not changed."""
    rows = np.zeros((4, a.size), U64)
    rows[0], rows[1] = a, b
    if c is not None:
        rows[2] = c
    before = rows[:3].copy()
    assert lanevm.run(program((name, 3, 0, 1, 2, imm)), rows, 0, unmasked) == -1
    assert np.array_equal(rows[:3], before)
    return rows[3]


def shift_left(a, b):
    return np.where(b < 64, a << (b & U64(63)), U64(0))


def shift_right(a, b):
    return np.where(b < 64, a >> (b & U64(63)), U64(0))


BINARY = {
    "ADD": lambda a, b: a + b,
    "SUB": lambda a, b: a - b,
    "MUL": lambda a, b: a * b,
    "AND": lambda a, b: a & b,
    "OR": lambda a, b: a | b,
    "XOR": lambda a, b: a ^ b,
    "SHL": lambda a, b: a << b,
    "SHR": lambda a, b: a >> b,
    "EQ": lambda a, b: (a == b).astype(U64),
    "LT": lambda a, b: (a < b).astype(U64),
    "LE": lambda a, b: (a <= b).astype(U64),
}


@pytest.mark.parametrize("name", BINARY)
def test_binary_op_is_its_numpy_expression(name):
    a, b = operands()
    with np.errstate(all="ignore"):
        assert np.array_equal(run_op(name, a, b), BINARY[name](a, b))


def test_numpy_shifts_by_64_or_more_give_zero():
    # vm.h's statement of numpy's behaviour, which OP_SHL/OP_SHR copy: checked here so a
    # numpy that changed it shows up as this failure, not as a wrong VM.
    a, b = operands()
    assert np.array_equal(a << b, shift_left(a, b))
    assert np.array_equal(a >> b, shift_right(a, b))


def test_not_and_logical_not():
    a, _ = operands()
    assert np.array_equal(run_op("NOT", a, a), ~a)
    flags = (a & U64(1)).astype(bool)
    assert np.array_equal(run_op("LNOT", flags.astype(U64), a).astype(bool), ~flags)


def test_where_merge_and_commit():
    a, b = operands()
    c = a * U64(3) + b
    condition = np.where(np.arange(a.size) % 3 == 0, U64(0), b)  # nonzero, not just 1
    assert np.array_equal(run_op("WHERE", condition, a, c), np.where(condition != 0, a, c))
    act = (np.arange(a.size) % 2).astype(U64)
    rows = np.stack([a, act, c])
    assert lanevm.run(program(("MERGE", 2, 0, 1)), rows, 0, True) == -1
    assert np.array_equal(rows[2], np.where(act != 0, a, c))
    for unmasked, want in ((True, a), (False, np.where(act != 0, a, c))):
        rows = np.stack([a, act, c])
        assert lanevm.run(program(("COMMIT", 2, 0, 1)), rows, 0, unmasked) == -1
        assert np.array_equal(rows[2], want)


def test_move_copies_a_row():
    a, b = operands()
    rows = np.stack([a, b])
    assert lanevm.run(program(("MOVE", 1, 0), ("MOVE", 0, 0)), rows, 0, False) == -1
    assert np.array_equal(rows, np.stack([a, a]))


@pytest.mark.parametrize("width", [1, 2, 8, 16, 31, 32, 33, 63, 64])
def test_ashr_is_floats_ashr(width):
    a, b = operands(seed=width)
    b[::7] = U64(2**64 - 1)  # amounts that are negative as int64 fill with the sign
    b[1::7] = U64(2**63)
    want = floats.ashr(a, b, width)
    assert np.array_equal(run_op("ASHR", a, b, imm=width), want)


def ignoring_c_and_d(binary):
    return lambda a, b, c, d: binary(a, b)


REFERENCE = {  # (a, b, c, d's row before the op) -> d after it, masked for OP_COMMIT
    **{name: ignoring_c_and_d(binary) for name, binary in BINARY.items()},
    "WHERE": lambda a, b, c, d: np.where(a != 0, b, c),
    "MERGE": lambda a, b, c, d: np.where(b != 0, a, d),
    "COMMIT": lambda a, b, c, d: np.where(b != 0, a, d),
    "ASHR": lambda a, b, c, d: floats.ashr(a, b, 64),
}


@pytest.mark.parametrize("name", REFERENCE)
def test_destination_may_be_an_operand(name):
    a, b = operands(lanes=777)
    b[::3] = U64(0)  # conditions and masks that are off
    c = ~a
    imm = 64 if name == "ASHR" else 0
    with np.errstate(all="ignore"):
        for d in (0, 1, 2):
            rows = np.stack([a, b, c])
            want = REFERENCE[name](a, b, c, rows[d].copy())
            assert lanevm.run(program((name, d, 0, 1, 2, imm)), rows, 0, False) == -1
            assert np.array_equal(rows[d], want), f"d = row {d}"
        rows = np.stack([a, b, c])  # d == a == b
        want = REFERENCE[name](a, a, c, a)
        assert lanevm.run(program((name, 0, 0, 0, 2, imm)), rows, 0, False) == -1
        assert np.array_equal(rows[0], want)


@pytest.mark.parametrize("lanes", [0, 1, 7, 8, 9, 15, 16, 17, 255, 256, 257])
def test_any_number_of_lanes(lanes):
    a, b = operands(lanes=700)
    a, b = a[-lanes:] if lanes else a[:0], b[-lanes:] if lanes else b[:0]
    assert np.array_equal(run_op("ADD", a, b), a + b)
    assert np.array_equal(run_op("SHL", a, b), a << b)


def test_call_stops_and_running_on_from_the_next_op_continues():
    rows = np.array([[1, 2], [10, 20], [0, 0]], U64)
    code = program(("ADD", 2, 0, 1), ("CALL", 0, 0, 0, 0, 5), ("ADD", 2, 2, 1))
    assert lanevm.run(code, rows, 0, True) == 1
    assert rows[2].tolist() == [11, 22]
    assert lanevm.run(code, rows, 2, True) == -1
    assert rows[2].tolist() == [21, 42]


def test_callif_returns_only_when_some_lane_is_set():
    rows = np.zeros((2, 300), U64)
    code = program(("CALLIF", 0, 1, 0, 0, 0), ("MOVE", 0, 1))
    assert lanevm.run(code, rows, 0, True) == -1  # all zero: on to OP_END
    rows[1, 299] = 1
    assert lanevm.run(code, rows, 0, True) == 0
    assert rows[0, 299] == 0
    assert lanevm.run(code, rows, 1, True) == -1
    assert rows[0, 299] == 1


def test_program_may_be_an_int64_array():
    rows = np.array([[5], [6], [0]], U64)
    code = np.frombuffer(program(("MUL", 2, 0, 1)), np.int64).reshape(-1, 6)
    assert lanevm.run(code, rows, 0, False) == -1
    assert rows[2, 0] == 30


@pytest.mark.parametrize("field, index", [("d", 1), ("a", 2), ("b", 3), ("c", 4)])
def test_a_row_outside_r_names_op_and_field(field, index):
    record = ["ADD", 0, 0, 0, 0, 0]
    record[index] = 3
    rows = np.zeros((3, 4), U64)
    with pytest.raises(IndexError, match=rf"op 1 .*field {field} = 3"):
        lanevm.run(program(("MOVE", 0, 1), tuple(record)), rows, 0, True)
    record[index] = -1
    with pytest.raises(IndexError, match=rf"field {field} = -1"):
        lanevm.run(program(tuple(record)), rows, 0, True)


def test_bad_programs_raise():
    rows = np.zeros((2, 4), U64)
    bad_op = np.array([[99, 0, 0, 0, 0, 0], [0] * 6], np.int64).tobytes()
    with pytest.raises(ValueError, match="op 0 has unknown opcode 99"):
        lanevm.run(bad_op, rows, 0, True)
    with pytest.raises(ValueError, match="unknown opcode -1"):
        lanevm.run(np.array([[-1, 0, 0, 0, 0, 0]], np.int64), rows, 0, True)
    with pytest.raises(ValueError, match="unknown opcode 31"):
        lanevm.run(np.array([[OP["COUNT"], 0, 0, 0, 0, 0]], np.int64), rows, 0, True)
    with pytest.raises(ValueError, match="whole number"):
        lanevm.run(program(("ADD", 0, 0, 1))[:-8], rows, 0, True)
    with pytest.raises(IndexError, match="without OP_END"):
        lanevm.run(program(("ADD", 0, 0, 1))[:48], rows, 0, True)
    for pc in (-1, 2, 10**6):
        with pytest.raises(IndexError, match=f"pc {pc} is outside"):
            lanevm.run(program(("ADD", 0, 0, 1)), rows, pc, True)
    with pytest.raises(IndexError, match="pc 0 is outside"):
        lanevm.run(b"", rows, 0, True)
    with pytest.raises(TypeError, match="8-byte integers"):
        lanevm.run(np.zeros(12, np.int32), rows, 0, True)
    with pytest.raises(TypeError, match="program must be"):
        lanevm.run([0] * 6, rows, 0, True)
    with pytest.raises(TypeError, match="4 arguments"):
        lanevm.run(program(), rows, 0)
    for name, imm in (("ASHR", 0), ("ASHR", 65), ("FADD", 64), ("FCONVERT", 16 | 64 << 8),
                      ("I2F", 0 | 32 << 8), ("F2I", 32 | 65 << 8), ("FISNAN", -16)):
        with pytest.raises(ValueError, match=f"op 0 .* has imm {imm}"):
            lanevm.run(program((name, 0, 0, 1, 0, imm)), rows, 0, True)


def test_bad_rows_raise():
    code = program(("ADD", 0, 0, 1))
    for rows, message in (
        (np.zeros((2, 4), np.int32), "2-D array of uint64"),
        (np.zeros(8, U64), "2-D array of uint64"),
        (np.zeros((2, 2, 2), U64), "2-D array of uint64"),
        (np.zeros((2, 8), U64)[:, ::2], "writable C-contiguous"),
        (np.zeros((4, 2), U64).T, "writable C-contiguous"),
        (np.zeros((2, 4), U64).view(np.float64), "2-D array of uint64"),
        (b"\0" * 64, "writable"),
        (bytearray(64), "2-D array of uint64"),
        ([[0, 0], [0, 0]], "writable C-contiguous"),
    ):
        with pytest.raises(TypeError, match=message):
            lanevm.run(code, rows, 0, True)
    frozen = np.zeros((2, 4), U64)
    frozen.flags.writeable = False
    with pytest.raises(TypeError, match="writable"):
        lanevm.run(code, frozen, 0, True)


def test_every_path_releases_the_buffers():
    rows = np.zeros((2, 4), U64)
    code = bytearray(program(("ADD", 0, 0, 1)))
    refs = sys.getrefcount(rows), sys.getrefcount(code)
    for pc in (0, 5):
        for _ in range(100):
            try:
                lanevm.run(code, rows, pc, True)
            except IndexError:
                pass
    bad_rows = np.zeros((2, 4), np.int32)
    for _ in range(100):
        with pytest.raises(TypeError):
            lanevm.run(code, bad_rows, 0, True)
    assert (sys.getrefcount(rows), sys.getrefcount(code)) == refs
    code.extend(b"\0" * 48)  # a bytearray with a buffer still exported cannot grow
    small = np.zeros((1, 4), U64)
    for _ in range(100):
        with pytest.raises(IndexError):
            lanevm.run(code, small, 0, True)
    code.extend(b"\0" * 48)
