"""Bit-size inference as nir_algebraic does it, and one instance per consistent assignment.

Every variable has one size wherever it occurs; an opcode's unsized sources and unsized
destination share one size; sized NIR types (`uint32`, `bool1`), `@N` on a variable or an
opcode, and boolean constants (1 bit) fix a size; the replacement has the search's size.
Sizes left free are those NIR matches at run time: the rule is instantiated once for each
allowed size (from `--sizes`, plus 1 bit for boolean slots) of each free class. A rule whose
constraints conflict, or whose replacement has a size nothing determines, is rejected with
`SizeError`, as nir_algebraic rejects it when Mesa is built.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from agxir.nir.ops import NIR_OPS, type_base, type_size
from agxir.nir.pattern import Const, Expr, Node, Rule, Var, expressions

TYPE_SIZES = {"int": (1, 8, 16, 32, 64), "uint": (1, 8, 16, 32, 64), "float": (16, 32, 64),
              "bool": (1, 8, 16, 32)}
DEFAULT_SIZES = (8, 16, 32, 64)
MAX_INSTANCES = 256


class SizeError(ValueError):
    """No consistent size assignment (nir_algebraic would refuse the rule), or, with
    `never_matches`, only sizes NIR's types do not allow (the rule can never fire)."""

    def __init__(self, message: str, never_matches: bool = False):
        super().__init__(message)
        self.never_matches = never_matches


@dataclass
class _Class:
    fixed: int | None = None
    fixed_by: str = ""
    allowed: set[int] = field(default_factory=lambda: {1, 8, 16, 32, 64})
    boolean: bool = False
    in_search: bool = False


@dataclass(frozen=True)
class Instance:
    """One size assignment: `size(key)` for a node key (side, path) or ("var", name)."""

    rule: Rule
    sizes: tuple[tuple[tuple, int], ...]

    def size(self, key: tuple) -> int:
        return dict(self.sizes)[key]

    @property
    def label(self) -> str:
        table = dict(self.sizes)
        names = [f"{key[1]}:{size}" for key, size in self.sizes if key[0] == "var"]
        return f"@{table[('search', ())]}" + (f" ({' '.join(names)})" if names else "")


class _Solver:
    def __init__(self) -> None:
        self.parent: dict[tuple, tuple] = {}
        self.classes: dict[tuple, _Class] = {}

    def find(self, key: tuple) -> tuple:
        self.parent.setdefault(key, key)
        self.classes.setdefault(key, _Class())
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def union(self, a: tuple, b: tuple) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        ca, cb = self.classes.pop(rb), self.classes[ra]
        self.parent[rb] = ra
        if ca.fixed is not None:
            self.fix(ra, ca.fixed, ca.fixed_by)
        cb.allowed &= ca.allowed
        cb.boolean |= ca.boolean
        cb.in_search |= ca.in_search

    def fix(self, key: tuple, size: int, why: str) -> None:
        cls = self.classes[self.find(key)]
        if cls.fixed is not None and cls.fixed != size:
            raise SizeError(f"no consistent bit sizes: {why} is {size} bits but "
                            f"{cls.fixed_by} is {cls.fixed}")
        if cls.fixed is None:
            cls.fixed, cls.fixed_by = size, why

    def typed(self, key: tuple, type_: str, why: str) -> None:
        cls = self.classes[self.find(key)]
        base = type_base(type_)
        cls.allowed &= set(TYPE_SIZES[base])
        cls.boolean |= base == "bool"
        size = type_size(type_)
        if size is not None:
            self.fix(key, size, why)


def _visit(solver: _Solver, node: Node, key: tuple, side: str) -> None:
    solver.find(key)
    if side == "search":
        solver.classes[solver.find(key)].in_search = True
    if isinstance(node, Var):
        solver.union(key, ("var", node.name))
        if node.bits:
            solver.fix(key, node.bits, f"variable {node.name}@{node.bits}")
        if node.type == "bool" and not node.bits:
            solver.fix(key, 1, f"variable {node.name}@bool")
        if side == "search":
            solver.classes[solver.find(key)].in_search = True
        return
    if isinstance(node, Const):
        if isinstance(node.value, bool):
            solver.fix(key, 1, f"constant {node.value}")
        return
    op = NIR_OPS[node.op]
    solver.typed(key, op.output, f"the destination of {node.op}")
    if node.bits:
        solver.fix(key, node.bits, f"{node.op}@{node.bits}")
    shared = key if type_size(op.output) is None and not op.sizeless_conversion else key + ("in",)
    for index, (src, type_) in enumerate(zip(node.srcs, op.inputs, strict=True)):
        child = (key[0], key[1] + (index,))
        _visit(solver, src, child, side)
        solver.typed(child, type_, f"source {index} of {node.op}")
        if type_size(type_) is None:
            solver.union(child, shared)


def instances(rule: Rule, sizes: tuple[int, ...] = DEFAULT_SIZES) -> list[Instance]:
    """Every consistent size assignment of `rule`, free sizes drawn from `sizes`."""
    solver = _Solver()
    _visit(solver, rule.search, ("search", ()), "search")
    _visit(solver, rule.replace, ("replace", ()), "replace")
    solver.union(("search", ()), ("replace", ()))
    keys = [k for k in solver.parent if not (len(k) == 3 and k[2] == "in")
            and not (k[0] != "var" and len(k) > 2)]
    roots = sorted({solver.find(k) for k in keys}, key=repr)
    choices = []
    for root in roots:
        cls = solver.classes[root]
        if cls.fixed is not None:
            if cls.fixed not in cls.allowed:
                raise SizeError(f"never matches: {cls.fixed_by} is {cls.fixed} bits, which "
                                f"its NIR type does not allow", never_matches=True)
            choices.append((cls.fixed,))
            continue
        if not cls.in_search:
            raise SizeError("ambiguous bit size in the replacement: nothing determines it")
        wanted = set(sizes) | ({1} if cls.boolean else set())
        options = tuple(sorted(cls.allowed & wanted))
        if not options:
            raise SizeError(f"no allowed bit size among {sorted(sizes)} for a free size")
        choices.append(options)
    result = []
    for combo in itertools.product(*choices):
        chosen = dict(zip(roots, combo, strict=True))
        table = tuple((k, chosen[solver.find(k)]) for k in _ordered(keys))
        result.append(Instance(rule, table))
        if len(result) >= MAX_INSTANCES:
            break
    return result


def _ordered(keys):
    variables = [k for k in keys if k[0] == "var"]
    others = [k for k in keys if k[0] != "var"]
    return variables + others


def is_float_rule(rule: Rule) -> bool:
    """A float rule by NIR's types: some opcode in it has a float-typed slot."""
    return any(NIR_OPS[e.op].is_float for e in _all_expressions(rule))


def _all_expressions(rule: Rule):
    yield from expressions(rule.search)
    yield from expressions(rule.replace)


__all__ = ["Expr", "Instance", "SizeError", "instances", "is_float_rule"]
