"""Control-flow lowering: an SSA function into AGX's exec-mask form (level `exec`).

Emits structured control flow as Mesa's isel (`agx_compile.c`) does, with the post-RA
`opt_break_if` form for a loop's exit test:

* `r0l = mov_imm value=0x0` (begin_cf) opens a function with control flow.
* if/else: the condition block ends `if_*cmp a, b cond inv n=1` (the SSA branch's own
  compare: lanes taking the first target stay active); the then side (a fresh empty block
  if it has none); a fresh else block `else_icmp #0, #0 cond=ueq inv=0 n=1`, always, so no
  logical edge is critical; the else side; `pop_exec n=1` at the end of the else side.
* loops: a fresh preheader (`push_exec n=1` when the loop sits inside other control flow),
  the header (the continue target), the body; the latch ends `jmp_exec_any -> header;
  pop_exec n=1` (Mesa's order: the pop runs when the wave falls out of the loop and wakes
  the lanes that broke). A loop's exit test at the top level of its body, when it is the
  loop's only exit, is Mesa's break_if at nest 1: `while_*cmp a, b cond inv n=1` (lanes
  that stay in the loop stay active). Any other exit is `if (c) break`: `if_*cmp n=1`, a
  block `break n=<ifs inside the loop, its own included, + 1>`, an empty else (`else_icmp;
  pop_exec`); an unconditional break in an if side is `break n=<ifs + 1>`. A fresh exit
  block after the loop gathers what the breaks carry (a phi over them when there are
  several), so the block after the loop has one logical predecessor for them. Where the
  lanes that stay would reach a block with other predecessors (the header of a do-while),
  a fresh `cont` block carries them, so no logical edge is critical.

Structure comes from `agxir.machine.structure` (one stop, one latch and one preheader per
loop, natural loops with one exit target, merge points by post-dominance); what it cannot
express raises `Unstructurable`, and `structurable(fn)` says why without changing `fn`.
Phis move with their blocks; their sources follow the new logical predecessors.

The walk is iterative: `region`, `branch`, `if_else` and `loop` are generators that yield
the walk of a nested region and receive its result (`_walk` runs them on an explicit
stack), so a nest of thousands of loops or ifs needs no Python recursion.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass

from agxir.cfg import CFG
from agxir.ir import (
    R0L,
    SSA,
    Block,
    Function,
    Immediate,
    Instruction,
    Operand,
    Value,
    clone_function,
)
from agxir.machine.opcodes import opcodes_for_level
from agxir.machine.paths import reached
from agxir.machine.structure import Loop, Names, Unstructurable, canonicalize, post_dominators
from agxir.passes.pass_ import Pass

__all__ = ["PASS", "Lowering", "Unstructurable", "lower_cf", "structurable"]

EXEC_OPCODES = opcodes_for_level("exec")


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


def _pop() -> Instruction:
    return _ins("pop_exec", attrs={"n": 1})


# A step of the walk: yields nested steps, receives their results, returns its own.
Walk = Generator["Walk", object, object]


def _walk(step: Walk):
    """Run a step of the walk and every step it yields on an explicit stack (no recursion,
    so no limit on the nesting of a program's control flow); what `step` returns."""
    stack, value = [step], None
    while stack:
        try:
            nested = stack[-1].send(value)
        except StopIteration as done:
            stack.pop()
            value = done.value
            continue
        stack.append(nested)
        value = None
    return value


class Lowering:
    """The lowering; its class attributes are the knobs the bug zoo turns one at a time."""

    BREAK_NEST_EXTRA = 2  # `if (c) break`: ifs enclosing that if in the loop + its own + 1
    POP_AFTER_ELSE = True
    ELSE_IN_ELSE_BLOCK = True  # False: else_icmp at the end of the condition block
    ELSE_AT_THEN_END = False  # True: else_icmp at the end of the then side (Mesa 41b78916)
    WHILE_BREAK_IF = True  # a loop's only exit, at the body's top level, as while_*cmp n=1

    def __init__(self, fn: Function):
        self.fn = fn
        self.names = Names(fn)
        self.cfg, self.loops = canonicalize(fn, self.names)
        self.placed: list[Block] = []
        self.seen: set[Block] = set()
        self.merges: dict[Loop | None, dict[Block, Block | None]] = {}  # by loop, once each
        self.exit_edges = {
            loop: sum(1 for b in loop.blocks for t in self.cfg.succs[b] if t is loop.exit)
            for loop in self.loops.values()
        }

    # --- helpers ----------------------------------------------------------------------------
    def fresh(self, hint: str) -> Block:
        return Block(self.names.fresh(hint), [], None)

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

    def compare(self, term: Instruction, invert: bool, row: str = "if") -> Instruction:
        """The SSA branch's compare as an exec row (`if_icmp` -> `while_icmp`, ...)."""
        name = row + term.name[2:]
        attrs = {"cond": term.attrs["cond"], "inv": term.attrs["inv"] ^ int(invert), "n": 1}
        return _ins(name, term.srcs, attrs)

    def put_else(self, cond: Block, then_end: Block, else_block: Block) -> None:
        if self.ELSE_AT_THEN_END:
            then_end.instructions.append(_always_else())
        elif self.ELSE_IN_ELSE_BLOCK:
            else_block.instructions.append(_always_else())
        else:
            cond.instructions.append(_always_else())

    def needs_cont(self, ctx: Context, other: Block) -> bool:
        """Lanes staying in the loop reach `other` through a block of their own."""
        return (other is ctx.loop.header or len(self.cfg.preds[other]) > 1
                or any(True for _ in other.phis()))

    # --- the walk ---------------------------------------------------------------------------
    # Each step of the walk is a generator: `yield sub` walks the nested generator `sub`
    # and resumes with what it returned (see `_walk`).
    def region(self, block: Block | None, end: Block | None, ctx: Context) -> Walk:
        """Place blocks from `block` up to `end`; the last block placed."""
        last = None
        while block is not None and block is not end:
            if block in self.loops and (ctx.loop is None or ctx.loop.header is not block):
                block, last = yield self.loop(self.loops[block], ctx)
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
                if kind == "back":
                    block.logical_successors = [target]
                    self.latch(block, ctx)
                    return last
                if kind == "exit":
                    self.leave(block, ctx, ctx.ifs_in_loop + self.BREAK_NEST_EXTRA - 1)
                    return last
                block.logical_successors = [target]
                block = target
                continue
            block, last = yield self.branch(block, term, end, ctx)
        return last

    def latch(self, block: Block, ctx: Context) -> None:
        if ctx.ifs_in_loop:
            raise Unstructurable(f"the back edge from {block.name} is inside an if (a continue)")
        block.instructions.append(_ins("jmp_exec_any", blocks=[ctx.loop.header]))
        block.instructions.append(_pop())

    def leave(self, block: Block, ctx: Context, nest: int) -> None:
        """`break n=nest` at the end of `block`: its lanes leave the loop."""
        if ctx.ifs_in_loop == 0:
            raise Unstructurable(f"an unconditional break from {block.name}")
        block.instructions.append(_ins("break", attrs={"n": nest}))
        block.logical_successors = [ctx.loop.exit]
        ctx.loop.breakers.append(block)

    def branch(self, block: Block, term: Instruction, end, ctx: Context) -> Walk:
        first, second = term.blocks
        kinds = (self.kind(ctx, first), self.kind(ctx, second))
        if kinds == ("forward", "forward"):
            if ctx.loop not in self.merges:
                self.merges[ctx.loop] = post_dominators(self.cfg, self.loops, ctx.loop)
            merge = self.merges[ctx.loop].get(block)
            if merge is None:
                raise Unstructurable(f"the sides of the branch in {block.name} never meet")
            return merge, (yield self.if_else(block, term, first, second, merge, ctx))
        if kinds.count("exit") == 1:
            to_exit_first = kinds[0] == "exit"
            other = second if to_exit_first else first
            return self.break_if(block, term, to_exit_first, other, ctx)
        raise Unstructurable(f"the branch in {block.name} leaves the loop on both sides")

    def if_else(self, block, term, first, second, merge, ctx: Context) -> Walk:
        block.instructions.append(self.compare(term, False))
        inner = ctx.inside_if()
        else_block = self.fresh("else")
        if first is merge:
            reached("edge-split")  # the critical edge to the merge gets a block of its own
            then_block = self.fresh("then")
            then_block.logical_successors = [merge]
            self.rename_pred(merge, block, then_block)
            block.logical_successors = [then_block, else_block]
            self.place(then_block)
            then_end = then_block
        else:
            block.logical_successors = [first, else_block]
            then_end = yield self.region(first, merge, inner)
        self.put_else(block, then_end, else_block)
        self.place(else_block)
        if second is merge:
            reached("edge-split")  # the else block carries the critical edge to the merge
            else_block.logical_successors = [merge]
            self.rename_pred(merge, block, else_block)
            else_end = else_block
        else:
            else_block.logical_successors = [second]
            self.rename_pred(second, block, else_block)
            else_end = yield self.region(second, merge, inner)
        if self.POP_AFTER_ELSE:
            else_end.instructions.append(_pop())
        return else_end

    def break_if(self, block, term, to_exit_first: bool, other: Block, ctx: Context):
        """`if (c) break;` then on at `other` (or back to the header)."""
        loop = ctx.loop
        if self.WHILE_BREAK_IF and ctx.ifs_in_loop == 0 and self.exit_edges[loop] == 1:
            block.instructions.append(self.compare(term, to_exit_first, "while"))
            loop.breakers.append(block)
            stay = block
        else:
            block.instructions.append(self.compare(term, not to_exit_first))
            brk, stay = self.fresh("break"), self.fresh("else")
            self.rename_pred(loop.exit, block, brk)
            block.logical_successors = [brk, stay]
            self.place(brk)
            self.leave(brk, ctx.inside_if(), ctx.ifs_in_loop + self.BREAK_NEST_EXTRA)
            self.put_else(block, brk, stay)
            if self.POP_AFTER_ELSE:
                stay.instructions.append(_pop())
            self.place(stay)
        last = stay
        if self.needs_cont(ctx, other):
            reached("edge-split")  # the lanes that stay get a block of their own
            last = self.fresh("cont")
            self.place(last)
            stay_successor = last
        else:
            stay_successor = other
        if stay is block:
            block.logical_successors = [stay_successor, loop.exit]
        else:
            stay.logical_successors = [stay_successor]
        if last is not stay:
            last.logical_successors = [other]
        self.rename_pred(other, block, last)
        if other is loop.header:
            self.latch(last, ctx)
            return None, last
        return other, last

    def loop(self, loop: Loop, ctx: Context) -> Walk:
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
        yield self.region(header, None, Context(loop, 0, ctx.depth + 1))
        after = self.fresh("exit")
        self.gather_exit(loop, after)
        after.logical_successors = [loop.exit]
        self.place(after)
        return loop.exit, after

    def gather_exit(self, loop: Loop, after: Block) -> None:
        """The breaks reach the loop's exit through `after`: each phi of the exit takes one
        value from `after`, a phi there over the breaking blocks when there are several."""
        breaks = loop.breakers
        for block in breaks:
            block.logical_successors = [after if s is loop.exit else s
                                        for s in block.logical_successors]
        for phi in loop.exit.phis():
            picked = [(s, b) for s, b in zip(phi.srcs, phi.blocks, strict=True) if b in breaks]
            if not picked:
                continue
            if len(picked) == 1:
                src = picked[0][0]
            else:
                value = Value(self.names.fresh(phi.dest.name, "_x"), phi.dest.size)
                gathered = Instruction(EXEC_OPCODES["phi"], value, [s for s, _ in picked], {},
                                       [b for _, b in picked])
                after.instructions.append(gathered)
                src = Operand(value)
            kept = [(s, b) for s, b in zip(phi.srcs, phi.blocks, strict=True) if b not in breaks]
            phi.srcs = [s for s, _ in kept] + [src]
            phi.blocks = [b for _, b in kept] + [after]


def _order_phi_sources(fn: Function) -> None:
    """Phi sources in the order of each block's logical predecessors (as the verifier and
    liveness expect). Every placed block has its logical successors set by now, none twice,
    so the CFG's predecessor lists are the ones over them."""
    preds = CFG(fn).preds
    for block in fn.blocks:
        for phi in block.phis():
            pairs = dict(zip(phi.blocks, phi.srcs, strict=True))
            if set(pairs) != set(preds[block]):
                raise Unstructurable(f"phi %{phi.dest.name} lost track of its predecessors")
            phi.blocks = list(preds[block])
            phi.srcs = [pairs[b] for b in phi.blocks]


def lower_cf(fn: Function, lowering_class: type[Lowering] = Lowering) -> bool:
    """Lower `fn` (SSA) in place to the exec level; raises Unstructurable."""
    if fn.level != SSA:
        raise ValueError(f"lower-cf takes an SSA function, not {fn.level}")
    work = clone_function(fn)
    lowering = lowering_class(work)
    _walk(lowering.region(work.entry, None, Context()))
    missing = [b.name for b in work.blocks if b not in lowering.seen]
    if missing:
        raise Unstructurable(f"block {missing[0]} is outside every structured region")
    if len(lowering.placed) > 1:
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
