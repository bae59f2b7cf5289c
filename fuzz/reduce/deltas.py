"""The reducer's delta passes: each proposes smaller variants of one failing case.

A `Case` is what a reproducer is made of: the function, the input sets and the pass pipeline.
A `Delta` has a name and a generator `candidates(case)` that yields variants, most ambitious
first. Candidates are fresh objects (functions are cloned, never edited in place), so the
reducer can throw any of them away. A delta tries to yield only candidates the verifier
will accept, by reading the opcode row's `Src` specs before replacing an operand; the
reducer verifies every candidate anyway, so a delta that is occasionally wrong only costs
time.

Structural deltas share one repair step (`tidy`): drop blocks nothing reaches (optional),
put phi sources back in `CFG(fn).preds` order and drop those of vanished edges, and give
every use of a value whose definition was deleted a legal stand-in (#0, a uniform).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from agxir.cfg import CFG, Dominators
from agxir.ir import (
    Block,
    Function,
    Immediate,
    Instruction,
    Operand,
    Uniform,
    Value,
    clone_function,
)
from agxir.opcodes.spec import ADDR, AT_MOST_DEST, SAME_AS_DEST
from agxir.opcodes.table import OPCODES
from agxir.text import print_function
from fuzz.passes_under_test import PassUnderTest, machine_prefix
from oracles.inputs import InputSet

__all__ = ["DELTAS", "Case", "Delta", "delta_named", "tidy"]

ZERO = Immediate(0)
MIN_CHUNK = 1  # the smallest run of buffer bytes zeroed at once


@dataclass(frozen=True)
class Case:
    """One reproducer. `focus` is the index of the input set the failure was last seen on,
    so "keep only the failing set" can be tried first; None when unknown."""

    fn: Function
    inputs: tuple[InputSet, ...]
    pipeline: tuple[PassUnderTest, ...]
    focus: int | None = None

    def replace(self, **changes) -> Case:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class Delta:
    name: str
    summary: str
    candidates: Callable[[Case], Iterator[Case]]


# --- small IR helpers -------------------------------------------------------------------------


def _jump(target: Block) -> Instruction:
    return Instruction(OPCODES["jump"], None, [], {}, [target])


def _stop() -> Instruction:
    return Instruction(OPCODES["stop"], None, [], {}, [])


def fits(ins: Instruction, position: int, ref: Value | Uniform | Immediate) -> bool:
    """Whether `ref` may stand at source `position` of `ins` (the verifier's source rules:
    immediates where the row takes one, uniforms where allowed, sizes and width rules)."""
    if ins.is_phi:
        return isinstance(ref, Immediate) or (ins.dest is not None and ref.size == ins.dest.size)
    if position >= len(ins.opcode.srcs):
        return False
    spec = ins.opcode.srcs[position]
    if isinstance(ref, Immediate):
        return spec.imm is not None
    if isinstance(ref, Uniform) and not spec.uniform:
        return False
    if spec.kind == ADDR:
        return ref.size == 64
    if ref.size not in spec.sizes:
        return False
    dest = ins.dest
    if dest is not None and spec.width_rule == SAME_AS_DEST:
        return ref.size == dest.size
    if dest is not None and spec.width_rule == AT_MOST_DEST:
        return ref.size <= dest.size
    return True


def _operand(ins: Instruction, position: int, ref, like: Operand) -> Operand:
    """`ref` at `position`, keeping `like`'s modifiers where they stay meaningful: the spec
    allowed them on the old operand, but an immediate stand-in is simplest bare."""
    if isinstance(ref, Immediate) or ins.is_phi:
        return Operand(ref)
    return Operand(ref, like.abs, like.neg)


def stand_in(fn: Function, ins: Instruction, position: int) -> Operand | None:
    """A legal operand that reads no value: #0 where an immediate fits, else a uniform."""
    if fits(ins, position, ZERO):
        return Operand(ZERO)
    for uniform in fn.uniforms:
        if fits(ins, position, uniform):
            return Operand(uniform)
    return None


