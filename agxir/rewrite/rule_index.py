"""Which rules of a table can match a root: the table's rules indexed by the root's opcode
and destination size, and each rule pattern's header (its root without sources). The
matcher (agxir/rewrite/matcher.py) asks it once per kind of root, so a table of many
rules (address-fuse's 68, all wanting a 64-bit iadd) costs nothing on roots none of them
can match."""

from __future__ import annotations

import copy
from weakref import WeakKeyDictionary

from agxir.rewrite.pattern import Ins, Rule

# A rule pattern -> the pattern without its sources. Weak keys: some passes build rules per
# run (not-rev's single-use rules), and a pattern's id may be reused once it is collected.
_HEADERS: WeakKeyDictionary = WeakKeyDictionary()


def header(pattern: Ins) -> Ins:
    """`pattern` with no sources to match: its root's opcode, size, saturation and
    attributes. Built past `Ins`'s checks, which reject a sources wildcard without focus."""
    found = _HEADERS.get(pattern)
    if found is None:
        found = copy.copy(pattern)
        object.__setattr__(found, "srcs", None)
        _HEADERS[pattern] = found
    return found



class RuleIndex(dict):
    """A rule table's rules by root: (opcode name, destination size or None) -> the rules
    that can match such a root, in table order, as (whole-root rules with their headers,
    focus rules with the opcodes the focus's definition must have, or None), or `NO_RULES`.
    Filled in as roots are met; kept per rule table (`index_of`)."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        super().__init__()
        self.rules = rules


NO_RULES = ((), ())
# id(rule table) -> (the table, its index), for tables given as tuples (the rule-table
# passes' module constants); a list may change between calls, so it is indexed per call.
_INDEXES: dict[int, tuple[tuple, RuleIndex]] = {}
_MAX_INDEXES = 256  # some passes build rules per run (not-rev): forget them all past this


def index_of(rules) -> RuleIndex:
    if isinstance(rules, tuple):
        found = _INDEXES.get(id(rules))
        if found is not None and found[0] is rules:
            return found[1]
        if len(_INDEXES) >= _MAX_INDEXES:
            _INDEXES.clear()
        index = RuleIndex(rules)
        _INDEXES[id(rules)] = (rules, index)
        return index
    return RuleIndex(tuple(rules))


def _may_root(pattern: Ins, opcode: str, size: int | None) -> bool:
    """Whether a root of this opcode and destination size can match `pattern`'s root."""
    if pattern.opcode is not None and opcode not in pattern.opcodes:
        return False
    if pattern.size is not None and (size is None or (isinstance(pattern.size, int)
                                                      and pattern.size != size)):
        return False
    return True


def rules_for(rules: tuple[Rule, ...], opcode: str, size: int | None):
    """The rules whose root may be `opcode` with a destination of `size`, in table order:
    (whole-root, focused), as `RuleIndex` holds them. A whole-root rule whose root's size
    cannot match is left out (its match would fail at the root, where nothing is recorded);
    a focus rule is left out only by opcode, since its focus is looked at first (a near
    miss at the source)."""
    whole = tuple(
        (rule, header(rule.pattern)) for rule in rules
        if not rule.focused and _may_root(rule.pattern, opcode, size)
    )
    focused = tuple(
        (rule, _focus_opcodes(rule)) for rule in rules
        if rule.focused and (rule.pattern.opcode is None or opcode in rule.pattern.opcodes)
    )
    return (whole, focused) if whole or focused else NO_RULES


def _focus_opcodes(rule: Rule) -> frozenset | None:
    """The opcodes the focus's definition may have (empty: any), or None when the focus
    need not be defined by an instruction."""
    defined_by = rule.pattern.focus.defined_by
    return None if defined_by is None else frozenset(defined_by.opcodes)
