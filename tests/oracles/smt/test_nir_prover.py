"""The z3 prover of rule instances: verdicts on the project's own rule files, replayed
counterexamples, predicates as assumptions, unsupported never counted as verified."""

from __future__ import annotations

from pathlib import Path

import pytest
import z3

from agxir.nir import instances, load_rule_file
from agxir.nir.pattern import parse_rule
from oracles.smt.nir import prove_instance, prove_rule, treatments
from oracles.smt.nir.prover import decide

DATA = Path(__file__).resolve().parents[2] / "data" / "nir"
TIMEOUT_MS = 5000


def verdicts(path, lists=None):
    loaded = load_rule_file(str(DATA / path), lists)
    return [r for rule in loaded.rules() for r in prove_rule(rule, TIMEOUT_MS, (8, 16, 32, 64))]


def prove(search, replace, sizes=(8, 16, 32, 64), timeout_ms=TIMEOUT_MS):
    rule = parse_rule((search, replace), "t", 0)
    return [prove_instance(i, timeout_ms) for i in instances(rule, sizes)]


def test_every_right_rule_instance_is_verified():
    results = verdicts("right_rules.py")
    assert len(results) > 60
    assert {r.verdict for r in results} == {"verified"}, [
        (r.where, r.label, r.verdict, r.reason) for r in results if r.verdict != "verified"]


def test_products_of_products_are_decided_by_the_integer_encoding():
    rule = parse_rule((("amul", ("amul", "a", "#b"), "#c"), ("amul", "a", ("imul", "b", "c"))),
                      "t", 0)
    (instance,) = instances(rule, (32,))
    found = treatments(rule)
    # bit-vectors give up on this nonlinear query (20 s in experiments); integers decide it
    assert decide(instance, found, 300, integers=False)[0] == z3.unknown
    assert decide(instance, found, 20000, integers=True)[0] == z3.unsat
    # A budget of z3 resource units (tests/conftest.py), not wall time: the same verdict on a
    # loaded machine. The integer query needs 0.05-0.2 M units of the 1.5 M that 300 ms gives.
    result = prove_instance(instance, 300)
    assert (result.verdict, result.encoding) == ("verified", "integers")


def test_wrong_rules_have_confirmed_counterexamples():
    results = verdicts("wrong_rules.py")
    by_rule = {}
    for r in results:
        by_rule.setdefault(r.index, []).append(r)
    assert all(r.verdict == "counterexample" for r in by_rule[0] + by_rule[1] + by_rule[5])
    assert all(r.counterexample.confirmed for r in results if r.counterexample)
    # iand a, 0xff is a at 8 bits and wrong above
    assert [(r.label, r.verdict) for r in by_rule[2]] == [
        ("@8 (a:8)", "verified"), ("@16 (a:16)", "counterexample"),
        ("@32 (a:32)", "counterexample"), ("@64 (a:64)", "counterexample")]
    wraps = by_rule[1][2].counterexample
    assert wraps.values == {"a": 0xFFFFFFFF} and (wraps.source, wraps.target) == (1, 0)
    amul = by_rule[5][0].counterexample
    assert amul.target_undefined == ["amul overflow"] and not amul.source_undefined


def test_an_assumed_predicate_is_what_makes_a_rule_true():
    assert {r.verdict for r in prove(("iand", "#a(is_unsigned_multiple_of_4)", 3), 0)} == {
        "verified"}
    assert {r.verdict for r in prove(("iand", "#a", 3), 0)} == {"counterexample"}


def test_a_predicate_without_meaning_leaves_values_free():
    results = prove(("iadd", ("imul(is_used_once)", "a", "b"), 0), ("imul", "a", "b"), (32,))
    assert results[0].verdict == "verified"
    assert results[0].treatments == [("imul(is_used_once)", "no meaning")]


def test_unsupported_names_what_is_missing_and_is_never_verified():
    results = verdicts("unsupported_rules.py")
    assert {r.verdict for r in results} == {"unsupported"}
    reasons = {r.reason for r in results}
    assert "opcode fsin has no semantics" in reasons
    assert "fadd at 64 bits (no f64 semantics)" in reasons
    assert "counterexample unless a(is_made_up_predicate) (not modelled)" in reasons
    made_up = [r for r in results if "made_up" in r.reason]
    assert all(r.counterexample.confirmed for r in made_up)  # the values are still shown


def test_float_rules_are_decided_with_z3_floating_point():
    results = verdicts("float_rules.py")
    by_list = {}
    for r in results:
        by_list.setdefault(r.list_name, []).append(r.verdict)
    assert by_list == {"right": ["verified"] * 3, "wrong": ["counterexample"],
                       "inexact": ["unsupported"]}
    assert all(r.float_rule for r in results)


def test_malformed_rules_are_errors_and_unknown_opcodes_unsupported():
    results = verdicts("malformed_rules.py")
    assert [r.verdict for r in results[-4:]] == ["error", "error", "error", "unsupported"]
    assert results[0].verdict == "verified"


