"""The one matcher for rewrite rules, the replacement builder, and the pass driver.

`match_at(rule, root, defs, position)` matches a rule's pattern at one instruction (and, for
a focus rule, one source position), following SSA definitions through `defs`, and checks the
precondition; it returns a `Match` or None. `build(rule, match, namer)` makes the replacement
instructions without touching the function. `apply_rules(fn, rules, order, once_per_root)`
walks a function and rewrites in place: that is what every rule-table pass runs.

What is computed from bindings goes through an evaluator: `CONCRETE_EVALUATOR` reads the
matched immediates as ints and runs computed parts on `ConcreteBitVectors`. The audit
(`oracles.smt.rules`) passes its own evaluator, so the same match, precondition and build code
produce z3 terms for the proof: there is no second copy of a rule's meaning.

Two listeners, each a context manager that costs nothing while none is open:
`counting_rule_hits()` counts the rewrites `apply_rules` makes, by rule;
`recording_near_misses()` collects (rule, where) for each rule whose root opcode matched but
whose match failed further on (`where`: "arity", "src<i>" for source position i,
"precondition", or "unchanged" when it matched but its replacement was the root as it was;
a root whose own size or attributes differ is no near miss). A fuzzing campaign uses near
misses as guidance.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

from agxir.counting import NestedCounters
from agxir.ir import Block, Function, Immediate, Instruction, Operand, Uniform, Value
from agxir.opcodes.spec import Src
from agxir.opcodes.table import OPCODES
from agxir.rewrite.concrete import CONCRETE
from agxir.rewrite.pattern import Bind, Emit, Ins, NewImm, OneOf, Opnd, Rule, Use
from agxir.rewrite.rule_index import NO_RULES, index_of, rules_for
from agxir.rewrite.rule_index import header as pattern_header
from agxir.verifier import IMMEDIATE_LIMITS

ORDERS = ("forward", "backward")
MAX_REWRITES_PER_ROOT = 1000


class RuleError(Exception):
    """A rule that cannot be applied as written (a bug in the rule table, not the program)."""


def operand_kind(operand: Operand) -> str:
    if isinstance(operand.ref, Immediate):
        return "immediate"
    return "uniform" if isinstance(operand.ref, Uniform) else "value"


def slot_spec(ins: Instruction, position: int) -> Src | None:
    """The row's description of source `position`; None for phi sources."""
    srcs = ins.opcode.srcs
    return srcs[position] if position < len(srcs) else None


# --- evaluators -----------------------------------------------------------------------------


class ConcreteEvaluator:
    """Computed parts on Python ints: immediates are their 16-bit bits."""

    machine = CONCRETE

    def immediate_value(self, name: str, operand: Operand):
        return operand.ref.bits & 0xFFFF

    def immediate(self, bits, spec: Src | None, abs: bool, neg: bool) -> Operand:
        value = int(bits)
        if spec is None or spec.imm is None:
            raise RuleError("a computed immediate in a source that takes no immediates")
        limit, kind = IMMEDIATE_LIMITS[spec.imm]
        if not 0 <= value < limit:
            raise RuleError(f"computed immediate #{value} does not fit the {kind}")
        return Operand(Immediate(value), abs, neg)

    def decide(self, condition) -> Any:
        return bool(condition)


CONCRETE_EVALUATOR = ConcreteEvaluator()


class Bindings(Mapping):
    """What a match bound, by name, plus the machine computed parts run on.

    `b[name]`: an Operand, attribute value, size, opcode name or Instruction. `b.m`: the
    BitVectors. `b.imm(name)`: a bound immediate's 16-bit value on that machine. `b.root` is the
    matched root; `b.position` the focused source's position (focus rules).
    """

    def __init__(self, values: dict, evaluator, root: Instruction, position: int | None):
        self._values = values
        self.evaluator = evaluator
        self.root = root
        self.position = position

    def __getitem__(self, name: str):
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    @property
    def m(self):
        return self.evaluator.machine

    def imm(self, name: str):
        operand = self._values[name]
        if not isinstance(operand, Operand) or not operand.is_immediate:
            raise RuleError(f"{name!r} is not a bound immediate")
        return self.evaluator.immediate_value(name, operand)


