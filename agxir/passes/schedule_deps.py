"""The dependence graph of the pressure scheduler (Mesa's `create_dag` in
agx_pressure_schedule.c): which instructions of a block may move, and what each must stay
after.

A block is cut into *regions*: maximal runs of instructions the scheduler may reorder.
Phis (they open the block and happen at once on entry), terminators and instructions with
a side effect that are not memory accesses (exports: they write this thread's outputs)
are *fixed*: they stay where they are and end the region before them. Mesa schedules up
to the block's logical end, where its exports already sit; exports in the middle of a
block here cut it instead of stopping the scheduler, so the rest is still scheduled.

Edges, all from the opcode table's traits, never from mnemonics:

* SSA: an instruction follows the definitions of its sources in the region.
* Memory: an instruction that is not pure and reads an address (`device_load`,
  `device_store`) is a memory access; as in Mesa (`memory_store` serializes loads and
  stores alike, there being no alias analysis), every access follows the previous one, so
  all accesses keep their relative order. The model has no atomics or barriers.
* Everything else may move freely, `get_sr` included (it reads the thread id, which no
  instruction changes), as may `amul`, `aadd` and loads that can be undefined: every
  instruction of a region runs whenever one does, so moving one cannot make an execution
  undefined that was not.

`Dag` keeps Mesa's bookkeeping so ties break as Mesa's do: `heads` starts as the nodes no
later node depends on, in program order; pruning a head appends the nodes it frees to the
end of the list, in the order their edges were added (sources in order, then memory).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agxir.ir import Instruction, Value
from agxir.opcodes.spec import ADDR

__all__ = ["Dag", "build_dag", "is_fixed", "is_memory", "regions"]


def is_memory(ins: Instruction) -> bool:
    """A load or store: not pure and reads an address (Mesa's load/store classes)."""
    return not ins.opcode.pure and any(src.kind == ADDR for src in ins.opcode.srcs)


def is_fixed(ins: Instruction) -> bool:
    """Stays in place: a phi, a terminator, or a side effect other than memory (export)."""
    return ins.is_phi or ins.is_terminator or (ins.opcode.side_effect and not is_memory(ins))


def regions(instructions: list[Instruction], fixed=is_fixed) -> list[tuple[int, int]]:
    """The [start, end) index ranges of the runs of instructions that are not `fixed`."""
    spans: list[tuple[int, int]] = []
    start = None
    for index, ins in enumerate(instructions):
        if fixed(ins):
            if start is not None:
                spans.append((start, index))
                start = None
        elif start is None:
            start = index
    if start is not None:
        spans.append((start, len(instructions)))
    return spans


@dataclass
class Dag:
    """Nodes are indices into `instructions`. `children[i]`: the earlier nodes node i must
    follow, in the order Mesa adds the edges, without duplicates. `parents[i]`: how many
    unscheduled later nodes must follow node i. `heads`: the ready nodes, in Mesa's list
    order."""

    instructions: list[Instruction]
    children: list[list[int]] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)
    heads: list[int] = field(default_factory=list)

    def add_edge(self, later: int | None, earlier: int | None) -> None:
        if later is None or earlier is None or earlier in self.children[later]:
            return
        self.children[later].append(earlier)
        self.parents[earlier] += 1
        if earlier in self.heads:  # Mesa's list_delinit on the child
            self.heads.remove(earlier)

    def prune(self, node: int) -> None:
        """Schedule head `node`: drop it and append the nodes it frees to `heads`."""
        self.heads.remove(node)
        for child in self.children[node]:
            self.parents[child] -= 1
            if self.parents[child] == 0:
                self.heads.append(child)


def build_dag(
    instructions: list[Instruction], *, ssa: bool = True, memory: bool = True
) -> Dag:
    """The dependence graph of one region (see the module). `ssa=False` or `memory=False`
    leave that kind of edge out: only the zoo's wrong schedulers do."""
    dag = Dag(list(instructions))
    last_write: dict[Value, int] = {}
    memory_chain: int | None = None
    for node, ins in enumerate(instructions):
        dag.children.append([])
        dag.parents.append(0)
        dag.heads.append(node)
        if ssa:
            for value in ins.uses():
                dag.add_edge(node, last_write.get(value))
        for dest in ins.defs():
            if isinstance(dest, Value):
                last_write[dest] = node
        if memory and is_memory(ins):
            dag.add_edge(node, memory_chain)
            memory_chain = node
    return dag
