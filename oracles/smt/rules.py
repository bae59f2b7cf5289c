"""Proving a rewrite rule with z3: verified, counterexample (replayed), timeout, or error.

`prove_rule(rule, timeout_ms)` takes every distinct legal instance of the rule's pattern
(`agxir.rewrite.instances`: each opcode alternative, size, attribute value and operand form,
with the read-value collapse and focus shortcut described there), matched and rewritten by
the real matcher and builder, and asks z3 per instance whether some input has

    precondition AND legal source immediates AND NOT UB(source)
        AND (UB(target) OR result differs OR memory differs OR exports differ)

after first asking whether the precondition allows a computed immediate that does not fit
its slot (a static question: such a replacement is not valid IR, whatever the inputs).

Both sides are encoded with `encode_instruction` (the table's semantics on `Z3BitVectors`); a
symbolic immediate becomes a stand-in register read exactly as the immediate would be (16
bits for integer reads, zero-extended for raw reads, the minifloat table for float reads).
Memory is one 64-byte buffer at buffer_base(0) with symbolic contents; the thread id is 0.

unsat on every instance: verified. sat: a counterexample, turned into a fully concrete
instance if a reduction was used (or dropped if no concrete instance shows it: the reduction
proved more than the rule claims), then replayed in the interpreter as two small functions
(source and target, root result exported) on the model's values; `confirmed` says whether
the outputs, memory or outcome differ there. unknown (the per-query timeout, or z3 giving
up): timeout, never verified. A query still open after SPLIT_AFTER_MS whose immediates have
few possible values is split into one query per combination of values, since z3 decides
products of constants far more easily than products of unknowns. A replacement that is not
valid IR is a counterexample confirmed by the verifier. A rule the enumeration cannot
handle (an attribute with too many values left free, say) is an error.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

import z3

from agxir.ir import Immediate, Instruction, Operand, Uniform, Value
from agxir.opcodes.operands import (
    float_to_bits,
    minifloat_value,
    read_float,
    read_int,
    read_raw,
    sign_extend_int,
)
from agxir.rewrite import Rule, RuleError, slot_spec
from agxir.rewrite.instances import Instance, instances, signature
from agxir.rewrite.skeletons import (
    BUFFER_BYTES,
    PatternTooWide,
    Placeholder,
    reading,
    shape_function,
)
from agxir.text import print_function
from agxir.verifier import IMMEDIATE_LIMITS, verify
from oracles.inputs import InputSet
from oracles.interp import CompiledFunction
from oracles.memory_model import buffer_base
from oracles.outcomes import Returned
from oracles.smt.bitvectors import ADDRESS_SORT, BYTE_SORT, Memory, Z3BitVectors
from oracles.smt.instruction import encode_instruction
from oracles.smt.limits import limit

DEFAULT_TIMEOUT_MS = 2000
SPLIT_AFTER_MS = 250  # a query open this long is split on its immediates, when it can be
MAX_SPLIT = 4096
MAX_CONCRETIZE = 256  # concrete instances tried for a counterexample found through a reduction
VERDICTS = ("verified", "counterexample", "timeout", "error")


@dataclass(frozen=True)
class Counterexample:
    """Concrete inputs on which the target does not refine the source. `values`: each
    input's bits by name (registers, immediates as `#name`), `memory`: the buffer's bytes
    (when memory is used), `source`/`target`: the replay functions, `*_outcome`: what the
    interpreter made of them, `confirmed`: the replay shows the difference."""

    instance: str
    values: dict[str, int]
    memory: bytes | None
    source: str
    target: str
    source_outcome: str
    target_outcome: str
    confirmed: bool
    note: str = ""


@dataclass
class RuleProof:
    pass_name: str
    rule: str
    verdict: str
    instances: int = 0
    times_ms: list[float] = field(default_factory=list)
    counterexample: Counterexample | None = None
    timeouts: list[str] = field(default_factory=list)
    error: str = ""
    seconds: float = 0.0
    opcodes: set[str] = field(default_factory=set)  # the opcodes of the instances proved
    cached: bool = False  # taken from the proof cache (oracles.smt.proof_cache), not proved now

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms) if self.times_ms else 0.0

    @property
    def max_ms(self) -> float:
        return max(self.times_ms, default=0.0)


# --- the evaluator the matcher runs on during a proof ------------------------------------------


def immediate_symbol(var: str) -> z3.BitVecRef:
    return z3.BitVec(f"#{var}", 16)


class ProofEvaluator:
    """Preconditions and computed immediates on z3 terms: a placeholder immediate is its
    16-bit symbol, a computed one a new placeholder whose term is kept in `computed`."""

    def __init__(self) -> None:
        self.machine = Z3BitVectors({})
        self.computed: dict[str, tuple[z3.BitVecRef, object]] = {}

    def begin(self) -> None:
        self.computed = {}

    def immediate_value(self, name: str, operand: Operand):
        ref = operand.ref
        if isinstance(ref, Placeholder):
            return immediate_symbol(ref.var)
        return z3.BitVecVal(ref.bits & 0xFFFF, 16)

    def immediate(self, bits, spec, abs: bool, neg: bool) -> Operand:
        term = bits if isinstance(bits, z3.BitVecRef) else z3.BitVecVal(int(bits) & 0xFFFF, 16)
        if term.size() != 16:
            raise RuleError(f"a computed immediate must be 16 bits, not {term.size()}")
        var = f"new{len(self.computed)}"
        self.computed[var] = (term, spec)
        return Operand(Placeholder(1, var=var), abs, neg)

    def decide(self, condition):
        if isinstance(condition, bool) or z3.is_bool(condition):
            return condition
        raise RuleError(f"a precondition must give a truth value, not {condition!r}")


# --- one query ----------------------------------------------------------------------------------


def _minifloat(k: z3.BitVecRef, fwidth: int) -> z3.BitVecRef:
    low = z3.Extract(7, 0, k)
    term = z3.BitVecVal(float_to_bits(minifloat_value(255), fwidth), fwidth)
    for bits in range(254, -1, -1):
        term = z3.If(low == bits, float_to_bits(minifloat_value(bits), fwidth), term)
    return term


def stand_in_term(k: z3.BitVecRef, how: str, width: int) -> z3.BitVecRef:
    """The register that reads like immediate `k` (16 bits) in a slot read as `how` at
    `width`: integer reads extend a 16-bit register exactly as an immediate, raw reads
    zero-extend it, float reads take the minifloat's value at the float width."""
    if how in ("int", "int_cmp"):
        return k
    if how == "raw":
        return k if width == 16 else z3.ZeroExt(width - 16, k)
    return _minifloat(k, width)


