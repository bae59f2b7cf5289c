"""The copy-lowering checker judges a sequentialized parallel copy without running it: by
hand, on Mesa's lower-parallel-copy goldens, and against concrete execution."""

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agxir.ir import Register, clone_function
from agxir.machine.lower_copies import emit, lower_copies, sequence
from agxir.text import parse_function
from oracles.machine.copy_checker import check_copy_lowering, live_out_halves

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "machine"

SWAP = """\
func.machine @s() {
b0: -> b1
  r1l = mov_imm value=0x1
  r1h = mov_imm value=0x2
  r1l, r1h = parallel_copy r1h, r1l
b1:
  export r1l slot=0
  export r1h slot=1
  stop
}
"""


def lowered(before_text: str, body: str) -> tuple:
    before = parse_function(before_text)
    after = parse_function(before_text.replace("  r1l, r1h = parallel_copy r1h, r1l\n", body))
    return before, after


def test_an_xor_swap_is_a_swap():
    before, after = lowered(SWAP, "  r1l = xor r1l, r1h\n  r1h = xor r1l, r1h\n  r1l = xor r1l, r1h\n")
    assert check_copy_lowering(before, after) == []


def test_a_dead_half_may_serve_as_scratch_but_a_live_one_may_not():
    body = "  r2l = mov r1l\n  r1l = mov r1h\n  r1h = mov r2l\n"
    assert check_copy_lowering(*lowered(SWAP, body)) == []
    reads_r2l = SWAP.replace("  stop\n", "  export r2l slot=2\n  stop\n")
    before, after = lowered(reads_r2l, body)
    assert check_copy_lowering(before, after) == [
        "at the end of b0, r2l does not hold what the parallel copy put there"
    ]


def test_a_cycle_sequentialized_without_a_swap_is_caught_at_the_block_end():
    before = parse_function("""\
func.machine @c() {
b0: -> b1
  r0l, r0h, r1l = parallel_copy r0h, r1l, r0l
b1:
  export r0l slot=0
  export r0h slot=1
  export r1l slot=2
  stop
}
""")
    naive = parse_function("""\
func.machine @c() {
b0: -> b1
  r0l = mov r0h
  r0h = mov r1l
  r1l = mov r0l
b1:
  export r0l slot=0
  export r0h slot=1
  export r1l slot=2
  stop
}
""")
    assert check_copy_lowering(before, naive) == [
        "at the end of b0, r1l does not hold what the parallel copy put there"
    ]
    assert live_out_halves(before)[before.entry] == {0, 1, 2}


def test_an_instruction_after_the_copy_must_read_what_it_read_before():
    text = """\
func.machine @r(u0:32) {
b0:
  r1 = iadd u0, #1 shift=0
  r2 = iadd u0, #2 shift=0
  r1, r2 = parallel_copy r2, r1
  r3 = iadd r1, r2 shift=0
  export r3 slot=0
  stop
}
"""
    before = parse_function(text)
    two_moves = parse_function(text.replace(
        "  r1, r2 = parallel_copy r2, r1\n", "  r1 = mov r2\n  r2 = mov r1\n"))
    (error,) = check_copy_lowering(before, two_moves)
    assert error == ("in b0, `r3 = iadd r1, r2 shift=0` does not read what it read before the "
                     "copies were lowered")
    swap = "  r1 = xor r1, r2\n  r2 = xor r1, r2\n  r1 = xor r1, r2\n"
    right = parse_function(text.replace("  r1, r2 = parallel_copy r2, r1\n", swap))
    assert check_copy_lowering(before, right) == []
    dropped = parse_function(text.replace("  r1, r2 = parallel_copy r2, r1\n", swap).replace(
        "  export r3 slot=0\n", ""))
    assert check_copy_lowering(before, dropped) == [
        "in b0, `stop` stands where the original has `export r3 slot=0`"
    ]
    assert check_copy_lowering(before, before) == [
        "in b0, `r1, r2 = parallel_copy r2, r1` is left after lowering"
    ]


def test_a_64_bit_copy_must_move_all_four_halves():
    text = """\
func.machine @w() {
b0: -> b1
  d2 = mov_imm value=0x1000200030004
  d4 = parallel_copy d2
b1:
  export d4 slot=0
  stop
}
"""
    before = parse_function(text)
    right = parse_function(text.replace("  d4 = parallel_copy d2\n", "  r4 = mov r2\n  r5 = mov r3\n"))
    assert check_copy_lowering(before, right) == []
    low = parse_function(text.replace("  d4 = parallel_copy d2\n", "  r4 = mov r2\n"))
    assert check_copy_lowering(before, low) == [
        "at the end of b0, r5l does not hold what the parallel copy put there"
    ]


