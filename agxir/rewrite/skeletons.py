"""The shapes of a rule's instances, and how a shape becomes IR.

A *skeleton* fixes everything about the instructions a pattern matches except the operands'
forms: each opcode alternative (every row for a wildcard root), destination size, attribute
value (bound, fixed or left free by the pattern: every legal value), `.sat`, and each operand
variable's size class (a register size, or `IMM` for an immediate). A *form* then picks an
operand's kind (value, uniform, immediate) and modifiers; `materialize` turns a skeleton with
forms into instructions and `shape_function` wraps instructions in a verifiable (and
runnable) function. `reading` says how an instruction reads each source, which is what the
proof's reductions (`agxir.rewrite.instances`) rest on.

For a focus rule's root, the choices that cannot change how the rewritten source is read
(attributes other than a compare's condition, `.sat`, sources outside compare slots) are
*representatives*: they are left out of the skeleton's key and vary innermost, so each key's
skeletons come together and one of them can stand for the rest.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from agxir.ir import Block, Function, Immediate, Instruction, Operand, Uniform, Value
from agxir.opcodes.operands import SIGNED_INT_CONDS
from agxir.opcodes.spec import ADDR, AT_MOST_DEST, FLOAT, INT, SAME_AS_DEST, Opcode, Src
from agxir.opcodes.table import OPCODES, ROWS
from agxir.rewrite.pattern import REGISTER, Bind, Ins, OneOf, Opnd, Rule

IMM = "imm"  # the size class of an immediate operand (16-bit)
MAX_ATTR_VALUES = 64
BUFFER_BYTES = 64  # the one device buffer proofs and replays use, at buffer_base(0)
WILDCARD_ROWS = tuple(row.name for row in ROWS if row.srcs or row.variadic)
MEMORY_OPS = frozenset({"device_load", "device_store"})
_ANONYMOUS = Opnd()


class PatternTooWide(ValueError):
    """A pattern leaves free something too large to enumerate (fix or bind it)."""


@dataclass(frozen=True)
class Placeholder(Immediate):
    """An immediate whose value is a proof variable; `bits` is a stand-in legal anywhere."""

    var: str = ""


@dataclass(frozen=True)
class Form:
    kind: str  # "value", "uniform" or "immediate"
    abs: bool = False
    neg: bool = False


@dataclass(frozen=True)
class Var:
    """An operand variable: a named pattern operand, or an anonymous one. `size` is a
    register size or IMM; `node` is set when the operand is a pattern definition's result."""

    name: str
    pattern: Opnd
    size: int | str
    node: int | None = None
    anonymous: bool = False


@dataclass(frozen=True)
class Node:
    row: Opcode
    dest: int | None
    attrs: dict
    sat: bool
    srcs: tuple[str, ...]  # variable names, one per source


@dataclass
class Skeleton:
    nodes: list[Node]  # pattern instructions, definitions first, root last
    vars: dict[str, Var]
    position: int | None  # a focus rule's rewritten source
    key: tuple  # every choice except the focus root's representatives
    minimal: bool  # the root's attributes and other operands are representatives

    def slots(self) -> dict[str, list[tuple[int, int]]]:
        found: dict[str, list[tuple[int, int]]] = {name: [] for name in self.vars}
        for i, node in enumerate(self.nodes):
            for position, name in enumerate(node.srcs):
                found[name].append((i, position))
        return found


# --- how a slot reads its operand ------------------------------------------------------------


def _compare_slot(row: Opcode, position: int) -> bool:
    spec = row.srcs[position]
    return (
        position < 2
        and spec.width_rule is None
        and spec.kind in (INT, FLOAT)
        and any(attr.name == "cond" for attr in row.attrs)
    )


def has_compare_slots(row: Opcode) -> bool:
    return any(_compare_slot(row, i) for i in range(len(row.srcs)))


def reading(ins: Instruction, position: int) -> tuple:
    """How `ins` reads source `position`: (reader, width[, signed]). Two slots with equal
    readings turn the same operand into the same value (agxir.opcodes.operands)."""
    src = ins.srcs[position]
    if ins.is_phi:
        return ("raw", src.size)
    row = ins.opcode
    spec = row.srcs[position]
    if _compare_slot(row, position):
        width = max(ins.srcs[0].size, ins.srcs[1].size)
        if spec.kind == INT:
            return ("int_cmp", width, ins.attrs.get("cond") in SIGNED_INT_CONDS)
        return ("float_cmp", width)
    if spec.kind == INT:
        # INT sources without a width rule are memory indices, read at 64 bits.
        return ("int", ins.dest.size if spec.width_rule else 64)
    if spec.kind == FLOAT:
        return ("float", ins.dest.size)
    if src.is_immediate and spec.width_rule == SAME_AS_DEST:
        return ("raw", ins.dest.size)
    return ("raw", src.size)


