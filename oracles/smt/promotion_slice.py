"""The part of a function the promotion invariant's queries read (`query_slice`).

`oracles.smt.promotion` asks z3 about three things of each function: the path conditions of
the blocks holding memory accesses, the accesses' effective addresses, and the undefined-
behaviour condition (every instruction the opcode table marks `may_ub`, guarded by its
block's path condition). `query_slice(fn, accesses)` is a clone of `fn` without the
instructions none of those reads, so that encoding it builds only the z3 terms the queries
use; in generated programs most instructions are float math feeding exports, and building
their terms through z3's Python API was most of the invariant's cost.

What the slice keeps (the "roots" and everything they read, transitively through values):

* every instruction whose opcode `may_ub` (amul/aadd, loads and stores, ballots): its
  undefined condition reads its operands and, for a load or store, the address;
* every terminator: branch conditions make the path conditions;
* the values stored, when some kept value comes from a load (memory then matters: a load
  reads the array every store before it wrote). Otherwise memory is never read by a query,
  and a stored value's definition is replaced by `mov_imm value=0` of the same width, which
  keeps the store's address and undefined condition and drops the value's cone.

Blocks are kept (empty or not), so the CFG, reverse postorder and every path condition are
the full function's. Encoding a slice therefore gives, for every kept instruction, exactly
the term the full encoding gives (same names, and z3 hash-conses terms), and every query is
the same z3 term: the invariant decides what it decided on the full functions
(tests/oracles/smt/test_promotion_slice.py checks both over generated pairs).

The printed slice is a structural key: two slices with equal text encode to equal terms, which
is how `oracles.smt.promotion` proves a step whose slices are equal without z3. (A cache of
verdicts by the two slices' texts was measured and dropped: over the checking bench's
programs one slice pair in 60 recurred.)
"""

from __future__ import annotations

from agxir.ir import Function, Instruction, Value, clone_function
from agxir.opcodes import OPCODES

__all__ = ["Slice", "query_slice"]

_MOV_IMM = OPCODES["mov_imm"]
_STORE_VALUE = 0  # device_store's value operand (its address operands are 1 and 2)


class Slice:
    """`function`: the pruned clone; `positions`: (block index, instruction index) in it of
    each access given to `query_slice`, in the same order; `reads_memory`: some kept value
    is loaded (only then do the queries' terms read the memory array)."""

    __slots__ = ("function", "positions", "reads_memory")

    def __init__(self, function: Function, positions: tuple[tuple[int, int], ...],
                 reads_memory: bool):
        self.function = function
        self.positions = positions
        self.reads_memory = reads_memory


def _closure(roots: list[Instruction], defs: dict[Value, Instruction],
             stored_values: bool) -> tuple[set[Instruction], bool]:
    """Everything `roots` read, transitively (a store's value only if `stored_values`), and
    whether a load's value is among it."""
    needed = set(roots)
    worklist = list(roots)
    memory_read = False
    while worklist:
        ins = worklist.pop()
        skip = not stored_values and ins.name == "device_store"
        for index, src in enumerate(ins.srcs):
            if skip and index == _STORE_VALUE:
                continue
            definition = defs.get(src.ref) if isinstance(src.ref, Value) else None
            if definition is None:
                continue
            # (Loads are roots, so already needed: a loaded value is read all the same.)
            memory_read = memory_read or definition.name == "device_load"
            if definition not in needed:
                needed.add(definition)
                worklist.append(definition)
    return needed, memory_read


def _needed(fn: Function) -> tuple[set[Instruction], set[Instruction], bool]:
    """(instructions the queries read, definitions of stored values to blank, whether a
    loaded value is read): the closure described in the module docstring."""
    defs: dict[Value, Instruction] = {}
    roots: list[Instruction] = []
    for ins in fn.instructions():
        if isinstance(ins.dest, Value):
            defs[ins.dest] = ins
        if ins.opcode.may_ub or ins.is_terminator:
            roots.append(ins)
    stores = [ins for ins in roots if ins.name == "device_store"]
    while True:
        needed, memory_read = _closure(roots, defs, stored_values=False)
        if memory_read:
            return _closure(roots, defs, stored_values=True)[0], set(), True
        blanked, phis = set(), []
        for store in stores:
            ref = store.srcs[_STORE_VALUE].ref
            definition = defs.get(ref) if isinstance(ref, Value) else None
            if definition is None or definition in needed:
                continue
            # A mov_imm cannot stand among phis: a phi's cone is kept (which may reach a
            # load, so the closure is taken again).
            if definition.is_phi:
                phis.append(definition)
            else:
                blanked.add(definition)
        if not phis:
            return needed, blanked, False
        roots = roots + phis


def query_slice(fn: Function, accesses: list[Instruction]) -> Slice:
    """The slice of `fn` the promotion queries read (see the module docstring); `accesses`
    are instructions of `fn` (device loads and stores, all of which the slice keeps)."""
    needed, blanked, reads_memory = _needed(fn)
    clone = clone_function(fn)
    wanted = {id(ins): i for i, ins in enumerate(accesses)}
    positions: list[tuple[int, int] | None] = [None] * len(accesses)
    for block_index, (block, copy) in enumerate(zip(fn.blocks, clone.blocks, strict=True)):
        kept = []
        for ins, twin in zip(block.instructions, copy.instructions, strict=True):
            if ins in blanked:
                twin.opcode, twin.srcs, twin.attrs, twin.sat = _MOV_IMM, [], {"value": 0}, False
            elif ins not in needed:
                continue
            at = wanted.get(id(ins))
            if at is not None:
                positions[at] = (block_index, len(kept))
            kept.append(twin)
        copy.instructions = kept
    if any(p is None for p in positions):
        raise ValueError("an access given to query_slice is not an instruction of the function")
    return Slice(clone, tuple(positions), reads_memory)  # type: ignore[arg-type]