def replace_uses(fn: Function, value: Value, ref) -> None:
    """Every read of `value` reads `ref` instead (modifiers of each use are kept)."""
    for ins in fn.instructions():
        for position, src in enumerate(ins.srcs):
            if src.ref is value:
                ins.srcs[position] = _operand(ins, position, ref, src)


def _repair_phis(fn: Function, alias: dict[Block, Block] | None = None) -> None:
    """Phi sources in predecessor order, dropping those of edges that are gone. `alias`
    maps a new predecessor to the old one whose source it inherits (a redirected edge).
    A source no edge provides is #0. A phi left with no predecessors is deleted; its uses
    become dangling (see `tidy`)."""
    alias = alias or {}
    preds = CFG(fn).preds
    for block in fn.blocks:
        kept = []
        for ins in block.instructions:
            if not ins.is_phi:
                kept.append(ins)
                continue
            incoming = {}
            for src, pred in zip(ins.srcs, ins.blocks):
                incoming.setdefault(pred, src)
            order = preds[block]
            if not order:
                continue
            ins.srcs = [
                incoming.get(pred) or incoming.get(alias.get(pred)) or Operand(ZERO)
                for pred in order
            ]
            ins.blocks = list(order)
            kept.append(ins)
        block.instructions[:] = kept


def _fill_dangling(fn: Function) -> bool:
    """Give each read of a value that is no longer defined a stand-in; False if some use
    has none (an ADDR source with no 64-bit uniform, say)."""
    defined = set(fn.values())
    for ins in fn.instructions():
        for position, src in enumerate(ins.srcs):
            if isinstance(src.ref, Value) and src.ref not in defined:
                new = stand_in(fn, ins, position)
                if new is None:
                    return False
                ins.srcs[position] = new
    return True


def tidy(fn: Function, *, prune: bool = False, alias: dict[Block, Block] | None = None) -> bool:
    """Repair a function after a structural edit; False when it cannot be made whole."""
    if not fn.blocks:
        return False
    if prune:
        reachable = CFG(fn).reachable
        fn.blocks[:] = [block for block in fn.blocks if block in reachable]
    _repair_phis(fn, alias)
    return _fill_dangling(fn)


def _tidied_variants(case: Case, edit: Callable[[Function], dict | None]) -> Iterator[Case]:
    """Apply `edit` to a clone, then yield it tidied with unreachable blocks pruned, and
    (when that differs) without pruning: pruning is the bigger step but can lose a
    failure that lives in dead code."""
    seen = set()
    for prune in (True, False):
        fn = clone_function(case.fn)
        alias = edit(fn)
        if alias is None or not tidy(fn, prune=prune, alias=alias):
            continue
        text = print_function(fn)
        if text not in seen:
            seen.add(text)
            yield case.replace(fn=fn)


# --- pipeline and inputs --------------------------------------------------------------------


def drop_passes(case: Case) -> Iterator[Case]:
    """The pipeline without one pass, last first: passes after the failing one never run.
    A pass a later Mesa pass's contract needs before it stays (agx_ra wants DCE first:
    without it Mesa's allocator may leave a dead instruction reading a clobbered register,
    which is no bug of Mesa's, and the same checker message would accept it)."""
    names = [unit.name for unit in case.pipeline]
    needed = {required for name in names if name.startswith("mesa:")
              for required in machine_prefix(name)[:-1]}
    for i in reversed(range(len(case.pipeline))):
        if names[i] in needed and any(later.startswith("mesa:") for later in names[i + 1:]):
            continue
        yield case.replace(pipeline=case.pipeline[:i] + case.pipeline[i + 1 :])


