"""NIR's algebraic-rule language and opcode semantics, for auditing Mesa's nir_algebraic files.

`load_rule_file` reads a rule file (Python: executed, see `rulefile`), `instances` infers
bit sizes and instantiates each rule, `evaluate` computes either side of an instance on any
`BitVectors` (z3's or the concrete one), and `NIR_OPS` is the opcode table whose semantics are
written once against that interface. Nothing here imports z3; `oracles.smt.nir_rules` proves.
"""

from agxir.nir.evaluate import Evaluated, evaluate
from agxir.nir.float_ops import Unsupported
from agxir.nir.ops import NIR_OPS, NirOp
from agxir.nir.pattern import Const, Expr, PatternError, Rule, Var
from agxir.nir.rulefile import BadRule, RuleFile, RuleFileError, load_rule_file
from agxir.nir.sizes import DEFAULT_SIZES, Instance, SizeError, instances, is_float_rule

__all__ = [
    "DEFAULT_SIZES", "NIR_OPS", "BadRule", "Const", "Evaluated", "Expr", "Instance", "NirOp",
    "PatternError", "Rule", "RuleFile", "RuleFileError", "SizeError", "Unsupported", "Var",
    "evaluate", "instances", "is_float_rule", "load_rule_file",
]