# --- skeletons ------------------------------------------------------------------------------


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


class _State:
    """Generator state, copied on change: bound names, variables, nodes, the key."""

    __slots__ = ("env", "vars", "nodes", "key", "count")

    def __init__(self, env=None, vars=None, nodes=(), key=(), count=0):
        self.env = env or {}
        self.vars = vars or {}
        self.nodes = nodes
        self.key = key
        self.count = count

    def _with(self, **changes) -> _State:
        fields = {name: getattr(self, name) for name in self.__slots__}
        return _State(**{**fields, **changes})

    def bind(self, name: str | None, thing) -> _State | None:
        if name is None:
            return self
        if name in self.env:
            return self if _same(self.env[name], thing) else None
        return self._with(env={**self.env, name: thing})

    def keyed(self, choice, keyed: bool = True) -> _State:
        return self._with(key=self.key + (choice,)) if keyed else self

    def fresh(self) -> tuple[str, _State]:
        return f"_v{self.count}", self._with(count=self.count + 1)


def _bind_size(size: int | str | None, actual: int, st: _State) -> _State | None:
    if size is None:
        return st
    if isinstance(size, int):
        return st if size == actual else None
    return st.bind(size, actual)


def _reading_attr(row: Opcode, name: str) -> bool:
    """Attributes that change how a source is read: a compare row's condition."""
    return name == "cond" and has_compare_slots(row)


class _Generator:
    """Enumerates skeletons. For a focus rule's root, the choices that cannot change how the
    rewritten source is read (attributes other than a compare's condition, `.sat`, operands
    outside compare slots) are representatives: they are left out of the skeleton's key and
    vary innermost, so each key's skeletons come together."""

    def __init__(self, rule: Rule) -> None:
        self.rule = rule

    def skeletons(self) -> Iterator[Skeleton]:
        pattern = self.rule.pattern
        for st, _ in self.ins(pattern, _State(), root=True):
            position = st.env.get("\0position")
            yield Skeleton(list(st.nodes), dict(st.vars), position, st.key, pattern.focus is not None)

    def ins(self, pat: Ins, st: _State, root: bool = False) -> Iterator[tuple[_State, int]]:
        minimal = root and pat.focus is not None
        for name in pat.opcodes or WILDCARD_ROWS:
            row = OPCODES[name]
            if pat.focus is not None and not (row.srcs or row.variadic):
                continue
            st1 = st.bind(pat.op, name)
            if st1 is None:
                continue
            st1 = st1.keyed(("op", name))
            arity = 1 if row.variadic else len(row.srcs)
            positions = range(arity) if pat.srcs is None else (None,)
            for dest, st2 in self.dests(row, pat.size, st1):
                for position in positions:
                    st3 = st2
                    if position is not None:
                        st3 = st2.bind("\0position", position).keyed(("position", position))
                    # Where the rewritten source is compared, the condition and the other
                    # compare source decide how it is read; nothing else does.
                    reads = position is not None and position < len(row.srcs) and _compare_slot(row, position)
                    names = [a.name for a in row.attrs]
                    keyed = [a for a in names if not minimal or a in pat.attrs or (reads and a == "cond")]
                    rest = [a for a in names if a not in keyed]
                    for attrs, st4 in self.attrs(row, pat.attrs, st3, keyed, True):
                        for srcs, st5 in self.sources(pat, row, dest, st4, position, minimal and not reads):
                            for more, st6 in self.attrs(row, pat.attrs, st5, rest, False):
                                for sat in self.sats(row, pat.sat):
                                    st7 = st6.keyed(("sat", sat), not minimal)
                                    node = Node(row, dest, {**attrs, **more}, sat, tuple(srcs))
                                    yield st7._with(nodes=st7.nodes + (node,)), len(st7.nodes)

    def dests(self, row: Opcode, size, st: _State):
        if not row.has_dest:
            if size is None:
                yield None, st
            return
        for dest in row.dest_sizes:
            st1 = _bind_size(size, dest, st)
            if st1 is not None:
                yield dest, st1.keyed(("dest", dest))

    def attrs(self, row: Opcode, wanted, st: _State, names: list[str], keyed: bool):
        if not names:
            yield {}, st
            return
        attr = row.attr(names[0])
        want = wanted.get(attr.name)
        if want is None or (isinstance(want, Bind) and want.name not in st.env):
            values = attr.values
            if len(values) > MAX_ATTR_VALUES and keyed:
                raise PatternTooWide(
                    f"rule {self.rule.name}: attribute {attr.name} of {row.name} has "
                    f"{len(values)} values; fix it or bind it in a narrower family"
                )
        elif isinstance(want, Bind):
            values = (st.env[want.name],)
        elif isinstance(want, OneOf):
            values = want.values
        else:
            values = (want,)
        for v in values:
            named = want.name if isinstance(want, (Bind, OneOf)) else None
            st1 = st.bind(named, v) if named is not None else st
            if st1 is None:
                continue
            st1 = st1.keyed((attr.name, v), keyed)
            for rest, st2 in self.attrs(row, wanted, st1, names[1:], keyed):
                yield {attr.name: v, **rest}, st2

    def sats(self, row: Opcode, sat):
        if not row.sat:
            return (False,)
        return (sat,) if sat is not None else (False, True)

    def sources(self, pat: Ins, row: Opcode, dest, st: _State, position, minimal: bool):
        """`minimal`: the other sources of a focus root are representatives (all of them
        unless the rewritten source is compared, then all but the other compare source)."""
        if pat.srcs is not None:
            yield from self.operands(list(pat.srcs), list(range(len(pat.srcs))), row, dest, st, set())
            return
        arity = 1 if row.variadic else len(row.srcs)
        plan = [pat.focus if i == position else _ANONYMOUS for i in range(arity)]
        others = [i for i in range(arity) if i != position]
        if minimal:
            representative = set(others)
        else:
            representative = {i for i in others if not _compare_slot(row, i)}
        # The rewritten source first, the representatives last (innermost).
        order = [position] + [i for i in others if i not in representative]
        order += sorted(representative)
        yield from self.operands(plan, order, row, dest, st, representative)

    def operands(self, plan, order, row, dest, st, representative, done=None):
        done = done or {}
        if len(done) == len(order):
            yield [done[i] for i in range(len(plan))], st
            return
        i = order[len(done)]
        spec = row.srcs[i] if i < len(row.srcs) else None
        anonymous = plan[i] is _ANONYMOUS
        for name, st1 in self.operand(plan[i], spec, dest, st, anonymous, i in representative):
            yield from self.operands(plan, order, row, dest, st1, representative, {**done, i: name})

    def operand(self, opnd: Opnd, spec: Src | None, dest, st: _State, anonymous, representative):
        if opnd.name is not None and opnd.name in st.vars:
            yield opnd.name, st
            return
        name, st = (opnd.name, st) if opnd.name is not None else st.fresh()
        if opnd.defined_by is not None:
            legal = _register_sizes(spec, dest)
            for st1, index in self.ins(opnd.defined_by, st):
                size = st1.nodes[index].dest
                st2 = _bind_size(opnd.size, size, st1) if size in legal else None
                if st2 is not None:
                    var = Var(name, opnd, size, node=index)
                    yield name, st2._with(vars={**st2.vars, name: var})
            return
        for size in _classes(opnd, spec, dest, st):
            st1 = _bind_size(opnd.size, 16 if size == IMM else size, st)
            if st1 is not None:
                var = Var(name, opnd, size, anonymous=anonymous)
                st1 = st1.keyed((name, size), not representative)
                yield name, st1._with(vars={**st1.vars, name: var})


