"""Loading nir_algebraic rule files: lists found, features parsed, bad files reported in one line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agxir.nir import BadRule, Const, Expr, Rule, RuleFileError, Var, load_rule_file

DATA = Path(__file__).resolve().parents[2] / "data" / "nir"


def test_rule_lists_are_found_and_other_globals_ignored():
    loaded = load_rule_file(str(DATA / "right_rules.py"))
    assert list(loaded.lists) == ["identities", "sized", "constants", "booleans", "generated", "agx"]
    assert "sizes_used" not in loaded.lists  # a list of ints, not rules
    assert len(loaded.lists["generated"]) == 6  # built in a loop through a helper function


def test_main_is_not_called_and_the_stubs_do_not_leak():
    before = set(sys.modules)
    load_rule_file(str(DATA / "right_rules.py"))  # its main() raises SystemExit
    assert "nir_algebraic" not in set(sys.modules) - before


def test_every_syntax_feature_is_parsed():
    loaded = load_rule_file(str(DATA / "right_rules.py"))
    constants = loaded.lists["constants"]
    multiple = constants[0].search.srcs[0]
    assert multiple == Var("a", True, None, None, ("is_unsigned_multiple_of_4",))
    assert constants[2].condition == "!options->lower_bitops"
    used_once = constants[3].search.srcs[0]
    assert isinstance(used_once, Expr) and used_once.conds == ("is_used_once",)
    assert constants[4].search.inexact and constants[4].replace.exact
    sized = loaded.lists["sized"]
    assert sized[0].search.srcs[0].srcs[0] == Var("a", False, None, 32, ())
    assert sized[4].search.bits == 32
    booleans = loaded.lists["booleans"]
    assert booleans[0].search.srcs[1:] == (Const(True), Const(False))
    assert booleans[3].replace.srcs[1] == Const(-1)
    assert all(isinstance(rule, Rule) for rule in loaded.rules())


def test_lists_can_be_chosen_by_name():
    loaded = load_rule_file(str(DATA / "right_rules.py"), ["agx", "sized"])
    assert list(loaded.lists) == ["agx", "sized"]
    with pytest.raises(RuleFileError, match="no rule list named nosuch .*rule lists: identities"):
        load_rule_file(str(DATA / "right_rules.py"), ["nosuch"])


def test_malformed_rules_are_reported_one_by_one():
    rules = list(load_rule_file(str(DATA / "malformed_rules.py")).rules())
    assert isinstance(rules[0], Rule)
    assert "takes 2 sources, not 1" in rules[1].message
    assert "variable b does not occur in the search" in rules[2].message
    assert isinstance(rules[4], BadRule) and rules[4].unsupported
    assert rules[4].message == "opcode no_such_opcode is not in the NIR table"
    assert rules[1].line == 4  # the line where the list is assigned


@pytest.mark.parametrize("name, expected", [
    ("bad_syntax.py", r"bad_syntax.py:4:6: invalid syntax"),
    ("bad_raise.py", r"bad_raise.py:3: NameError: name 'undefined_name_here'"),
    ("no_such_file.py", r"no_such_file.py: cannot read"),
])
def test_bad_files_are_one_line_errors_with_a_location(name, expected):
    with pytest.raises(RuleFileError, match=expected) as caught:
        load_rule_file(str(DATA / name))
    assert "\n" not in str(caught.value)


def test_a_file_without_rules_is_an_error(tmp_path):
    empty = tmp_path / "empty.py"
    empty.write_text("a = 'a'\nsizes = [8, 16]\n")
    with pytest.raises(RuleFileError, match="no module-level list"):
        load_rule_file(str(empty))
