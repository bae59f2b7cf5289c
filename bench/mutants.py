"""A small AST mutator for `bench/mutation.py`: the mutants of one Python module, enumerated
in source order, and a seeded sample of them.

Operators (each mutant changes exactly one node of the module's AST):

* `compare`: one operator of a comparison flipped: < <=, > >=, == !=, is / is not, in / not in
  (each to its neighbour: `<` becomes `<=`, `<=` becomes `<`, ...);
* `boolop`: `and` becomes `or` and the other way;
* `not`: `not x` becomes `x`;
* `constant`: an integer constant (not a bool) plus one, and minus one;
* `return`: `return True` becomes `return False` and the other way;
* `slice`: a non-constant slice bound plus one, and minus one (constant ones are `constant`);
* `drop`: a statement inside a function dropped (replaced by `pass`): a call on its own
  (`xs.append(y)`), an assignment or an augmented assignment.

Annotations, docstrings and f-strings are left alone. A mutant's source is the original
text with the one node's span replaced (the rest of the file byte for byte), and
`Mutant.apply` checks that the result parses to the original tree with that one node changed.
"""

from __future__ import annotations

import ast
import copy
import random
from collections.abc import Iterator
from dataclasses import dataclass

COMPARE_FLIPS: dict[type, type] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
    ast.In: ast.NotIn, ast.NotIn: ast.In,
}
SYMBOLS: dict[type, str] = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
    ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
    ast.And: "and", ast.Or: "or",
}


@dataclass(frozen=True)
class Mutant:
    """One change to one node: the `ordinal`-th node of the module in `walk` order."""

    path: str  # the module's path, relative to the tree
    number: int  # its place in the module's enumeration
    ordinal: int  # which node (see `walk`)
    kind: str
    variant: str  # which of the node's mutations ("+1", "<=", ...)
    line: int
    description: str

    @property
    def key(self) -> str:
        return f"{self.path}#{self.number}"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.description}"

    def apply(self, source: str) -> str:
        """The module's source with this mutant in it."""
        tree = ast.parse(source)
        node, parent_body = _nodes(tree)[self.ordinal]
        replacement = _replace(node, self.variant)
        text = _splice(source, node, replacement, statement=isinstance(node, ast.stmt))
        expected = _substitute(tree, self.ordinal, replacement)
        if ast.dump(ast.parse(text)) != ast.dump(expected):
            raise AssertionError(f"{self}: the spliced source is not the mutated tree")
        return text


def walk(tree: ast.AST) -> Iterator[tuple[ast.AST, bool]]:
    """Every node in source order (depth first, fields in order), each with whether it lies
    inside a function body; annotations, docstrings and f-strings are not entered."""

    def visit(node: ast.AST, in_function: bool) -> Iterator[tuple[ast.AST, bool]]:
        yield node, in_function
        if isinstance(node, ast.JoinedStr):
            return
        inside = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                  ast.Lambda))
        for name, value in ast.iter_fields(node):
            if name in ("annotation", "returns", "type_comment"):
                continue
            children = value if isinstance(value, list) else [value]
            for child in children:
                if isinstance(child, ast.AST):
                    yield from visit(child, inside)

    yield from visit(tree, False)


def _nodes(tree: ast.AST) -> list[tuple[ast.AST, bool]]:
    return list(walk(tree))


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(
        node.value.value, str)


def _variants(node: ast.AST, in_function: bool) -> list[tuple[str, str, str]]:
    """(kind, variant, description) for each mutation of `node`."""
    if isinstance(node, ast.Compare):
        return [("compare", f"{i}", f"{SYMBOLS[type(op)]} -> {SYMBOLS[COMPARE_FLIPS[type(op)]]}")
                for i, op in enumerate(node.ops)]
    if isinstance(node, ast.BoolOp):
        other = "or" if isinstance(node.op, ast.And) else "and"
        return [("boolop", other, f"{SYMBOLS[type(node.op)]} -> {other}")]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return [("not", "drop", f"not {_short(node.operand)} -> {_short(node.operand)}")]
    if (isinstance(node, ast.Constant) and type(node.value) is int):
        return [("constant", d, f"{node.value} -> {node.value + int(d)}") for d in ("+1", "-1")]
    if isinstance(node, ast.Return) and isinstance(node.value, ast.Constant) and \
            isinstance(node.value.value, bool):
        return [("return", "flip", f"return {node.value.value} -> return {not node.value.value}")]
    if isinstance(node, ast.Slice):
        out = []
        for bound in ("lower", "upper"):
            value = getattr(node, bound)
            if value is not None and not _constant(value):
                out += [("slice", f"{bound}{d}", f"slice {bound} {_short(value)} -> "
                         f"{_short(value)} {d[0]} 1") for d in ("+1", "-1")]
        return out
    if in_function and (isinstance(node, (ast.Assign, ast.AugAssign))
                        or (isinstance(node, ast.AnnAssign) and node.value is not None)
                        or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call))):
        return [("drop", "drop", f"drop `{_short(node)}`")]
    return []