class _Query:
    """The refinement query of one instance (see the module docstring)."""

    def __init__(self, inst: Instance) -> None:
        self.inst = inst
        self.terms: dict = {}
        self.assume: list = []
        self.bad: list = []
        self.stand_ins: dict = {}
        self.symbols: dict[str, z3.BitVecRef] = {}
        self.immediates: dict[str, z3.BitVecRef] = {}
        self.collapsed = {id(inst.operands[n].ref): (n, w) for n, w in inst.collapsed.items()}
        self.memory = Memory(z3.Array("memory", ADDRESS_SORT, BYTE_SORT),
                             ((buffer_base(0), BUFFER_BYTES),))

    def _immediate(self, var: str) -> z3.BitVecRef:
        if var in self.inst.computed:
            return self.inst.computed[var][0]
        return self.immediates.setdefault(var, immediate_symbol(var))

    def _stand_in(self, key, width: int, term) -> Uniform:
        if key not in self.stand_ins:
            stand_in = Uniform(f"standin{len(self.stand_ins)}", width)
            self.stand_ins[key] = stand_in
            self.terms[stand_in] = term
        return self.stand_ins[key]

    def operand(self, ins: Instruction, position: int, in_target: bool) -> Operand:
        src = ins.srcs[position]
        ref = src.ref
        if id(ref) in self.collapsed:
            name, width = self.collapsed[id(ref)]
            symbol = self.symbols.setdefault(name, z3.BitVec(name, width))
            return Operand(self._stand_in(("collapsed", name), width, symbol))
        if isinstance(ref, Placeholder):
            return self._placeholder(ins, position, src, in_target)
        if isinstance(ref, (Value, Uniform)) and ref not in self.terms:
            self.terms[ref] = self.symbols.setdefault(ref.name, z3.BitVec(ref.name, ref.size))
        return src

    def _placeholder(self, ins, position, src, in_target) -> Operand:
        var = src.ref.var
        k = self._immediate(var)
        spec = slot_spec(ins, position)
        if spec is not None and spec.imm is not None:
            limit = IMMEDIATE_LIMITS[spec.imm][0]
            if limit < 1 << 16:
                fits = z3.ULT(k, limit)
                # Inputs are legal programs; what the rule makes must be legal too.
                if in_target or var in self.inst.computed:
                    self.bad.append(z3.Not(fits))
                else:
                    self.assume.append(fits)
        how, width = reading(ins, position)[:2]
        term = stand_in_term(k, how, width)
        stand_in = self._stand_in((var, term.size(), how in ("float", "float_cmp")), term.size(), term)
        return Operand(stand_in, src.abs, src.neg)

    def substituted(self, ins: Instruction, in_target: bool) -> Instruction:
        srcs = [self.operand(ins, i, in_target) for i in range(len(ins.srcs))]
        return Instruction(ins.opcode, ins.dest, srcs, ins.attrs, ins.blocks, ins.sat)

    def run(self, instructions, memory, in_target: bool, keep_last: bool = False):
        """Encode in order; returns (the last result, UB conditions, memory, exports). Results
        become terms for later instructions, except a root's (`keep_last` off): the source
        root and its replacement share the destination."""
        undefined, exports, result = [], {}, None
        for k, ins in enumerate(instructions):
            sub = self.substituted(ins, in_target)
            if sub.is_phi:
                result = self.terms[sub.srcs[0].ref]
            else:
                encoded = encode_instruction(sub, self.terms, thread_id=0, memory=memory)
                memory, result = encoded.memory_after, encoded.result
                undefined.append(encoded.undefined)
                exports.update(encoded.exports)
            if ins.dest is not None and (keep_last or k < len(instructions) - 1):
                self.terms[ins.dest] = result
        return result, undefined, memory, exports

    def read(self, ins: Instruction, in_target: bool) -> z3.BitVecRef:
        sub = self.substituted(ins, in_target)
        machine = Z3BitVectors(self.terms, 0, self.memory)
        machine.instruction = sub
        return read_value(machine, sub, self.inst.skeleton.position)

    def solver(self, timeout_ms: int) -> z3.Solver:
        inst = self.inst
        defs, root = inst.source[:-1], inst.source[-1]
        _, src_ub, memory, _ = self.run(defs, self.memory, False, keep_last=True)
        if inst.shortcut:
            before, after = self.read(root, False), self.read(inst.target[-1], True)
            tgt_ub, differs = [], [before != after]
        else:
            before, root_ub, src_memory, src_exports = self.run([root], memory, False)
            src_ub += root_ub
            after, tgt_ub, tgt_memory, tgt_exports = self.run(inst.target, memory, True)
            differs = [] if before is None and after is None else [before != after]
            if src_memory is not memory or tgt_memory is not memory:
                differs.append(src_memory.array != tgt_memory.array)
            for slot in set(src_exports) | set(tgt_exports):
                a, b = src_exports.get(slot), tgt_exports.get(slot)
                differs.append(z3.BoolVal(True) if a is None or b is None else a != b)
        # What the immediates may be: the legal ranges of the source's and the precondition.
        self.static = list(self.assume)
        condition = inst.match.condition
        if condition is not True:
            self.static.append(condition)
        self.assertions = list(self.static)
        if src_ub:
            self.assertions.append(z3.Not(z3.Or(*src_ub)))
        self.assertions.append(z3.Or(*tgt_ub, *differs))
        solver = z3.Solver()
        limit(solver, timeout_ms)
        solver.add(*self.assertions)
        return solver


