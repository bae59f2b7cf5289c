"""Every pass, alone and as the default pipeline, on a corpus of programs: the result
verifies, it refines the input under the interpreter, and "no change" means no change.

Refinement is checked on random input sets: wherever the input program returns, the
transformed one must return the same memory and outputs (where the input is undefined or
runs out of fuel, anything goes). The corpus is the golden files plus hand-written programs
covering icmp/fcmp, inv 0/1, 16/32-bit compares, branches, mov chains with narrow `.abs`
sources and uniforms; a Hypothesis strategy adds random compare/select/branch programs.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agxir.ir import Function, clone_function
from agxir.passes import DEFAULT_PIPELINE, PASSES, run_pipeline
from agxir.text import ParseError, parse_function, print_function
from agxir.verifier import verify
from oracles.inputs import InputSet, random_input_sets
from oracles.interp import CompiledFunction
from oracles.outcomes import Returned

GOLDEN = Path(__file__).parents[2] / "golden"
PIPELINES = [(name,) for name in PASSES] + [DEFAULT_PIPELINE]
FLOAT_INPUTS = [0x3F800000, 0xBF800000, 0x7FC00000, 0x00000000, 0x80000000, 0x3F000000]
HALF_INPUTS = [0x3C00, 0xBC00, 0x7E00, 0x0000, 0x8000, 0x3800]


def input_sets(fn: Function, threads: int = 4) -> list[InputSet]:
    sets = random_input_sets(fn, threads, seed=len(fn.blocks), count=4)
    # Float compares need NaN, signed zeros and ordinary values on both sides.
    scalars = [u for u in fn.uniforms if not u.is_buffer and u.size in (16, 32)]
    for k in range(len(FLOAT_INPUTS)):
        values = {}
        for j, u in enumerate(scalars):
            table = FLOAT_INPUTS if u.size == 32 else HALF_INPUTS
            values[u.name] = table[(k + j) % len(table)]
        sets.append(InputSet(threads, values, sets[0].buffers))
    return sets


def snapshot(fn: Function) -> list:
    """Everything a pass could touch, by identity where objects are involved."""
    return [
        (
            block,
            block.instructions,
            [
                (ins, ins.opcode, ins.dest, list(ins.srcs), dict(ins.attrs), list(ins.blocks))
                for ins in block.instructions
            ],
        )
        for block in fn.blocks
    ]


def same(a: list, b: list) -> bool:
    def flat(shot):
        for block, instructions, rows in shot:
            yield block
            yield instructions
            for ins, opcode, dest, srcs, attrs, targets in rows:
                yield from (ins, opcode, dest, *targets)
                yield from (src.ref for src in srcs)
                yield (tuple((s.abs, s.neg) for s in srcs), tuple(sorted(attrs.items())))

    left, right = list(flat(a)), list(flat(b))
    return len(left) == len(right) and all(
        x == y if isinstance(x, tuple) else x is y for x, y in zip(left, right, strict=True)
    )


def check_refinement(fn: Function, pipeline) -> bool:
    """Run `pipeline` on a clone of `fn` and check the result; True if anything changed."""
    before_text = print_function(fn)
    after = clone_function(fn)
    untouched = snapshot(after)
    changes = run_pipeline(after, pipeline)
    assert [str(e) for e in verify(after)] == [], print_function(after)
    changed = any(flag for _, flag in changes)
    if not changed:
        assert print_function(after) == before_text
        assert same(untouched, snapshot(after)), "a pass reporting no change touched the IR"
    assert print_function(fn) == before_text  # the clone took every change
    sets = input_sets(fn)
    expected = CompiledFunction(fn).run(sets)
    got = CompiledFunction(after).run(sets)
    for input_set, old, new in zip(sets, expected, got, strict=True):
        if isinstance(old, Returned):
            assert new == old, (
                f"{pipeline} changed behaviour on {input_set}\n"
                f"before:\n{before_text}\nafter:\n{print_function(after)}"
            )
    return changed


# --- the corpus -------------------------------------------------------------------------------


def select_program(kind: str, cmp_inv: int, cmp_size: int, src_size: int) -> str:
    cond = "ult" if kind == "icmp" else "lt"
    other = "sgt" if kind == "icmp" else "gtn"
    return f"""\
