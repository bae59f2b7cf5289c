"""The weighted opcode families a program's instructions are drawn from.

`operations` has the plain families; each shape module (optimizer, exec-compare,
conversion, schedule) adds the families of the shapes it builds, which emit through
`operations`. Put together here, above all of them, so that `operations` imports none of
the modules built on it. The order of the pairs is part of what a seed means: keep it.
"""

from __future__ import annotations

from fuzz.generate.conversion_shapes import conversion_pairs
from fuzz.generate.exec_cmp_shapes import exec_cmp_pairs
from fuzz.generate.features import Features
from fuzz.generate.operations import base_pairs
from fuzz.generate.optimizer_shapes import optimizer_pairs
from fuzz.generate.schedule_shapes import schedule_pairs


def emitter_pairs(f: Features) -> list:
    """(emitter, weight) pairs of every opcode family but the array accesses (`addresses`
    adds those)."""
    return base_pairs(f) + optimizer_pairs(f) + exec_cmp_pairs(f) + conversion_pairs(f) + schedule_pairs(f)