def read_value(m, ins: Instruction, position: int):
    """The value `ins` reads from source `position`, as `reading` classifies the slot: the
    readers of agxir.opcodes.operands, and for an integer compare the extension
    `read_int_compare` applies to each of its two sources."""
    how, width, *signed = reading(ins, position)
    if how == "int":
        return read_int(m, ins, position, width)
    if how in ("float", "float_cmp"):
        return read_float(m, ins, position, width)
    if how == "raw":
        return read_raw(m, ins, position, width)
    src = ins.srcs[position]
    if isinstance(src.ref, Immediate):
        bits = src.ref.bits & 0xFFFF
        return m.const(sign_extend_int(bits, 16, width) if signed[0] else bits, width)
    raw = m.operand(position)
    if src.ref.size < width:
        raw = (m.sext if signed[0] else m.zext)(raw, src.ref.size, width)
    return raw


@dataclass
class _Checked:
    verdict: str  # "verified", "counterexample", "timeout" or "invalid"
    ms: float
    query: _Query | None = None
    model: z3.ModelRef | None = None
    note: str = ""


def _check(inst: Instance, timeout_ms: int) -> _Checked:
    """Check one instance. A query still open after SPLIT_AFTER_MS is split on its symbolic
    immediates when they have few possible values (see `_split`); otherwise it gets the rest
    of the timeout."""
    target_fn = shape_function(inst.source[:-1], inst.target, inst.inputs())
    errors = verify(target_fn)
    if errors:
        return _Checked("invalid", 0.0, note="; ".join(str(e) for e in errors))
    query = _Query(inst)
    solver = query.solver(min(timeout_ms, SPLIT_AFTER_MS))
    start = time.perf_counter()
    if query.bad:
        # Whether a computed immediate fits its slot is static: no input is needed, so it is
        # asked apart from the (maybe much harder) question about values.
        static = z3.Solver()
        limit(static, timeout_ms)
        static.add(*query.static, z3.Or(*query.bad))
        if static.check() == z3.sat:
            ms = (time.perf_counter() - start) * 1000
            return _Checked("counterexample", ms, query, static.model())
    result = solver.check()
    if result == z3.unknown:
        split = _split(query, timeout_ms, start)
        if split is not None:
            return split
        if timeout_ms > SPLIT_AFTER_MS:
            limit(solver, timeout_ms - SPLIT_AFTER_MS)
            result = solver.check()
    ms = (time.perf_counter() - start) * 1000
    if result == z3.unsat:
        return _Checked("verified", ms)
    if result == z3.sat:
        return _Checked("counterexample", ms, query, solver.model())
    return _Checked("timeout", ms, note=solver.reason_unknown())


