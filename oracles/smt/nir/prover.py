"""Proving nir_algebraic rule instances with z3, Alive-style: one verdict per instance.

For an instance (a rule at one size assignment, `agxir.nir.instances`) both sides are
evaluated on `Z3BitVectors` with the NIR semantics (`agxir.nir.evaluate`); the replacement must
refine the search: wherever the search's value is defined and every assumed predicate holds,
the replacement is defined and has the same bits. Verdicts:

* verified: z3 proved it (unsat), under the assumed predicates;
* counterexample: z3 found values; they are replayed on the concrete machine (Python ints,
  or z3 constants where floats are involved) and the replay must confirm the difference;
* unsupported: an opcode or size without semantics, or a counterexample that an unmodelled
  predicate or flag might exclude (named; never counted as verified);
* timeout: z3 answered unknown within the per-query timeout (never counted as verified);
* error: the rule is malformed or has no consistent bit sizes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import z3

from agxir.nir import (
    BadRule,
    Instance,
    Rule,
    SizeError,
    Unsupported,
    evaluate,
    instances,
    is_float_rule,
)
from agxir.nir.integer_ops import mask
from agxir.nir.ops import NIR_OPS, type_base
from agxir.nir.pattern import Expr, Var
from agxir.nir.predicates import (
    ASSUMED,
    LOW_BITS_USED,
    NO_MEANING,
    UNMODELLED,
    condition_treatment,
    meaning,
)
from agxir.rewrite.concrete import ConcreteBitVectors
from oracles.smt.bitvectors import Z3BitVectors, value_of
from oracles.smt.limits import limit
from oracles.smt.nir.integers import IntBitVectors

VERDICTS = ("verified", "counterexample", "unsupported", "timeout", "error")


@dataclass
class Counterexample:
    values: dict[str, int]
    source: int | None
    target: int | None
    source_undefined: bool
    target_undefined: list[str]
    confirmed: bool
    unless: list[str] = field(default_factory=list)  # unmodelled facts that might exclude it


@dataclass
class InstanceResult:
    list_name: str
    index: int
    line: int | None
    rule: str
    label: str
    verdict: str
    ms: float = 0.0
    float_rule: bool = False
    reason: str = ""
    encoding: str = "bit-vectors"  # or "integers", when bit-vectors timed out
    treatments: list[tuple[str, str]] = field(default_factory=list)
    counterexample: Counterexample | None = None

    @property
    def where(self) -> str:
        return f"{self.list_name}[{self.index}]"


# --- what the predicates mean here ----------------------------------------------------------


def _walk(node, path=(), slot="uint"):
    yield node, path, slot
    if isinstance(node, Expr):
        op = NIR_OPS[node.op]
        for i, src in enumerate(node.srcs):
            yield from _walk(src, path + (i,), op.inputs[i])


MEDIUMP = frozenset({"f2fmp", "i2imp", "f2imp", "f2ump", "i2fmp", "u2fmp"})


def low_bits_used(rule: Rule) -> int | None:
    """N when the search's root carries only_lower_N_bits_used: only those bits must agree."""
    for cond in rule.search.conds:
        found = LOW_BITS_USED.match(cond)
        if found:
            return int(found.group(1))
    return None


def treatments(rule: Rule) -> list[tuple[str, str, object]]:
    """(label, treatment, where) for every predicate, flag and condition of the rule."""
    found = []
    floating = is_float_rule(rule)
    seen_bool = set()
    for node, path, slot in _walk(rule.search):
        if isinstance(node, Var) and type_base(slot) == "bool" and node.name not in seen_bool:
            seen_bool.add(node.name)
            found.append((f"{node.name} (a NIR boolean: 0 or ~0)", ASSUMED, (node, path, slot, None)))
        if isinstance(node, Var | Expr):
            name = node.name if isinstance(node, Var) else node.op
            for cond in node.conds:
                how = meaning(cond)[0]
                if path == () and LOW_BITS_USED.match(cond):
                    how = ASSUMED  # only the low bits of the result are compared
                    found.append((f"{name}({cond})", how, None))
                    continue
                found.append((f"{name}({cond})", how, (node, path, slot, cond)))
        if isinstance(node, Expr) and node.inexact:
            found.append((f"~{node.op} (inexact)", UNMODELLED if floating else NO_MEANING, None))
    for node in list(_exprs(rule.search)) + list(_exprs(rule.replace)):
        if node.op in MEDIUMP:
            found.append((f"{node.op} (mediump: may keep full precision)", UNMODELLED, None))
            break
    if rule.condition:
        found.append((f"condition {rule.condition}", condition_treatment(rule.condition), None))
    return found


def _exprs(node):
    if isinstance(node, Expr):
        yield node
        for src in node.srcs:
            yield from _exprs(src)


def _assumptions(m, rule, instance, env, found):
    facts = []
    for _, treatment, where in found:
        if treatment != ASSUMED or where is None:
            continue
        node, path, slot, cond = where
        width = instance.size(("search", path))
        value = evaluate(m, node, instance, "search", env, path).value
        if cond is None:  # a boolean variable wider than one bit holds 0 or ~0
            facts.append(m.either(m.eq(value, m.const(0, width), width),
                                  m.eq(value, m.const(mask(width), width), width)))
            continue
        facts.append(meaning(cond)[1](m, value, width, type_base(slot)))
    return facts


# --- proving ---------------------------------------------------------------------------------


def _var_names(rule: Rule) -> list[str]:
    names: list[str] = []
    for node, _, _ in _walk(rule.search):
        if isinstance(node, Var) and node.name not in names:
            names.append(node.name)
    return names


