"""lanevm.compile, the lane VM's block compiler (oracles/interp/lanevm_src/compile.c, lex.c,
parse.c, stmt.c): every line shape the emitters write compiles; Python's precedence and
numpy's types are kept; what is outside the language is refused with a ValueError naming
the line; temporaries stay few; storage reads are copied exactly when a later write would
change them; and every block source the SSA and wave emitters produce over generated
programs compiles and, run by lanevm.run, gives what numpy gives on the same inputs
(tests/oracles/interp/lanevm_check.py runs both ways).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from agxir.ir import SSA
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from oracles.interp import lanevm
from oracles.interp.runner import CompiledFunction
from oracles.machine import wave as wave_module
from tests.oracles.interp.lanevm_check import differences
from tests.oracles.machine.pipeline_programs import default_pipelines, pipeline_steps

SSA_HEADER = "def block(V, U, C, act, cf, unmasked, X, TID):"
WAVE_HEADER = "def block(V, H, U, C, here, act, LB, X, TID):"
SHAPES = Path(__file__).with_name("lanevm_shapes.txt")
OPS = {name: number for number, name in enumerate(
    re.findall(r"^\s*(OP_\w+)", (Path(lanevm.__file__).parent / "lanevm_src" / "vm.h").read_text(),
               re.M))}


def block(body: str, wave: bool = False) -> str:
    lines = [line for line in body.strip("\n").splitlines()]
    return (WAVE_HEADER if wave else SSA_HEADER) + "\n" + "\n".join("    " + x for x in lines)


def ops_of(source: str) -> list[int]:
    program = lanevm.compile(source)[0]
    return np.frombuffer(program, np.int64).reshape(-1, 6)[:, 0].tolist()


def agree(source: str, seeds=(0, 1, 2)) -> None:
    for seed in seeds:
        for unmasked in (False, True):
            assert differences(source, seed=seed, unmasked=unmasked) == [], source


# --- every shape of /tmp/lanevm_shapes.txt (60 campaign programs), made concrete ----------------
_NUMBERS = [
    (r"fconvert\((\w+), N, N\)", r"fconvert(\1, 16, 32)"),
    (r"int_to_float\((\w+), N, N,", r"int_to_float(\1, 32, 16,"),
    (r"float_to_int\((\w+), N, N,", r"float_to_int(\1, 32, 16,"),
    (r"ffma\((.*), N\)", r"ffma(\1, 32)"),
    (r"ashr\((.*), N\)", r"ashr(\1, 32)"),
    (r"X\.load\((\w+), N,", r"X.load(\1, 4,"),
    (r"X\.store\((\w+), (\w+), N,", r"X.store(\1, \2, 4,"),
    (r"X\.export\(N,", "X.export(2,"),
    (r"(cf|LB) == N", r"\1 == 1"),
    (r"H\[N\] == N", "H[0] == 0"),
    (r"(<<|>>) N", r"\1 7"),
]


def concrete(shape: str) -> str:
    """A shape's line with names, numbers and constants filled in: locals a (a V read) and
    b (a U read, or a register in the wave), constants C[0x..], V and U names 'a'."""
    line = shape.replace("X.x(x, 's')", "X.undefined(x, 'why')")
    for pattern, replacement in _NUMBERS:
        line = re.sub(pattern, replacement, line)
    target = ""
    if re.match(r"x = ", line):
        target, line = "t = ", line[4:]
    names = iter(["a", "b"] * 8)
    line = re.sub(r"\bx\b", lambda m: next(names), line)
    constants = iter(["C[0x1f]", "C[0x80000000]", "C[0x3]", "C[0xffffffff]"] * 4)
    line = re.sub(r"\bC\b(?!\[)", lambda m: next(constants), line)
    line = re.sub(r"\bN\b", "3", line.replace("H[N]", "H[4]").replace("'s'", "'a'"))
    return target + line


def shape_sources(shape: str) -> list[str]:
    if shape in ("if x:", "else:"):  # the SSA commit
        return [block("a = V['a']\nif unmasked:\n    V['a'] = a\nelse:\n"
                      "    V['a'] = where(act, a, V['a'])\nreturn None")]
    line = concrete(shape)
    sink = "V['o'] = where(act, t, V['o'])\n" if line.startswith("t = ") else ""
    wave = ("H[" in line or "here" in line or "LB" in line) and "cf" not in line
    sources = []
    for is_wave in ([True] if wave else [False] if "cf" in line else [False, True]):
        second = "b = H[5]" if is_wave else "b = U['u']"
        ending = "" if line.startswith("return") else "return act" if is_wave else "return None"
        sources.append(block(f"a = V['a']\n{second}\n{line}\n{sink}{ending}", is_wave))
    return sources


def shapes() -> list[str]:
    return [line.split(" ", 1)[1] for line in SHAPES.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("shape", shapes())
def test_every_line_shape_compiles_and_agrees_with_numpy(shape):
    for source in shape_sources(shape):
        lanevm.compile(source)
        agree(source)


# --- precedence and types ---------------------------------------------------------------------
PRECEDENCE = [
    "a | b ^ c & d << e + f * g",
    "a * b + c * d",
    "a - b - c",
    "a << b >> c",
    "(a + b) * c",
    "~a & b",
    "~a * b",
    "a + b == c | d",
    "a < b + c",
    "a == b & c",
    "~(a < b) | (c == d)",
    "(a ^ C[0x80000000]) < (b ^ C[0x80000000])",
    "where(a < b, c, where(c == d, e, f))",
    "a & C[0xffff] | ((b >> 16) & C[0xffff]) << 16",
    "bits32(f32(a) + f32(b)) + bits16(f16(c) * f16(d))",
    "where(f32(a) <= f32(b), isnan(f16(c)), f16(d) < f16(e)) ^ (f32(a) == f32(b))",
    "ffma(a, b, c, 32) + ffma(d, e, f, 16)",
    "fconvert(a, 32, 16) + int_to_float(b, 16, 32, True) + float_to_int(c, 16, 8, False)",
    "ashr(a, b, 64) + ashr(c, d & C[0x1f], 32)",
]


@pytest.mark.parametrize("expression", PRECEDENCE)
def test_precedence_and_types_agree_with_numpy(expression):
    reads = "\n".join(f"{n} = V['{n}']" for n in "abcdefg")
    agree(block(f"{reads}\nt = {expression}\nV['o'] = where(act, t, V['o'])\nreturn None"))


def test_invert_is_logical_on_bools_and_bitwise_on_uint64():
    source = block("a = V['a']\nb = ~a\nc = a < b\nd = ~c\nreturn d")
    assert OPS["OP_NOT"] in ops_of(source) and OPS["OP_LNOT"] in ops_of(source)
    assert lanevm.compile(source)[3][0] == "bool"
    agree(source)


def test_a_comparison_binds_looser_than_or():
    source = block("a = V['a']\nb = V['b']\nc = V['c']\nt = a == b | c\nreturn t")
    assert ops_of(source)[:2] == [OPS["OP_OR"], OPS["OP_EQ"]]


def test_results_and_callbacks_are_typed():
    source = block("a = V['a']\nt = a < C[0x5]\ns = t & act\nif s.any(): X.undefined(s, 'r')\n"
                   "X.store(a, a, 4, act)\nl = X.load(a, 8, act)\nX.export(1, l, act)\nreturn l")
    program, externals, callbacks, result, temps = lanevm.compile(source)
    act = externals.index(("act", None))
    # The export is no call: rows O[1] and W[1] (tests/oracles/interp/lanevm_check.py).
    assert [c[0] for c in callbacks] == ["undefined", "store", "load"]
    assert ("O", 1) in externals and ("W", 1) in externals
    assert callbacks[0][2][1] == ("str", "r") and callbacks[0][2][0][0] == "bool"
    assert callbacks[1][2][2:] == (("int", 4), ("bool", act))
    assert callbacks[2][1] >= len(externals)
    assert result == ("row", callbacks[2][1])
    agree(source)


# --- storage reads, aliasing and temporaries ----------------------------------------------------
def test_a_read_is_copied_only_when_written_before_its_last_use():
    copied = block("a = H[3]\nH[3] = where(act, C[0x1], H[3])\nV['o'] = where(act, a, V['o'])\n"
                   "return act", wave=True)
    assert ops_of(copied).count(OPS["OP_MOVE"]) == 1
    agree(copied)
    aliased = block("a = H[3]\nH[3] = where(act, a + C[0x1], H[3])\nreturn act", wave=True)
    assert OPS["OP_MOVE"] not in ops_of(aliased)
    agree(aliased)


def test_commits_keep_the_values_read_before_them():
    source = block("a = V['a']\nb = V['b']\nif unmasked:\n    V['a'] = b\n    V['b'] = a\n"
                   "else:\n    V['a'] = where(act, b, V['a'])\n    V['b'] = where(act, a, V['b'])\n"
                   "return None")
    assert ops_of(source).count(OPS["OP_COMMIT"]) == 2
    agree(source)


def test_act_rewritten_under_a_local_that_read_it():
    source = block("a = act\nact = here & (H[0] == 0)\nV['o'] = where(a, C[0x7], V['o'])\n"
                   "LB[act] = 2\nreturn act", wave=True)
    agree(source)


def test_a_chain_of_locals_reuses_one_temporary():
    body = "a = V['a']\nt0 = a + C[0x1]\n" + "".join(
        f"t{k} = (t{k - 1} * C[0x3]) & C[0xffff]\n" for k in range(1, 200))
    source = block(body + "return t199")
    assert lanevm.compile(source)[4] <= 2
    agree(source)


def test_unused_pure_locals_emit_nothing_but_calls_still_run():
    source = block("a = V['a']\nt = a + a\nl = X.load(a, 4, act)\nreturn None")
    assert ops_of(source) == [OPS["OP_CALL"], OPS["OP_END"]]
    assert lanevm.compile(source)[2][0][1] == -1
    agree(source)


# --- what is outside the language ----------------------------------------------------------------
PRELUDE = "a = V['a']\nb = V['b']\np = a < b\nq = b < a\n"
REFUSED = [
    ("t = p + q", "arithmetic on two bools"),
    ("t = p - q", "arithmetic on two bools"),
    ("t = p << q", "arithmetic on two bools"),
    ("t = p & 3", "literal"),
    ("t = p == 1", "literal"),
    ("t = 3 + 4", "operation"),
    ("t = 3", "a local"),
    ("t = True", "unknown name"),
    ("t = zz + a", "unknown name"),
    ("t = np.where(p, a, b)", "unknown name np"),
    ("t = a.b", "attribute"),
    ("t = maximum(a, b)", "call of maximum"),
    ("t = a / b", "division"),
    ("t = a // b", "division"),
    ("t = a % b", "modulo"),
    ("t = a ** b", "power"),
    ("t = -a", "unary sign"),
    ("t = a if p else b", "more on the line"),
    ("t = a < b < a", "chained"),
    ("t = a > b", "comparison operator"),
    ("t = a != b", "comparison operator"),
    ("t = p and q", "more on the line"),
    ("t = not p", "unknown name"),
    ("t = cf < 3", "int64"),
    ("t = cf == C[0x3]", "int64"),
    ("t = cf + a", "operation"),
    ("t = a[0]", "subscript"),
    ("t = a.sum()", "attribute"),
    ("t = (a, b)", "')'"),
    ("t = where(p, 1, b)", "where"),
    ("t = where(p, a)", "3 arguments"),
    ("t = where(p, a, b, )", "expression expected"),
    ("t = where(p, a, c=b)", "unknown name c"),
    ("t = where(p a, b)", "',' or ')'"),
    ("t = f32(a)", "a local"),
    ("t = f32(a) + b", "operation"),
    ("t = bits32(f32(a) + f16(b))", "f16 and f32"),
    ("t = bits16(f32(a) + f32(b))", "bits16"),
    ("t = bits32(f32(a))", "bits32"),
    ("t = bits32(f32(a) - f32(b))", "operation"),
    ("t = f32(a) <= f16(b)", "f16 with f32"),
    ("t = isnan(a)", "isnan"),
    ("t = f32(p)", "uint64"),
    ("t = int_to_float(p, 32, 32, False)", "uint64"),
    ("t = int_to_float(a, 32, 64, False)", "float width"),
    ("t = float_to_int(a, 32, 65, True)", "width"),
    ("t = int_to_float(a, 32, 32, 1)", "True or False"),
    ("t = ffma(a, b, a, 64)", "ffma's width"),
    ("t = ffma(a, b, a, 24)", "16 or 32"),
    ("t = fconvert(a, 32, 64)", "widths"),
    ("t = ashr(a, 3, 32)", "uint64"),
    ("t = 0o17 + a", "number form"),
    ("t = 1.5 + a", "number form"),
    ("t = 1_000 + a", "number form"),
    ("t = 1e3 + a", "number form"),
    ("t = 0x + a", "without digits"),
    ("t = 010 + a", "leading zero"),
    ("t = 0x10000000000000000 + a", "wider than 64"),
    ("t = 18446744073709551616 + a", "wider than 64"),
    ("t = a + b  # why", "character"),
    ("t = a + b; u = a", "character"),
    ("t = a\t+ b", "character"),
    ("t = a + \\", "character"),
    ("t = V[a]", "string key"),
    ("t = V['a\\n']", "escape"),
    ("t = H[3]", "unknown name"),
    ("t = here", "unknown name"),
    ("t = X.load(a, 4, act) + a", "operation"),
    ("t = X.store(a, a, 4, act)", "a local"),
    ("t = X.load(a, b, act)", "argument 2"),
    ("t = X.fetch(a)", "method of X"),
    ("X.undefined(p)", "2 arguments"),
    ("t = X", "'.'"),
    ("V['a'] = p", "uint64"),
    ("V['a'] = 3", "uint64"),
    ("act = a", "bool"),
    ("where = a", "assignment to where"),
    ("TID = a", "assignment to TID"),
    ("lambda = a", "assignment to lambda"),
    ("t = a = b", "more on the line"),
    ("t += a", "statement"),
    ("a + b", "statement"),
    ("if p: X.undefined(p, 'r')", "an if"),
    ("if p.any(): t = a", "call of X"),
    ("if unmasked:\n    V['a'] = a", "`else:` expected"),
    ("if unmasked:\nelse:", "without its commits"),
    ("if unmasked:\n    V['a'] = a\nelse:\n    V['a'] = a", "masked form"),
    ("if unmasked:\n    V['a'] = a\nelse:\n    V['b'] = where(act, a, V['b'])", "masked form"),
    ("if unmasked:\n    V['a'] = a\nelse:\n    V['a'] = where(act, b, V['a'])", "masked form"),
    ("if unmasked:\n    V['a'] = a\nelse:\n    V['a'] = where(act, a, V['a'])\n"
     "    V['b'] = where(act, a, V['b'])", "longer"),
    ("if unmasked:\n    V['a'] = p\nelse:\n    V['a'] = where(act, p, V['a'])", "uint64"),
    ("  t = a", "indentation"),
    ("return a\nt = a", "after return"),
    ("return a, b", "more on the line"),
    ("return 3", "return"),
    ("return f32(a)", "return"),
    ("del a", "statement"),
]


@pytest.mark.parametrize(("body", "why"), REFUSED)
def test_what_is_outside_the_language_is_refused_with_its_line(body, why):
    source = block(PRELUDE + body + "\nreturn None")
    with pytest.raises(ValueError, match=re.escape(why)) as refused:
        lanevm.compile(source)
    first = PRELUDE.count("\n") + 2
    line = int(re.match(r"line (\d+): ", str(refused.value)).group(1))
    assert first <= line <= first + body.count("\n") + 1


WAVE_REFUSED = [
    ("t = cf == 1", "unknown name"),
    ("if unmasked:\n    V['a'] = a\nelse:\n    V['a'] = where(act, a, V['a'])", "unknown name"),
    ("LB[a] = 3", "bool"),
    ("LB[act] = a", "int64 literal"),
    ("LB[act] = 0x8000000000000000", "int64 literal"),
    ("t = LB < 3", "int64"),
    ("H[2] = p", "uint64"),
    ("H[0x80000000] = a", "integer key"),
]


@pytest.mark.parametrize(("body", "why"), WAVE_REFUSED)
def test_wave_forms_outside_the_language_are_refused(body, why):
    with pytest.raises(ValueError, match=re.escape(why)):
        lanevm.compile(block(PRELUDE + body + "\nreturn act", wave=True))


@pytest.mark.parametrize("source", [
    "", "\n", SSA_HEADER, SSA_HEADER + "\n", SSA_HEADER + "\n\n   \n",
    "def block(V, U, C, act, cf, unmasked, X):\n    return None",
    "\n" + SSA_HEADER + "\n    return None",
    SSA_HEADER + " \n    return None",
    SSA_HEADER + "\n    return None\x00",
    SSA_HEADER + "\n    t = V['a'] + C[0x1]\r\n    return t",
    SSA_HEADER + "\n    t = V['a'] +\x00 C[0x1]\n    return t",
    SSA_HEADER + "\n    t = " + "(" * 5000 + "V['a']" + ")" * 5000 + "\n    return t",
    SSA_HEADER + "\n    t = " + "~" * 5000 + "V['a']\n    return t",
    SSA_HEADER + "\n    t = " + "where(act, " * 300 + "V['a']" + ", C[0x1])" * 300 + "\n    return t",
    SSA_HEADER + "\n    t = V['a\x00'] + C[0x1]\n    return t",
    SSA_HEADER + "\n    t = V['a\x01'] + C[0x1]\n    return t",
    SSA_HEADER + "\n    t = V['a'] + C[0x1]\n        return t",
    SSA_HEADER + "\n    t = V['a'] + C[0x1]\n    else:",
])
def test_malformed_blocks_are_refused(source):
    with pytest.raises(ValueError):
        lanevm.compile(source)


def test_blank_lines_and_a_missing_return_are_python_too():
    program, externals, callbacks, result, temps = lanevm.compile(
        SSA_HEADER + "\n\n    a = V['a']\n    \n    X.export(0, a, act)\n")
    assert result == ("none",) and ("O", 0) in externals  # the export, as rows
    externals = lanevm.compile(SSA_HEADER + "\n    return V['é\\'\"']")[1]
    assert externals == (("V", "é'\""),)
    with pytest.raises(TypeError):
        lanevm.compile(b"def block")


def test_mutated_sources_are_refused_or_mean_what_python_means():
    """Random edits of real blocks: what the compiler accepts Python compiles too, and runs
    as numpy runs it (numpy may raise on it: then there is nothing to compare)."""
    rng = np.random.default_rng(7)
    sources = [s for group in emitted_sources() for s in group][:60]
    alphabet = list("abtx0123 ()[]=+-*&|^~<>,.'\n_") + ["C[0x1]", "act", "V['a']", "where("]
    accepted = 0
    for k in range(800):
        source = sources[k % len(sources)]
        at = int(rng.integers(len(SSA_HEADER) + 1, len(source)))
        cut = int(rng.integers(0, 4))
        source = source[:at] + str(rng.choice(alphabet)) * int(rng.integers(0, 2)) + source[at + cut:]
        try:
            lanevm.compile(source)
        except ValueError:
            continue
        compile(source, "<mutant>", "exec")  # a SyntaxError here: accepted what is not Python
        try:
            found = differences(source, seed=k)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, UnboundLocalError):
            continue  # numpy's executor cannot run it at all
        accepted += 1
        assert found == [], source
    assert accepted > 100


# --- what the emitters write ----------------------------------------------------------------------
PROGRAMS = 16


@cache
def emitted_sources() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(SSA block sources, wave unit sources), distinct, of generated programs and of what
    the default pipelines make of them at every level."""
    pipelines = default_pipelines()
    config = CampaignConfig(seed=5, pipelines=pipelines)
    ssa: dict[str, None] = {}
    wave: dict[str, None] = {}

    def record(source):
        wave[source] = None
        return original(source)

    def seen(fn):
        if fn.level == SSA:
            pieces = CompiledFunction(fn, backend="numpy").source.split("\n\ndef block")
            ssa.update(dict.fromkeys([pieces[0]] + ["def block" + p for p in pieces[1:]]))
        else:
            wave_module.CompiledWave(fn, backend="numpy")

    original = wave_module.compiled_block
    wave_module.compiled_block = record
    try:
        for index in range(PROGRAMS):
            fn, _ = build_case(5, index, config)
            seen(fn)
            for _step, _before, work in pipeline_steps(fn, pipelines):
                seen(work)
    finally:
        wave_module.compiled_block = original
    return tuple(ssa), tuple(wave)


@pytest.mark.parametrize("kind", ["ssa", "wave"])
def test_every_emitted_block_compiles_and_agrees_with_numpy(kind):
    sources = emitted_sources()[kind == "wave"]
    assert len(sources) > 150
    header = WAVE_HEADER if kind == "wave" else SSA_HEADER
    for k, source in enumerate(sources):
        assert source.startswith(header)
        for unmasked in (False, True) if kind == "ssa" else (False,):
            assert differences(source, seed=k, unmasked=unmasked) == [], source


def test_the_check_sees_a_wrong_program(monkeypatch):
    """lanevm_check's comparison is not vacuous: a program with one op changed differs."""
    source = block("a = V['a']\nb = V['b']\nt = a + b\nV['o'] = where(act, t, V['o'])\n"
                   "return None")
    assert differences(source) == []
    compile_right = lanevm.compile

    def compile_wrong(text):
        program, *rest = compile_right(text)
        ops = np.frombuffer(program, np.int64).reshape(-1, 6).copy()
        ops[ops[:, 0] == OPS["OP_ADD"], 0] = OPS["OP_SUB"]
        return (ops.tobytes(), *rest)

    monkeypatch.setattr(lanevm, "compile", compile_wrong)
    assert differences(source) != []