def _split(query: _Query, timeout_ms: int, start: float) -> _Checked | None:
    """Case-split a hard instance on its symbolic immediates: enumerate every combination of
    values the precondition and the immediate ranges allow (at most MAX_SPLIT), and check the
    query under each. Multiplying by a known constant is easy where a product of three
    unknowns is not (amul(amul(a, #b), #c) needs associativity). None when there are no
    immediates or too many combinations."""
    symbols = list(query.immediates.values())
    if not symbols:
        return None
    domain = z3.Solver()
    limit(domain, timeout_ms)
    domain.add(*query.assume)
    if query.inst.match.condition is not True:
        domain.add(query.inst.match.condition)
    combos = []
    while (found := domain.check()) == z3.sat:
        if len(combos) == MAX_SPLIT:
            return None
        model = domain.model()
        combo = [model.eval(k, model_completion=True) for k in symbols]
        combos.append(combo)
        domain.add(z3.Or([k != v for k, v in zip(symbols, combo)]))
    if found != z3.unsat:
        return None  # the values could not all be listed: no split
    for combo in combos:
        # A fresh solver per case: with the values as equalities z3 folds the constants
        # before bit-blasting, which it does not do for assumptions or after push.
        case = z3.Solver()
        limit(case, timeout_ms)
        case.add(*query.assertions, *[k == v for k, v in zip(symbols, combo)])
        result = case.check()
        if result == z3.unsat:
            continue
        ms = (time.perf_counter() - start) * 1000
        if result == z3.sat:
            return _Checked("counterexample", ms, query, case.model())
        return _Checked("timeout", ms, note=f"split on immediates: {case.reason_unknown()}")
    ms = (time.perf_counter() - start) * 1000
    return _Checked("verified", ms, note=f"split into {len(combos)} immediate values")


# --- counterexamples --------------------------------------------------------------------------


def _value(model: z3.ModelRef, term) -> int:
    return model.eval(term, model_completion=True).as_long()


def _concrete(ins: Instruction, bits: dict[str, int]) -> Instruction:
    srcs = [
        Operand(Immediate(bits[s.ref.var]), s.abs, s.neg) if isinstance(s.ref, Placeholder) else s
        for s in ins.srcs
    ]
    return Instruction(ins.opcode, ins.dest, srcs, dict(ins.attrs), list(ins.blocks), ins.sat)


def replay(inst: Instance, checked: _Checked) -> Counterexample:
    """Run the instance's source and target on the model's values in the interpreter."""
    model, query = checked.model, checked.query
    bits = {var: _value(model, query._immediate(var)) for var in _placeholders(inst)}
    values = {f"#{var}": b for var, b in bits.items()}
    scalars = {}
    for ref in inst.inputs():
        value = _value(model, query.terms.get(ref, z3.BitVecVal(0, ref.size)))
        values[ref.name] = value
        scalars[ref.name if isinstance(ref, Uniform) else f"{ref.name}_in"] = value
    defs = [_concrete(ins, bits) for ins in inst.source[:-1]]
    source = shape_function(defs, [_concrete(inst.source[-1], bits)], inst.inputs(), export=True)
    target = shape_function(defs, [_concrete(i, bits) for i in inst.target], inst.inputs(), export=True)
    memory = None
    buffers = {}
    if any(u.is_buffer for u in source.uniforms + target.uniforms):
        array, base = query.memory.array, buffer_base(0)
        memory = bytes(_value(model, z3.Select(array, base + i)) for i in range(BUFFER_BYTES))
        buffers["mem"] = memory
    shown = (print_function(source), print_function(target))
    description = describe(inst)
    errors = verify(target)
    if errors:
        note = "the replacement is not valid IR: " + "; ".join(str(e) for e in errors)
        return Counterexample(description, values, memory, *shown, "-", "-", True, note)
    inputs = [InputSet(1, scalars, buffers)]
    (before,) = CompiledFunction(source).run(inputs)
    (after,) = CompiledFunction(target).run(inputs)
    confirmed = isinstance(before, Returned) and before != after
    return Counterexample(description, values, memory, *shown, _outcome(before), _outcome(after),
                          confirmed, "" if confirmed else "the interpreter does not show it")


