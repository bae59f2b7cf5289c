"""Emitters for the shape `fuse-exec-cmp` (agxir/machine/fuse_exec_cmp.py) rewrites after
register allocation, and its near misses: a compare, a few instructions, the branch.

Nothing is reordered on the way to machine code (lower-cf appends its exec rows at block
boundaries, RA only inserts copies, none between a compare and a block's trailing branch),
so what lies between a compare and the branch after RA is what the generator emitted after
the compare in that block. So `e_exec_cmp` acts only in blocks whose terminator can test
its compare (`BRANCH`, `GUARD`: read from the program builder by `_here`); in any other
block its pick goes to the rest of the table, as if the shape had no weight there. Its
first pick in such a block makes the compare *pending* (`Emitter.exec_pending`): the
builder's per-block hook `finish_block` emits the tail just before the terminator, and the
terminator tests it (`program._Program.tested_branch`, guard's icmpsel), so later picks
cannot push it out of the pass's window of 5. A second pick in the block is a tail in
place, offered as a recent compare (the old behaviour: the branch may or may not test it).

- The tail (`_tail`): `t = icmp a, #k` with `a` a lane-varying value in 0..15 (the thread
  id, masked) and `k` in 4..12, so `t` splits the wave; then one of: nothing (the plain
  fusion: the at-compare variant leaves the fused branch mid-block); `a`'s last use, whose
  result may take `a`'s register (RA hands out the lowest free register, and a dying
  source's is free for the destination): the source redefined (check 3); `a` dying at `t`,
  which takes one half of `a`'s register, and a 16-bit value that takes the other half, a
  32-bit one over a 16-bit `a`'s half, a 64-bit one containing a 32-bit `a` (the
  overlapping halves of check 3). The values written are far from 0..15, so a compare
  reading them decides otherwise in most lanes. Usually a dead compare follows, nearest the
  branch but writing another register (check 7's near miss; with the branch's `xor t, #1`
  or guard's icmpsel between, it is the compare the nearest-compare variant finds without
  reading the tested register). `t` is taken out of the value pools, so it is dead after
  the branch, as the pass requires.
- The loop phi (`_phi`): a data phi takes, on its edge from a finished predecessor ending
  in a jump (the preheader), a compare of a uniform inserted at the end of that
  predecessor, and is tested by the block's branch. In a top-level do-while header that
  starts an if, the builder makes a phi for this (`exec_header`, `loop_phi`: first among
  the header's phis, so RA gives it its web's register, the compare's) and the latch feeds
  it the inverse compare, never reading it; elsewhere (half the time in a `BRANCH` block
  with phis) a data phi stops being loop-carried. RA coalesces the phi with the compare, so
  after lower-cf (an empty preheader between, at the top level) the header's branch tests
  a register last written by a compare in an earlier block and rewritten by the back edge:
  the compare in another block the review warns of (check 6), which a walk across blocks
  would fuse into a branch that then decides the same on every iteration, where the phi
  alternates.

A compare more than 5 instructions before its branch in the same block is fused correctly
by the unbounded walk (the other checks still hold over the longer stretch), so only the
loop phi tells the unbounded walk apart (see docs/exec-compare-fusion.md). Plugged in by
`families.emitter_pairs` through `exec_cmp_pairs`.
"""

from __future__ import annotations

from agxir.ir import Instruction, Operand
from agxir.opcodes import OPCODES
from fuzz.generate.cfg_shapes import BRANCH, GUARD
from fuzz.generate.operations import immediate
from fuzz.generate.phi_kinds import CARRIED, DATA

R = OPCODES
COMPARE_SIZES = (16, 32)
WEIGHT = 8
ORDERED = ("ult", "ugt", "slt", "sgt")
PENDING_TAIL = "tail"  # `Emitter.exec_pending` when the tail is still to be emitted


def _far(em, size: int):
    """A new value of `size` far from the small source: a mov_imm with a high bit set, so a
    compare reading it where the source was decides otherwise in most lanes."""
    value = (1 << (size - 1 - em.below(4))) | em.below(256)
    return em.emit(R["mov_imm"], size, [], {"value": value})


def _offer(em, t: Operand, pending: bool) -> None:
    """Takes `t` out of its value pool (read by the branch only: dead after it). Pending,
    the block's branch tests it; otherwise (a second pick in the block, or outside the
    program builder) it is offered as the newest compare eight times (`recent` picks among
    the newest four first)."""
    pool = em.pools[t.ref.size]
    if t in pool:
        pool.remove(t)
    if not pending:
        em.cmps.extend([t] * 8)


def _small(em, size: int):
    """A fresh value of `size` in 0..15 that varies across lanes (the thread id, now and
    then a pool value, masked), so a compare against a small constant splits the wave."""
    if em.below(4):
        x = em.tid() if size == 32 else em.emit(R["get_sr"], 16, [], {"sr": "thread_id"})
    else:
        x = em.value(size)
    if em.f.bit_ops:
        return em.emit(R["bitop"], size, [x, immediate(15)], {"tt": 0x8})
    return em.emit(R["iadd"], size, [x, immediate(1 + em.below(7))], {"shift": 0})