@dataclass
class Match:
    """A rule matched at `root`. `matched`: the pattern's instructions, definitions first,
    root last. `condition`: True, or the precondition as a term (proofs only)."""

    rule: Rule
    root: Instruction
    bindings: Bindings
    position: int | None
    condition: Any
    matched: tuple[Instruction, ...]


# --- matching -------------------------------------------------------------------------------


def _same(a, b) -> bool:
    # bool is an int and 1 == 1.0: a bound thing matches again only with its own type.
    return type(a) is type(b) and a == b


class _State:
    """Bindings so far and the instructions matched so far; copied on every change, so a
    failed alternative leaves nothing behind."""

    __slots__ = ("values", "matched")

    def __init__(self, values: dict, matched: tuple) -> None:
        self.values = values
        self.matched = matched

    def bind(self, name: str | None, thing) -> _State | None:
        if name is None:
            return self
        if name in self.values:
            return self if _same(self.values[name], thing) else None
        return _State({**self.values, name: thing}, self.matched)


def _match_operand(pat: Opnd, operand: Operand, state: _State, defs, path) -> _State | None:
    if operand_kind(operand) not in pat.kinds:
        return None
    if pat.bits is not None and operand.ref.bits != pat.bits:
        return None
    if pat.abs is not None and operand.abs != pat.abs:
        return None
    if pat.neg is not None and operand.neg != pat.neg:
        return None
    if isinstance(pat.size, int) and operand.size != pat.size:
        return None
    if isinstance(pat.size, str):
        state = state.bind(pat.size, operand.size)
        if state is None:
            return None
    if pat.defined_by is not None:
        definition = defs.get(operand.ref)
        # A definition already on the path is a mov cycle in unreachable code.
        if definition is None or definition in path:
            return None
        state = _match_instruction(pat.defined_by, definition, state, defs, path)
        if state is None:
            return None
    return state.bind(pat.name, operand)


def _match_instruction(pat: Ins, ins: Instruction, state: _State, defs, path) -> _State | None:
    if pat.opcode is not None and ins.name not in pat.opcodes:
        return None
    if pat.size is not None:
        if ins.dest is None:
            return None
        if isinstance(pat.size, int) and ins.dest.size != pat.size:
            return None
        if isinstance(pat.size, str):
            state = state.bind(pat.size, ins.dest.size)
    if state is None or (pat.sat is not None and ins.sat != pat.sat):
        return None
    for name, wanted in pat.attrs.items():
        if name not in ins.attrs:
            return None
        have = ins.attrs[name]
        if isinstance(wanted, Bind):
            state = state.bind(wanted.name, have)
            if state is None:
                return None
        elif isinstance(wanted, OneOf):
            if type(have) is not type(wanted.values[0]) or have not in wanted.members:
                return None
            state = state.bind(wanted.name, have)
            if state is None:
                return None
        elif not _same(have, wanted):
            return None
    if pat.srcs is not None:
        if len(ins.srcs) != len(pat.srcs):
            return None
        inner = path | {ins}
        for src_pattern, operand in zip(pat.srcs, ins.srcs):
            state = _match_operand(src_pattern, operand, state, defs, inner)
            if state is None:
                return None
    state = state.bind(pat.op, ins.name)
    state = state.bind(pat.name, ins) if state is not None else None
    if state is None:
        return None
    return _State(state.values, state.matched + (ins,))


def match_at(
    rule: Rule,
    root: Instruction,
    defs: Mapping[Value, Instruction],
    position: int | None = None,
    evaluator=CONCRETE_EVALUATOR,
) -> Match | None:
    """`rule` matched at `root` (at source `position` for a focus rule), precondition
    included; None when it does not match."""
    pattern = rule.pattern
    state = _match_instruction(pattern, root, _State({}, ()), defs, frozenset())
    if state is None:
        return None
    if rule.focused:
        if position is None or position >= len(root.srcs):
            return None
        state = _match_operand(pattern.focus, root.srcs[position], state, defs, frozenset({root}))
        if state is None:
            return None
        # The focus's definitions come before the root.
        matched = state.matched[1:] + state.matched[:1]
        state = _State(state.values, matched)
    bindings = Bindings(state.values, evaluator, root, position)
    condition = True
    if rule.precondition is not None:
        condition = evaluator.decide(rule.precondition(bindings))
        if condition is False:
            return None
    return Match(rule, root, bindings, position, condition, state.matched)


