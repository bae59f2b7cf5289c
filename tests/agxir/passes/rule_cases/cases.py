"""Reading and writing rule-case files: `rule_cases/<pass>.agx`, one file per rule table.

A case file is a pass's rule cases, each a function in the IR text form preceded by one
line that says what the pass must do to it:

    ; fires: RULE                      the pass fires RULE and no other rule
    ; fires: RULE also: R2, R3         ... RULE and exactly these others
    ; misses: RULE at WHERE: WHY       RULE does not fire; its root matched and the match
                                       failed at WHERE (src<i>, precondition, unchanged),
                                       or WHERE is none: the root no longer matches, or an
                                       earlier rule of the table takes the site

Other `;` lines are comments. `read_cases` keeps each function's line numbers, so a parse
error names the line of the case file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_FIRES = re.compile(r"^; fires: (?P<rule>\S+)(?: also: (?P<also>.+))?$")
_MISSES = re.compile(r"^; misses: (?P<rule>\S+) at (?P<where>\S+): (?P<why>.+)$")


@dataclass(frozen=True)
class RuleCase:
    kind: str  # "fires" or "misses"
    rule: str
    text: str  # the function, padded with blank lines to its place in the file
    also: tuple[str, ...] = ()  # fires: the other rules the pass fires on it
    where: str | None = None  # misses: where the rule's match fails
    why: str = ""  # misses: what makes it a near miss
    line: int = 0  # the line of the case's header

    @property
    def program(self) -> str:
        return self.text.lstrip("\n")


@dataclass(frozen=True)
class CaseFile:
    pass_name: str
    cases: list[RuleCase]


HEADER = """\
; Rule cases of the pass `{name}`: for every rule of its table, a function on which the
; pass fires the rule and one near miss on which it must not (tests/agxir/passes/
; test_rule_cases.py; format: tests/agxir/passes/rule_cases/cases.py; found, reduced and
; near-missed by rule_cases/find_cases.py, then kept as they are).
"""


def read_cases(path: Path) -> CaseFile:
    lines = path.read_text().splitlines()
    cases: list[RuleCase] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        fires, misses = _FIRES.match(line), _MISSES.match(line)
        if not (fires or misses):
            if line.startswith(("; fires", "; misses")):
                raise ValueError(f"{path}:{index + 1}:1: malformed case line: {line}")
            index += 1
            continue
        start = index + 1
        end = start
        while end < len(lines) and lines[end] != "}":
            end += 1
        if end == len(lines):
            raise ValueError(f"{path}:{index + 1}:1: case without a closing '}}'")
        text = "\n" * start + "\n".join(lines[start:end + 1]) + "\n"
        if fires:
            also = tuple(r.strip() for r in (fires["also"] or "").split(",") if r.strip())
            cases.append(RuleCase("fires", fires["rule"], text, also=also, line=index + 1))
        else:
            cases.append(RuleCase("misses", misses["rule"], text, where=misses["where"],
                                  why=misses["why"], line=index + 1))
        index = end + 1
    name = path.name.removesuffix(".agx")
    return CaseFile(name, cases)


def write_cases(path: Path, cases: CaseFile) -> None:
    parts = [HEADER.format(name=cases.pass_name)]
    for case in cases.cases:
        if case.kind == "fires":
            head = f"; fires: {case.rule}" + (f" also: {', '.join(case.also)}" if case.also else "")
        else:
            head = f"; misses: {case.rule} at {case.where}: {case.why}"
        parts.append(head + "\n" + case.program)
    path.write_text("\n".join(parts))
