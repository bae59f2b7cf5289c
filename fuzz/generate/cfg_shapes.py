"""Control-flow graph shapes: blocks, edges and what each block's terminator is for.

`generate_cfg` builds a `CFGShape` from nested regions, each with one entry (that nothing
inside the region branches back to) and one exit (whose terminator the enclosing region
decides):

* a single block; a sequence of two regions;
* if-without-else and if/else (the branch's two targets always differ);
* bounded loops: a preheader, a do-while body whose entry is the header and whose exit is
  the latch, or a top-tested header; the program generator gives each a counter phi and an
  exit test against a small bound;
* unstructured regions: a random forward DAG that reaches its exit from every block, plus
  back edges to dominators (reducible) or, only when `features.irreducible`, to blocks that
  reach but do not dominate their source (irreducible). Every back edge leaves a block whose
  other successor is a forward edge, so the program generator can guard it with a counter:
  every cycle of a region contains a backward edge (in generation order), hence loops
  terminate.

Blocks are numbered in layout order (block 0 is the entry and has no predecessors); every
block is reachable. `shape_function` turns a shape into a body-less `ir.Function` for
testing analyses; `dominators` computes RPO and immediate dominators on the integer graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agxir.cfg import immediate_dominators
from agxir.ir import Block, Function, Immediate, Instruction, Operand, Uniform
from agxir.opcodes import OPCODES
from fuzz.generate.choices import ChoiceSource, Weighted
from fuzz.generate.features import Features

__all__ = ["CFGShape", "Loop", "Region", "generate_cfg", "shape_function", "dominators"]

# Terminator roles.
STOP = "stop"
JUMP = "jump"
BRANCH = "branch"  # a two-way branch on a generated condition
LATCH = "latch"  # do-while exit test: continue at the header while the counter is below the bound
TEST = "test"  # top-tested header: enter the body while the counter is below the bound
GUARD = "guard"  # an unstructured back edge, taken only while the region's counter allows


@dataclass(eq=False)
class Loop:
    pre: int  # ends by computing the bound; jumps to the header
    header: int  # holds the counter phi
    latch: int  # ends by incrementing the counter; its back edge goes to the header
    exit: int
    top_tested: bool
    depth: int  # 1 for an outermost loop


@dataclass(eq=False)
class Region:
    """An unstructured region. `blocks[0]` is its entry, `blocks[-1]` its exit."""

    blocks: list[int]
    back_edges: list[tuple[int, int]] = field(default_factory=list)  # (source, target)
    irreducible: bool = False


@dataclass(eq=False)
class CFGShape:
    succs: list[list[int]] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    region_of: list[Region | None] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.succs)

    def preds(self) -> list[list[int]]:
        """Predecessors in the order `agxir.cfg.CFG` lists them (the phi source order)."""
        preds: list[list[int]] = [[] for _ in self.succs]
        for block, targets in enumerate(self.succs):
            for target in targets:
                preds[target].append(block)
        return preds

    @property
    def has_loops(self) -> bool:
        return bool(self.loops) or any(region.back_edges for region in self.regions)

    @property
    def irreducible(self) -> bool:
        return any(region.irreducible for region in self.regions)


def generate_cfg(
    source: ChoiceSource,
    features: Features,
    *,
    max_blocks: int = 12,
    max_loop_depth: int = 2,
) -> CFGShape:
    """A random shape of at most `max_blocks` blocks (see the module docstring)."""
    builder = ShapeBuilder(source, features, max(1, max_blocks), max_loop_depth)
    _, exit_block = builder.region(builder.max_blocks, 0)
    builder.shape.roles[exit_block] = STOP
    return builder.shape


# Region kinds, in order of simplicity: a 0 choice is a single block.
SINGLE, SEQ, IF, IFELSE, LOOP, UNSTRUCTURED = range(6)
_WEIGHTS = {SINGLE: 2, SEQ: 4, IF: 2, IFELSE: 3, LOOP: 3, UNSTRUCTURED: 2}
_MIN_BLOCKS = {SINGLE: 1, SEQ: 2, IF: 3, IFELSE: 4, LOOP: 3, UNSTRUCTURED: 3}


class ShapeBuilder:
    """Builds a `CFGShape` region by region. `WEIGHTS` are the region kinds' weights
    (`pressure_shapes` builds with its own): a kind of weight 0 or absent is never drawn,
    a loop only where another may still nest, an unstructured region three times as often
    when irreducible CFGs are asked for."""

    WEIGHTS: dict[int, int] = _WEIGHTS

    def __init__(self, source: ChoiceSource, features: Features, max_blocks: int, depth: int):
        self.source = source
        self.features = features
        self.max_blocks = max_blocks
        self.max_loop_depth = depth
        self.shape = CFGShape()
        allowed = {SINGLE: True, SEQ: True, IF: features.branches, IFELSE: features.branches,
                   LOOP: features.loops, UNSTRUCTURED: features.unstructured}  # fmt: skip
        self.kinds = [kind for kind, ok in allowed.items() if ok]
        self._tables: dict[tuple[int, bool], Weighted] = {}

    def new(self) -> int:
        shape = self.shape
        shape.succs.append([])
        shape.roles.append(JUMP)
        shape.region_of.append(None)
        return len(shape.succs) - 1

    def link(self, block: int, targets: list[int], role: str) -> None:
        self.shape.succs[block] = targets
        self.shape.roles[block] = role

    def table(self, budget: int, may_loop: bool) -> Weighted:
        key = (min(budget, 9), may_loop)
        table = self._tables.get(key)
        if table is None:
            pairs = []
            for kind in self.kinds:
                fits = _MIN_BLOCKS[kind] <= budget and (may_loop or kind != LOOP)
                weight = self.WEIGHTS.get(kind, 0)
                if kind == UNSTRUCTURED and self.features.irreducible:
                    weight *= 3  # asked for irreducible CFGs: make their regions common
                pairs.append((kind, weight if fits else 0))
            table = self._tables[key] = Weighted(pairs)
        return table

    def region(self, budget: int, depth: int) -> tuple[int, int]:
        """A region of at most `budget` (>= 1) blocks: (entry, exit)."""
        source = self.source
        kind = source.pick(self.table(budget, depth < self.max_loop_depth))
        start = len(self.shape.succs)
        if kind == SINGLE:
            block = self.new()
            return block, block
        if kind == SEQ:
            first_entry, first_exit = self.region(1 + source.below(budget - 1), depth)
            used = len(self.shape.succs) - start
            second_entry, second_exit = self.region(budget - used, depth)
            self.link(first_exit, [second_entry], JUMP)
            return first_entry, second_exit
        if kind in (IF, IFELSE):
            cond = self.new()
            then_budget = budget - 2 if kind == IF else 1 + source.below(budget - 3)
            then_entry, then_exit = self.region(then_budget, depth)
            targets = [then_entry]
            if kind == IFELSE:
                used = len(self.shape.succs) - start
                else_entry, else_exit = self.region(budget - used - 1, depth)
                targets.append(else_entry)
            join = self.new()
            self.link(then_exit, [join], JUMP)
            if kind == IFELSE:
                self.link(else_exit, [join], JUMP)
            else:
                targets.append(join)
            if source.boolean():
                targets.reverse()
            self.link(cond, targets, BRANCH)
            return cond, join
        if kind == LOOP:
            return self.loop(budget, depth)
        return self.unstructured(budget, depth)

    def loop(self, budget: int, depth: int) -> tuple[int, int]:
        source = self.source
        top_tested = budget >= 4 and source.boolean(0.4)
        pre = self.new()
        header = self.new() if top_tested else -1
        body_budget = budget - (3 if top_tested else 2)
        body_entry, body_exit = self.region(body_budget, depth + 1)
        exit_block = self.new()
        swap = source.boolean()
        if top_tested:
            self.link(pre, [header], JUMP)
            targets = [exit_block, body_entry] if swap else [body_entry, exit_block]
            self.link(header, targets, TEST)
            self.link(body_exit, [header], JUMP)
        else:
            header = body_entry
            self.link(pre, [header], JUMP)
            targets = [exit_block, header] if swap else [header, exit_block]
            self.link(body_exit, targets, LATCH)
        self.shape.loops.append(Loop(pre, header, body_exit, exit_block, top_tested, depth + 1))
        return pre, exit_block

    def unstructured(self, budget: int, depth: int) -> tuple[int, int]:
        source = self.source
        count = 3 + source.below(min(budget, 8) - 2)
        first = len(self.shape.succs)
        ids = [self.new() for _ in range(count)]
        succ: list[list[int]] = [[] for _ in range(count)]
        # On request, the classic irreducible motif: 0 -> 1, 2; 1 -> 2; later 2 -> 1.
        motif = self.features.irreducible and count >= 4 and depth < self.max_loop_depth
        motif = motif and source.boolean(0.5)
        if motif:
            succ[0] = [1, 2] if source.boolean() else [2, 1]
            succ[1] = [2]
        # A spanning tree: each block hangs under an earlier one with a free slot (0: a chain).
        for i in range(3 if motif else 1, count):
            candidates = [p for p in range(i - 1, -1, -1) if len(succ[p]) < 2 - (motif and p == 2)]
            succ[candidates[source.below(len(candidates))]].append(i)
        last = count - 1
        for i in range(last):
            if not succ[i]:
                succ[i].append(i + 1 + source.below(last - i))
        # Extra forward edges.
        p_extra = 0.5 if self.features.irreducible else 0.25
        for i in range(last - 1):
            if len(succ[i]) == 1 and not (motif and i == 2) and source.boolean(p_extra):
                options = [j for j in range(i + 1, count) if j not in succ[i]]
                if options:
                    succ[i].append(options[source.below(len(options))])
        region = Region([first + i for i in range(count)])
        if depth < self.max_loop_depth:
            self.back_edges(region, succ, count, (2, 1) if motif else None)
        for i in range(last):
            targets = [first + j for j in succ[i]]
            role = JUMP if len(targets) == 1 else BRANCH
            if len(targets) == 2 and min(succ[i]) <= i:
                role = GUARD
            self.link(first + i, targets, role)
        for block in ids:
            self.shape.region_of[block] = region
        self.shape.regions.append(region)
        return ids[0], ids[-1]

    def back_edges(self, region: Region, succ: list[list[int]], count: int, forced) -> None:
        """Adds backward edges (target index <= source index, never to the region entry) out
        of blocks that have a single forward successor; `forced` is one to add for sure."""
        source = self.source
        preds: list[list[int]] = [[] for _ in range(count)]
        for i in range(count):
            for j in succ[i]:
                preds[j].append(i)
        dom = [0] * count
        dom[0] = 1
        for i in range(1, count):
            mask = -1
            for p in preds[i]:
                mask &= dom[p]
            dom[i] = mask | (1 << i)
        reach = [0] * count
        for i in range(count - 1, -1, -1):
            mask = 1 << i
            for j in succ[i]:
                mask |= reach[j]
            reach[i] = mask
        irreducible_ok = self.features.irreducible
        first = region.blocks[0]
        added = []
        if forced is not None:
            added.append(forced)
            region.irreducible = True
        for i in range(1, count - 1):
            if forced is not None and i == forced[0]:
                continue
            if len(succ[i]) != 1 or not source.boolean(0.5 if irreducible_ok else 0.35):
                continue
            loops = [j for j in range(i, 0, -1) if dom[i] >> j & 1]
            tangled = []
            if irreducible_ok:
                tangled = [j for j in range(1, i + 1) if reach[j] >> i & 1 and not dom[i] >> j & 1]
            if tangled and (not loops or source.boolean(0.6)):
                target = tangled[source.below(len(tangled))]
                region.irreducible = True
            elif loops:
                target = loops[source.below(len(loops))]
            else:
                continue
            added.append((i, target))
        for i, target in added:
            # The forward successor goes first or second at random; the guard handles both.
            if source.boolean():
                succ[i].insert(0, target)
            else:
                succ[i].append(target)
            region.back_edges.append((first + i, first + target))


def dominators(succs: list[list[int]], entry: int = 0) -> tuple[list[int], list[int]]:
    """(reverse postorder, immediate dominator per block; -1 for the entry and unreachable
    blocks), by Cooper, Harvey and Kennedy on an integer graph."""
    count = len(succs)
    order: list[int] = []
    seen = [False] * count
    seen[entry] = True
    stack = [(entry, iter(succs[entry]))]
    while stack:
        block, pending = stack[-1]
        for succ in pending:
            if not seen[succ]:
                seen[succ] = True
                stack.append((succ, iter(succs[succ])))
                break
        else:
            stack.pop()
            order.append(block)
    order.reverse()
    number = [-1] * count
    for i, block in enumerate(order):
        number[block] = i
    preds: list[list[int]] = [[] for _ in range(count)]
    for block in order:
        for succ in succs[block]:
            preds[number[succ]].append(number[block])
    parent = immediate_dominators(preds)
    idom = [-1] * count
    for i in range(1, len(order)):
        idom[order[i]] = order[parent[i]]
    return order, idom


def shape_function(shape: CFGShape, name: str = "cfg") -> Function:
    """The shape as a function with terminators only: `if_icmp u0, #k cond=ult` for two-way
    branches (k the block number), `jump` and `stop`. It verifies; running it is not meant
    (its loops have no counters)."""
    u0 = Uniform("u0", 32)
    blocks = [Block(f"b{i}", []) for i in range(len(shape))]
    jump, stop, branch = OPCODES["jump"], OPCODES["stop"], OPCODES["if_icmp"]
    condition_source = Operand(u0)
    for i, targets in enumerate(shape.succs):
        target_blocks = [blocks[t] for t in targets]
        if not targets:
            ins = Instruction(stop, None, [], {}, [], False)
        elif len(targets) == 1:
            ins = Instruction(jump, None, [], {}, target_blocks, False)
        else:
            srcs = [condition_source, Operand(Immediate(i & 0xFF))]
            ins = Instruction(branch, None, srcs, {"cond": "ult", "inv": 0}, target_blocks, False)
        blocks[i].instructions.append(ins)
    return Function(name, [u0], blocks)
