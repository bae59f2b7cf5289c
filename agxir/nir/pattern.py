"""The nir_algebraic pattern language: variables, constants and expressions of a rule.

A rule is `(search, replace)` or `(search, replace, condition)`. A value is a tuple (an
expression: opcode then sources), a string (a variable, `[#]name[@type][(cond,...)]`), or a
Python int, float or bool (a constant). An opcode is `[~][!]name[@bits][(cond,...)]`: `~`
marks an inexact (fast-math) search, `!` an exact replacement. These are nir_algebraic's own
regular expressions; a value that does not fit raises `PatternError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agxir.nir.ops import NIR_OPS

VAR_RE = re.compile(r"(?P<const>#)?(?P<name>\w+)"
                    r"(?:@(?P<type>int|uint|bool|float)?(?P<bits>\d+)?)?"
                    r"(?P<cond>\([^\)]+\))?"
                    r"(?P<swiz>\.[xyzwabcdefghijklmnop]+)?$")
OP_RE = re.compile(r"(?P<inexact>~)?(?P<exact>!)?(?P<opcode>\w+)(?:@(?P<bits>\d+))?"
                   r"(?P<cond>\([^\)]+\))?$")


class PatternError(ValueError):
    """A value that is not in the nir_algebraic pattern language."""


@dataclass(frozen=True)
class Var:
    name: str
    const_only: bool
    type: str | None
    bits: int | None
    conds: tuple[str, ...]

    def __str__(self) -> str:
        text = ("#" if self.const_only else "") + self.name
        if self.type or self.bits:
            text += f"@{self.type or ''}{self.bits or ''}"
        return text + (f"({','.join(self.conds)})" if self.conds else "")


@dataclass(frozen=True)
class Const:
    value: int | float | bool

    def __str__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True)
class Expr:
    op: str
    srcs: tuple
    bits: int | None = None
    conds: tuple[str, ...] = ()
    inexact: bool = False
    exact: bool = False

    def __str__(self) -> str:
        head = ("~" if self.inexact else "") + ("!" if self.exact else "") + self.op
        head += f"@{self.bits}" if self.bits else ""
        head += f"({','.join(self.conds)})" if self.conds else ""
        return f"({head} {' '.join(str(s) for s in self.srcs)})"


Node = Var | Const | Expr


@dataclass(frozen=True)
class Rule:
    search: Expr
    replace: Node
    condition: str | None
    list_name: str
    index: int
    line: int | None = None

    @property
    def where(self) -> str:
        return f"{self.list_name}[{self.index}]"

    def __str__(self) -> str:
        return f"{self.search} -> {self.replace}"


def _conditions(text: str | None) -> tuple[str, ...]:
    return tuple(c.strip() for c in text[1:-1].split(",") if c.strip()) if text else ()


def parse_value(value, side: str) -> Node:
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if isinstance(value, tuple):
        return parse_expression(value, side)
    if isinstance(value, str):
        found = VAR_RE.match(value)
        if not found:
            raise PatternError(f"{value!r} is not a variable ([#]name[@type][(cond)])")
        if found.group("swiz"):
            raise UnsupportedPattern(f"swizzle {value!r} (vectors are not modelled)", value)
        bits = found.group("bits")
        return Var(found.group("name"), bool(found.group("const")), found.group("type"),
                   int(bits) if bits else None, _conditions(found.group("cond")))
    if isinstance(value, bool | int | float):
        return Const(value)
    raise PatternError(f"{value!r} ({type(value).__name__}) is not a pattern value")


def parse_expression(value: tuple, side: str) -> Expr:
    if not value or not isinstance(value[0], str):
        raise PatternError(f"an expression must start with an opcode name: {value!r}")
    found = OP_RE.match(value[0])
    if not found:
        raise PatternError(f"{value[0]!r} is not an opcode ([~][!]name[@bits][(cond)])")
    name = found.group("opcode")
    op = NIR_OPS.get(name)
    if op is None:
        raise UnsupportedPattern(f"opcode {name} is not in the NIR table", name)
    srcs = tuple(parse_value(v, side) for v in value[1:])
    if len(srcs) != len(op.inputs):
        raise PatternError(f"{name} takes {len(op.inputs)} sources, not {len(srcs)}")
    bits = found.group("bits")
    return Expr(name, srcs, int(bits) if bits else None, _conditions(found.group("cond")),
                bool(found.group("inexact")), bool(found.group("exact")))


class UnsupportedPattern(PatternError):
    """Valid nir_algebraic this model cannot express (an opcode the table does not know, a
    vector swizzle): the rule is unsupported, naming it."""

    def __init__(self, message: str, what: str):
        super().__init__(message)
        self.what = what


def parse_rule(entry, list_name: str, index: int, line: int | None = None) -> Rule:
    if not isinstance(entry, tuple) or len(entry) not in (2, 3):
        raise PatternError("a rule is (search, replace) or (search, replace, condition)")
    if not isinstance(entry[0], tuple):
        raise PatternError("the search pattern must be an expression")
    condition = entry[2] if len(entry) == 3 else None
    if condition is not None and not isinstance(condition, str):
        raise PatternError(f"the condition must be a string, not {type(condition).__name__}")
    search = parse_expression(entry[0], "search")
    replace = parse_value(entry[1], "replace")
    search_vars = set(variables(search))
    for var in variables(replace):
        if var not in search_vars:
            raise PatternError(f"replacement variable {var} does not occur in the search")
    return Rule(search, replace, condition, list_name, index, line)


def variables(node: Node):
    """Names of the variables in `node`, in first-occurrence order, with repeats."""
    if isinstance(node, Var):
        yield node.name
    elif isinstance(node, Expr):
        for src in node.srcs:
            yield from variables(src)


def expressions(node: Node):
    if isinstance(node, Expr):
        yield node
        for src in node.srcs:
            yield from expressions(src)


def var_nodes(node: Node):
    if isinstance(node, Var):
        yield node
    elif isinstance(node, Expr):
        for src in node.srcs:
            yield from var_nodes(src)
