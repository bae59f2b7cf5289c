"""`fuse-exec-cmp`: after register allocation, a compare whose only job is to feed the
exec-mask branch is folded into the branch (seed 003, LLVM D119696: `v_cmp` +
`s_and_saveexec` becoming a saved mask + `v_cmpx`, in SIOptimizeExecMasking).

    r5 = icmp r1, r2 cond=ult inv=0            r3 = iadd r4, #1 shift=0
    r3 = iadd r4, #1 shift=0           ->      if_icmp r1, r2 cond=ult inv=0 n=1
    if_icmp r5, #0 cond=ueq inv=1 n=1

The branch tests `t != 0` (or `t == 0`); with `t = cond(a, b) XOR d` and the branch's
`c = (t == 0) XOR I`, `c = cond(a, b) XOR (d XOR NOT I)`: the algebra of the SSA-level
`branch-cmp` pass (`agxir.passes.branch_cmp.inverted`), reused here. The same holds for
`while_icmp t, #0 ... n=1` (the break_if at nest 1 of `agx_opt_break_if` /
`agx_lower_pseudo`; an `if (c) break` is an `if_icmp` and is fused as one).

Each condition the review raised is a check here, one class attribute each, so the bug zoo
(`fuzz.zoo.exec_cmp_variants`) can switch exactly one off:

1. `CHECK_EXEC_WRITES` (Eli Friedman, "There shouldn't be any EXEC modifications between
   those two instructions"): no instruction between writes r0l, neither an exec row
   (if/else/while, pop_exec, push_exec, break) nor any destination overlapping r0l.
2. `AT_BRANCH` (Sebastian Neubauer, "the v_cmpx instruction should be inserted at the place
   of the s_and_saveexec, not at the place of the v_cmp. Otherwise this v_mov gets executed
   with the wrong exec mask"): the fused branch replaces the branch; the instructions
   between keep running under the mask they had.
3. `CHECK_SOURCES` and `OVERLAP` (tsymalla, "a copy needs to be inserted whenever a v_cmp
   register source operand gets redefined inbetween"; Matt Arsenault, "post-SSA you need to
   defend against subregisters"; Carl Ritson, "modifiesRegister must be passed TRI
   otherwise subregisters will not be checked"): no instruction between writes a register
   overlapping a source of the compare, half by half (r1 vs r1l/r1h, d0 containing r1).
   This pass bails out rather than inserting the copy (a copy would cost a register).
4. `CHECK_RESULT_DEAD` (Sebastian Neubauer, "do you make sure that the v_cmp is not used
   anywhere outside the s_saveexec?"): the compare's result is read neither between the
   two nor after the branch on any path (a backward per-half liveness over the logical
   CFG, `live_out_halves`); the compare is deleted, so a live result would be lost.
5. `CHECK_RESULT_EXEC` (Carl Ritson's test, the v_cmp overlapping the saved exec mask):
   the result register does not overlap what the branch writes, r0l. (The verifier already
   forbids a compare writing r0l under control flow; this keeps the pass safe without it.)
6. `WINDOW` / `CROSS_BLOCKS` (Jay Foad, "a bounded backwards walk", "Maybe 5?"; Eli
   Friedman, "perhaps even in a different basic block!"): the compare is among the 5
   instructions before the branch, in its block.
7. `CHECK_TESTED` (Jay Foad, "The code just finds the last v_cmp instruction. Then you hope
   that it defs the saveexec input operand?"): walking back from the branch, the first
   instruction writing any half of the tested register must be a compare writing exactly
   that register; any other write (a partial one included) stops the walk.

Two further conditions are the exec mask's own, not the review's: `else_*cmp` is never
fused (the lanes it tests, r0l == 1, were inactive at the compare, so their `t` is stale
and the fused compare would see other values) and `while_*cmp` only at n=1 (at n>1 lanes
with 0 < r0l < n test `t` too, for the same reason). Branches whose tested operand carries
a modifier, and compares with `.sat`, are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from agxir import ir
from agxir.ir import R0L, Block, Function, Immediate, Instruction, Operand, Register
from agxir.machine.block_liveness import live_after, live_out
from agxir.machine.opcodes import EXEC_UPDATES, WAVE_BRANCHES, opcodes_for_level
from agxir.passes.branch_cmp import inverted
from agxir.passes.pass_ import Pass

__all__ = ["PASS", "Decline", "FuseExecCmp", "Fusion", "fuse_exec_cmp", "live_out_halves"]

MACHINE_OPCODES = opcodes_for_level("machine")
COMPARES = ("icmp", "fcmp")
# (branch, compare) -> the fused branch.
FUSED = {
    ("if_icmp", "icmp"): "if_icmp", ("if_icmp", "fcmp"): "if_fcmp",
    ("while_icmp", "icmp"): "while_icmp", ("while_icmp", "fcmp"): "while_fcmp",
}  # fmt: skip
WHY = "(t == 0) XOR I = cond(a, b) XOR (d XOR NOT I), with t = cond(a, b) XOR d"


def _halves(refs) -> set[int]:
    return {h for ref in refs if isinstance(ref, Register) for h in ref.halves}


def accesses(ins: Instruction) -> tuple[set[int], set[int]]:
    """(halves read, halves written) by `ins`; the exec rows read and write r0l."""
    reads = _halves(src.ref for src in ins.srcs)
    writes = _halves(ins.defs())
    if ins.name in EXEC_UPDATES:
        reads.add(R0L.half)
        writes.add(R0L.half)
    elif ins.name in WAVE_BRANCHES:
        reads.add(R0L.half)
    return reads, writes


def live_out_halves(fn: Function) -> dict[Block, set[int]]:
    """The halves some path over the logical CFG may read after each block before writing
    them: per 16-bit half, so a 32-bit read keeps both halves alive and a 16-bit write
    kills only its own."""
    return live_out(fn.blocks, accesses)


@dataclass(frozen=True)
class Fusion:
    """A rewrite as data: delete `compare`, replace `branch` by `fused`."""

    compare: tuple[Block, Instruction]
    branch: tuple[Block, Instruction]
    fused: Instruction
    why: str = WHY


@dataclass(frozen=True)
class Decline:
    """Why a branch on a register is not fused (the check that said no)."""

    block: str
    reason: str


def _tested(branch: Instruction) -> Register | None:
    """The register `branch` tests against zero, if it is a fusable branch on a boolean."""
    if branch.name not in ("if_icmp", "while_icmp") or branch.attrs.get("cond") != "ueq":
        return None
    tested, zero = branch.srcs
    if not isinstance(tested.ref, Register) or tested.abs or tested.neg:
        return None
    if not (
        isinstance(zero.ref, Immediate) and zero.ref.bits == 0 and not zero.abs and not zero.neg
    ):
        return None
    return tested.ref


class FuseExecCmp:
    """The pass; its class attributes are the checks the bug zoo switches off one at a time."""

    CHECK_EXEC_WRITES = True
    AT_BRANCH = True
    CHECK_SOURCES = True
    OVERLAP = True  # False: a redefinition counts only when it names the same register
    CHECK_RESULT_DEAD = True
    CHECK_RESULT_EXEC = True
    WINDOW: int | None = 5  # None: no bound
    CROSS_BLOCKS = False  # True: the walk goes on into the blocks laid out before
    CHECK_TESTED = True

    def __init__(self, fn: Function):
        self.fn = fn
        self.declined: list[Decline] = []

    # --- finding -------------------------------------------------------------------------
    def _walk(self, block: Block, index: int):
        """(block, instruction) pairs before position `index` of `block`, nearest first."""
        layout = self.fn.blocks
        position = layout.index(block)
        while True:
            for ins in reversed(block.instructions[:index]):
                yield block, ins
            if not self.CROSS_BLOCKS or position == 0:
                return
            position -= 1
            block = layout[position]
            index = len(block.instructions)

    def _redefines(self, ins: Instruction, register: Register) -> bool:
        if self.OVERLAP:
            return any(isinstance(d, Register) and d.overlaps(register) for d in ins.defs())
        return register in ins.defs()

    def find(self, block: Block, index: int) -> Fusion | Decline:
        branch = block.instructions[index]
        tested = _tested(branch)
        if tested is None:
            return Decline(block.name, "not a branch on a register being zero or nonzero")
        if branch.name == "while_icmp" and branch.attrs["n"] != 1:
            return Decline(
                block.name, "while at n > 1 also tests lanes that did not run the compare"
            )
        between: list[Instruction] = []
        found = None
        for where, ins in self._walk(block, index):
            if ins.name in COMPARES and (not self.CHECK_TESTED or ins.dest == tested):
                found = (where, ins)
                break
            if self.CHECK_TESTED and any(
                isinstance(d, Register) and d.overlaps(tested) for d in ins.defs()
            ):
                return Decline(block.name, f"{tested.name} is written by {ins.name}, not a compare")
            between.append(ins)
            if self.WINDOW is not None and len(between) > self.WINDOW:
                return Decline(block.name, f"no compare within {self.WINDOW} instructions")
        if found is None:
            return Decline(block.name, f"no compare defines {tested.name} in the block")
        where, compare = found
        result = compare.dest
        if compare.sat or not isinstance(result, Register):
            return Decline(block.name, "the compare saturates or has no register result")
        if self.CHECK_RESULT_EXEC and result.overlaps(R0L):
            return Decline(block.name, f"the compare's result {result.name} overlaps r0l")
        for ins in between:
            reads, writes = accesses(ins)
            if self.CHECK_EXEC_WRITES and R0L.half in writes:
                return Decline(
                    block.name, f"{ins.name} writes r0l between the compare and the branch"
                )
            if self.CHECK_SOURCES:
                for src in compare.srcs:
                    if isinstance(src.ref, Register) and self._redefines(ins, src.ref):
                        return Decline(
                            block.name, f"{ins.name} redefines the compare's source {src.ref.name}"
                        )
            if self.CHECK_RESULT_DEAD and reads & set(result.halves):
                return Decline(block.name, f"{ins.name} reads the compare's result {result.name}")
        if self.CHECK_RESULT_DEAD and set(result.halves) & self._live_after(block, index):
            return Decline(
                block.name, f"the compare's result {result.name} is read after the branch"
            )
        fused = Instruction(
            MACHINE_OPCODES[FUSED[branch.name, compare.name]],
            None,
            [Operand(src.ref, src.abs, src.neg) for src in compare.srcs],
            {"cond": compare.attrs["cond"],
             "inv": inverted({"compare_inv": compare.attrs["inv"], "branch_inv": branch.attrs["inv"]}),
             "n": branch.attrs["n"]},
            list(branch.blocks),
        )  # fmt: skip
        return Fusion((where, compare), (block, branch), fused)

    def _live_after(self, block: Block, index: int) -> set[int]:
        return live_after(live_out_halves(self.fn)[block], block, index, accesses)

    # --- rewriting -----------------------------------------------------------------------
    def apply(self, fusion: Fusion) -> None:
        (compare_block, compare), (branch_block, branch) = fusion.compare, fusion.branch
        if self.AT_BRANCH:
            branch_block.instructions[branch_block.instructions.index(branch)] = fusion.fused
            compare_block.instructions.remove(compare)
        else:
            compare_block.instructions[compare_block.instructions.index(compare)] = fusion.fused
            branch_block.instructions.remove(branch)

    def run(self) -> bool:
        if self.fn.level != ir.MACHINE or any(ins.is_phi for ins in self.fn.instructions()):
            return False  # registers only, after lower-phis (phis read on edges, not here)
        changed = False
        for block in list(self.fn.blocks):
            for index in reversed(range(len(block.instructions))):
                if _tested(block.instructions[index]) is None:
                    continue
                outcome = self.find(block, index)
                if isinstance(outcome, Decline):
                    self.declined.append(outcome)
                    continue
                self.apply(outcome)
                changed = True
                break  # one branch per block; the block's indices moved
        return changed


def fuse_exec_cmp(fn: Function, pass_class: type[FuseExecCmp] = FuseExecCmp) -> bool:
    return pass_class(fn).run()


def run(fn: Function) -> bool:
    return fuse_exec_cmp(fn)


PASS = Pass(
    "fuse-exec-cmp",
    "fold a compare into the exec-mask branch that tests it (seed 003, v_cmpx)",
    run,
)
