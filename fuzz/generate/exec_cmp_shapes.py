"""Emitters for the shape `fuse-exec-cmp` (agxir/machine/fuse_exec_cmp.py) rewrites after
register allocation, and its near misses: a compare, a few instructions, the branch.

The generator works on SSA values and the block's branch picks its condition among the
recent compare results (`Emitter.compare_result`), so `e_exec_cmp` shapes the SSA for what
the allocator will make of it:

- a fresh value `a` read only by the compare (it is taken out of the pools), so it dies
  there and the allocator may hand its register to a value defined after the compare: the
  compare's source redefined between (the review's "needs a copy" case);
- 1 to 4 instructions after the compare defining values of the source's size, of half it
  (a 16-bit value landing in one half of a 32-bit source) or of twice it (a 64-bit value
  containing it), and sometimes one reading the compare's result (a read between);
- the compare offered as the newest boolean three times, so the block's branch, if the
  block ends in one, likely tests it; the compare stays in the pools, so later
  instructions, phis and exports may read it after the branch.

Plugged in by `operations.emitter_pairs` through `exec_cmp_pairs`.
"""

from __future__ import annotations

from agxir.opcodes import OPCODES
from fuzz.generate.operations import immediate

R = OPCODES


def _value_after(em, size: int):
    """A new value of `size` (an iadd of a pool value and a small immediate)."""
    return em.emit(R["iadd"], size, [em.value(size), immediate(1 + em.below(7))], {"shift": 0})


def e_exec_cmp(em):
    """a = iadd x, #k; t = icmp a, b; 1-4 values after; t offered to the branch."""
    below = em.below
    sizes = [s for s in (32, 64, 16) if s in em.sizes]
    size = sizes[below(len(sizes))] if below(3) == 0 else sizes[0]
    a = _value_after(em, size)
    em.pools[size].remove(a)  # read by the compare only: it dies there
    other = em.value(size) if below(2) else immediate(below(16))
    dest = 16 if 16 in em.sizes and below(3) == 0 else 32
    row = R["icmp"]
    srcs = [a, other] if below(4) else [other, a]
    t = em.emit(row, dest, srcs, em.attrs(row, dest))
    if below(4):
        em.pools[dest].remove(t)  # read by the branch only, if it picks t: dead after it
    for _ in range(1 + below(4)):
        if below(5) == 0:
            em.emit(R["iadd"], dest, [t, immediate(1)], {"shift": 0})  # a read between
            continue
        r = below(3)
        wanted = size if r == 0 else (size // 2 if r == 1 else size * 2)
        _value_after(em, wanted if wanted in em.sizes else size)
    em.cmps.extend([t] * 6)
    if below(3) == 0:  # a near miss: a dead compare nearer the branch than the one it tests
        em.emit(row, dest, [em.value(size), immediate(below(16))], em.attrs(row, dest))
        em.pools[dest].pop()
    return t


def exec_cmp_pairs(f) -> list:
    """(emitter, weight) pairs for `operations.emitter_pairs`."""
    return [(e_exec_cmp, 4 * f.compares * f.branch_fusion)]