def shrink_threads(case: Case) -> Iterator[Case]:
    """Fewer input sets (the failing one alone first), then fewer threads in each."""
    inputs = case.inputs
    if len(inputs) > 1:
        if case.focus is not None:
            yield case.replace(inputs=(inputs[case.focus],), focus=0)
        for i in reversed(range(len(inputs))):
            focus = case.focus
            if focus is not None:
                focus = None if focus == i else focus - (focus > i)
            yield case.replace(inputs=inputs[:i] + inputs[i + 1 :], focus=focus)
    for i, input_set in enumerate(inputs):
        t = input_set.threads
        for fewer in dict.fromkeys((1, t // 2, (3 * t) // 4, t - 1)):
            if 1 <= fewer < t:
                smaller = dataclasses.replace(input_set, threads=fewer)
                yield case.replace(inputs=inputs[:i] + (smaller,) + inputs[i + 1 :])


def smaller_ints(value: int, floor: int = 0) -> list[int]:
    """Smaller values to try, biggest step first: the floor, each set bit cleared (highest
    first, so a sign bit that matters survives while the rest goes), half, one less."""
    out = [floor] + [value & ~(1 << k) for k in reversed(range(value.bit_length()))]
    out += [value >> 1, value - 1]
    return [v for v in dict.fromkeys(out) if floor <= v < value]


def _with_set(case: Case, i: int, **changes) -> Case:
    new = dataclasses.replace(case.inputs[i], **changes)
    return case.replace(inputs=case.inputs[:i] + (new,) + case.inputs[i + 1 :])


def shrink_inputs(case: Case) -> Iterator[Case]:
    """Scalars toward 0; buffer bytes zeroed, whole buffers first, then ever smaller runs
    (a run is tried only while it still holds a nonzero byte)."""
    for i, input_set in enumerate(case.inputs):
        for name, value in input_set.scalars.items():
            for smaller in smaller_ints(value):
                yield _with_set(case, i, scalars={**input_set.scalars, name: smaller})
    for i, input_set in enumerate(case.inputs):
        for name, data in input_set.buffers.items():
            chunk = len(data)
            while chunk >= MIN_CHUNK:
                for start in range(0, len(data), chunk):
                    run = data[start : start + chunk]
                    if any(run):
                        zeroed = data[:start] + bytes(len(run)) + data[start + chunk :]
                        yield _with_set(case, i, buffers={**input_set.buffers, name: zeroed})
                chunk //= 2


def remove_uniforms(case: Case) -> Iterator[Case]:
    """Drop a uniform nothing reads, and its inputs."""
    used = {src.ref for ins in case.fn.instructions() for src in ins.srcs if src.is_uniform}
    for uniform in case.fn.uniforms:
        if uniform in used:
            continue
        fn = clone_function(case.fn)
        fn.uniforms = [u for u in fn.uniforms if u is not uniform]
        name = uniform.name
        inputs = tuple(
            InputSet(
                s.threads,
                {k: v for k, v in s.scalars.items() if k != name},
                {k: v for k, v in s.buffers.items() if k != name},
            )
            for s in case.inputs
        )
        yield case.replace(fn=fn, inputs=inputs)


def shrink_buffers(case: Case) -> Iterator[Case]:
    """Declare a buffer smaller (its inputs truncated): an access past the new end is
    undefined, so only sizes the failing accesses still fit in survive."""
    for index, uniform in enumerate(case.fn.uniforms):
        if not uniform.is_buffer:
            continue
        for smaller in dict.fromkeys((4, 16, 64, uniform.buffer_bytes // 2)):
            if not 1 <= smaller < uniform.buffer_bytes:
                continue
            fn = clone_function(case.fn)
            new = Uniform(uniform.name, 64, buffer_bytes=smaller)
            fn.uniforms[index] = new
            for ins in fn.instructions():
                ins.srcs = [s.with_ref(new) if s.ref is uniform else s for s in ins.srcs]
            name = uniform.name
            inputs = tuple(
                InputSet(s.threads, s.scalars, {k: v[:smaller] if k == name else v
                                                for k, v in s.buffers.items()})
                for s in case.inputs
            )
            yield case.replace(fn=fn, inputs=inputs)


# --- control flow ---------------------------------------------------------------------------


def remove_block(case: Case) -> Iterator[Case]:
    """Delete one block: a conditional branch into it becomes a jump to its other target, a
    jump into it becomes `stop`; phis lose the vanished edges. The entry goes last, and only
    helps when what follows can be the entry (a failure in code the entry never reaches)."""
    for index in reversed(range(len(case.fn.blocks) if len(case.fn.blocks) > 1 else 0)):

        def edit(fn: Function, index=index) -> dict:
            doomed = fn.blocks[index]
            for block in fn.blocks:
                term = block.terminator
                if term is None or doomed not in term.blocks or block is doomed:
                    continue
                others = [t for t in term.blocks if t is not doomed]
                block.instructions[-1] = _jump(others[0]) if others else _stop()
            del fn.blocks[index]
            return {}

        yield from _tidied_variants(case, edit)


def straighten_branch(case: Case) -> Iterator[Case]:
    """Replace a two-way branch by a jump to one of its targets (the first, then the other);
    end a block with `stop` instead of its branch or jump, which cuts a loop's back edge."""
    for index, block in enumerate(case.fn.blocks):
        term = block.terminator
        if term is None or not term.blocks:
            continue
        sides: tuple[int | None, ...] = (0, 1, None) if len(term.blocks) == 2 else (None,)
        for side in sides:

            def edit(fn: Function, index=index, side=side) -> dict:
                block = fn.blocks[index]
                targets = block.terminator.blocks
                block.instructions[-1] = _stop() if side is None else _jump(targets[side])
                return {}

            yield from _tidied_variants(case, edit)


def _merge_into_predecessor(fn: Function, index: int) -> bool:
    """Append block `index` to its only predecessor when that one jumps to it."""
    block = fn.blocks[index]
    preds = CFG(fn).preds[block]
    if len(preds) != 1 or preds[0] is block:
        return False
    (pred,) = preds
    if pred.terminator is None or pred.terminator.name != "jump":
        return False
    for phi in list(block.phis()):
        replace_uses(fn, phi.dest, phi.srcs[0].ref)
    pred.instructions[-1:] = [ins for ins in block.instructions if not ins.is_phi]
    for successor in block.successors:
        for phi in successor.phis():
            phi.blocks = [pred if b is block else b for b in phi.blocks]
    del fn.blocks[index]
    return True


def merge_blocks(case: Case) -> Iterator[Case]:
    """Fold a block into its only predecessor when that one ends in a jump to it; failing
    that, bypass a block holding nothing but a jump (its predecessors jump straight on)."""
    for index in reversed(range(1, len(case.fn.blocks))):
        fn = clone_function(case.fn)
        if _merge_into_predecessor(fn, index) and tidy(fn):
            yield case.replace(fn=fn)
            continue
        original = case.fn.blocks[index]
        term = original.terminator
        if len(original.instructions) != 1 or term is None or term.name != "jump":
            continue
        fn = clone_function(case.fn)
        block = fn.blocks[index]
        target = block.terminator.blocks[0]
        if target is block:
            continue
        alias = {}
        for pred in CFG(fn).preds[block]:
            pred_term = pred.terminator
            if target in pred_term.blocks:  # would give a branch two equal targets
                alias = None
                break
            pred_term.blocks = [target if b is block else b for b in pred_term.blocks]
            alias[pred] = block
        if alias is None:
            continue
        del fn.blocks[index]
        if tidy(fn, alias=alias):
            yield case.replace(fn=fn)


# --- instructions and operands --------------------------------------------------------------


def _positions(fn: Function, *, terminators: bool = False) -> list[tuple[int, int]]:
    return [
        (b, i)
        for b, block in enumerate(fn.blocks)
        for i, ins in enumerate(block.instructions)
        if terminators or not ins.is_terminator
    ]


def _in_clone(fn: Function, ref):
    """`ref` as seen in a clone: its value of the same name (names are unique in verified
    functions); uniforms and immediates are shared."""
    if isinstance(ref, Value):
        return next(v for v in fn.values() if v.name == ref.name)
    return ref


def remove_phi(case: Case) -> Iterator[Case]:
    """Replace a phi by one of its sources (each distinct one in turn)."""
    for b, i in _positions(case.fn):
        phi = case.fn.blocks[b].instructions[i]
        if not phi.is_phi:
            continue
        for ref in {id(s.ref): s.ref for s in phi.srcs if s.ref is not phi.dest}.values():
            fn = clone_function(case.fn)
            dest = fn.blocks[b].instructions.pop(i).dest
            replace_uses(fn, dest, _in_clone(fn, ref))
            if tidy(fn):
                yield case.replace(fn=fn)


def _without(case: Case, doomed: set[tuple[int, int]]) -> Case | None:
    """The case with the instructions at `doomed` positions deleted, tidied; None if the
    readers of what went cannot all be given a stand-in."""
    fn = clone_function(case.fn)
    for b, block in enumerate(fn.blocks):
        block.instructions[:] = [
            ins for i, ins in enumerate(block.instructions) if (b, i) not in doomed
        ]
    return case.replace(fn=fn) if tidy(fn) else None


def _readers_closure(fn: Function, start: tuple[int, int]) -> set[tuple[int, int]]:
    """The position `start` and those of every non-terminator reading its result,
    transitively."""
    where = {}
    readers: dict[Value, list[Instruction]] = {}
    for b, block in enumerate(fn.blocks):
        for i, ins in enumerate(block.instructions):
            where[ins] = (b, i)
            for value in ins.uses():
                readers.setdefault(value, []).append(ins)
    first = fn.blocks[start[0]].instructions[start[1]]
    doomed = {first}
    work = [first]
    while work:
        ins = work.pop()
        for reader in readers.get(ins.dest, ()) if ins.dest is not None else ():
            if reader not in doomed and not reader.is_terminator:
                doomed.add(reader)
                work.append(reader)
    return {where[ins] for ins in doomed}


def remove_instruction(case: Case) -> Iterator[Case]:
    """Delete one instruction together with everything that reads it; then (when that
    differs) the instruction alone, its readers given a stand-in (#0, a uniform)."""
    for position in _positions(case.fn):
        doomed = _readers_closure(case.fn, position)
        for attempt in ((doomed, {position}) if len(doomed) > 1 else ({position},)):
            candidate = _without(case, attempt)
            if candidate is not None:
                yield candidate


def remove_chunk(case: Case) -> Iterator[Case]:
    """Delete runs of consecutive instructions (halving the run length down to 2), readers
    of what went given stand-ins: big steps for big programs before `remove-instruction`."""
    positions = _positions(case.fn)
    size = len(positions) // 2
    while size >= 2:
        for start in range(0, len(positions), size):
            chosen = set(positions[start : start + size])
            if len(chosen) >= 2:
                candidate = _without(case, chosen)
                if candidate is not None:
                    yield candidate
        size //= 2


def _earlier_values(fn: Function, doms: Dominators, b: int, i: int, limit: int = 3) -> list:
    """Up to `limit` values available at instruction (b, i), earliest first."""
    here = fn.blocks[b]
    found = []
    for block in fn.blocks:
        if block is here:
            candidates = block.instructions[:i]
        elif doms.strictly_dominates(block, here):
            candidates = block.instructions
        else:
            continue
        found += [ins.dest for ins in candidates if ins.dest is not None]
        if len(found) >= limit:
            break
    return found[:limit]


def _replacements(fn: Function, doms: Dominators, defs: dict, b: int, i: int, position: int):
    """What source `position` of instruction (b, i) could read instead, simplest first:
    #0, a uniform, an operand of the value's definition (bypassing it), an earlier value."""
    ins = fn.blocks[b].instructions[i]
    src = ins.srcs[position]
    if src.is_immediate:
        return []
    refs: list = [ZERO]
    if isinstance(src.ref, Value):
        refs += fn.uniforms
        definition = defs.get(src.ref)
        if definition is not None:
            refs += [s.ref for s in definition.srcs if not s.is_immediate]
        if not ins.is_phi:
            refs += _earlier_values(fn, doms, b, i)
    out = []
    for ref in refs:
        if ref is not src.ref and ref is not ins.dest and fits(ins, position, ref):
            if not any(ref is r for r in out):
                out.append(ref)
    return out


def replace_operand(case: Case) -> Iterator[Case]:
    """Make one source read something simpler: a constant, a uniform or an earlier value."""
    doms = Dominators(CFG(case.fn))
    defs = {ins.dest: ins for ins in case.fn.instructions() if ins.dest is not None}
    for b, i in _positions(case.fn, terminators=True):
        ins = case.fn.blocks[b].instructions[i]
        for position in range(len(ins.srcs)):
            for ref in _replacements(case.fn, doms, defs, b, i, position):
                fn = clone_function(case.fn)
                target = fn.blocks[b].instructions[i]
                new = _operand(target, position, _in_clone(fn, ref), target.srcs[position])
                target.srcs[position] = new
                yield case.replace(fn=fn)


def _smaller_attrs(ins: Instruction) -> Iterator[tuple[str, int | str]]:
    for attr in ins.opcode.attrs:
        value = ins.attrs.get(attr.name)
        values = attr.values
        if isinstance(values, range) and isinstance(value, int):
            for smaller in smaller_ints(value, values.start):
                yield attr.name, smaller
        elif value in values and values.index(value) > 0:
            yield attr.name, values[0]


def shrink_constants(case: Case) -> Iterator[Case]:
    """Immediates toward #0 and integer attributes toward their smallest legal value (see
    `smaller_ints`); named attributes (cond, fmt, ...) to the first value listed."""
    for b, i in _positions(case.fn, terminators=True):
        ins = case.fn.blocks[b].instructions[i]
        for position, src in enumerate(ins.srcs):
            if not src.is_immediate or src.ref.bits == 0:
                continue
            for smaller in smaller_ints(src.ref.bits):
                fn = clone_function(case.fn)
                target = fn.blocks[b].instructions[i]
                target.srcs[position] = target.srcs[position].with_ref(Immediate(smaller))
                yield case.replace(fn=fn)
        for name, smaller in list(_smaller_attrs(ins)):
            fn = clone_function(case.fn)
            fn.blocks[b].instructions[i].attrs[name] = smaller
            yield case.replace(fn=fn)


def drop_modifiers(case: Case) -> Iterator[Case]:
    """Remove one `.abs`, `.neg` or `.sat`."""
    for b, i in _positions(case.fn, terminators=True):
        ins = case.fn.blocks[b].instructions[i]
        if ins.sat:
            fn = clone_function(case.fn)
            fn.blocks[b].instructions[i].sat = False
            yield case.replace(fn=fn)
        for position, src in enumerate(ins.srcs):
            for modifier in ("abs", "neg"):
                if getattr(src, modifier):
                    fn = clone_function(case.fn)
                    target = fn.blocks[b].instructions[i]
                    old = target.srcs[position]
                    target.srcs[position] = dataclasses.replace(old, **{modifier: False})
                    yield case.replace(fn=fn)


# The order the reducer runs them in: cheap tests first (fewer passes, sets and threads make
# every later test faster), then the big structural steps, then the fine-grained ones.
DELTAS: tuple[Delta, ...] = (
    Delta("drop-passes", "remove a pass from the pipeline", drop_passes),
    Delta("shrink-threads", "fewer input sets and fewer threads", shrink_threads),
    Delta("remove-block", "delete a block, redirecting branches into it", remove_block),
    Delta("straighten-branch", "a branch becomes a jump, or the block stops", straighten_branch),
    Delta("merge-blocks", "fold a block into its predecessor or bypass it", merge_blocks),
    Delta("remove-chunk", "delete runs of consecutive instructions", remove_chunk),
    Delta("remove-instruction", "delete an instruction (and its readers)", remove_instruction),
    Delta("remove-phi", "replace a phi by one of its sources", remove_phi),
    Delta("replace-operand", "read a constant, uniform or earlier value instead", replace_operand),
    Delta("shrink-constants", "immediates and attributes toward zero", shrink_constants),
    Delta("drop-modifiers", "remove .abs, .neg and .sat", drop_modifiers),
    Delta("remove-uniforms", "drop uniforms nothing reads", remove_uniforms),
    Delta("shrink-buffers", "declare buffers smaller", shrink_buffers),
    Delta("shrink-inputs", "scalars toward 0, buffer bytes zeroed", shrink_inputs),
)


def delta_named(name: str) -> Delta:
    for delta in DELTAS:
        if delta.name == name:
            return delta
    raise KeyError(name)
