"""The machine verifier's reference for reads nothing wrote: the may-be-written dataflow
with a set of places per block (a register's halves, a virtual register's pieces), as
`agxir.machine.verifier` found them before it used bit masks. `verify_machine(fn,
reference=True)` runs it; the agreement tests compare the two.
"""

from __future__ import annotations

from agxir.ir import Block, Register, VirtualRegister

__all__ = ["undefined_reads_reference"]


def places_written(verifier, block: Block) -> set[object]:
    """Every place an instruction of `block` writes (phis included)."""
    places = verifier.places
    found: set[object] = set()
    for ins in block.instructions:
        if ins.dest is not None:
            found.update(places(ins.dest))
        elif ins.opcode.name == "phi":
            continue  # (a phi's places are its dest's: none)
        else:
            for dest in ins.dests:
                found.update(places(dest))
    return found


def undefined_reads_reference(verifier) -> None:
    """A read of a place (a register's half, a virtual register's piece) that no path
    from the entry writes: a may-be-written forward dataflow over the logical CFG."""
    fn = verifier.fn
    written_out: dict[Block, set[object]] = {}
    preds: dict[Block, list[Block]] = {b: [] for b in fn.blocks}
    for block in fn.blocks:
        for succ in block.logical_successors or []:
            preds[succ].append(block)

    def report(block: Block, state: set[object]) -> None:
        """Walk `block` from `state`, reporting each read of a place nothing wrote."""
        state = set(state)
        places = verifier.places
        for ins in block.instructions:
            if ins.opcode.name == "phi":
                state.update(places(ins.dest))
        for index, ins in enumerate(block.instructions):
            if ins.opcode.name == "phi":
                continue
            for src in ins.srcs:
                ref = src.ref
                if isinstance(ref, Register):  # (its places inline: a read per source)
                    half = ref.half
                    if half == 0 and ref.size == 16 and ref.__class__ is Register:
                        continue  # r0l
                    needed = range(half, half + ref.size // 16)
                elif isinstance(ref, VirtualRegister):
                    needed = places(ref)
                else:
                    continue  # (nothing to find written)
                if not state.issuperset(needed):
                    name = getattr(ref, "name", ref)
                    verifier.error(block, index, f"reads {name}, which no path from the entry writes", ins)
            dest = ins.dest
            if dest is not None:
                if isinstance(dest, Register):
                    state.update(range(dest.half, dest.half + dest.size // 16))
                else:
                    state.update(places(dest))
            else:
                for dest in ins.dests:
                    state.update(places(dest))

    # Out of a block: what came in and whatever the block writes (a may-be-written
    # analysis: the order inside the block matters only to `report`).
    written = {block: places_written(verifier, block) for block in fn.blocks}
    changed = True
    while changed:
        changed = False
        for block in fn.blocks:
            state: set[object] = set()
            for pred in preds[block]:
                state |= written_out.get(pred, set())
            out = state | written[block]
            if written_out.get(block) != out:
                written_out[block] = out
                changed = True
    for block in fn.blocks:
        state = set()
        for pred in preds[block]:
            state |= written_out.get(pred, set())
        for ins in block.instructions:
            if ins.is_phi:
                for src, pred in zip(ins.srcs, ins.blocks, strict=False):
                    missing = [p for p in verifier.places(src.ref) if p not in written_out.get(pred, set())]
                    if missing:
                        name = getattr(src.ref, "name", src.ref)
                        verifier.error(block, None, f"phi source {name} is not written on the path from {pred.name}", ins)
        report(block, state)
