"""The bridge's wire vocabulary, shared by its encoder (`fuzz/mesa/wire_encode.py`) and
decoder (`fuzz/mesa/wire_decode.py`): the operand kinds, size codes, condition and format
numbers, the errors, and the `Names` an encoding keeps so the answer gets the input's
names back. `fuzz/mesa/wire.py` is the front door."""


from __future__ import annotations

from dataclasses import dataclass, field

from agxir import ir

NULL, NORMAL, IMMEDIATE, UNIFORM, REGISTER, UNDEF = range(6)
SIZE_CODE = {16: 0, 32: 1, 64: 2}
SIZE_BITS = {code: bits for bits, code in SIZE_CODE.items()}
INT_CONDS = {"ueq": 0, "ult": 1, "ugt": 2, "seq": 4, "slt": 5, "sgt": 6}
FLOAT_CONDS = {"eq": 0, "lt": 1, "gt": 2, "ltn": 3, "ge": 5, "le": 6, "gtn": 7}
FORMATS = {"i8": 0, "i16": 1, "i32": 2}
SR_THREAD_ID = 80  # thread_position_in_grid.x
ROUND_RTZ, ROUND_RTE = 0, 1
COND_ROWS = ("if_icmp", "if_fcmp", "else_icmp", "else_fcmp", "while_icmp", "while_fcmp")
FLOAT_COND_OPS = ("fcmp", "fcmpsel", "if_fcmp", "else_fcmp", "while_fcmp", "fcmp_ballot")
BITOP_TABLES = {"mov": 0xA, "not": 0x5, "and": 0x8, "or": 0xE, "xor": 0x6}
PSEUDO_BITOPS = {tt: name for name, tt in BITOP_TABLES.items()}
ZERO = ir.Operand(ir.Immediate(0))


class Untranslatable(Exception):
    """The function uses something Mesa has no counterpart for (message: what)."""


class WireError(Exception):
    """Mesa's answer has something the model cannot say (message: what)."""


@dataclass
class Names:
    level: str
    values: dict[int, ir.Value] = field(default_factory=dict)
    blocks: dict[int, str] = field(default_factory=dict)
    uniforms: dict[int, ir.Uniform] = field(default_factory=dict)
    function: ir.Function | None = None


@dataclass
class Liveness:
    live_in: dict[str, list[str]]
    live_out: dict[str, list[str]]


MODS = ("0", "1", "2", "3")  # the MODS digit of abs | neg << 1
# A value's wire tokens by its size in bits and its number, made once: "1.N.S." (the
# encoder's, before the MODS digit) and "1.N.S.0" (a destination's, the decoder's)
_VALUE_PREFIXES: dict[int, list[str]] = {bits: [] for bits in SIZE_CODE}
_VALUE_TOKENS: dict[int, list[str]] = {bits: [] for bits in SIZE_CODE}


def value_tokens(count: int) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    """The token tables, each list at least `count` long."""
    if len(_VALUE_TOKENS[16]) < count:
        for bits, code in SIZE_CODE.items():
            prefixes = _VALUE_PREFIXES[bits]
            grown = [f"{NORMAL}.{n}.{code}." for n in range(len(prefixes), max(count, 256))]
            prefixes += grown
            _VALUE_TOKENS[bits] += [prefix + "0" for prefix in grown]
    return _VALUE_PREFIXES, _VALUE_TOKENS