def skeletons(rule: Rule) -> Iterator[Skeleton]:
    """Every skeleton of `rule`, each key's skeletons together."""
    return _Generator(rule).skeletons()


def _register_sizes(spec: Src | None, dest: int | None) -> list[int]:
    """The sizes a register may have in a slot (a phi's sources: the destination's)."""
    sizes = (dest,) if spec is None else (64,) if spec.kind == ADDR else spec.sizes
    if spec is not None and dest is not None:
        if spec.width_rule == SAME_AS_DEST:
            return [s for s in sizes if s == dest]
        if spec.width_rule == AT_MOST_DEST:
            return [s for s in sizes if s <= dest]
    return list(sizes)


def _classes(opnd: Opnd, spec: Src | None, dest: int | None, st: _State) -> list:
    fixed = opnd.size if isinstance(opnd.size, int) else st.env.get(opnd.size)
    if opnd.bits is not None:
        return [IMM] if fixed in (None, 16) else []
    classes: list = []
    if opnd.kinds & REGISTER:
        classes += [s for s in _register_sizes(spec, dest) if fixed is None or s == fixed]
    if "immediate" in opnd.kinds and spec is not None and spec.imm is not None:
        if fixed in (None, 16):
            classes.append(IMM)
    return classes


# --- forms, materializing, legality -------------------------------------------------------------