func @sel_{kind}_{cmp_inv}_{cmp_size}_{src_size}(u0:{src_size}, u1:{src_size}, u2:32, u3:16) {{
b0:
  %tid:32 = get_sr sr=thread_id
  %h:16 = get_sr sr=thread_id
  %c:{cmp_size} = {kind} u0, u1 cond={cond} inv={cmp_inv}
  %d:{cmp_size} = {kind} u1, u0 cond={other} inv={1 - cmp_inv}
  %r:32 = icmpsel %c, #0, u2, %tid cond=ueq
  %s:16 = icmpsel %d, #0, #7, u3 cond=ueq
  %t:32 = icmpsel %c, #0, #1, #2 cond=ueq
  %w:16 = icmpsel %d, #0, %h, u3 cond=ueq
  export %r slot=0
  export %s slot=1
  export %t slot=2
  export %w slot=3
  export %c slot=4
  stop
}}
"""


def branch_program(kind: str, cmp_inv: int, br_inv: int, size: int) -> str:
    cond = "slt" if kind == "icmp" else "ge"
    return f"""\
func @br_{kind}_{cmp_inv}_{br_inv}(u0:{size}, u1:{size}, u2:32) {{
entry:
  %tid:32 = get_sr sr=thread_id
  %c:16 = {kind} u0, u1 cond={cond} inv={cmp_inv}
  %m:16 = mov %c
  if_icmp %m, #0 cond=ueq inv={br_inv} -> then, else
then:
  %a:32 = iadd %tid, u2 shift=1
  jump -> join
else:
  %b:32 = xor %tid, u2
  jump -> join
join:
  %r:32 = phi [%a, then], [%b, else]
  %s:32 = icmpsel %c, #0, %r, u2 cond=ueq
  export %s slot=0
  stop
}}
"""


MOV_CHAINS = """\
func @movs(u0:16, u1:32, u2:ptr[64], u3:16) {
entry:
  %tid:32 = get_sr sr=thread_id
  %z:32 = mov u0.abs
  %z2:32 = mov %z
  %z3:64 = mov %z2.abs
  %s:32 = mov u3
  %w:32 = mov u1
  %base:64 = mov u2
  %a:32 = iadd %tid, %z2.neg shift=1
  %b:64 = iadd %z3, %z3 shift=0
  %c:32 = iadd %s, %w shift=0
  %f:32 = fadd %z, %w.abs
  %d:16 = icmp %z2, %w cond=slt inv=0
  %q:32 = amul %z, %tid.abs
  %l:32 = device_load %base, %tid fmt=i32 shift=0
  device_store %a, %base, %tid.abs fmt=i32 shift=0
  if_icmp %z, %w cond=ult inv=1 -> left, join
left:
  %e:32 = mov %c
  jump -> join
join:
  %p:32 = phi [%w, entry], [%e, left]
  export %b slot=0
  export %c slot=1
  export %f slot=2
  export %d slot=3
  export %p slot=4
  export %q slot=5
  export %l slot=6
  stop
}
"""

LOOP = """\
func @loop(u0:32, u1:32) {
entry:
  %tid:32 = get_sr sr=thread_id
  %n:32 = and u1, #7
  jump -> head
head:
  %i:32 = phi [#0, entry], [%i2, body]
  %acc:32 = phi [u0, entry], [%acc2, body]
  %dead:32 = phi [%tid, entry], [%dead2, body]
  %c:16 = icmp %i, %n cond=ult inv=0
  if_icmp %c, #0 cond=ueq inv=1 -> body, exit
body:
  %i2:32 = iadd %i, #1 shift=0
  %acc2:32 = iadd %acc, %tid shift=0
  %dead2:32 = imul %dead, %i2
  %f:16 = icmp %acc2, u0 cond=ugt inv=1
  jump -> head
exit:
  %r:32 = icmpsel %c, #0, %acc, %i cond=ueq
  export %r slot=0
  stop
}
"""

HEURISTICS = """\
func @mixed(u0:32, u1:32, u2:32, u3:32) {
b0:
  %tid:32 = get_sr sr=thread_id
  %cu:16 = icmp u0, #3 cond=ult inv=0
  %cv:16 = icmp %tid, u1 cond=ult inv=1
  %cf:32 = fcmp u2, u3 cond=le inv=1
  %s1:32 = icmpsel %cu, #0, u2, %tid cond=ueq
  %s2:32 = icmpsel %cv, #0, u2, #9 cond=ueq
  %s3:32 = icmpsel %cu, #0, #1, u3 cond=ueq
  %s4:32 = icmpsel %cf, #0, %tid, u3 cond=ueq
  %s5:32 = icmpsel %cf, #0, u0, u1 cond=ueq
  export %s1 slot=0
  export %s2 slot=1
  export %s3 slot=2
  export %s4 slot=3
  export %s5 slot=4
  stop
}
"""


def hand_written() -> dict[str, str]:
    programs = {"mov_chains": MOV_CHAINS, "loop": LOOP, "heuristics": HEURISTICS}
    for kind, inv, cmp_size, src_size in itertools.product(
        ("icmp", "fcmp"), (0, 1), (16, 32), (16, 32)
    ):
        programs[f"select_{kind}_inv{inv}_{cmp_size}_{src_size}"] = select_program(
            kind, inv, cmp_size, src_size
        )
    for kind, cmp_inv, br_inv, size in itertools.product(
        ("icmp", "fcmp"), (0, 1), (0, 1), (16, 32)
    ):
        programs[f"branch_{kind}_inv{cmp_inv}{br_inv}_{size}"] = branch_program(
            kind, cmp_inv, br_inv, size
        )
    return programs


def golden_programs() -> dict[str, str]:
    programs = {}
    for path in sorted(GOLDEN.glob("*.agx")):
        text = path.read_text()
        try:
            fn = parse_function(text, filename=path.name)
        except ParseError:
            continue
        if not verify(fn):
            programs[path.name] = text
    return programs


CORPUS = {**hand_written(), **golden_programs()}


def test_corpus_is_well_formed():
    for name, text in hand_written().items():
        assert verify(parse_function(text, filename=name)) == [], name
    assert len(golden_programs()) >= 20


@pytest.mark.parametrize("pipeline", PIPELINES, ids=",".join)
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_refinement(name, pipeline):
    check_refinement(parse_function(CORPUS[name], filename=name), pipeline)


@pytest.mark.parametrize("pipeline", PIPELINES, ids=",".join)
def test_every_pass_changes_some_hand_written_program(pipeline):
    # The address passes' and the Mesa optimizer's hand-written programs are their golden files.
    address = [
        p.read_text()
        for pattern in ("pass_address_*.agx", "mesa_opt_*.agx")
        for p in sorted(GOLDEN.glob(pattern))
    ]
    programs = [*hand_written().values(), *address]
    assert any(check_refinement(parse_function(text), pipeline) for text in programs)


def test_pipeline_reaches_a_fixed_point_on_the_corpus():
    for name, text in CORPUS.items():
        fn = parse_function(text, filename=name)
        run_pipeline(fn, DEFAULT_PIPELINE)
        run_pipeline(fn, DEFAULT_PIPELINE)
        again = print_function(fn)
        assert run_pipeline(fn, DEFAULT_PIPELINE) == [(p, False) for p in DEFAULT_PIPELINE], name
        assert print_function(fn) == again


# --- random compare/select/branch programs ---------------------------------------------------

INT_CONDS = ("ueq", "ult", "ugt", "seq", "slt", "sgt")
FLOAT_CONDS = ("eq", "lt", "gt", "ltn", "ge", "le", "gtn")
UNIFORMS = {"u0": 32, "u1": 32, "u2": 16, "u3": 16, "u4": 64}


@st.composite
def programs(draw) -> str:
    pool = {16: ["u2", "u3", "%h"], 32: ["u0", "u1", "%tid"], 64: ["u4"]}
    lines = ["%tid:32 = get_sr sr=thread_id", "%h:16 = get_sr sr=thread_id"]
    exports = []
    compares = []
    for k in range(draw(st.integers(1, 4))):
        for j in range(draw(st.integers(0, 2))):
            size = draw(st.sampled_from((16, 32, 64)))
            src_size = draw(st.sampled_from([s for s in (16, 32, 64) if s <= size]))
            src = draw(st.sampled_from(pool[src_size]))
            abs_ = ".abs" if draw(st.booleans()) else ""
            name = f"%m{k}_{j}"
            lines.append(f"{name}:{size} = mov {src}{abs_}")
            pool[size].append(name)
        kind = draw(st.sampled_from(("icmp", "fcmp")))
        if kind == "icmp":
            cond = draw(st.sampled_from(INT_CONDS))
            sizes = (16, 32, 64)
            mods = ("",)
        else:
            cond = draw(st.sampled_from(FLOAT_CONDS))
            sizes = (16, 32)
            mods = ("", ".abs", ".neg")
        a = draw(st.sampled_from([v for s in sizes for v in pool[s]])) + draw(st.sampled_from(mods))
        b = draw(st.sampled_from([v for s in sizes for v in pool[s]] + ["#1"]))
        c = f"%c{k}"
        lines.append(
            f"{c}:{draw(st.sampled_from((16, 32)))} = {kind} {a}, {b} cond={cond} "
            f"inv={draw(st.integers(0, 1))}"
        )
        compares.append(c)
        size = draw(st.sampled_from((16, 32, 64)))
        x, y = (draw(st.sampled_from(pool[size] + ["#3"])) for _ in range(2))
        tested = draw(st.sampled_from(compares))
        lines.append(f"%r{k}:{size} = icmpsel {tested}, #0, {x}, {y} cond=ueq")
        op = draw(st.sampled_from(("iadd", "add-narrow", "none")))
        if op == "iadd" and size == 64:
            user = draw(st.sampled_from(pool[64]))
            lines.append(f"%a{k}:64 = iadd %r{k}, {user} shift=0")
            exports.append(f"%a{k}")
        elif op == "add-narrow":
            user = draw(st.sampled_from(pool[16] + pool[32]))
            lines.append(f"%a{k}:64 = iadd {user}, %r{k}.neg shift=1")
            exports.append(f"%a{k}")
        exports.append(f"%r{k}")
    branch_on = draw(st.sampled_from(compares))
    inv = draw(st.integers(0, 1))
    body = "".join(f"  {line}\n" for line in lines)
    outs = "".join(f"  export {v} slot={i % 8}\n" for i, v in enumerate(exports[-8:]))
    uniforms = ", ".join(f"{n}:{s}" for n, s in UNIFORMS.items())
    return (
        f"func @random({uniforms}) {{\nentry:\n{body}"
        f"  if_icmp {branch_on}, #0 cond=ueq inv={inv} -> yes, no\n"
        f"yes:\n{outs}  stop\nno:\n  export {branch_on} slot=0\n  stop\n}}\n"
    )


@settings(max_examples=60)
@given(programs(), st.sampled_from(PIPELINES))
def test_random_programs_refine(text, pipeline):
    fn = parse_function(text)
    assert [str(e) for e in verify(fn)] == [], text
    check_refinement(fn, pipeline)