def test_immediates_must_be_the_copied_bits():
    text = """\
func.machine @i() {
b0: -> b1
  r1, r2l = parallel_copy #0x5678, #0x9
b1:
  export r1 slot=0
  export r2l slot=1
  stop
}
"""
    before = parse_function(text)
    body = "  r1, r2l = parallel_copy #0x5678, #0x9\n"
    # A 16-bit immediate into a 32-bit register is zero-extended.
    right = parse_function(text.replace(body, "  r1 = mov_imm value=0x5678\n  r2l = mov_imm value=0x9\n"))
    assert check_copy_lowering(before, right) == []
    wrong = parse_function(text.replace(body, "  r1l = mov_imm value=0x5678\n  r2l = mov_imm value=0x9\n"))
    assert check_copy_lowering(before, wrong) == [
        "at the end of b0, r1h does not hold what the parallel copy put there"
    ]


def test_the_lowering_of_every_mesa_golden_passes():
    files = sorted(GOLDEN.glob("lower_copies_*.agx"))
    assert len(files) >= 10
    for path in files:
        before = parse_function(path.read_text(), filename=path.name)
        after = clone_function(before)
        assert lower_copies(after)
        assert check_copy_lowering(before, after) == [], path.name


# --- against concrete execution ----------------------------------------------------------------

HALVES = 8  # export slots 0..7


