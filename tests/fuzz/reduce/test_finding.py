"""The shapes that make two findings one bug (fuzz.reduce.finding)."""

from pathlib import Path

from fuzz.harness import Finding
from fuzz.passes_under_test import python_pass
from fuzz.reduce.finding import change_shape, reproducer_shape

ROOT = Path(__file__).resolve().parents[3]
SELECT = """\
func @f() {
b0:
  %t:32 = icmp #0, #0 cond=ueq inv=1
  %s:32 = icmpsel %t, #0, #1, #2 cond=ueq
  export %s slot=0
  stop
}
"""


def test_a_reproducers_shape_is_its_opcodes_by_block_and_unparsable_text_is_itself():
    assert reproducer_shape(SELECT) == (("icmp", "icmpsel", "export", "stop"),)
    assert reproducer_shape("not a program") == ("not a program",)


def test_the_change_shape_is_what_the_wrong_rewrite_did_or_the_reproducers_shape():
    wrong = python_pass(f"{ROOT / 'examples' / 'wrong_cmpsel.py'}:wrong_cmpsel")
    finding = Finding(wrong.name, "refinement", "m", (wrong.name,), SELECT)
    shape = change_shape(finding, {wrong.name: wrong})
    assert shape != reproducer_shape(SELECT) and shape != ((), ())
    unknown = Finding("gone", "refinement", "m", ("gone",), SELECT)
    assert change_shape(unknown, {}) == reproducer_shape(SELECT)