# --- building replacements ------------------------------------------------------------------


def _resolve(thing, b: Bindings):
    if isinstance(thing, Bind):
        return b[thing.name]
    if callable(thing):
        return thing(b)
    return thing


def _size(thing, b: Bindings) -> int:
    if isinstance(thing, str):
        return b[thing]
    size = _resolve(thing, b)
    if not isinstance(size, int):
        raise RuleError("a template that makes a new value needs its size")
    return size


def _source(template, b: Bindings, made: dict, spec: Src | None, evaluator) -> Operand:
    if isinstance(template, NewImm):
        bits = template.bits(b) if callable(template.bits) else b.m.const(template.bits, 16)
        return evaluator.immediate(bits, spec, template.abs, template.neg)
    if not isinstance(template, Use):
        raise RuleError(f"not a source template: {template!r}")
    if template.name in made:
        base = Operand(made[template.name])
    else:
        try:
            base = b[template.name]
        except KeyError:
            raise RuleError(f"template uses {template.name!r}, which nothing binds") from None
        if isinstance(base, Instruction):
            base = Operand(base.dest)
    abs_ = base.abs if template.abs is None else bool(_resolve(template.abs, b))
    neg = base.neg if template.neg is None else bool(_resolve(template.neg, b))
    return Operand(base.ref, abs_, neg)


class Namer:
    """Fresh value names for a function: the hint, or the hint and a number."""

    def __init__(self, taken) -> None:
        self.taken = set(taken)

    def __call__(self, hint: str) -> str:
        hint = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "t"
        name, n = hint, 0
        while name in self.taken:
            n += 1
            name = f"{hint}_{n}"
        self.taken.add(name)
        return name


def build(rule: Rule, match: Match, namer, evaluator=CONCRETE_EVALUATOR) -> list[Instruction]:
    """The replacement: new instructions to insert before the root, then the root's new
    form (same destination and targets). Nothing in the function changes."""
    b, root = match.bindings, match.root
    if rule.focused:
        srcs = list(root.srcs)
        spec = slot_spec(root, match.position)
        srcs[match.position] = _source(rule.replacement, b, {}, spec, evaluator)
        return [Instruction(root.opcode, root.dest, srcs, dict(root.attrs), list(root.blocks), root.sat)]
    made: dict[str, Value] = {}
    built = []
    for k, emit in enumerate(rule.emits):
        last = k == len(rule.emits) - 1
        built.append(_emit(emit, b, made, namer, evaluator, root if last else None))
    return built


def _emit(emit: Emit, b: Bindings, made: dict, namer, evaluator, root) -> Instruction:
    name = _resolve(emit.opcode, b)
    row = OPCODES.get(name)
    if row is None:
        raise RuleError(f"template opcode {name!r} is not in the table")
    srcs = [
        _source(t, b, made, row.srcs[i] if i < len(row.srcs) else None, evaluator)
        for i, t in enumerate(emit.srcs)
    ]
    attrs = {attr: _resolve(v, b) for attr, v in emit.attrs.items()}
    if root is not None:
        dest, blocks = root.dest, list(root.blocks)
    else:
        dest, blocks = Value(namer(emit.name or name), _size(emit.size, b)), []
    if emit.name is not None:
        made[emit.name] = dest
    return Instruction(row, dest, srcs, attrs, blocks, bool(_resolve(emit.sat, b)))


# --- the driver -------------------------------------------------------------------------------


