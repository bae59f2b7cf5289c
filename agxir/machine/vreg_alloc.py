"""Register allocation for the vreg level: graph colouring, so a vreg-level pass (Intel
style, seed 002) has a route to physical registers.

Virtual registers are not SSA, so liveness is a backward dataflow over the logical CFG on
vregs. A vreg is its index: `v7:16` beside `v7:32` is the low half of v7 (a narrow access,
what `reuse-conversion` makes), and v7 is allocated at its widest size, its narrow accesses
taking the low halves of that register. A narrow write leaves the rest of the register
alive, so it does not end the vreg's liveness (only a write at the widest size does). A
vreg interferes with everything live just after each of its definitions (a parallel copy's
destinations also with each other); vregs are coloured greedily, widest first, each with a
naturally aligned register no neighbour has: first one a vreg it is copied to or from (a
`parallel_copy` pair, or a `mov`) already has, so the copy becomes a move to itself that
`lower-copies` drops; else the lowest. r0l is reserved under control flow; the bound is
256 halves (or what the caller gives), and a vreg with no register within it raises
`RegisterBoundExceeded` (no spilling). Inactive lanes keep their registers, so liveness
over the logical CFG is what matters: a register shared by values live on different sides
of an if is written only by the lanes of each side.
"""

from __future__ import annotations

from agxir.ir import R0L, VREG, Block, Function, Register, VirtualRegister
from agxir.machine.block_liveness import live_out
from agxir.machine.regalloc import DEFAULT_BOUND, RegisterBoundExceeded, has_control_flow
from agxir.opcodes.table import BITOP_ALIASES
from agxir.passes.pass_ import Pass


def vreg_widths(fn: Function) -> dict[int, int]:
    """The widest size each vreg index is accessed at: the size it is allocated at."""
    widths: dict[int, int] = {}
    for ins in fn.instructions():
        for ref in [src.ref for src in ins.srcs] + ins.defs():
            if isinstance(ref, VirtualRegister):
                widths[ref.index] = max(widths.get(ref.index, 0), ref.size)
    return widths


def read_indices(ins) -> set[int]:
    """The vreg indices an instruction reads."""
    return {src.ref.index for src in ins.srcs if isinstance(src.ref, VirtualRegister)}


def written_indices(ins) -> set[int]:
    """The vreg indices an instruction writes, at any width."""
    return {d.index for d in ins.defs() if isinstance(d, VirtualRegister)}


def killed_indices(ins, widths: dict[int, int]) -> set[int]:
    """The vreg indices an instruction overwrites whole (a narrow write kills nothing)."""
    return {d.index for d in ins.defs() if isinstance(d, VirtualRegister) and d.size == widths[d.index]}


def live_out_indices(
    fn: Function, widths: dict[int, int] | None = None, kills=killed_indices
) -> dict[Block, set[int]]:
    """The vreg indices live out of each block, over the logical CFG to a fixpoint."""
    widths = vreg_widths(fn) if widths is None else widths
    return live_out(fn.blocks, lambda ins: (read_indices(ins), kills(ins, widths)))


def vreg_liveness(fn: Function) -> dict[Block, set[VirtualRegister]]:
    """The vregs live out of each block, each at its widest size."""
    widths = vreg_widths(fn)
    return {
        block: {VirtualRegister(i, widths[i]) for i in live}
        for block, live in live_out_indices(fn, widths).items()
    }


def interference(fn: Function, kills=killed_indices) -> dict[VirtualRegister, set[VirtualRegister]]:
    """Which vregs (each at its widest size) may not share a register. `kills` says which
    indices an instruction ends (a zoo variant passes a wrong one)."""
    widths = vreg_widths(fn)
    graph: dict[int, set[int]] = {}
    live_out = live_out_indices(fn, widths, kills)
    for block in fn.blocks:
        live = set(live_out[block])
        for ins in reversed(block.instructions):
            written = written_indices(ins)
            for index in written:
                graph.setdefault(index, set())
                for other in live | written:
                    if other != index:
                        graph[index].add(other)
                        graph.setdefault(other, set()).add(index)
            live -= kills(ins, widths)
            live |= read_indices(ins)
        for index in live:
            graph.setdefault(index, set())
    return {
        VirtualRegister(i, widths[i]): {VirtualRegister(o, widths[o]) for o in others}
        for i, others in graph.items()
    }


def affinities(fn: Function) -> dict[VirtualRegister, list[VirtualRegister]]:
    """The vregs (at their widest sizes) each vreg is copied to or from, in program order:
    whole-register copies only."""
    widths = vreg_widths(fn)
    related: dict[VirtualRegister, list[VirtualRegister]] = {}
    for ins in fn.instructions():
        if ins.name == "parallel_copy":
            pairs = [(d, s.ref) for d, s in zip(ins.dests, ins.srcs, strict=True)]
        elif ins.name == "bitop" and ins.attrs.get("tt") == BITOP_ALIASES["mov"] and ins.srcs:
            pairs = [(ins.dest, ins.srcs[0].ref)]
        else:
            continue
        for dest, src in pairs:
            if isinstance(dest, VirtualRegister) and isinstance(src, VirtualRegister):
                if dest.size == src.size == widths[dest.index] == widths[src.index]:
                    related.setdefault(dest, []).append(src)
                    related.setdefault(src, []).append(dest)
    return related


def colour(fn: Function, bound: int = DEFAULT_BOUND, kills=killed_indices) -> dict[VirtualRegister, Register]:
    """A register for each vreg (keyed at its widest size)."""
    graph = interference(fn, kills)
    related = affinities(fn)
    reserved = {R0L.half} if has_control_flow(fn) else set()
    assigned: dict[VirtualRegister, Register] = {}
    for vreg in sorted(graph, key=lambda v: (-v.size, v.index)):
        busy = set(reserved)
        for other in graph[vreg]:
            if other in assigned:
                busy.update(assigned[other].halves)
        width = vreg.size // 16
        hinted = [assigned[o].half for o in related.get(vreg, ()) if o in assigned]
        for start in [*hinted, *range(0, bound - width + 1, width)]:
            if start + width <= bound and not busy & set(range(start, start + width)):
                assigned[vreg] = Register(start, vreg.size)
                break
        else:
            raise RegisterBoundExceeded(f"no register for v{vreg.index} within {bound} halves")
    return assigned


def vreg_ra(fn: Function, bound: int = DEFAULT_BOUND, kills=killed_indices) -> bool:
    if fn.level != VREG:
        raise ValueError(f"vreg-ra takes a vreg-level function, not {fn.level}")
    start = {vreg.index: register.half for vreg, register in colour(fn, bound, kills).items()}

    def place(ref):  # a narrow access is the low halves of the vreg's register
        return Register(start[ref.index], ref.size) if isinstance(ref, VirtualRegister) else ref

    for ins in fn.instructions():
        ins.srcs = [src.with_ref(place(src.ref)) for src in ins.srcs]
        ins.dest = place(ins.dest)
        ins.dests = [place(d) for d in ins.dests]
    fn.level = "machine"
    fn.notes["bound"] = bound
    return True


PASS = Pass("vreg-ra", "graph-colouring allocation of virtual registers (vreg to machine)", vreg_ra)
