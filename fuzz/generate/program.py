"""The program builder: a random, verified, terminating SSA function from a choice stream.

`generate_program(source, features, size=50)` declares uniforms (a few scalars, read-only
input buffers and one output buffer), draws a CFG shape (`cfg_shapes`), computes dominators
once on the integer graph, then walks the dominator tree in preorder, so that the scoped
value pools of `operations.Emitter` hold exactly the values that dominate the current point.
Phis are created up front (joins, loop headers); a phi source is chosen when its predecessor
is finished, from what is available at the end of that predecessor.

Control flow gets its meaning here: a loop's preheader computes a small bound (an immediate
1..6, `uniform & 7` or `(thread_id & 3) + 1`) and a start (`#0`, a uniform, `uniform & 3`);
the header's counter phi is incremented by the latch and compared (`ult`) against the bound,
so every loop runs at most 9 times. Most loop-carried values are computed in the latch
from their phi, half of the 16- and 32-bit ones as a float accumulator of ordinary floats
(`fadd`/`ffma`), saturated beside (Mesa FsatWithPhi) with the phi kept
(`observe.keep`). An unstructured region threads a counter through phis;
each back edge is taken only while that counter is below a bound of 1..4, so its cycles end
too. Two-way branches compare generated values, often in the fusable form
`if_icmp t, #0 cond=ueq` on an icmp/fcmp result. A block's picks may leave a compare
pending (`exec_cmp_shapes`): a per-block hook emits it just before the terminator, which
tests it, and each side reached only from that branch starts with an export to a slot of
its own (no other export writes it), so which lanes went where stays observable. The stop
block exports and stores a few of the values computed last, so that what the program
computes is observable.

In half the programs of size 40 or more with the `pressure` group on, `pressure_shapes`
adds what stresses the machine passes, in place of most random picks outside the blocks
that end in a two-way branch (`PRESSURE_SHARE`), over half as many blocks
(`PRESSURE_BLOCKS`: the shapes are long, and the program stays about as large as the
others): seven times in eight a CFG of loops (some breaking out from an if) and ifs
without an else (critical edges), groups of loop phis whose back-edge sources rotate the
group (cycles and swaps of registers; immediates and uniforms entering them), groups of
wide phis at joins, values held live across each loop (read at its exit; across the
whole function when it has no loop) and fragmented values in latches (and at the ends of
if sides when there is no loop), which a tight register bound makes the allocator evict
and fix up.

The builder is an `addresses.AddressEmitter`: with the `address` group on, some picks are
array accesses through computed addresses (most of them with `address_heavy`, which also
declares arrays sized for their indices); loop counters that start at #0 or `u & 3` serve
as element indices in the loop body.
"""

from __future__ import annotations

from agxir.ir import Block, Function, Instruction, Operand, Uniform
from agxir.opcodes import OPCODES
from fuzz.generate import pressure_shapes as pressure
from fuzz.generate.addresses import AddressEmitter, program_table
from fuzz.generate.cfg_shapes import BRANCH, GUARD, JUMP, LATCH, STOP, TEST, dominators
from fuzz.generate.cfg_shapes import generate_cfg as _generate_cfg
from fuzz.generate.choices import ChoiceSource
from fuzz.generate.exec_cmp_shapes import finish_block, loop_phi
from fuzz.generate.features import Features
from fuzz.generate.loops import LoopEmitter, LoopState
from fuzz.generate.observe import keep
from fuzz.generate.operations import IMM0, OUTPUT_BYTES, immediate, plans
from fuzz.generate.optimizer_shapes import offer_wide_phi_source
from fuzz.generate.phi_kinds import CARRIED, COUNTER, DATA, ENTRY, GUARD_COUNTER, ROTATED

__all__ = ["generate_program", "INPUT_BUFFER_SIZES"]