def _outcome(outcome) -> str:
    if isinstance(outcome, Returned):
        outputs = ", ".join("-" if v is None else hex(v) for v in outcome.outputs[0])
        return f"returned [{outputs}]"
    return outcome.describe()


def _placeholders(inst: Instance) -> list[str]:
    found = []
    for ins in inst.source + inst.target:
        for src in ins.srcs:
            if isinstance(src.ref, Placeholder) and src.ref.var not in found:
                found.append(src.ref.var)
    return found


def describe(inst: Instance) -> str:
    """One line: the instance's source and target, as the proof sees them."""
    sig = signature(inst)
    if sig[0] == "read":
        _, defs, how, before, after = sig
        return "; ".join(defs) + f" | {before} -> {after} read as {how}"
    _, defs, root, target = sig
    return "; ".join(defs + (root,)) + "  =>  " + "; ".join(target)


def _concretize(rule: Rule, inst: Instance, checked: _Checked, timeout_ms: int, proof: RuleProof):
    """A counterexample found through a reduction, made concrete: the full instances the
    reduced one stands for, checked one by one. Returns a Counterexample, "timeout", or None
    when none of them fails (the reduction proved more than the rule claims)."""
    if not inst.collapsed and not inst.shortcut:
        return replay(inst, checked)
    keep = {name: form for name, form in inst.forms.items()
            if name not in inst.collapsed and not inst.skeleton.vars[name].anonymous}
    timed_out = False
    candidates = instances(rule, ProofEvaluator(), full=True, key=inst.skeleton.key, forms=keep)
    for tried, full in enumerate(candidates):
        if tried == MAX_CONCRETIZE:
            return "timeout"  # not shown concretely within the budget: not proved either
        result = _check(full, timeout_ms)
        proof.times_ms.append(result.ms)
        if result.verdict == "invalid":
            return _invalid(full, result)
        if result.verdict == "counterexample":
            return replay(full, result)
        timed_out = timed_out or result.verdict == "timeout"
    return "timeout" if timed_out else None


def _invalid(inst: Instance, checked: _Checked) -> Counterexample:
    return Counterexample(describe(inst), {}, None, "", "", "-", "-", True,
                          "the replacement is not valid IR: " + checked.note)


# --- one rule -----------------------------------------------------------------------------------


def prove_rule(rule: Rule, timeout_ms: int = DEFAULT_TIMEOUT_MS, pass_name: str = "") -> RuleProof:
    """Prove `rule` on all of its instances; stops at the first counterexample."""
    proof = RuleProof(pass_name, rule.name, "verified")
    start = time.perf_counter()
    try:
        for inst in instances(rule, ProofEvaluator()):
            proof.instances += 1
            proof.opcodes.update(ins.name for ins in inst.source + inst.target)
            checked = _check(inst, timeout_ms)
            proof.times_ms.append(checked.ms)
            if checked.verdict == "timeout":
                proof.timeouts.append(f"{describe(inst)} ({checked.note})")
                continue
            if checked.verdict == "invalid":
                proof.counterexample = _invalid(inst, checked)
                break
            if checked.verdict == "counterexample":
                found = _concretize(rule, inst, checked, timeout_ms, proof)
                if found == "timeout":
                    proof.timeouts.append(f"{describe(inst)} (concrete instances timed out)")
                elif found is not None:
                    proof.counterexample = found
                    break
    except (PatternTooWide, RuleError) as error:
        proof.verdict, proof.error = "error", str(error)
    proof.seconds = time.perf_counter() - start
    if proof.verdict != "error":
        if proof.counterexample is not None:
            proof.verdict = "counterexample"
        elif proof.timeouts:
            proof.verdict = "timeout"
        elif proof.instances == 0:
            proof.verdict, proof.error = "error", "the pattern has no legal instance"
    return proof
