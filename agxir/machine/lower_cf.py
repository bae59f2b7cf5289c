"""Control-flow lowering: an SSA function into AGX's exec-mask form (level `exec`).

Modeled on how Mesa's isel (`agx_compile.c`) emits structured control flow:

* `r0l = mov_imm value=0x0` (begin_cf) opens a function with control flow.
* if/else: the condition block ends `if_*cmp a, b cond inv n=1` (the SSA branch's own
  compare: lanes taking the first target stay active); the then side; a fresh else block
  `else_icmp #0, #0 cond=ueq inv=0 n=1`; the else side; a fresh block `pop_exec n=1`
  before the merge. Fresh blocks stand in for an empty side, so no logical edge is critical.
* loops: a fresh preheader (`push_exec n=1` when the loop sits inside other control
  flow), the header, the body; an exit edge is `if (c) break`: `if_*cmp n=1`, a block
  `break n=<ifs inside the loop + 2>`, an else block, a pop block; the latch ends
  `jmp_exec_any -> header; pop_exec n=1` (Mesa's order: the pop runs when the wave falls
  out of the loop); a fresh exit block after the loop gathers the values the breaks carry
  (a phi over the break blocks), so the block after the loop has one predecessor for them.

Structure is recovered from the CFG: reducible, one latch per loop, every exit of a loop to
one block, each branch's two sides meeting at its immediate post-dominator in the forward
graph of its loop. Anything else raises `Unstructurable` (`structurable(fn)` says why
without changing `fn`). Block phis keep their values; sources follow the new logical
predecessors. The logical CFG (what each lane may take) is stored on the blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agxir.cfg import CFG, Dominators, is_reducible
from agxir.ir import R0L, Block, Function, Immediate, Instruction, Operand, Value, clone_function
from agxir.machine.opcodes import opcodes_for_level
from agxir.passes.pass_ import Pass

EXEC_OPCODES = opcodes_for_level("exec")


class Unstructurable(Exception):
    """The CFG has no structured (if/else, loop with breaks) form this lowering emits."""


@dataclass(eq=False)
class Loop:
    header: Block
    blocks: set[Block]
    latch: Block
    exit: Block | None


@dataclass(frozen=True)
class Context:
    loop: Loop | None = None
    ifs_in_loop: int = 0  # ifs enclosing this point inside the innermost loop
    depth: int = 0  # any control flow enclosing this point (push_exec before a nested loop)

    def inside_if(self) -> Context:
        return Context(self.loop, self.ifs_in_loop + 1, self.depth + 1)


def _ins(name: str, srcs=(), attrs=None, blocks=()) -> Instruction:
    return Instruction(EXEC_OPCODES[name], None, list(srcs), dict(attrs or {}), list(blocks))


def _always_else() -> Instruction:
    zero = Operand(Immediate(0))
    return _ins("else_icmp", (zero, zero), {"cond": "ueq", "inv": 0, "n": 1})


@dataclass
class Lowering:
    """The lowering; its class attributes are the knobs the bug zoo turns one at a time."""

    BREAK_NEST_EXTRA = 2  # a break leaves its own if and the loop
    POP_AFTER_ELSE = True
    ELSE_IN_ELSE_BLOCK = True

    fn: Function
    placed: list[Block] = field(default_factory=list)
    seen: set[Block] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    counter: int = 0

    def __post_init__(self) -> None:
        fn = self.fn
        self.names = {b.name for b in fn.blocks} | {v.name for v in fn.values()}
        cfg = CFG(fn)
        if len(cfg.reachable) != len(cfg.blocks):
            raise Unstructurable("an unreachable block")
        doms = Dominators(cfg)
        if not is_reducible(cfg, doms):
            raise Unstructurable("the CFG is irreducible")
        self.cfg = cfg
        self.back = {(s, t) for s, t in cfg.back_edges}
        self.loops: dict[Block, Loop] = {}
        for source, header in cfg.back_edges:
            if header in self.loops:
                raise Unstructurable(f"loop {header.name} has more than one latch")
            self.loops[header] = Loop(header, self._natural_loop(source, header), source, None)
        for loop in self.loops.values():
            exits = {t for b in loop.blocks for t in cfg.succs[b] if t not in loop.blocks}
            if len(exits) > 1:
                names = ", ".join(sorted(b.name for b in exits))
                raise Unstructurable(f"loop {loop.header.name} exits to several blocks ({names})")
            loop.exit = next(iter(exits), None)
            if loop.exit is None:
                raise Unstructurable(f"loop {loop.header.name} never exits")
            outside = [p for p in cfg.preds[loop.header] if p not in loop.blocks]
            if len(outside) != 1:
                raise Unstructurable(f"loop {loop.header.name} is entered from several blocks")
        stops = [b for b in fn.blocks if b.terminator is not None and b.terminator.name == "stop"]
        if len(stops) != 1:
            raise Unstructurable(f"{len(stops)} stop blocks (the wave must end once)")

    def _natural_loop(self, latch: Block, header: Block) -> set[Block]:
        body = {header, latch}
        work = [latch]
        while work:
            block = work.pop()
            if block is header:
                continue
            for pred in self.cfg.preds[block]:
                if pred not in body:
                    body.add(pred)
                    work.append(pred)
        return body

    # --- helpers ----------------------------------------------------------------------------
    def fresh(self, hint: str) -> Block:
        while True:
            self.counter += 1
            name = f"{hint}{self.counter}"
            if name not in self.names:
                self.names.add(name)
                return Block(name, [], [])

    def place(self, block: Block) -> None:
        if block in self.seen:
            raise Unstructurable(f"block {block.name} is reached from two structured regions")
        self.seen.add(block)
        self.placed.append(block)

    @staticmethod
    def rename_pred(block: Block, old: Block, new: Block) -> None:
        for phi in block.phis():
            phi.blocks = [new if b is old else b for b in phi.blocks]

    def kind(self, ctx: Context, target: Block) -> str:
        if ctx.loop is None:
            return "forward"
        if target is ctx.loop.header:
            return "back"
        if target not in ctx.loop.blocks:
            return "exit"
        return "forward"

    def merge_point(self, ctx: Context, block: Block) -> Block | None:
        """The immediate post-dominator of `block` in the forward graph of its loop (back
        edges and exits removed), or of the function."""
        nodes = ctx.loop.blocks if ctx.loop else set(self.cfg.blocks)
        order = [b for b in self.cfg.rpo if b in nodes]
        pdom: dict[Block, frozenset[Block]] = {}
        for node in reversed(order):
            succs = [
                s for s in self.cfg.succs[node]
                if s in nodes and (node, s) not in self.back
            ]
            common = None
            for s in succs:
                common = pdom[s] if common is None else common & pdom[s]
            pdom[node] = frozenset({node}) | (common or frozenset())
        strict = pdom[block] - {block}
        if not strict:
            return None
        return max(strict, key=lambda b: len(pdom[b]))

    # --- the walk ---------------------------------------------------------------------------
    def region(self, block: Block | None, end: Block | None, ctx: Context) -> Block | None:
        """Place blocks from `block` up to `end`; the last block placed."""
        last = None
        while block is not None and block is not end:
            if block in self.loops and (ctx.loop is None or ctx.loop.header is not block):
                block, last = self.loop(self.loops[block], ctx)
                continue
            self.place(block)
            last = block
            term = block.instructions.pop()
            if term.name == "stop":
                if end is not None or ctx.loop is not None:
                    raise Unstructurable(f"stop in {block.name}, inside control flow")
                block.instructions.append(term)
                block.logical_successors = []
                return last
            if term.name == "jump":
                target = term.blocks[0]
                kind = self.kind(ctx, target)
                block.logical_successors = [target]
                if kind == "back":
                    self.latch(block, ctx)
                    return last
                if kind == "exit":
                    raise Unstructurable(f"an unconditional break from {block.name}")
                block = target
                continue
            block, last = self.branch(block, term, end, ctx)
        return last

    def latch(self, block: Block, ctx: Context) -> None:
        if ctx.ifs_in_loop:
            raise Unstructurable(f"the back edge from {block.name} is inside an if (a continue)")
        block.instructions.append(_ins("jmp_exec_any", blocks=[ctx.loop.header]))
        # Mesa's order: the wave leaves the loop by falling through the jmp_exec_any, and
        # the lanes that broke out become active again here.
        block.instructions.append(_ins("pop_exec", attrs={"n": 1}))

    def branch(self, block: Block, term: Instruction, end, ctx: Context):
        first, second = term.blocks
        kinds = (self.kind(ctx, first), self.kind(ctx, second))
        if kinds == ("forward", "forward"):
            merge = self.merge_point(ctx, block)
            if merge is None:
                raise Unstructurable(f"the sides of the branch in {block.name} never meet")
            last = self.if_else(block, term, first, second, merge, ctx)
            return merge, last
        if "exit" in kinds and kinds.count("exit") == 1:
            to_exit = kinds[0] == "exit"
            other = second if to_exit else first
            return self.break_if(block, term, to_exit, other, ctx)
        raise Unstructurable(f"the branch in {block.name} is a continue or leaves two loops")

    def compare(self, term: Instruction, invert: bool, n: int) -> Instruction:
        name = term.name  # if_icmp or if_fcmp: the exec row of the same name
        attrs = {"cond": term.attrs["cond"], "inv": term.attrs["inv"] ^ int(invert), "n": n}
        return _ins(name, term.srcs, attrs)

    def if_else(self, block, term, first, second, merge, ctx: Context) -> Block:
        block.instructions.append(self.compare(term, False, 1))
        inner = ctx.inside_if()
        pop = self.fresh("pop")
        else_block = self.fresh("else")
        (else_block if self.ELSE_IN_ELSE_BLOCK else block).instructions.append(_always_else())
        if first is merge:
            then_block = self.fresh("then")
            then_block.logical_successors = [merge]
            self.rename_pred(merge, block, then_block)
            block.logical_successors = [then_block, else_block]
            self.place(then_block)
        else:
            block.logical_successors = [first, else_block]
            self.region(first, merge, inner)
        self.place(else_block)
        if second is merge:
            else_block.logical_successors = [pop]
            self.rename_pred(merge, block, pop)
        else:
            else_block.logical_successors = [second]
            self.rename_pred(second, block, else_block)
            last = self.region(second, merge, inner)
            last.logical_successors = [pop if s is merge else s for s in last.logical_successors]
            self.rename_pred(merge, last, pop)
        if self.POP_AFTER_ELSE:
            pop.instructions.append(_ins("pop_exec", attrs={"n": 1}))
        pop.logical_successors = [merge]
        self.place(pop)
        return pop

    def break_if(self, block, term, to_exit: bool, other: Block, ctx: Context):
        """`if (c) break;` then go on at `other` (or back to the header)."""
        loop = ctx.loop
        block.instructions.append(self.compare(term, not to_exit, 1))
        brk, else_block, pop = self.fresh("break"), self.fresh("else"), self.fresh("pop")
        brk.instructions.append(_ins("break", attrs={"n": ctx.ifs_in_loop + self.BREAK_NEST_EXTRA}))
        brk.logical_successors = [loop.exit]
        self.rename_pred(loop.exit, block, brk)
        else_block.instructions.append(_always_else())
        else_block.logical_successors = [pop]
        pop.instructions.append(_ins("pop_exec", attrs={"n": 1}))
        block.logical_successors = [brk, else_block]
        for fresh in (brk, else_block, pop):
            self.place(fresh)
        pop.logical_successors = [other]
        self.rename_pred(other, block, pop)
        if other is loop.header:
            self.latch(pop, ctx)
            return None, pop
        return other, pop

    def loop(self, loop: Loop, ctx: Context):
        """Place a whole loop; (the block after it, the last block placed)."""
        header = loop.header
        entering = [b for b in self.placed if header in (b.logical_successors or ())]
        if len(entering) != 1:
            raise Unstructurable(f"loop {header.name} is entered from several blocks")
        outside = entering[0]
        pre = self.fresh("pre")
        if ctx.depth:
            pre.instructions.append(_ins("push_exec", attrs={"n": 1}))
        pre.logical_successors = [header]
        outside.logical_successors = [pre if s is header else s for s in outside.logical_successors]
        self.rename_pred(header, outside, pre)
        self.place(pre)
        inner = Context(loop, 0, ctx.depth + 1)
        self.region(header, None, inner)
        after = self.fresh("exit")
        self.gather_exit_phis(loop.exit, after)
        after.logical_successors = [loop.exit]
        self.place(after)
        return loop.exit, after

    def gather_exit_phis(self, target: Block, after: Block) -> None:
        """The breaks reach `target` through `after`: each phi of `target` takes one value
        from `after`, a phi there over the break blocks."""
        breaks = [b for b in self.placed if b.logical_successors and target in b.logical_successors
                  and b.instructions and b.instructions[0].name == "break"]
        for block in breaks:
            block.logical_successors = [after]
        for phi in target.phis():
            picked = [(src, b) for src, b in zip(phi.srcs, phi.blocks, strict=True) if b in breaks]
            if not picked:
                continue
            if len(picked) == 1:
                src = picked[0][0]
            else:
                value = Value(self.fresh_value(phi.dest.name), phi.dest.size)
                gathered = Instruction(EXEC_OPCODES["phi"], value, [s for s, _ in picked], {},
                                       [b for _, b in picked])
                after.instructions.append(gathered)
                src = Operand(value)
            kept = [(s, b) for s, b in zip(phi.srcs, phi.blocks, strict=True) if b not in breaks]
            phi.srcs = [s for s, _ in kept] + [src]
            phi.blocks = [b for _, b in kept] + [after]

    def fresh_value(self, hint: str) -> str:
        while True:
            self.counter += 1
            name = f"{hint}_x{self.counter}"
            if name not in self.names:
                self.names.add(name)
                return name


def _order_phi_sources(fn: Function) -> None:
    """Phi sources in the order of each block's logical predecessors (as the verifier and
    liveness expect)."""
    preds: dict[Block, list[Block]] = {b: [] for b in fn.blocks}
    for block in fn.blocks:
        for succ in block.logical_successors or []:
            preds[succ].append(block)
    for block in fn.blocks:
        for phi in block.phis():
            pairs = dict(zip(phi.blocks, phi.srcs, strict=True))
            if set(pairs) != set(preds[block]):
                raise Unstructurable(f"phi %{phi.dest.name} lost track of its predecessors")
            phi.blocks = list(preds[block])
            phi.srcs = [pairs[b] for b in phi.blocks]


def lower_cf(fn: Function, lowering_class: type[Lowering] = Lowering) -> bool:
    """Lower `fn` (SSA) in place to the exec level; raises Unstructurable."""
    if fn.level != "ssa":
        raise ValueError(f"lower-cf takes an SSA function, not {fn.level}")
    work = clone_function(fn)
    lowering = lowering_class(work)
    lowering.region(work.entry, None, Context())
    if len(work.blocks) > 1:
        begin = Instruction(EXEC_OPCODES["mov_imm"], R0L, [], {"value": 0})
        work.entry.instructions.insert(0, begin)
    work.blocks = lowering.placed
    work.level = "exec"
    _order_phi_sources(work)
    fn.blocks, fn.level = work.blocks, work.level
    return True


def structurable(fn: Function) -> str | None:
    """None when `lower-cf` can lower `fn`; else why not. `fn` is not changed."""
    try:
        lower_cf(clone_function(fn))
    except Unstructurable as reason:
        return str(reason)
    return None


PASS = Pass("lower-cf", "structured control flow into AGX exec-mask form (SSA to exec)", lower_cf)