INPUT_BUFFER_SIZES = (1024, 4096, 256)
FRAME_BYTES = 24  # choice bytes per random instruction from a byte source (see frame())
HEAVY_FRAME_BYTES = 40  # the same for address-heavy programs (array accesses decide more)
UNIFORM_BYTES = 20
PRESSURE_SHARE = 0.1  # of the random picks a pressure program keeps outside branch blocks
PRESSURE_BLOCKS = 4  # eighths of the blocks a pressure program may have (its shapes are long)
PRESSURE_MIN_SIZE = 40  # smaller programs have no room for the pressure shapes
R = OPCODES
_PHI, _JUMP, _STOP = R["phi"], R["jump"], R["stop"]


def generate_program(
    source: ChoiceSource,
    features: Features | None = None,
    *,
    size: int = 50,
    name: str = "fuzz",
    address_heavy: bool = False,
) -> Function:
    """A function of about `size` instructions that verifies and terminates for every input
    of at most 64 threads (see the module docstring). `address_heavy` (or features with it
    set) makes most memory accesses array accesses through computed addresses."""
    features = features or Features.all_on()
    if address_heavy and not features.address_heavy:
        features = features.with_address_heavy()
    return _Program(source, features, max(0, size), name).build()


class _Program(LoopEmitter, AddressEmitter):
    def __init__(self, source: ChoiceSource, features: Features, size: int, name: str):
        super().__init__(source, features)
        self.size = size
        self.name = name
        self.table = program_table(features)
        self.frame_bytes = HEAVY_FRAME_BYTES if features.address_heavy else FRAME_BYTES

    # --- setup -----------------------------------------------------------------------------------
    def declare_uniforms(self) -> list[Uniform]:
        source = self.source.frame(UNIFORM_BYTES)
        below, f = source.below, self.f
        uniforms: list[Uniform] = []
        if f.uniforms:
            for _ in range(below(5)):
                size = self.any_sizes[below(len(self.any_sizes))]
                uniform = Uniform(f"u{len(uniforms)}", size)
                uniforms.append(uniform)
                self.scalars[size].append(Operand(uniform))
        if f.loads:
            for _ in range((0, 1, 1, 2, 2, 2)[below(6)]):
                nbytes = INPUT_BUFFER_SIZES[below(len(INPUT_BUFFER_SIZES))]
                uniform = Uniform(f"u{len(uniforms)}", 64, buffer_bytes=nbytes)
                uniforms.append(uniform)
                self.inputs.append(uniform)
        if f.stores and below(4):
            self.output = Uniform(f"u{len(uniforms)}", 64, buffer_bytes=OUTPUT_BYTES)
            uniforms.append(self.output)
        self.declare_arrays(uniforms)
        return uniforms

    def build(self) -> Function:
        below, f = self.below, self.f
        uniforms = self.declare_uniforms()
        max_blocks = max(1, min(40, self.size // 4))
        # Half the programs of the `pressure` group are pressure programs (the rest keep the
        # whole size for the other shapes), if they are large enough to hold the pressure
        # shapes beside the others; seven in eight of those draw a CFG of loops and ifs.
        self.pressure = f.pressure and below(2) == 1 and self.size >= PRESSURE_MIN_SIZE
        cfg = pressure.pressure_cfg if self.pressure and below(8) else _generate_cfg
        blocks = max(1, max_blocks * PRESSURE_BLOCKS // 8) if self.pressure else max_blocks
        shape = self.shape = cfg(
            self.source.frame(8 * max_blocks + 8), f, max_blocks=blocks,
            max_loop_depth=2 if self.size <= 120 else 1,
        )  # fmt: skip
        n = len(shape)
        self.succs = shape.succs
        self.preds = shape.preds()
        order, idom = dominators(shape.succs)
        children: list[list[int]] = [[] for _ in range(n)]
        for b in order[1:]:
            children[idom[b]].append(b)
        self.on_every_path = set()  # the blocks that dominate the stop block
        b = shape.roles.index(STOP)
        while b >= 0:
            self.on_every_path.add(b)
            b = idom[b]
        self.blocks = [Block(f"b{i}", []) for i in range(n)]
        self.pre_of = {loop.pre: LoopState(loop) for loop in shape.loops}
        self.loop_at = {}  # header and latch -> state
        for state in self.pre_of.values():
            self.loop_at[state.loop.header] = state
            self.loop_at[state.loop.latch] = state
        self.region_bound = {id(r): immediate(1 + below(4)) for r in shape.regions if r.back_edges}
        self.c_in: dict[int, Operand] = {}
        self.c_out: dict[int, Operand] = {}
        self.phi_next: dict[int, Operand] = {}
        # exec_cmp_shapes: the compare a branch block's terminator is to test (set by a pick,
        # emitted or returned by `finish_block`); loop phis fed by a preheader compare ->
        # (sources, attrs) of the latch's inverse compare; side block -> (slot, value) of the
        # export that makes taking it observable; slots those exports use.
        self.exec_pending = None
        self.exec_phis: dict[int, tuple[list[Operand], dict]] = {}
        self.markers: dict[int, tuple[int, Operand]] = {}
        self.exec_headers: dict[int, Instruction] = {}  # loop header -> its phi for the shape
        # pressure_shapes: id(phi) -> the phi whose value it takes on the back edge, and,
        # per loop header, its rotating groups; per loop exit, the values held across it.
        self.rotates: dict[int, Instruction] = {}
        self.rotations: dict[int, list[list[Instruction]]] = {}
        self.held: dict[int, list[Operand]] = {}
        # optimizer_shapes.offer_wide_phi_source: ids of the wide 64-bit constants it offered
        # to phis (a phi reading one is kept); the block being filled.
        self.wide_offers: set[int] = set()
        self.at = 0
        self.create_phis()
        # Each block keeps adding instructions while a "continue" choice says so (0 stops),
        # so deleting one instruction's choices removes just that instruction: good for
        # shrinking. About size / 2 random picks over the program; each emits ~1.4
        # instructions, and terminators, phis and loop counters make up the rest.
        # Address-heavy picks emit more instructions (about 3 on average).
        mean = self.size / ((3 if f.address_heavy else 2) * n)
        # pressure_shapes' values take a share of the size, but not in blocks ending in a
        # two-way branch, where the compare shapes (exec_cmp_shapes) need their picks.
        self.p_branching = mean / (mean + 1)
        if self.pressure:
            mean *= PRESSURE_SHARE
        self.p_continue = mean / (mean + 1)
        self.max_per_block = 2 * self.size
        self.walk(children)
        self.keep_marker_slots()
        return Function(self.name, uniforms, self.blocks)

    def keep_marker_slots(self) -> None:
        """Moves every other export off the marked slots (`tested_branch`'s side exports and
        those of `observe.keep`), so that no later export (in a loop latch, the epilogue)
        overwrites what they show. Only slot numbers change, so the choice stream means the
        same."""
        marked = self.marked_slots
        free = [slot for slot in range(8) if slot not in marked]
        if not marked or not free:
            return
        markers = self.marker_ins
        for block in self.blocks:
            for ins in block.instructions:
                slot = ins.attrs.get("slot")
                if ins.name == "export" and slot in marked and id(ins) not in markers:
                    ins.attrs = {**ins.attrs, "slot": free[slot % len(free)]}

    def create_phis(self) -> None:
        below, f, shape = self.below, self.f, self.shape
        self.phis: list[list[tuple[Instruction, int]]] = [[] for _ in range(len(shape))]
        for b, preds in enumerate(self.preds):
            if len(preds) < 2:
                continue
            incoming = [self.blocks[p] for p in preds]
            state = self.loop_at.get(b)
            header = state is not None and state.loop.header == b
            if header:
                state.size = 16 if 16 in self.sizes and below(4) == 3 else 32
                state.phi = self.new_phi(state.size, incoming)
                self.phis[b].append((state.phi, COUNTER))
                if self.exec_header(state):
                    # First, so RA places it first: in the register of its preheader compare
                    # (its web's), which a phi placed before it would take.
                    phi = self.exec_headers[b] = self.new_phi(32, incoming)
                    self.phis[b].insert(0, (phi, CARRIED))
            region = shape.region_of[b]
            if region is not None and region.back_edges and b != region.blocks[0]:
                self.phis[b].append((self.new_phi(32, incoming), GUARD_COUNTER))
            if self.pressure:
                self.pressure_phis(b, incoming, header)
            if f.phis:
                kind = CARRIED if header else DATA
                for _ in range(below(3) + (header and below(2))):
                    size = self.any_size()
                    self.phis[b].append((self.new_phi(size, incoming), kind))

    def pressure_phis(self, b: int, incoming: list[Block], header: bool) -> None:
        """pressure_shapes' phis: rotating groups at a loop header, else join phis."""
        if header:
            groups = self.rotations[b] = pressure.header_phis(self, incoming)
            for group in groups:
                self.rotates.update(pressure.rotation(group))
                self.phis[b] += [(phi, ROTATED) for phi in group]
        else:
            self.phis[b] += [(phi, ENTRY) for phi in pressure.join_phis(self, incoming)]

    def new_phi(self, size: int, incoming: list[Block]) -> Instruction:
        value, _ = self.new_value(size)
        return Instruction(_PHI, value, [IMM0] * len(incoming), {}, list(incoming), False)

    # --- the walk --------------------------------------------------------------------------------
    def walk(self, children: list[list[int]]) -> None:
        pools = self.pools
        p16, p32, p64 = pools[16], pools[32], pools[64]
        small, addrs, cmps, tids = self.small, self.addrs, self.cmps, self.tids
        counters = self.counters
        stack: list = [(0, None)]
        while stack:
            b, saved = stack.pop()
            if saved is not None:
                l16, l32, l64, ls, la, lc, lt, lk = saved
                del p16[l16:], p32[l32:], p64[l64:], small[ls:], addrs[la:], cmps[lc:], tids[lt:]
                del counters[lk:]
                continue
            saved = (len(p16), len(p32), len(p64), len(small), len(addrs), len(cmps), len(tids),
                     len(counters))  # fmt: skip
            stack.append((b, saved))
            self.block(b)
            for child in reversed(children[b]):
                stack.append((child, None))

    def block(self, b: int) -> None:
        self.at = b
        self.ins = self.blocks[b].instructions
        self.phi_offer = None  # a value this block's picks leave to the phis at its end
        pools = self.pools
        region = self.shape.region_of[b]
        counted = region is not None and bool(region.back_edges)
        for phi, kind in self.phis[b]:
            self.ins.append(phi)
            op = Operand(phi.dest)
            pools[phi.dest.size].append(op)
            if kind == GUARD_COUNTER:
                self.c_in[b] = op
            elif kind == COUNTER:
                self.note_counter(self.loop_at[b], op)
        if counted and b not in self.c_in:
            self.c_in[b] = IMM0 if b == region.blocks[0] else self.c_out[self.preds[b][0]]
        for phi, kind in self.phis[b]:
            if kind == ENTRY:
                pressure.observe(self, Operand(phi.dest))
            elif kind in (DATA, CARRIED) and any(id(src.ref) in self.wide_offers for src in phi.srcs):
                keep(self, Operand(phi.dest))  # optimizer_shapes.offer_wide_phi_source's phi
        held = self.held.pop(b, None)
        if held:
            pressure.release(self, held)
        phi = self.exec_headers.get(b)
        if phi is not None:
            loop_phi(self, b, phi)
        marker = self.markers.pop(b, None)
        if marker is not None:
            slot, value = marker
            self.emit(R["export"], 0, [value], {"slot": slot})
            self.marker_ins.add(id(self.ins[-1]))
        if b == 0 and (self.f.loads or self.f.stores) and self.below(4):
            self.tid()
        source = self.source
        table, pick, more, p = self.table, source.pick, source.boolean, self.p_continue
        if self.shape.roles[b] in (BRANCH, GUARD):
            p = self.p_branching
        for _ in range(self.max_per_block):
            if not more(p):
                break
            frame = source.frame(self.frame_bytes)
            if frame is source:
                pick(table)(self)
            elif frame.boolean(0.99):  # a zeroed frame is an instruction left out
                self.source, self.below = frame, frame.below
                frame.pick(table)(self)
                self.source, self.below = source, source.below
        state = self.pre_of.get(b)
        if state is not None:
            if self.pressure:
                self.held.setdefault(state.loop.exit, []).extend(pressure.hold(self))
            self.loop_setup(state)
        elif b == 0 and self.pressure and not self.shape.loops:
            # No loop to hold values across: across the whole function, so an eviction in
            # one side of an if moves a value the join expects elsewhere.
            stop = self.shape.roles.index(STOP)
            if stop != 0:
                self.held.setdefault(stop, []).extend(pressure.hold(self))
        state = self.loop_at.get(b)
        latch = state is not None and state.loop.latch == b
        if self.pressure and (latch or (not self.shape.loops and self.joins_next(b)
                                        and self.below(2))):
            pressure.fragment(self)
        if latch:
            self.loop_step(state, b)
        role = self.shape.roles[b]
        if role == STOP:
            self.epilogue()
        if counted:
            self.c_out[b] = self.c_in[b]
        offer_wide_phi_source(self)
        self.tested = finish_block(self) if self.exec_pending is not None else None
        self.terminator(b, role)
        self.fill_phis(b)

    def phi_waiting(self, size: int) -> bool:
        """Whether a data or carried phi of `size` in a successor of the current block takes
        its source from here (not a carried phi's back edge, which its latch computes)."""
        b = self.at
        for s in self.succs[b]:
            state = self.loop_at.get(s)
            back_edge = state is not None and state.loop.latch == b
            for phi, kind in self.phis[s]:
                if phi.dest.size == size and (kind == DATA or (kind == CARRIED and not back_edge)):
                    return True
        return False

    def joins_next(self, b: int) -> bool:
        """Whether `b` jumps to a join (a block with other predecessors): the end of an if
        side, where a value an eviction moved must be moved back."""
        succs = self.succs[b]
        return len(succs) == 1 and len(self.preds[succs[0]]) > 1

    def fill_phis(self, b: int) -> None:
        for s in self.succs[b]:
            entries = self.phis[s]
            if not entries:
                continue
            k = self.preds[s].index(b)
            for phi, kind in entries:
                if kind == COUNTER:
                    state = self.loop_at[s]
                    phi.srcs[k] = state.start if b == state.loop.pre else state.next
                elif kind == GUARD_COUNTER:
                    phi.srcs[k] = self.c_out[b]
                elif kind == ROTATED and self.loop_at[s].loop.latch == b:
                    partner = self.phi_next.get(id(phi))
                    phi.srcs[k] = partner or Operand(self.rotates[id(phi)].dest)
                elif kind in (ROTATED, ENTRY):
                    phi.srcs[k] = pressure.entry_source(self, phi.dest.size)
                else:
                    carried = self.phi_next.get(id(phi)) if kind == CARRIED else None
                    offered = self.phi_offer
                    if carried is None and offered is not None and offered.ref.size == phi.dest.size:
                        carried, self.phi_offer = offered, None  # conversion_shapes' kind 3
                    phi.srcs[k] = carried or self.phi_source(phi.dest.size)

    def phi_source(self, size: int) -> Operand:
        r = self.below(10)
        if r == 0 or (r == 1 and not self.scalars[size]):
            return immediate(self.below(4))
        if r == 1:
            scalars = self.scalars[size]
            return scalars[self.below(len(scalars))]
        pool = self.pools[size]
        return self.recent(pool) if pool else immediate(self.below(4))

    # --- terminators -----------------------------------------------------------------------------
    def branch(self, name: str, srcs: list, attrs: dict, targets: list[Block]) -> None:
        self.ins.append(Instruction(R[name], None, srcs, attrs, targets, False))

    def terminator(self, b: int, role: str) -> None:
        targets = self.succs[b]
        blocks = [self.blocks[t] for t in targets]
        if role == JUMP:
            self.ins.append(Instruction(_JUMP, None, [], {}, blocks, False))
        elif role == STOP:
            self.ins.append(Instruction(_STOP, None, [], {}, [], False))
        elif role == BRANCH:
            if self.tested is not None:
                self.tested_branch(b, self.tested)
            else:
                self.random_branch(blocks)
        elif role == LATCH:
            state = self.loop_at[b]
            self.loop_test(state.next, state.bound, targets[0] == state.loop.header, blocks)
        elif role == TEST:
            state = self.loop_at[b]
            counter = Operand(state.phi.dest)
            self.loop_test(counter, state.bound, targets[0] != state.loop.exit, blocks)
        elif role == GUARD:
            self.guard(b, targets)
        else:
            raise AssertionError(f"unknown role {role}")

    def random_branch(self, blocks: list[Block]) -> None:
        below, f = self.below, self.f
        r = below(6)
        if f.branch_fusion and r >= 3:
            if r == 5 and self.cmps:
                # The if_not shape: if_icmp (xor t, #1), #0 with t a boolean.
                t = self.emit(R["bitop"], 32, [self.recent(self.cmps), immediate(1)], {"tt": 0x6})
            else:
                t = self.compare_result()
            self.branch("if_icmp", [t, IMM0], {"cond": "ueq", "inv": below(2)}, blocks)
            return
        row = R["if_fcmp"] if f.floats and r == 2 else R["if_icmp"]
        plan = self.plans_for(row)
        srcs = [self.operand(plan[0]), self.operand(plan[1])]
        if f.uniform_operands and below(3) == 2:
            sizes = plan[0][0]
            scalars = self.scalars[sizes[below(len(sizes))]]
            if scalars:
                srcs[below(2)] = scalars[below(len(scalars))]
        self.branch(row.name, srcs, self.attrs(row, 0), blocks)

    def tested_branch(self, b: int, t: Operand) -> None:
        """The branch on exec_cmp_shapes' pending compare `t`: `if_icmp t, #0 cond=ueq`, now
        and then through `xor t, #1` (the branch then tests no compare: the nearest-compare
        near miss). Each side with no other predecessor starts by exporting, to a slot of
        its own, the loop counter (in a loop header) or the thread id, so which lanes take
        which side (and, in a loop, in which iteration) is observable."""
        below = self.below
        state = self.loop_at.get(b)
        if state is not None and state.loop.header == b:
            value = Operand(state.phi.dest)
        else:
            value = self.tid()
        if below(6) == 5:
            t = self.emit(R["bitop"], t.ref.size, [t, immediate(1)], {"tt": 0x6})
        targets = self.succs[b]
        slot = below(8)
        for target in targets:
            if len(self.preds[target]) == 1:
                for _ in range(8):  # a slot of its own, while there is one
                    if slot not in self.marked_slots:
                        break
                    slot = (slot + 1) & 7
                self.markers[target] = (slot, value)
                self.marked_slots.add(slot)
        blocks = [self.blocks[t] for t in targets]
        self.branch("if_icmp", [t, IMM0], {"cond": "ueq", "inv": below(2)}, blocks)

    def plans_for(self, row):
        return plans(row, 0, self.sizes)

    def epilogue(self) -> None:
        """Make the last values observable: exports and a store."""
        below, f = self.below, self.f
        if f.exports:
            slot = below(8)
            for _ in range(below(4)):
                pool = self.pools[self.any_size()]
                if pool:
                    self.emit(R["export"], 0, [self.recent(pool)], {"slot": slot})
                slot = (slot + 1) & 7
        if f.stores and self.output is not None and below(3):
            self.e_store()
