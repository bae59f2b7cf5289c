"""The legal, distinct instances of a rule: what the audit proves a rule on.

An `Instance` is a skeleton (`agxir.rewrite.skeletons`) with operand forms that is valid IR
and that the real matcher accepts (precondition included, evaluated by the caller's
evaluator), together with the replacement the real builder makes. Two reductions keep the
number of proofs small without losing instances:

* Read-value collapse. An operand that the replacement copies verbatim and that every
  instruction, before and after, reads the same way (`reading`: the same reader at the same
  width) only matters through the value read. Proving the rule with that operand as an
  unconstrained register of the read width covers all of its forms at once (modifiers,
  immediates, narrower sizes), so its forms are not enumerated; `collapsed` names it.
* Focus shortcut. A focus rule keeps the root's opcode, attributes and other operands, so
  when every source is read the same way before and after, the root computes the same iff
  the rewritten operand reads the same value. The proof compares the two reads, and one
  representative of the root's other attributes and operands stands for all of them. This
  asks of a focus rule's precondition that it look only at the use site's opcode,
  destination and rewritten source, not at the site's other operands or attributes.

Both rely on the semantics reading operands only through `agxir.opcodes.operands`, as
`reading` classifies them; tests/oracles/smt/test_rules.py checks that classification against
every slot of the table. Identical instances (value and uniform forms read the same) are
proved once: `signature` names what a proof depends on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import groupby, product

from agxir.ir import Immediate, Instruction, Operand, Uniform, Value
from agxir.rewrite.matcher import Match, Namer, build, match_at
from agxir.rewrite.pattern import Rule
from agxir.rewrite.skeletons import (
    Form,
    Placeholder,
    Skeleton,
    materialize,
    operand_forms,
    reading,
    shape_function,
    skeletons,
)
from agxir.verifier import verify


@dataclass
class Instance:
    """A legal instance: `source` (pattern instructions, root last), `target` (inserted
    instructions, then the root's new form), the `match`, each variable's operand, the
    computed immediates' terms, and what the proof may collapse."""

    skeleton: Skeleton
    forms: dict[str, Form]
    source: list[Instruction]
    target: list[Instruction]
    match: Match
    operands: dict[str, Operand]
    computed: dict = field(default_factory=dict)
    collapsed: dict[str, int] = field(default_factory=dict)
    shortcut: bool = False

    @property
    def root(self) -> Instruction:
        return self.source[-1]

    def inputs(self) -> list[Value | Uniform]:
        """The register variables, each once: what a replay feeds in."""
        refs = []
        for name, var in self.skeleton.vars.items():
            ref = self.operands[name].ref
            if var.node is None and isinstance(ref, (Value, Uniform)) and ref not in refs:
                refs.append(ref)
        return refs


# --- instances ------------------------------------------------------------------------------


def _templates(rule: Rule) -> list:
    return [rule.replacement] if rule.focused else [t for e in rule.emits for t in e.srcs]


def _copied_verbatim(rule: Rule, name: str) -> bool:
    """The replacement uses `name` only as it matched (or not at all)."""
    return all(t.verbatim for t in _templates(rule) if getattr(t, "name", None) == name)


def _occurrences(instructions: list[Instruction], ref) -> list[tuple[Instruction, int]]:
    return [
        (ins, position)
        for ins in instructions
        for position, src in enumerate(ins.srcs)
        if src.ref is ref
    ]


def _collapsible(rule: Rule, inst: Instance) -> dict[str, int]:
    """Variables proved through their read value: name -> the width they are read at."""
    found = {}
    for name, var in inst.skeleton.vars.items():
        pat = var.pattern
        if var.node is not None or pat.bits is not None or pat.kinds == {"immediate"}:
            continue
        if not _copied_verbatim(rule, name):
            continue
        ref = inst.operands[name].ref
        sites = _occurrences(inst.source, ref) + _occurrences(inst.target, ref)
        readings = {reading(ins, position) for ins, position in sites}
        if len(readings) == 1:
            found[name] = next(iter(readings))[1]
    return found


def shortcut_readings(inst: Instance) -> tuple | None:
    """For a focus rule: the (before, after) readings of the rewritten source when the focus
    shortcut applies (every source, the rewritten one included, read as before)."""
    position = inst.skeleton.position
    before, after = inst.root, inst.target[-1]
    if position is None or len(inst.target) != 1 or after.opcode is not before.opcode:
        return None
    readings = [(reading(before, q), reading(after, q)) for q in range(len(before.srcs))]
    if any(a != b for a, b in readings):
        return None
    return readings[position]


def _token(operand: Operand, names: dict, collapsed: dict) -> str:
    ref = operand.ref
    mods = ".abs" * operand.abs + ".neg" * operand.neg
    if id(ref) in collapsed:
        return collapsed[id(ref)]
    if isinstance(ref, Placeholder):
        return f"#{ref.var}{mods}"
    if isinstance(ref, Immediate):
        return f"#{ref.bits}{mods}"
    return f"{names.get(id(ref), ref.name)}:{ref.size}{mods}"


def _text(ins: Instruction, names: dict, collapsed: dict) -> str:
    srcs = ", ".join(_token(src, names, collapsed) for src in ins.srcs)
    dest = f"{names.get(id(ins.dest), '?')}:{ins.dest.size} = " if ins.dest is not None else ""
    attrs = " ".join(f"{k}={v}" for k, v in sorted(ins.attrs.items()))
    return f"{dest}{ins.name}{'.sat' * ins.sat} {srcs} {attrs}"


def signature(inst: Instance) -> tuple:
    """What the proof of `inst` depends on: two instances with equal signatures have the same
    query (value and uniform inputs are the same bits)."""
    names: dict[int, str] = {}
    for name, operand in inst.operands.items():
        names.setdefault(id(operand.ref), name)
    for k, ins in enumerate(inst.source + inst.target):
        if ins.dest is not None:
            names.setdefault(id(ins.dest), f"d{k}")
    collapsed = {id(inst.operands[n].ref): f"<{n}:{w}>" for n, w in inst.collapsed.items()}
    defs = tuple(_text(ins, names, collapsed) for ins in inst.source[:-1])
    if inst.shortcut:
        position = inst.skeleton.position
        before, after = inst.root, inst.target[-1]
        return ("read", defs, reading(before, position), _token(before.srcs[position], names, {}),
                _token(after.srcs[position], names, {}))
    return ("full", defs, _text(inst.root, names, collapsed),
            tuple(_text(ins, names, collapsed) for ins in inst.target))


def _kinds_first(lists: list[list[Form]]) -> Iterator[tuple[Form, ...]]:
    """Every combination, those where only kinds vary (first modifiers) first: preconditions
    that look at kinds find an accepted combination quickly."""
    plain = [[f for f in forms if (f.abs, f.neg) == (forms[0].abs, forms[0].neg)] for forms in lists]
    yield from product(*plain)
    for combo in product(*lists):
        if any((f.abs, f.neg) != (forms[0].abs, forms[0].neg) for f, forms in zip(combo, lists)):
            yield combo


NO_MATCH, ILLEGAL = "no match", "illegal"


def _attempt(rule: Rule, skeleton: Skeleton, forms: dict[str, Form], evaluator):
    """An Instance, or why not: NO_MATCH (the matcher or the precondition declines) or
    ILLEGAL (not valid IR, so no program contains it)."""
    mat = materialize(skeleton, forms)
    root = mat.instructions[-1]
    defs = {ins.dest: ins for ins in mat.instructions[:-1] if ins.dest is not None}
    evaluator.begin()
    found = match_at(rule, root, defs, skeleton.position, evaluator)
    if found is None or len(found.matched) != len(mat.instructions):
        return NO_MATCH
    inst = Instance(skeleton, forms, mat.instructions, [], found, mat.operands)
    if verify(shape_function(mat.instructions[:-1], [root], inst.inputs())):
        return ILLEGAL
    namer = Namer([ref.name for ref in inst.inputs()] + [f"def{i}" for i in range(len(defs) + 1)])
    inst.target = build(rule, found, namer, evaluator)
    inst.computed = dict(evaluator.computed)
    return inst


def _search(rule, skeleton, lists: dict, fixed: dict, free: list, evaluator):
    """The first accepted instance with `fixed` forms and any forms of `free`, or why none."""
    why = NO_MATCH
    for combo in _kinds_first([lists[name] for name in free]):
        found = _attempt(rule, skeleton, {**fixed, **dict(zip(free, combo))}, evaluator)
        if isinstance(found, Instance):
            return found
        why = ILLEGAL if found == ILLEGAL else why
    return why


def _skeleton_instances(rule: Rule, skeleton: Skeleton, evaluator, full: bool, fixed: dict):
    """(status, instances) of one skeleton: status is NO_MATCH, ILLEGAL, "shortcut" or "full"."""
    slots = skeleton.slots()
    lists = {name: operand_forms(var, slots[name], skeleton) for name, var in skeleton.vars.items()}
    for name, form in fixed.items():
        lists[name] = [form] if form in lists.get(name, ()) else []
    # A focus rule's precondition looks at the use site's row, destination and the rewritten
    # source, not at the site's other operands: those take their first form while searching.
    anonymous = [name for name, var in skeleton.vars.items() if var.anonymous]
    first = {name: lists[name][0] for name in anonymous if lists[name]}
    named = [name for name in lists if name not in first]
    rep = _search(rule, skeleton, lists, first, named, evaluator)
    if not isinstance(rep, Instance):
        return rep, iter(())
    collapsed = {} if full else _collapsible(rule, rep)
    shortcut = not full and rule.focused and shortcut_readings(rep) is not None
    if shortcut:
        for name in anonymous:
            collapsed.setdefault(name, 0)  # not read by the proof at all
    return ("shortcut" if shortcut else "full"), _expand(
        rule, skeleton, lists, collapsed, shortcut, first, evaluator
    )


def _expand(rule, skeleton, lists, collapsed, shortcut, first, evaluator):
    expand = [name for name in lists if name not in collapsed]
    free = [name for name in collapsed if name not in first]
    fixed_first = {name: form for name, form in first.items() if name in collapsed}
    for combo in product(*(lists[name] for name in expand)):
        fixed = {**fixed_first, **dict(zip(expand, combo))}
        inst = _search(rule, skeleton, lists, fixed, free, evaluator)
        if isinstance(inst, Instance):
            inst.collapsed = {n: w for n, w in collapsed.items() if w}
            inst.shortcut = shortcut
            yield inst


def instances(rule: Rule, evaluator, full: bool = False, key: tuple | None = None,
              forms: dict[str, Form] | None = None) -> Iterator[Instance]:
    """Every distinct legal instance of `rule`, each once by `signature`.

    `evaluator` evaluates preconditions and computed immediates (it must have `begin()`, which
    starts an instance, and `computed`, the immediates made since). `full` turns the
    reductions off (to make a counterexample found with them concrete); `key` and `forms`
    then restrict to one skeleton group and to given forms of named operands.
    """
    seen: set = set()
    for group_key, group in groupby(skeletons(rule), key=lambda s: s.key):
        if key is not None and group_key != key:
            continue
        for skeleton in group:
            status, items = _skeleton_instances(rule, skeleton, evaluator, full, forms or {})
            if status == NO_MATCH and skeleton.minimal:
                break  # the precondition declines the use site, whatever the representatives
            for inst in items:
                sig = signature(inst)
                if sig not in seen:
                    seen.add(sig)
                    yield inst
            if status == "shortcut":
                break  # one representative's read proof covers the whole group