def _concrete(fn) -> dict[int, int]:
    """Straight-line execution of block b0 over halves; half h starts as 1 << h, so an XOR
    of distinct entry values never collides with another."""
    halves = {h: 1 << h for h in range(HALVES)}

    def get(ref, piece):
        if isinstance(ref, Register):
            return halves[ref.half + piece]
        return (ref.bits >> (16 * piece)) & 0xFFFF

    for ins in fn.entry.instructions:
        if ins.name == "parallel_copy":
            moved = {}
            for dest, src in zip(ins.dests, ins.srcs, strict=True):
                for piece, half in enumerate(dest.halves):
                    moved[half] = get(src.ref, piece)
            halves.update(moved)
        elif ins.name == "mov_imm":
            for piece, half in enumerate(ins.dest.halves):
                halves[half] = (ins.attrs["value"] >> (16 * piece)) & 0xFFFF
        elif ins.name == "bitop":
            a, b = ins.srcs
            xor = ins.attrs["tt"] == 0x6
            values = [get(a.ref, p) ^ (get(b.ref, p) if xor else 0) for p in range(ins.dest.size // 16)]
            halves.update(zip(ins.dest.halves, values, strict=True))
    return halves


@st.composite
def parallel_copies(draw):
    dests = draw(st.lists(st.integers(0, HALVES - 1), min_size=1, max_size=HALVES, unique=True))
    sources = [
        draw(st.one_of(st.integers(0, HALVES - 1).map(lambda h: f"h{h}"),
                       st.sampled_from(["#0x4000", "#0x8000"])))
        for _ in dests
    ]
    names = ", ".join(Register(d, 16).name for d in dests)
    srcs = ", ".join(Register(int(s[1:]), 16).name if s.startswith("h") else s for s in sources)
    exports = "".join(f"  export {Register(h, 16).name} slot={h}\n" for h in range(HALVES))
    return f"func.machine @p() {{\nb0: -> b1\n  {names} = parallel_copy {srcs}\nb1:\n{exports}  stop\n}}\n"


LOWERINGS = {
    "right": {},
    "no cycle breaking": {"sequence": lambda copies: sequence(copies, break_cycles=False)},
    "two-move swaps": {"emit": lambda steps: emit(steps, xor_swaps=False)},
}


@settings(max_examples=60, deadline=None)
@given(parallel_copies())
def test_the_checker_accepts_a_lowering_exactly_when_it_computes_the_parallel_copy(text):
    before = parse_function(text)
    expected = _concrete(before)
    for name, options in LOWERINGS.items():
        after = clone_function(before)
        lower_copies(after, **options)
        agrees = _concrete(after) == expected
        assert (check_copy_lowering(before, after) == []) == agrees, name
        if name == "right":
            assert agrees


def test_moves_may_stand_only_where_a_parallel_copy_was():
    text = """\
func.machine @m(u0:32) {
b0: -> b1
  r1 = iadd u0, #1 shift=0
  r2 = iadd u0, #2 shift=0
  r1, r2 = parallel_copy r2, r1
b1:
  export r1 slot=0
  export r2 slot=1
  stop
}
"""
    swap = "  r1 = xor r1, r2\n  r2 = xor r1, r2\n  r1 = xor r1, r2\n"
    hoisted = parse_function(text.replace("  r1, r2 = parallel_copy r2, r1\n", "").replace(
        "  r1 = iadd u0, #1 shift=0\n", "  r1 = iadd u0, #1 shift=0\n" + swap))
    assert check_copy_lowering(parse_function(text), hoisted) == [
        "in b0, `r1 = xor r1, r2` stands where the original has `r2 = iadd u0, #2 shift=0`"
    ]


def test_identical_original_moves_after_a_copy_are_aligned_in_polynomial_time():
    # Each `r10 = mov r20` could be the original's or part of the lowering: both readings
    # are tried, remembered by position and register file.
    movs = "  r10 = mov r20\n" * 40
    text = ("func.machine @w() {\nb0: -> b1\n  r1, r2 = parallel_copy r2, r1\n" + movs
            + "b1:\n  export r1 slot=0\n  export r2 slot=1\n  export r10 slot=2\n  stop\n}\n")
    before = parse_function(text)
    two_moves = parse_function(text.replace("  r1, r2 = parallel_copy r2, r1\n",
                                            "  r1 = mov r2\n  r2 = mov r1\n"))
    assert check_copy_lowering(before, two_moves) == [
        "at the end of b0, r2l does not hold what the parallel copy put there"
    ]
    extra = parse_function(text.replace("  r1, r2 = parallel_copy r2, r1\n",
                                        "  r10 = mov r20\n  r1 = xor r1, r2\n  r2 = xor r1, r2\n"
                                        "  r1 = xor r1, r2\n"))
    # An extra `r10 = mov r20` in the lowering is harmless here (r10 is overwritten alike).
    assert check_copy_lowering(before, extra) == []


def test_a_half_rotate_is_a_swap_and_only_of_its_own_register():
    """Mesa's spelling of a swap of a register's two halves: `extr r1, r1, r1, #16`."""
    before, after = lowered(SWAP, "  r1 = extr r1, r1, #16 mask=0\n")
    assert check_copy_lowering(before, after) == []
    _, shifted = lowered(SWAP, "  r1 = extr r1, r1, #8 mask=0\n")
    assert check_copy_lowering(before, shifted) != []
    _, elsewhere = lowered(SWAP, "  r2 = extr r1, r1, #16 mask=0\n")
    assert check_copy_lowering(before, elsewhere) != []


def test_its_liveness_agrees_with_the_passes_on_generated_programs():
    """The checker's per-half liveness is its own on purpose (the module docstring); this
    keeps it equal to the one the passes share, on the programs a campaign makes, at the
    step the checker judges (after lower-phis: parallel copies, edge splits)."""
    from agxir.machine import block_liveness
    from agxir.machine.fuse_exec_cmp import accesses
    from agxir.machine.lower_cf import structurable
    from agxir.machine.pipeline import MACHINE_PASSES, MACHINE_PIPELINE
    from fuzz.campaign import CampaignConfig
    from fuzz.generate.cases import build_case

    config = CampaignConfig(seed=11, pipelines=[])
    compared = 0
    for index in range(40):
        fn, _ = build_case(11, index, config)
        if structurable(fn):
            continue
        for name in MACHINE_PIPELINE[:-1]:  # up to, not through, lower-copies
            MACHINE_PASSES[name].run(fn)
        assert live_out_halves(fn) == block_liveness.live_out(fn.blocks, accesses), index
        compared += 1
    assert compared >= 20


IDENTITY = """\
func.machine @f(u0:32) {
b0:
  r46 = mov u0
  r46 = mov r46
  r47 = mov r46
  export r47 slot=0
  stop
}
"""


def test_an_identity_move_may_be_dropped_or_kept_but_nothing_else():
    """Mesa's lower-copies drops `r46 = mov r46` (coalescing a chain of SSA movs leaves it):
    a no-op, which the checker once reported as a finding (run --mesa --with-fixes, seed
    6). A move with a modifier, or to another register, is no identity and stays checked."""
    before = parse_function(IDENTITY)
    dropped = parse_function(IDENTITY.replace("  r46 = mov r46\n", ""))
    assert check_copy_lowering(before, dropped) == []
    assert check_copy_lowering(before, clone_function(before)) == []
    negated = parse_function(IDENTITY.replace("r46 = mov r46", "r46 = mov r46.neg"))
    assert check_copy_lowering(negated, dropped) != []
    other = parse_function(IDENTITY.replace("r46 = mov r46", "r48 = mov r46"))
    assert check_copy_lowering(other, dropped) != []
