"""Every rule of every rule table fires where it should and only there (issue 19).

`rule_cases/<pass>.agx` holds, per rule of the pass's table, a function on which the pass
must fire the rule (and exactly the rules the case lists) and a near miss on which it must
not, though the rule's root matched (`recording_near_misses` names where the match failed).
So a rule that stops matching, a missed optimization no oracle would notice, fails here;
and a completeness test fails when a rule has no case of either kind.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agxir.ir import clone_function
from agxir.passes import PASSES, RULE_TABLES
from agxir.rewrite import counting_rule_hits
from agxir.rewrite import matcher as matcher_module
from agxir.rewrite.matcher import recording_near_misses
from agxir.text import parse_function, print_function
from agxir.verifier import verify
from tests.agxir.passes.rule_cases.cases import RuleCase, read_cases

CASE_DIR = Path(__file__).parent / "rule_cases"
CASE_FILES = {path.name.removesuffix(".agx"): read_cases(path)
              for path in sorted(CASE_DIR.glob("*.agx"))}
CASES = [(name, case) for name, cases in CASE_FILES.items() for case in cases.cases]
FIRES = [(name, case) for name, case in CASES if case.kind == "fires"]


def _id(item) -> str:
    name, case = item
    return f"{name}/{case.kind}/{case.rule}"


def run_case(pass_name: str, case: RuleCase):
    """The pass on the case: (changed, rule hits, near misses, the result)."""
    fn = parse_function(case.text, str(CASE_DIR / f"{pass_name}.agx"))
    errors = verify(fn)
    assert not errors, f"{pass_name}.agx:{case.line}: the case does not verify: {errors[0]}"
    work = clone_function(fn)
    with counting_rule_hits() as hits, recording_near_misses() as misses:
        changed = PASSES[pass_name].run(work)
    return changed, dict(hits), misses, work


def fires_failure(pass_name: str, case: RuleCase) -> str | None:
    """Why the fires-case fails, or None: the pass must fire exactly the listed rules."""
    changed, hits, _, result = run_case(pass_name, case)
    where = f"{pass_name}.agx:{case.line}"
    expected = {case.rule, *case.also}
    if set(hits) != expected:
        return f"{where}: expected {sorted(expected)} to fire, fired {sorted(hits)}"
    if not changed:
        return f"{where}: the rules fired but the pass reported no change"
    errors = verify(result)
    if errors:
        return f"{where}: the result does not verify: {errors[0]}"
    return None


def test_every_rule_has_a_fires_case_and_a_near_miss():
    missing = []
    for pass_name, rules in RULE_TABLES.items():
        cases = CASE_FILES.get(pass_name)
        have = {(c.kind, c.rule) for c in cases.cases} if cases else set()
        missing += [f"{pass_name}/{kind}/{rule.name}" for rule in rules
                    for kind in ("fires", "misses") if (kind, rule.name) not in have]
    assert not missing, f"rules without a case: {', '.join(missing)}"


def test_every_case_names_a_rule_of_its_table():
    assert set(CASE_FILES) <= set(RULE_TABLES), "a case file for a pass without a rule table"
    for pass_name, cases in CASE_FILES.items():
        names = {rule.name for rule in RULE_TABLES[pass_name]}
        for case in cases.cases:
            assert case.rule in names and set(case.also) <= names, (
                f"{pass_name}.agx:{case.line}: {case.rule} is not a rule of {pass_name}")
    assert len(CASES) == 2 * sum(len(rules) for rules in RULE_TABLES.values())


@pytest.mark.parametrize("item", FIRES, ids=_id)
def test_the_rule_fires_on_its_case(item):
    pass_name, case = item
    assert fires_failure(pass_name, case) is None


@pytest.mark.parametrize("item", [c for c in CASES if c[1].kind == "misses"], ids=_id)
def test_the_rule_near_misses_its_near_miss(item):
    pass_name, case = item
    _, hits, misses, result = run_case(pass_name, case)
    where = f"{pass_name}.agx:{case.line}"
    assert case.rule not in hits, f"{where}: {case.rule} fired on its near miss ({case.why})"
    assert case.where == "none" or (case.rule, case.where) in misses, (
        f"{where}: {case.rule} did not near-miss at {case.where}; near misses of it: "
        f"{sorted(w for r, w in misses if r == case.rule)}")
    assert not verify(result)


def test_a_near_miss_differs_from_its_fires_case_in_one_instruction():
    for pass_name, cases in CASE_FILES.items():
        fires = {c.rule: c for c in cases.cases if c.kind == "fires"}
        for case in cases.cases:
            if case.kind != "misses" or case.rule not in fires:
                continue
            body = [line for line in case.program.splitlines()[1:]]
            other = [line for line in fires[case.rule].program.splitlines()[1:]]
            differing = sum(a != b for a, b in zip(body, other)) + abs(len(body) - len(other))
            assert differing == 1, f"{pass_name}.agx:{case.line}: {differing} lines differ"


@pytest.mark.parametrize("item", FIRES, ids=_id)
def test_a_rule_that_never_matches_fails_its_case(item, monkeypatch):
    """The mutation check: with the rule's pattern taken away (the matcher never tries it),
    its fires-case must fail."""
    pass_name, case = item
    try_rule = matcher_module._try

    def never_this_rule(rule, *rest):
        return None if rule.name == case.rule else try_rule(rule, *rest)

    monkeypatch.setattr(matcher_module, "_try", never_this_rule)
    assert fires_failure(pass_name, case) is not None


def test_the_case_programs_print_back_to_themselves():
    for pass_name, case in CASES:
        fn = parse_function(case.text, f"{pass_name}.agx")
        assert print_function(fn) == case.program, f"{pass_name}.agx:{case.line}"