def operand_forms(var: Var, slots, skeleton: Skeleton) -> list[Form]:
    """The forms variable `var` may take in its slots: kinds its pattern and size class allow,
    and each modifier the pattern leaves free that some slot accepts."""
    pat = var.pattern
    if var.node is not None:
        kinds = ["value"]
    elif var.size == IMM:
        kinds = ["immediate"]
    else:
        kinds = [k for k in ("value", "uniform") if k in pat.kinds]
    specs = [_spec(skeleton.nodes[i], p) for i, p in slots]

    def options(fixed, modifier):
        if fixed is not None:
            return [fixed]
        allowed = any(spec is not None and spec.allows(modifier) for spec in specs)
        return [False, True] if allowed else [False]

    return [
        Form(kind, a, n)
        for a in options(pat.abs, "abs")
        for n in options(pat.neg, "neg")
        for kind in kinds
    ]


def _spec(node: Node, position: int) -> Src | None:
    return node.row.srcs[position] if position < len(node.row.srcs) else None


@dataclass
class Materialized:
    instructions: list[Instruction]
    operands: dict[str, Operand]


def materialize(skeleton: Skeleton, forms: dict[str, Form]) -> Materialized:
    refs: dict[str, Value | Uniform | Immediate] = {}
    for name, var in skeleton.vars.items():
        form = forms[name]
        if var.node is not None:
            continue
        if form.kind == "immediate":
            bits = var.pattern.bits
            refs[name] = Immediate(bits) if bits is not None else Placeholder(1, var=name)
        elif form.kind == "uniform":
            refs[name] = Uniform(name, var.size)
        else:
            refs[name] = Value(name, var.size)
    instructions: list[Instruction] = []
    for i, node in enumerate(skeleton.nodes):
        srcs = []
        for name in node.srcs:
            var, form = skeleton.vars[name], forms[name]
            ref = refs[name] if var.node is None else instructions[var.node].dest
            srcs.append(Operand(ref, form.abs, form.neg))
        # Branch targets are placeholders here; shape_function gives each function its own.
        blocks = [Block("taken"), Block("other")] if node.row.targets == 2 else []
        dest = Value(f"def{i}", node.dest) if node.dest is not None else None
        instructions.append(Instruction(node.row, dest, srcs, dict(node.attrs), blocks, node.sat))
    operands = {}
    for name, var in skeleton.vars.items():
        form = forms[name]
        ref = refs[name] if var.node is None else instructions[var.node].dest
        operands[name] = Operand(ref, form.abs, form.neg)
    return Materialized(instructions, operands)


def shape_function(defs: list[Instruction], root_form: list[Instruction], inputs,
                   export: bool = False) -> Function:
    """A function around an instance: inputs (uniforms; SSA inputs as movs of uniforms), the
    definitions, then `root_form` (the source root, or a replacement ending in the root's new
    form). With `export`, the root's result is exported to slot 0 (a branch exports 1 on the
    taken side, 0 on the other), so the interpreter can tell two versions apart. The
    instructions are shared, except the root, which is copied with this function's blocks."""
    uniforms, body = [], []
    for ref in inputs:
        if isinstance(ref, Uniform):
            uniforms.append(ref)
        else:
            feed = Uniform(f"{ref.name}_in", ref.size)
            uniforms.append(feed)
            zero = Operand(Immediate(0))
            body.append(Instruction(OPCODES["bitop"], ref, [Operand(feed), zero], {"tt": 0xA}))
    if any(ins.name in MEMORY_OPS for ins in defs + root_form):
        uniforms.append(Uniform("mem", 64, BUFFER_BYTES))
    entry = Block("entry", body + list(defs) + list(root_form[:-1]))
    blocks = [entry]
    old = root_form[-1]
    targets = []
    if old.is_phi:
        targets = [entry]
    elif old.is_terminator:
        targets = [Block("taken"), Block("other")]
    root = Instruction(old.opcode, old.dest, list(old.srcs), dict(old.attrs), targets, old.sat)
    tail = entry
    if root.is_phi:
        tail = Block("join", [root])
        entry.instructions.append(Instruction(OPCODES["jump"], None, [], blocks=[tail]))
        blocks.append(tail)
    else:
        entry.instructions.append(root)
    stop = Instruction(OPCODES["stop"], None, [])
    if root.is_terminator:
        for k, target in enumerate(targets):
            target.instructions = _exported(Value(f"side{k}", 32), 1 - k, export) + [stop]
            blocks.append(target)
        return Function("instance", uniforms, blocks)
    if export and root.dest is not None:
        tail.instructions.append(
            Instruction(OPCODES["export"], None, [Operand(root.dest)], {"slot": 0})
        )
    tail.instructions.append(stop)
    return Function("instance", uniforms, blocks)


def _exported(value: Value, bits: int, export: bool) -> list[Instruction]:
    if not export:
        return []
    return [
        Instruction(OPCODES["mov_imm"], value, [], {"value": bits}),
        Instruction(OPCODES["export"], None, [Operand(value)], {"slot": 0}),
    ]