def _constant(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) or (
        isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant))


def _short(node: ast.AST, limit: int = 60) -> str:
    text = ast.unparse(node).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _replace(node: ast.AST, variant: str) -> ast.AST:
    """The node that takes `node`'s place."""
    new = copy.deepcopy(node)
    if isinstance(node, ast.Compare):
        i = int(variant)
        new.ops[i] = COMPARE_FLIPS[type(node.ops[i])]()
    elif isinstance(node, ast.BoolOp):
        new.op = ast.Or() if variant == "or" else ast.And()
    elif isinstance(node, ast.UnaryOp):
        new = copy.deepcopy(node.operand)
    elif isinstance(node, ast.Constant):
        value = node.value + int(variant)
        # -1 is written (and parses) as -(1): the same node either way
        new = ast.Constant(value) if value >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-value))
    elif isinstance(node, ast.Return):
        new.value.value = not node.value.value
    elif isinstance(node, ast.Slice):
        bound, delta = variant[:5], variant[5:]
        op = ast.Add() if delta == "+1" else ast.Sub()
        setattr(new, bound, ast.BinOp(getattr(node, bound), op, ast.Constant(1)))
    else:  # a dropped statement
        new = ast.Pass()
    return new


def _splice(source: str, node: ast.AST, replacement: ast.AST, statement: bool) -> str:
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line.encode()))
    data = source.encode()
    begin = starts[node.lineno - 1] + node.col_offset
    end = starts[node.end_lineno - 1] + node.end_col_offset
    text = ast.unparse(replacement)
    if not statement and not isinstance(replacement, ast.Slice):
        text = f"({text})"
    return (data[:begin] + text.encode() + data[end:]).decode()


def _substitute(tree: ast.AST, ordinal: int, replacement: ast.AST) -> ast.AST:
    """A copy of `tree` with its `ordinal`-th node replaced."""
    tree = copy.deepcopy(tree)
    target = _nodes(tree)[ordinal][0]
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, name, replacement)
                return tree
            if isinstance(value, list) and any(item is target for item in value):
                value[[id(item) for item in value].index(id(target))] = replacement
                return tree
    raise AssertionError(f"node {ordinal} has no parent")


def enumerate_mutants(source: str, path: str = "<source>") -> list[Mutant]:
    """Every mutant of a module, in source order (deterministic)."""
    tree = ast.parse(source)
    docstrings = {id(body[0]) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef,
                                    ast.ClassDef))
                  for body in [n.body] if body and _is_docstring(body[0])}
    mutants: list[Mutant] = []
    for ordinal, (node, in_function) in enumerate(walk(tree)):
        if id(node) in docstrings:
            continue
        for kind, variant, description in _variants(node, in_function):
            mutants.append(Mutant(path, len(mutants), ordinal, kind, variant,
                                  getattr(node, "lineno", 0), description))
    return mutants


def sample(mutants: list[Mutant], k: int, seed: int, source_order: bool = True) -> list[Mutant]:
    """`k` of the mutants, chosen by a shuffle seeded with (seed, path): the same seed gives
    the same mutants, and a larger `k` extends a smaller one's choice. In source order, or
    in the shuffle's (then the first j of them are the sample of size j)."""
    if not mutants:
        return []
    order = list(range(len(mutants)))
    random.Random(f"{seed}:{mutants[0].path}").shuffle(order)
    chosen = sorted(order[:k]) if source_order else order[:k]
    return [mutants[i] for i in chosen]
