"""Rewrite rules as data and the one matcher that applies them.

Every rewrite in the project is a `Rule` (pattern, replacement, precondition) in a pass's
rule table; `apply_rules` is the driver passes run, and `oracles.smt.rules` proves each rule
with the same matcher and builder. See `pattern` for the data types, `matcher` for matching,
building and the driver, `concrete` for the Python-int machine computed parts run on, and
`instances` for the legal concrete instances of a pattern that the proof enumerates.
"""

from agxir.rewrite.concrete import CONCRETE, ConcreteBitVectors
from agxir.rewrite.matcher import (
    CONCRETE_EVALUATOR,
    Bindings,
    Match,
    Namer,
    RuleError,
    apply_rules,
    build,
    counting_rule_hits,
    match_at,
    matches,
    slot_spec,
)
from agxir.rewrite.pattern import (
    Bind,
    Emit,
    Ins,
    NewImm,
    OneOf,
    Opnd,
    Rule,
    Use,
    any_,
    defined_by,
    imm,
    reg,
    uniform,
    value,
    zero,
)

__all__ = [
    "CONCRETE", "CONCRETE_EVALUATOR", "Bind", "Bindings", "ConcreteBitVectors", "Emit", "Ins",
    "Match", "Namer", "NewImm", "OneOf", "Opnd", "Rule", "RuleError", "Use", "any_", "apply_rules", "counting_rule_hits",
    "build", "defined_by", "imm", "match_at", "matches", "reg", "slot_spec", "uniform",
    "value", "zero",
]  # fmt: skip