def _tail(em, pending: bool = False):
    """t = icmp a, b, then one instruction that may land on a's register (or on a half of
    it, or on a 64-bit register containing it), then a dead compare (see the module doc)."""
    below = em.below
    kind = below(5)
    sizes = em.sizes
    size = 16 if kind == 3 and 16 in sizes else 32
    a = _small(em, size)
    em.pools[size].remove(a)  # read by the compare and its last use only
    other = immediate(4 + below(9))  # splits 0..15 with every condition
    dest = 16 if 16 in sizes and (kind == 2 or below(3) == 0) else 32
    row = R["icmp"]
    attrs = {"cond": ORDERED[below(len(ORDERED))] if below(6) else "ueq", "inv": below(2)}
    t = em.emit(row, dest, [a, other] if below(4) else [other, a], attrs)
    if kind == 1:  # a's last use, between: its result may take a's register
        em.emit(R["iadd"], size, [a, immediate(16 + below(200))], {"shift": 0})
    elif kind == 2 and 16 in sizes:  # a died at t (t took a half of it): the other half
        _far(em, 16)
    elif kind == 3 and 16 in sizes:  # a 16-bit a died at t: a 32-bit value over its half
        _far(em, 32)
    elif kind == 4 and 64 in sizes:  # a died at t: a 64-bit value may contain its register
        _far(em, 64)
    _offer(em, t, pending)
    if below(4):  # a near miss: a dead compare nearer the branch than the one it tests
        near = [em.value(32), immediate(below(16))]
        em.emit(row, dest, near, {"cond": ORDERED[below(len(ORDERED))], "inv": below(2)})
        em.pools[dest].pop()
    return t


def _here(em):
    """The block index being filled, when `em` is the program builder; else None."""
    blocks = getattr(em, "blocks", None)
    if blocks is None:
        return None
    for index, block in enumerate(blocks):
        if block.instructions is em.ins:
            return index
    return None


def _data_phis(em, b: int) -> list[int]:
    """Indices in the builder's phi list of this block of the data phis (not a loop or
    region counter: those bound the loops) of a compare's size, not read yet."""
    entries = getattr(em, "phis", None)
    if entries is None:
        return []
    read = {src.ref for ins in em.ins for src in ins.srcs}
    return [
        i
        for i, (phi, kind) in enumerate(entries[b])
        if kind in (DATA, CARRIED) and phi.dest.size in COMPARE_SIZES and phi.dest not in read
    ]


def loop_phi(em, b: int, phi: Instruction) -> None:
    """At the start of a top-level do-while header that starts an if (the builder's
    `exec_header`): `phi`, made for this, becomes the pending compare."""
    i = next(i for i, (entry, _) in enumerate(em.phis[b]) if entry is phi)
    em.exec_pending = _phi(em, b, i)


def _phi(em, b: int, i: int | None = None):
    """A data phi fed by a compare at the end of its finished, jumping predecessor; in a
    loop header, the latch feeds it the inverse compare (`program._Program.loop_step`)."""
    below = em.below
    if i is None:
        candidates = _data_phis(em, b)
        if not candidates:
            return None
        i = candidates[below(len(candidates))]
    phi = em.phis[b][i][0]
    edges = [k for k, pred in enumerate(phi.blocks)
             if pred.instructions and pred.instructions[-1].name == "jump"]  # fmt: skip
    if not edges:
        return None
    k = edges[below(len(edges))]
    # A uniform source, which nothing redefines: the fused branch would read the same value
    # on every iteration, where the phi carries the latch's value from the second on.
    scalars = em.scalars[32]
    x = scalars[below(len(scalars))] if scalars else immediate(below(16))
    y = immediate(1 + below(15))
    value, _ = em.new_value(phi.dest.size)
    attrs = {"cond": ORDERED[below(len(ORDERED))], "inv": below(2)}
    pred = phi.blocks[k]
    pred.instructions.insert(-1, Instruction(R["icmp"], value, [x, y], attrs, [], False))
    phi.srcs[k] = Operand(value)
    state = em.loop_at.get(b)
    if state is not None and state.loop.header == b and state.loop.pre == em.preds[b][k]:
        # Loop-carried, but never read by the latch (that would keep it live past the
        # branch): the latch computes the inverse compare, so the phi alternates with each
        # iteration where a compare fused from the preheader would not.
        em.exec_phis[id(phi)] = ([x, y], attrs)
        em.phis[b][i] = (phi, CARRIED)
    else:
        em.phis[b][i] = (phi, DATA)  # not carried: the latch would read it, keeping it live
    op = Operand(phi.dest)
    _offer(em, op, True)
    return op


def e_exec_cmp(em):
    """In a block ending in a two-way branch, the first pick makes the branch's compare
    pending: the loop phi (half the time, in a block with phis), tested by the branch from
    here, or the tail, emitted by `finish_block` just before the branch. A second pick in
    the block is a tail in place (offered as a recent compare). In any other block the
    pick goes to the rest of the table."""
    b = _here(em)
    if b is None:
        return _tail(em)
    role = em.shape.roles[b]
    if role not in (BRANCH, GUARD):
        for _ in range(4):
            emitter = em.source.pick(em.table)
            if emitter is not e_exec_cmp:
                return emitter(em)
        return em.e_compare()
    if em.exec_pending is not None:
        return _tail(em)
    if role == BRANCH and em.below(2):
        op = _phi(em, b)
        if op is not None:
            em.exec_pending = op
            return op
    em.exec_pending = PENDING_TAIL
    return None


def finish_block(em) -> Operand | None:
    """The program builder's per-block hook, just before the terminator: the compare the
    branch is to test (the pending tail emitted here, so nothing but the tail lies between
    it and the branch), or None."""
    pending, em.exec_pending = em.exec_pending, None
    if pending is PENDING_TAIL:
        return _tail(em, pending=True)
    return pending


def exec_cmp_pairs(f) -> list:
    """(emitter, weight) pairs for `families.emitter_pairs`."""
    return [(e_exec_cmp, WEIGHT * f.compares * f.branch_fusion)]
