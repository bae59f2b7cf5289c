"""Register allocation for the vreg level: graph colouring, so a vreg-level pass (Intel
style, seed 002) has a route to physical registers.

Virtual registers are not SSA, so liveness is a backward dataflow over the logical CFG on
vregs. A vreg interferes with everything live just after each of its definitions (a
parallel copy's destinations also with each other); vregs are coloured greedily, widest
first, each with a naturally aligned register no neighbour has: first one a vreg it is
copied to or from (a `parallel_copy` pair, or a `mov`) already has, so the copy becomes a
move to itself that `lower-copies` drops; else the lowest. r0l is reserved under control
flow; the bound is 256 halves (or what the caller gives), and a vreg with no register
within it raises `RegisterBoundExceeded` (no spilling). Inactive lanes keep their registers, so
liveness over the logical CFG is what matters: a register shared by values live on
different sides of an if is written only by the lanes of each side.
"""

from __future__ import annotations

from agxir.ir import R0L, Block, Function, Register, VirtualRegister
from agxir.machine.regalloc import DEFAULT_BOUND, RegisterBoundExceeded, has_control_flow
from agxir.opcodes.table import BITOP_ALIASES
from agxir.passes.pass_ import Pass


def _vregs(refs) -> set[VirtualRegister]:
    return {ref for ref in refs if isinstance(ref, VirtualRegister)}


def vreg_liveness(fn: Function) -> dict[Block, set[VirtualRegister]]:
    """The vregs live out of each block."""
    uses, defs = {}, {}
    for block in fn.blocks:
        used: set[VirtualRegister] = set()
        defined: set[VirtualRegister] = set()
        for ins in block.instructions:
            used |= _vregs(src.ref for src in ins.srcs) - defined
            defined |= _vregs(ins.defs())
        uses[block], defs[block] = used, defined
    live_in = {block: set() for block in fn.blocks}
    live_out = {block: set() for block in fn.blocks}
    changed = True
    while changed:
        changed = False
        for block in reversed(fn.blocks):
            out = set().union(*(live_in[s] for s in block.successors)) if block.successors else set()
            new_in = uses[block] | (out - defs[block])
            if out != live_out[block] or new_in != live_in[block]:
                live_out[block], live_in[block] = out, new_in
                changed = True
    return live_out


def interference(fn: Function) -> dict[VirtualRegister, set[VirtualRegister]]:
    graph: dict[VirtualRegister, set[VirtualRegister]] = {}
    live_out = vreg_liveness(fn)
    for block in fn.blocks:
        live = set(live_out[block])
        for ins in reversed(block.instructions):
            written = _vregs(ins.defs())
            for vreg in written:
                graph.setdefault(vreg, set())
                for other in live | written:
                    if other != vreg:
                        graph[vreg].add(other)
                        graph.setdefault(other, set()).add(vreg)
            live -= written
            live |= _vregs(src.ref for src in ins.srcs)
        for vreg in live:
            graph.setdefault(vreg, set())
    return graph


def affinities(fn: Function) -> dict[VirtualRegister, list[VirtualRegister]]:
    """The vregs each vreg is copied to or from, in program order."""
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
                if dest.size == src.size:
                    related.setdefault(dest, []).append(src)
                    related.setdefault(src, []).append(dest)
    return related


def colour(fn: Function, bound: int = DEFAULT_BOUND) -> dict[VirtualRegister, Register]:
    graph = interference(fn)
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


def vreg_ra(fn: Function, bound: int = DEFAULT_BOUND) -> bool:
    if fn.level != "vreg":
        raise ValueError(f"vreg-ra takes a vreg-level function, not {fn.level}")
    assigned = colour(fn, bound)
    for ins in fn.instructions():
        ins.srcs = [src.with_ref(assigned[src.ref]) if isinstance(src.ref, VirtualRegister) else src
                    for src in ins.srcs]
        if isinstance(ins.dest, VirtualRegister):
            ins.dest = assigned[ins.dest]
        ins.dests = [assigned[d] if isinstance(d, VirtualRegister) else d for d in ins.dests]
    fn.level = "machine"
    fn.notes["bound"] = bound
    return True


PASS = Pass("vreg-ra", "graph-colouring allocation of virtual registers (vreg to machine)", vreg_ra)