def decide(instance: Instance, found, timeout_ms: int, integers: bool, extra=None):
    """(answer, values or None, reason unknown): one refinement query, in the bit-vector
    encoding or the integer one. `extra(m, env)` adds facts the rule file cannot state (an
    API bound a rule's comment relies on), to check a counterexample's explanation."""
    rule = instance.rule
    solver = z3.Solver()
    limit(solver, timeout_ms)
    if integers:
        m = IntBitVectors()
        env = {n: m.variable(n, instance.size(("var", n))) for n in _var_names(rule)}
        solver.add(*[m.range_of(t, instance.size(("var", n))) for n, t in env.items()])
    else:
        m = Z3BitVectors({})
        env = {n: z3.BitVec(n, instance.size(("var", n))) for n in _var_names(rule)}
    source = evaluate(m, rule.search, instance, "search", env)
    target = evaluate(m, rule.replace, instance, "replace", env)
    solver.add(*_assumptions(m, rule, instance, env, found))
    if extra is not None:
        solver.add(*extra(m, env))
    if source.undefined is not None:
        solver.add(z3.Not(source.undefined))
    wrong = m.negate(_agree(m, rule, instance, source.value, target.value))
    solver.add(z3.Or(target.undefined, wrong) if target.undefined is not None else wrong)
    answer = solver.check()
    if answer != z3.sat:
        return answer, None, solver.reason_unknown() if answer == z3.unknown else ""
    model = solver.model()
    values = {n: model.eval(t, model_completion=True).as_long() for n, t in env.items()}
    return answer, values, ""


def _agree(m, rule: Rule, instance: Instance, source, target):
    """The two results agree: all their bits, or the low N with only_lower_N_bits_used."""
    width = instance.size(("search", ()))
    bits = low_bits_used(rule)
    if bits is not None and bits < width:
        source, target = m.trunc(source, width, bits), m.trunc(target, width, bits)
        width = bits
    return m.eq(source, target, width)


def prove_instance(instance: Instance, timeout_ms: int) -> InstanceResult:
    rule = instance.rule
    found = treatments(rule)
    result = InstanceResult(rule.list_name, rule.index, rule.line, str(rule), instance.label,
                            "verified", float_rule=is_float_rule(rule),
                            treatments=[(label, how) for label, how, _ in found])
    start = time.perf_counter()
    try:
        answer, values, why = decide(instance, found, timeout_ms, integers=False)
        if answer == z3.unknown:
            try:
                answer, values, why = decide(instance, found, timeout_ms, integers=True)
                result.encoding = "integers"
            except NotImplementedError:
                pass
    except Unsupported as error:
        result.verdict, result.reason = "unsupported", str(error)
        result.ms = (time.perf_counter() - start) * 1000
        return result
    result.ms = (time.perf_counter() - start) * 1000
    if answer == z3.unsat:
        return result
    if answer == z3.unknown:
        result.verdict, result.reason = "timeout", why
        return result
    found_cex = replay(instance, values)
    unless = [label for label, how, _ in found if how == UNMODELLED]
    found_cex.unless = unless
    result.counterexample = found_cex
    if unless:
        result.verdict = "unsupported"
        result.reason = "counterexample unless " + ", ".join(unless) + " (not modelled)"
    else:
        result.verdict = "counterexample"
    return result


def replay(instance: Instance, values: dict[str, int]) -> Counterexample:
    """Evaluate both sides on concrete values: Python ints where the semantics are integer
    only, z3 constants (simplified to values) where floats are involved."""
    rule = instance.rule
    found = treatments(rule)
    try:
        m = ConcreteBitVectors()
        env = dict(values)
        outcome = _replay_on(m, instance, env, found, lambda v: v)
    except NotImplementedError:
        m = Z3BitVectors({})
        env = {n: z3.BitVecVal(v, instance.size(("var", n))) for n, v in values.items()}
        outcome = _replay_on(m, instance, env, found, value_of)
    source, target, source_undefined, target_reasons, facts, agree = outcome
    differs = bool(target_reasons) or not agree
    confirmed = all(facts) and not source_undefined and differs
    return Counterexample(values, source, target, source_undefined, target_reasons, confirmed)


def _replay_on(m, instance, env, found, concrete):
    rule = instance.rule
    source = evaluate(m, rule.search, instance, "search", env)
    target = evaluate(m, rule.replace, instance, "replace", env)
    facts = [bool(concrete(f)) for f in _assumptions(m, rule, instance, env, found)]
    source_undefined = source.undefined is not None and bool(concrete(source.undefined))
    target_reasons = [reason for reason, cond in target.reasons if bool(concrete(cond))]
    agree = bool(concrete(_agree(m, rule, instance, source.value, target.value)))
    return (concrete(source.value), concrete(target.value), source_undefined, target_reasons,
            facts, agree)


# --- whole rules ----------------------------------------------------------------------------------


def prove_rule(rule: Rule | BadRule, timeout_ms: int, sizes) -> list[InstanceResult]:
    """One result per instance of `rule` (one error or unsupported result if it has none)."""
    if isinstance(rule, BadRule):
        verdict = "unsupported" if rule.unsupported else "error"
        return [InstanceResult(rule.list_name, rule.index, rule.line, "", "", verdict,
                               reason=rule.message)]
    try:
        chosen = instances(rule, tuple(sizes))
    except SizeError as error:
        verdict = "unsupported" if error.never_matches else "error"
        return [InstanceResult(rule.list_name, rule.index, rule.line, str(rule), "", verdict,
                               float_rule=is_float_rule(rule), reason=str(error))]
    return [prove_instance(instance, timeout_ms) for instance in chosen]


__all__ = ["NO_MEANING", "VERDICTS", "Counterexample", "InstanceResult", "prove_instance",
           "prove_rule", "replay", "treatments"]