@pytest.mark.parametrize("sizes, count", [((8,), 1), ((16, 32), 2)])
def test_sizes_restrict_the_instances(sizes, count):
    assert len(prove(("iadd", "a", 0), "a", sizes)) == count


def test_each_assumption_is_what_makes_its_rule_true():
    results = verdicts("assumed_rules.py")
    assumed = [r for r in results if r.list_name == "assumed"]
    assert {r.verdict for r in assumed} == {"verified"}, [
        (r.where, r.label, r.reason) for r in assumed if r.verdict != "verified"]
    twins = {}
    for r in results:
        if r.list_name == "unassumed":
            twins.setdefault(r.index, set()).add(r.verdict)
    assert len(twins) == len({r.index for r in assumed})
    assert all("counterexample" in verdicts_ for verdicts_ in twins.values()), twins
    assert all(r.counterexample.confirmed for r in results if r.counterexample)
    labels = {label for r in assumed for label, how in r.treatments if how == "assumed"}
    assert {"a (a NIR boolean: 0 or ~0)", "iadd(only_lower_8_bits_used)", "a(is_gt_zero)",
            "a(is_not_negative)", "a(is_odd)"} <= labels


def test_only_the_low_bits_named_are_compared():
    wide = prove(("iadd(only_lower_8_bits_used)", ("iand", "a", 0x1FF), "b"), ("iadd", "a", "b"),
                 (32,))
    assert wide[0].verdict == "verified"
    narrow = prove(("iadd(only_lower_8_bits_used)", ("iand", "a", 0x7F), "b"), ("iadd", "a", "b"),
                   (32,))
    cex = narrow[0].counterexample
    assert narrow[0].verdict == "counterexample" and cex.confirmed
    assert (cex.source ^ cex.target) & 0xFF  # the replay found the low bytes differ


def test_float_range_predicates_say_nothing_about_nan():
    # a range does not exclude NaN, which is unequal to itself; is_a_number_* adds that
    plain = prove(("fneu", "a(is_not_negative)", "a"), False, (32,))[0]
    assert plain.verdict == "counterexample"
    value = plain.counterexample.values["a"]
    assert (value >> 23) & 0xFF == 0xFF and value & 0x7FFFFF  # a NaN
    assert prove(("fneu", "a(is_a_number_not_negative)", "a"), False, (32,))[0].verdict == (
        "verified")
    # fabs(x) == x for x >= 0 except x = -0.0 (range analysis counts it as eq_zero)
    number = prove(("fabs", "a(is_a_number_not_negative)"), "a", (32,))[0]
    assert number.verdict == "counterexample" and number.counterexample.values == {"a": 1 << 31}
    assert prove(("feq", "a(is_not_zero)", 0.0), False, (32,))[0].verdict == "verified"


def test_mediump_conversions_are_unmodelled_so_their_counterexamples_are_unsupported():
    mediump = prove(("i2i32", ("i2imp", "a@32")), "a", (32,))[0]
    assert mediump.verdict == "unsupported"
    assert "i2imp (mediump: may keep full precision)" in mediump.reason
    assert mediump.counterexample.confirmed  # the values are still shown
    assert prove(("i2i32", ("i2i16", "a@32")), "a", (32,))[0].verdict == "counterexample"


def test_agx_shapes_have_the_counterexamples_the_docs_explain():
    by_list = {}
    for r in verdicts("agx_shapes.py"):
        by_list.setdefault(r.list_name, []).append(r)
    lea, = by_list["relaxed_lea"]
    assert lea.verdict == "counterexample" and lea.counterexample.confirmed
    values = lea.counterexample.values
    assert (values["b"] + values["c"] * values["d"]) & 0xFFFFFFFF >= 1 << 31
    shift_mask, = by_list["shift_mask"]
    assert shift_mask.counterexample.target_undefined == [
        "ubitfield_extract offset/bits out of range (undefined per GLSL)"]
    assert [r.verdict for r in by_list["funnel"]] == ["verified", "counterexample"]
    cex = by_list["funnel"][1].counterexample
    assert cex.source == cex.values["a"] | cex.values["b"] and cex.target == cex.values["a"]


def test_the_relaxed_lea_holds_under_the_buffer_size_bound():
    loaded = load_rule_file(str(DATA / "agx_shapes.py"), ["relaxed_lea"])
    (rule,) = loaded.rules()
    (instance,) = instances(rule, (64,))

    def offset_below_2_31(m, env):  # 0 <= b + c*d < 2**31 as the 32-bit offset
        offset = m.add(env["b"], m.mul(env["c"], env["d"], 32), 32)
        return [m.ult(offset, m.const(1 << 31, 32), 32)]

    found = treatments(rule)
    # (z3's reason, should either come back unknown: a fresh-clone CI once had the first,
    # decided in about 0.1 s alone, come back unknown within its budget, not reproduced)
    answer, _, reason = decide(instance, found, TIMEOUT_MS, integers=False)
    assert answer == z3.sat, reason
    # about 1 s alone; the cap only keeps a loaded machine from turning the proof unknown
    answer, _, reason = decide(instance, found, 30000, integers=False, extra=offset_below_2_31)
    assert answer == z3.unsat, reason