def _unchanged(root: Instruction, built: list[Instruction]) -> bool:
    (new,) = built if len(built) == 1 else (None,)
    return (
        new is not None
        and new.opcode is root.opcode
        and new.srcs == root.srcs
        and new.attrs == root.attrs
        and new.sat == root.sat
    )


def _splice(block: Block, root: Instruction, built: list[Instruction], defs: dict) -> None:
    inserted, new = built[:-1], built[-1]
    if inserted and root.is_phi:
        raise RuleError("a rule cannot insert instructions before a phi")
    index = next(i for i, ins in enumerate(block.instructions) if ins is root)
    root.opcode, root.srcs, root.attrs, root.sat = new.opcode, new.srcs, new.attrs, new.sat
    block.instructions[index:index] = inserted
    for ins in inserted:
        defs[ins.dest] = ins


def definitions(fn: Function) -> dict[Value, Instruction]:
    """Every value's defining instruction (as `agxir.passes.pass_.definitions`; that package
    imports this one, so it is not imported here)."""
    return {ins.dest: ins for ins in fn.instructions() if ins.dest is not None}


def _roots(fn: Function, order: str) -> list[tuple[Block, Instruction]]:
    if order == "forward":
        return [(block, ins) for block in fn.blocks for ins in block.instructions]
    if order == "backward":
        return [(block, ins) for block in reversed(fn.blocks) for ins in reversed(block.instructions)]
    raise ValueError(f"order must be one of {ORDERS}, not {order!r}")


# apply_rules counts each rewrite it makes in the innermost open counter (nothing is
# counted when none is open).
_RULE_HITS = NestedCounters()


def counting_rule_hits() -> AbstractContextManager[Counter]:
    """Within the block, the returned Counter counts rewrites by rule name (the campaign
    wraps each pass it runs in one, to report how often each rule fired)."""
    return _RULE_HITS.counting()


# The near-miss sets `recording_near_misses` opened, innermost last (see the module docstring).
_NEAR_MISSES: list[set] = []


@contextmanager
def recording_near_misses() -> Iterator[set]:
    """Within the block, the returned set collects (rule name, where) for each near miss of
    `apply_rules` (see the module docstring)."""
    misses: set = set()
    _NEAR_MISSES.append(misses)
    try:
        yield misses
    finally:
        _NEAR_MISSES.pop()


_NO_PATH: frozenset = frozenset()

def match_or_where(rule: Rule, root: Instruction, defs, position: int | None) -> Match | str:
    """What `match_at` (concrete) returns, or instead of None where the match failed:
    "root", "arity", "src<i>" or "precondition". The root's own fields are matched before
    its sources (`match_at` binds them after: bindings only ever agree or conflict, so the
    result is the same), which is what tells a failing source from a failing root."""
    return _match_or_where(rule, pattern_header(rule.pattern), root, defs, position)


def _match_or_where(rule: Rule, header: Ins, root: Instruction, defs, position) -> Match | str:
    pattern = rule.pattern
    state = _match_instruction(header, root, _State({}, ()), defs, _NO_PATH)
    if state is None:
        return "root"
    inner = frozenset({root})
    if pattern.srcs is not None:
        if len(root.srcs) != len(pattern.srcs):
            return "arity"
        for i, (src_pattern, operand) in enumerate(zip(pattern.srcs, root.srcs)):
            state = _match_operand(src_pattern, operand, state, defs, inner)
            if state is None:
                return f"src{i}"
    if rule.focused:
        if position is None or position >= len(root.srcs):
            return "arity"
        state = _match_operand(pattern.focus, root.srcs[position], state, defs, inner)
        if state is None:
            return f"src{position}"
    matched = state.matched[1:] + state.matched[:1]  # the root last, as match_at has it
    bindings = Bindings(state.values, CONCRETE_EVALUATOR, root, position)
    condition = True
    if rule.precondition is not None:
        condition = CONCRETE_EVALUATOR.decide(rule.precondition(bindings))
        if condition is False:
            return "precondition"
    return Match(rule, root, bindings, position, condition, matched)


