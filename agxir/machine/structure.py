"""Structure recovery for the control-flow lowering: a canonical SSA CFG and its loops.

`canonicalize(fn)` prepares an SSA function (in place; the lowering works on a clone) so
that every structured CFG has the shape Mesa's isel sees in NIR:

* one `stop` block: several are merged into a fresh one, so the wave ends once;
* one latch per loop: back edges from several blocks meet in a fresh latch, so a
  "continue" (a back edge inside an if) becomes a forward edge to the latch; so does a
  back edge that also leaves an inner loop (the inner loop ends the outer one's body and
  exits to its header), so that inner loop exits to a block of the outer one;
* one preheader per loop: several entering blocks meet in a fresh block.

Merging edges keeps SSA: a phi of the target whose sources came from the merged blocks
takes one source from the fresh block, a phi there over the merged blocks.

It then finds the natural loops (`Loop`: header, body, latch, the one exit target) and
raises `Unstructurable` (with the reason and the block) for what the lowering cannot
express: unreachable blocks, an irreducible CFG, a loop without an exit or with exits to
several targets, a loop left straight out of an enclosing loop, an entry that is a loop
header (the lowering's region walk, agxir/machine/lower_cf.py, declines the rest: a block
reached from two regions, i.e. if/else that does not nest). `merge_point` is the branch's immediate post-dominator in the forward graph of its
loop, where a block that can only break out of the loop post-dominates nothing (so
`if (c) break;` meets at the other side).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agxir.cfg import CFG, Dominators, immediate_dominators, is_reducible
from agxir.ir import Block, Function, Instruction, Operand, Value
from agxir.opcodes import OPCODES


class Unstructurable(Exception):
    """The CFG has no structured (if/else, loops with breaks) form the lowering emits."""


@dataclass(eq=False)
class Loop:
    header: Block
    blocks: set[Block]
    latch: Block
    exit: Block
    depth: int = 1
    breakers: list[Block] = field(default_factory=list)  # exec blocks that leave, in order


class Names:
    """Fresh block and value names that collide with nothing in the function."""

    def __init__(self, fn: Function):
        self.taken = {b.name for b in fn.blocks} | {v.name for v in fn.values()}
        self.counter = 0

    def fresh(self, hint: str, sep: str = "") -> str:
        while True:
            self.counter += 1
            name = f"{hint}{sep}{self.counter}"
            if name not in self.taken:
                self.taken.add(name)
                return name


def merge_edges(fn: Function, target: Block, preds: list[Block], name: str, names: Names) -> Block:
    """A fresh block `name` that the edges preds -> target go through (SSA level)."""
    new = Block(name, [], None)
    for pred in preds:
        term = pred.terminator
        term.blocks = [new if b is target else b for b in term.blocks]
    for phi in target.phis():
        picked = [(s, b) for s, b in zip(phi.srcs, phi.blocks, strict=True) if b in preds]
        if not picked:
            continue
        value = Value(names.fresh(phi.dest.name, "_m"), phi.dest.size)
        new.instructions.append(
            Instruction(OPCODES["phi"], value, [s for s, _ in picked], {}, [b for _, b in picked])
        )
        kept = [(s, b) for s, b in zip(phi.srcs, phi.blocks, strict=True) if b not in preds]
        phi.srcs = [s for s, _ in kept] + [Operand(value)]
        phi.blocks = [b for _, b in kept] + [new]
    new.instructions.append(Instruction(OPCODES["jump"], None, [], {}, [target]))
    fn.blocks.insert(fn.blocks.index(target), new)
    return new


def _natural_loop(cfg: CFG, latch: Block, header: Block) -> set[Block]:
    body = {header, latch}
    work = [latch]
    while work:
        block = work.pop()
        if block is header:
            continue
        for pred in cfg.preds[block]:
            if pred not in body:
                body.add(pred)
                work.append(pred)
    return body


def _leaves_inner_loop(cfg: CFG, latch: Block, header: Block) -> bool:
    """The one back edge latch -> header also leaves a loop nested in header's: the latch
    branches to a block of the loop too, which leads back to the latch without the header."""
    others = [s for s in cfg.succs[latch] if s is not header]
    return bool(others) and any(s in _natural_loop(cfg, latch, header) for s in others)


def _checked_cfg(fn: Function) -> CFG:
    cfg = CFG(fn)
    if len(cfg.reachable) != len(cfg.blocks):
        dead = next(b for b in cfg.blocks if b not in cfg.reachable)
        raise Unstructurable(f"block {dead.name} is unreachable")
    if not is_reducible(cfg, Dominators(cfg)):
        raise Unstructurable("the CFG is irreducible")
    return cfg


def canonicalize(fn: Function, names: Names) -> tuple[CFG, dict[Block, Loop]]:
    """One stop, one latch and one preheader per loop (see the module docstring); the
    resulting CFG and its loops by header."""
    cfg = _checked_cfg(fn)
    stops = [b for b in fn.blocks if b.terminator is not None and b.terminator.name == "stop"]
    if len(stops) > 1:
        end = Block(names.fresh("end"), [Instruction(OPCODES["stop"], None, [], {}, [])], None)
        for block in stops:
            block.instructions[-1] = Instruction(OPCODES["jump"], None, [], {}, [end])
        fn.blocks.append(end)
        cfg = CFG(fn)
    headers: dict[Block, list[Block]] = {}
    for source, header in cfg.back_edges:
        headers.setdefault(header, []).append(source)
    if cfg.entry in headers:
        raise Unstructurable(f"the entry block {cfg.entry.name} is a loop header")
    changed = False
    for header, sources in headers.items():
        if len(sources) > 1 or _leaves_inner_loop(cfg, sources[0], header):
            merge_edges(fn, header, sources, names.fresh("latch"), names)
            changed = True
    if changed:
        cfg = CFG(fn)
    changed = False
    for header in headers:
        latch = next(s for s, h in cfg.back_edges if h is header)
        outside = [p for p in cfg.preds[header] if p is not latch]
        if len(outside) > 1:
            merge_edges(fn, header, outside, names.fresh("pre"), names)
            changed = True
    if changed:
        cfg = CFG(fn)
    loops: dict[Block, Loop] = {}
    for latch, header in cfg.back_edges:
        body = _natural_loop(cfg, latch, header)
        exits = {t for b in body for t in cfg.succs[b] if t not in body}
        if not exits:
            raise Unstructurable(f"loop {header.name} never exits")
        if len(exits) > 1:
            where = ", ".join(sorted(b.name for b in exits))
            raise Unstructurable(f"loop {header.name} exits to several blocks ({where})")
        loops[header] = Loop(header, body, latch, exits.pop())
    for inner in loops.values():
        outer = [loop for loop in loops.values() if loop is not inner and inner.header in loop.blocks]
        inner.depth = 1 + len(outer)
        for loop in outer:
            if inner.exit not in loop.blocks:
                raise Unstructurable(
                    f"loop {inner.header.name} exits straight out of loop {loop.header.name}"
                )
    return cfg, loops


def merge_point(cfg: CFG, loops: dict[Block, Loop], loop: Loop | None, block: Block) -> Block | None:
    """The immediate post-dominator of `block` in the forward graph of `loop` (or of the
    function): back edges and exits removed, an inner loop's latch continuing at that
    loop's exit, and a block whose every path leaves the loop post-dominated by everything
    (it breaks). None if the sides never meet."""
    return post_dominators(cfg, loops, loop).get(block)


def post_dominators(cfg: CFG, loops: dict[Block, Loop], loop: Loop | None) -> dict[Block, Block | None]:
    """`merge_point` of every block of `loop` (or of the function) at once: the dominator
    tree of the reversed forward graph, rooted at a virtual exit that the blocks where
    paths end (the loop's latch; the function's `stop` blocks) lead to. A block from which
    every path breaks is not reached from that root, so it is skipped where paths meet, as
    if post-dominated by everything. Cooper-Harvey-Kennedy on an explicit stack: linear in
    the region for a structured program, whatever its depth."""
    nodes = loop.blocks if loop else set(cfg.blocks)
    latches = {inner.latch: inner for inner in loops.values() if inner is not loop}

    def forward(node: Block) -> list[Block]:
        succs = [s for s in cfg.succs[node]
                 if s in nodes and not (s in loops and loops[s].latch is node)]
        if node in latches and latches[node].exit in nodes:
            succs.append(latches[node].exit)
        return list(dict.fromkeys(succs))

    ordered = [b for b in cfg.blocks if b in nodes]  # a deterministic order
    succs = {node: forward(node) for node in ordered}
    ends = [n for n in ordered if not succs[n] and (loop is None or n is loop.latch)]
    backward: dict[Block, list[Block]] = {node: [] for node in ordered}
    for node in ordered:
        for succ in succs[node]:
            backward[succ].append(node)
    # Reverse postorder of the reversed graph from the virtual exit (None).
    postorder: list[Block | None] = []
    seen: set[Block] = set()
    stack: list[tuple[Block | None, list[Block], int]] = [(None, ends, 0)]
    while stack:
        node, nexts, at = stack.pop()
        if at == len(nexts):
            postorder.append(node)
            continue
        stack.append((node, nexts, at + 1))
        child = nexts[at]
        if child not in seen:
            seen.add(child)
            stack.append((child, backward[child], 0))
    rpo = postorder[::-1]
    index = {node: i for i, node in enumerate(rpo)}
    preds = [[] for _ in rpo]
    for node, i in index.items():
        if node is None:
            continue
        preds[i] = [index[s] for s in succs[node] if s in index]
        if not succs[node]:
            preds[i].append(0)  # an end: the virtual exit follows it
    parent = immediate_dominators(preds)
    result: dict[Block, Block | None] = {}
    for node in ordered:
        i = index.get(node)
        result[node] = None if i is None or parent[i] <= 0 else rpo[parent[i]]
    return result
