"""The refinement relation, stated once: what "the output of a pass refines its input" means
on one input, for the two oracles that decide it (the interpreter's
`oracles.outcomes.first_difference`, on concrete outcomes, and translation validation's
`oracles.smt.refinement`, on z3 terms for every input at once).

As in Alive2: where the source is undefined, any target behaviour is allowed; where the
source runs out of fuel, the input is skipped (the interpreter's callers count it; z3
encodes loop-free functions only). Where the source returns, the target must return
(not be undefined, not run out of fuel) with the same observations:

* every output slot of every thread, as a (written, value) pair; a slot that one side
  never mentions counts as not written (`NOT_WRITTEN`), and the pair differs as
  `slot_differs` says: written-ness differs, or the source wrote it and the values differ;
* every byte of memory inside a buffer; nothing outside the buffers is observed (an
  access there is undefined behaviour, so a defined source never touches it).

`slot_differs` is written against a three-operation logic, like the opcode table's
semantics against its bit-vector interface: `PYTHON` here for concrete pairs, z3's Or /
And / != in `oracles.smt.refinement`. The buffer comparison and the choice of slots stay
in each oracle (a dict of bytes against a probe address constrained to lie inside some
buffer); both follow the list above, and tests/oracles/smt/test_refinement.py checks the
two verdicts agree on generated programs.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

__all__ = ["NOT_WRITTEN", "PYTHON", "Logic", "slot_differs", "slot_pair"]


@dataclass(frozen=True)
class Logic:
    """The operations `slot_differs` is written with."""

    or_: Any
    and_: Any
    ne: Any


PYTHON = Logic(or_=lambda *xs: any(xs), and_=lambda *xs: all(xs), ne=operator.ne)

# What a slot a side never wrote (or never mentions) holds: not written, value 0.
NOT_WRITTEN = (False, 0)


def slot_pair(value: int | None) -> tuple[bool, int]:
    """A concrete slot (an int, or None when not written) as a (written, value) pair."""
    return NOT_WRITTEN if value is None else (True, value)


def slot_differs(logic: Logic, want, got):
    """Whether the target's slot `got` fails to match the source's `want`, both (written,
    value) pairs: a value counts only where the source wrote it (and so, written-ness being
    equal, the target did too)."""
    want_written, want_value = want
    got_written, got_value = got
    return logic.or_(
        logic.ne(want_written, got_written),
        logic.and_(want_written, logic.ne(want_value, got_value)),
    )