def apply_rules(fn: Function, rules, order: str = "forward", once_per_root: bool = True) -> bool:
    """Rewrite `fn` in place with `rules`; True iff anything changed (when False, `fn` is
    untouched).

    Instructions present when the walk starts are visited in `order` (forward: blocks and
    instructions in order; backward: both reversed, Mesa's backward pass order); instructions a
    rewrite inserts are not visited in the same walk. At each root the sites are tried in
    order: the root itself (rules without focus, in table order), then each source position
    (focus rules, in table order). The first rule that matches, satisfies its precondition and
    changes something is applied. With `once_per_root`, each site is rewritten at most once
    per walk and a whole-root rewrite ends the visit (Mesa's single forward walk); without it,
    rewriting repeats until no rule applies.
    """
    by_root = index_of(rules)
    defs = definitions(fn)
    namer = _LazyNamer(fn)
    changed = False
    for block, root in _roots(fn, order):
        dest = root.dest
        key = (root.opcode.name, dest.size if dest is not None else None)
        candidates = by_root.get(key)
        if candidates is None:  # most roots match no rule's root opcode
            candidates = by_root[key] = rules_for(by_root.rules, *key)
        if candidates is NO_RULES:
            continue
        whole, focused = candidates
        done: set = set()
        for _ in range(MAX_REWRITES_PER_ROOT):
            site, built, rule = _first_rewrite(root, whole, focused, defs, done, namer)
            if built is None:
                break
            _splice(block, root, built, defs)
            changed = True
            _RULE_HITS.add(rule.name)
            if once_per_root:
                done.add(site)
                if site is None:
                    break
        else:
            raise RuleError(f"rules keep rewriting {root!r}; a rule undoes another")
    return changed


class _LazyNamer:
    """A `Namer` over the function's value names, collected only when a rule makes a value."""

    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.namer: Namer | None = None

    def __call__(self, hint: str) -> str:
        if self.namer is None:
            self.namer = Namer(value.name for value in self.fn.values())
        return self.namer(hint)


def _first_rewrite(root, whole, focused, defs, done, namer) -> tuple[Any, list | None, Rule | None]:
    """The first rewrite at `root` (see `apply_rules`): (site, replacement, rule), or Nones.
    `whole` and `focused` are the root's candidates as `rules_for` gives them."""
    if whole and None not in done:
        for rule, header in whole:
            built = _try(rule, header, root, defs, None, namer)
            if built is not None:
                return None, built, rule
    if focused:
        srcs = root.srcs
        for site in range(len(srcs)):
            if site in done:
                continue
            definition = defs.get(srcs[site].ref)
            for rule, wanted in focused:
                if wanted is not None and (
                        definition is None or (wanted and definition.name not in wanted)):
                    if _NEAR_MISSES:  # the root matched, the focus did not
                        _NEAR_MISSES[-1].add((rule.name, f"src{site}"))
                    continue
                built = _try(rule, None, root, defs, site, namer)
                if built is not None:
                    return site, built, rule
    return None, None, None


def _try(rule: Rule, header: Ins | None, root, defs, site, namer) -> list | None:
    """The replacement `rule` makes at `root` (at `site`), or None (and near misses noted)."""
    if _NEAR_MISSES:
        found = _match_or_where(rule, header or pattern_header(rule.pattern), root, defs, site)
        if isinstance(found, str):
            if found != "root":  # the root's opcode matched, its fields did not
                _NEAR_MISSES[-1].add((rule.name, found))
            return None
    else:
        found = match_at(rule, root, defs, site)
        if found is None:
            return None
    built = build(rule, found, namer)
    if not _unchanged(root, built):
        return built
    if _NEAR_MISSES:
        _NEAR_MISSES[-1].add((rule.name, "unchanged"))
    return None


def matches(rule: Rule, root: Instruction, defs, evaluator=CONCRETE_EVALUATOR) -> Iterator[Match]:
    """Every match of `rule` at `root`: one, or one per matching position for a focus rule."""
    positions = range(len(root.srcs)) if rule.focused else (None,)
    for position in positions:
        found = match_at(rule, root, defs, position, evaluator)
        if found is not None:
            yield found
