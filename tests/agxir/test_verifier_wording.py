"""The verifier's wording (agxir/verifier_wording.py): what it calls a legal attribute value,
and how it lists them, agree."""

from __future__ import annotations

from agxir.opcodes.spec import Attr
from agxir.verifier_wording import alternatives, legal, legal_values, plural


def test_a_legal_value_has_the_type_of_the_listed_ones():
    shift = Attr("shift", range(4))
    assert legal(shift, 3) and not legal(shift, 4)
    assert not legal(shift, True) and not legal(shift, 1.0)  # bool and float are not ints
    mode = Attr("mode", ("rte", "rtz"))
    assert legal(mode, "rtz") and not legal(mode, "rtn")


def test_a_long_range_is_worded_by_its_ends_and_a_short_one_in_full():
    assert legal_values(Attr("value", range(2**64))) == f"0..{2**64 - 1}"
    assert legal_values(Attr("shift", range(4))) == "0, 1, 2 or 3"
    assert alternatives(["a"]) == "a" and plural(1, "source") == "1 source"
    assert plural(2, "source") == "2 sources"
