"""Evaluating one side of a rule instance on any `BitVectors`, with undefined values tracked.

`evaluate(m, node, instance, side, env)` returns an `Evaluated`: the node's bits, and when
the value may be undefined, the backend Bool saying where (None means always defined) with
the reasons the semantics gave. An opcode's result is undefined where one of its sources is
or where its semantics said so (`undefined_if`); bcsel takes only the chosen arm's. Constants
take their slot's size: ints in two's complement, floats as IEEE bits, booleans as NIR's
true (~0 at the slot's width, 1 at one bit).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agxir.nir.float_ops import Unsupported, float_bits
from agxir.nir.integer_ops import mask, truth
from agxir.nir.ops import NIR_OPS
from agxir.nir.pattern import Const, Expr, Node, Var
from agxir.nir.sizes import Instance


@dataclass
class Evaluated:
    value: object
    undefined: object = None  # backend Bool, or None for "never"
    reasons: list[tuple[str, object]] = field(default_factory=list)


class Tracking:
    """The backend with `undefined_if` collected instead of acted upon."""

    def __init__(self, machine):
        self._machine = machine
        self.raised: list[tuple[str, object]] = []

    def undefined_if(self, cond, reason: str) -> None:
        self.raised.append((reason, cond))

    def __getattr__(self, name: str):
        return getattr(self._machine, name)


def _either(m, a, b):
    if a is None:
        return b
    if b is None:
        return a
    return m.either(a, b)


def constant_bits(value, width: int) -> int:
    """An int constant is two's complement even in a float slot, as nir_search builds it."""
    if isinstance(value, bool):
        return mask(width) if value else 0
    if isinstance(value, float):
        return float_bits(value, width)
    return int(value) & mask(width)


def evaluate(m, node: Node, instance: Instance, side: str, env: dict,
             path: tuple = (), slot_type: str = "uint") -> Evaluated:
    """`env` maps variable names to backend values of their instance sizes."""
    width = instance.size((side, path))
    if isinstance(node, Var):
        return Evaluated(env[node.name])
    if isinstance(node, Const):
        if isinstance(node.value, float) and width not in (16, 32, 64):
            raise Unsupported(f"float constant {node.value} at {width} bits")
        return Evaluated(m.const(constant_bits(node.value, width), width))
    return _evaluate_expression(m, node, instance, side, env, path, width)


def _evaluate_expression(m, node: Expr, instance, side, env, path, width) -> Evaluated:
    op = NIR_OPS[node.op]
    if op.semantics is None:
        raise Unsupported(f"opcode {node.op} has no semantics")
    sources = [evaluate(m, src, instance, side, env, path + (i,), op.inputs[i])
               for i, src in enumerate(node.srcs)]
    widths = [instance.size((side, path + (i,))) for i in range(len(node.srcs))]
    tracking = Tracking(m)
    value = op.semantics(tracking, [s.value for s in sources], widths, width)
    reasons = [r for s in sources for r in s.reasons]
    if node.op in ("bcsel", "b8csel", "b16csel", "b32csel"):
        chosen = truth(m, sources[0].value, widths[0])
        undefined = _either(m, sources[0].undefined, _select_bool(
            m, chosen, sources[1].undefined, sources[2].undefined))
    else:
        undefined = None
        for source in sources:
            undefined = _either(m, undefined, source.undefined)
    for reason, cond in tracking.raised:
        undefined = _either(m, undefined, cond)
        reasons.append((reason, cond))
    return Evaluated(value, undefined, reasons)


def _select_bool(m, chosen, if_true, if_false):
    if if_true is None and if_false is None:
        return None
    left = m.both(chosen, if_true) if if_true is not None else None
    right = m.both(m.negate(chosen), if_false) if if_false is not None else None
    return _either(m, left, right)


def root_width(instance: Instance) -> int:
    return instance.size(("search", ()))
