"""`agxfuzz mesa agree`, one program: the model's optimizer against Mesa's, change by
change (the run, the tables, the allocators and the command: `fuzz.mesa.agree_report`;
docs/mesa-agreement.md).

Programs are drawn as `run --mesa` draws them (`exec_cases`: `fuzz.mesa.translatable`, the
campaign's per-program seeds); `lower-cf` makes the exec level Mesa's backend takes, which
is Mesa's input and the arbiter of meaning. On each:

* **Mesa**: `mesa:optimizer` then `mesa:dce` (agx_optimizer: the backward fmov_rev, then
  the forward copyprop, fmov, inline_imm, if_cmp, cmpsel; then agx_dce) on the exec level.
* **The model**: the passes with a counterpart in Mesa 23.3.6's agx_optimizer, in its
  order (`MODEL_PIPELINE`), on the SSA program (their level: the model's dce is not
  exec-aware and branch-cmp rewrites the SSA branch), then `lower-cf`; Mesa's
  `fadd x, #-0.0` is read as the model's `fmov x` for it and spelled back after. The rules
  that fire are counted per pass (`agxir.rewrite.counting_rule_hits`).

Both outputs go through one differ (`changes`) against the exec-level input: each change is
a site (kind, where, what), so "the same change" means the same instruction rewritten to
the same operand; a change to an instruction the other side removed as dead is dropped
(`without_the_dead`). Per kind and program (`classify`): **both** (the same sites),
**model only** (the model's sites a strict superset), **Mesa only** (Mesa's are),
**different** (each has sites the other lacks). Both outputs run on the wave interpreter
on every input set (`judge`); where they differ the input is the arbiter: the side whose
output does not refine it is wrong.

The model's passes with no counterpart in 23.3.6 (later Mesa's not/if_not/ballot/signext
steps, the seed passes, the address modes: `MODEL_ONLY`) are run alone on the same
programs and counted: what they would change is a rule Mesa lacks by construction.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from types import SimpleNamespace

from agxir.ir import Function, Immediate, Instruction, Operand, Value, clone_function
from agxir.machine.lower_cf import structurable
from agxir.opcodes.table import BITOP_ALIASES, OPCODES
from agxir.passes import get_pass
from agxir.rewrite import counting_rule_hits
from agxir.text import print_function
from agxir.text.printer import format_instruction, format_operand, source_kind
from fuzz.generate import ChoiceSource
from fuzz.generate.cases import program_seed
from fuzz.mesa.passes import mesa_pass
from fuzz.mesa.translatable import translatable_case
from fuzz.passes_under_test import registered
from oracles.interp import DEFAULT_FUEL
from oracles.machine import run_wave
from oracles.outcomes import OutOfFuel, Returned, first_difference

NEG_ZERO = 0x80  # the minifloat -0.0: `fadd x, #-0.0` is Mesa's fmov
# kind -> (Mesa 23.3.6's function, the model's pass)
KINDS: dict[str, tuple[str, str]] = {
    "fmov-rev": ("agx_optimizer_fmov_rev", "fmov-rev"),
    "copyprop": ("agx_optimizer_copyprop", "copyprop"),
    "fmov-prop": ("agx_optimizer_fmov", "fmov-prop"),
    "inline-imm": ("agx_optimizer_inline_imm", "inline-imm"),
    "if-cmp": ("agx_optimizer_if_cmp", "branch-cmp"),
    "cmpsel": ("agx_optimizer_cmpsel", "cmpsel"),
    "dce": ("agx_dce", "dce"),
    "other": ("-", "-"),
}
# The model's passes with a counterpart in agx_optimizer (23.3.6), in Mesa's order.
MODEL_PIPELINE: tuple[str, ...] = ("fmov-rev", "copyprop", "fmov-prop", "inline-imm",
                                   "branch-cmp", "cmpsel", "dce")
MESA_PIPELINE: tuple[str, ...] = ("mesa:optimizer", "mesa:dce")
# The model's passes Mesa 23.3.6 has no counterpart for, and why.
MODEL_ONLY: dict[str, str] = {
    "not-rev": "later Mesa (agx_optimizer_not, backward)",
    "not-fuse": "later Mesa (agx_optimizer_not, forward)",
    "if-not": "later Mesa (IfInverted)",
    "ballot-fuse": "later Mesa (agx_optimizer_ballot); no ballot in 23.3.6's opcodes",
    "ext-prop": "later Mesa (signext copyprop)",
    "shift-fuse": "NIR's imadshl_agx, before the backend",
    "cmpsel-uniform-compare": "seed 000's heuristic 1 (Mesa merged heuristic 4)",
    "cmpsel-uniform-select": "seed 000's heuristic 3 (Mesa merged heuristic 4)",
    "address-cleanup": "seed 001's address modes (NIR's address ops, not in the profile)",
    "address-fuse": "seed 001's address modes (NIR's address ops, not in the profile)",
    "address-fold": "seed 001's address modes (NIR's address ops, not in the profile)",
    "address-lower": "seed 001's address modes (NIR's address ops, not in the profile)",
}
CLASSES = ("both", "model only", "Mesa only", "different")
MOV = BITOP_ALIASES["mov"]
FLOAT_OPS = frozenset({"fadd", "fmul", "ffma"})
# an exec-mask branch on a boolean and what it becomes with the compare folded in
BRANCHES = {"if_icmp": ("if_icmp", "if_fcmp"), "while_icmp": ("while_icmp", "while_fcmp")}


# --- spellings ----------------------------------------------------------------------------
def is_fmov(ins: Instruction, *, exact: bool = False) -> bool:
    """Mesa's `agx_is_fmov`: `fadd x, #-0.0`, whatever the immediate's modifiers
    (`agx_is_equiv` compares an index's type and value only); `exact`: without them, the
    model's `fmov x`."""
    if ins.name != "fadd" or len(ins.srcs) != 2:
        return False
    imm = ins.srcs[1]
    return (imm.is_immediate and imm.ref.bits == NEG_ZERO
            and not (exact and (imm.abs or imm.neg)))


def model_spelling(fn: Function) -> Function:
    """`fn` (in place) with Mesa's `fadd x, #-0.0` as the model's `fmov x`."""
    for block in fn.blocks:
        for index, ins in enumerate(block.instructions):
            if is_fmov(ins, exact=True):
                block.instructions[index] = Instruction(OPCODES["fmov"], ins.dest,
                                                        [ins.srcs[0]], {}, sat=ins.sat)
    return fn


def mesa_spelling(fn: Function) -> Function:
    """`fn` (in place) with the model's `fmov x` as Mesa's `fadd x, #-0.0`."""
    for block in fn.blocks:
        for index, ins in enumerate(block.instructions):
            if ins.name == "fmov":
                block.instructions[index] = Instruction(
                    OPCODES["fadd"], ins.dest, [ins.srcs[0], Operand(Immediate(NEG_ZERO))], {},
                    sat=ins.sat)
    return fn


# --- the differ ---------------------------------------------------------------------------
def _keyed(fn: Function) -> tuple[dict[str, Instruction], dict[str, Instruction]]:
    """(site key -> instruction, value name -> its definition). An instruction with an SSA
    destination is keyed by it (`%v`); any other by its block's place in the function and
    its own among the block's instructions without one (`@3#2`), which no optimizer adds
    or removes. (Block names are not compared: lower-cf numbers the blocks it makes after
    the phis it meets, so the model's output, lowered after its DCE, may name them apart.)"""
    keyed: dict[str, Instruction] = {}
    defs: dict[str, Instruction] = {}
    for number, block in enumerate(fn.blocks):
        other = 0
        for ins in block.instructions:
            if isinstance(ins.dest, Value):
                keyed[f"%{ins.dest.name}"] = ins
                defs[ins.dest.name] = ins
            else:
                keyed[f"@{number}#{other}"] = ins
                other += 1
    return keyed, defs


def operand_text(ins: Instruction, index: int) -> str:
    try:
        kind = source_kind(ins.opcode, index)
    except Exception:  # a row without that slot: print it as an integer
        kind = ""
    return format_operand(ins.srcs[index], kind)


def _ref(ref) -> tuple:
    """An operand's referent by name (values are compared across copies of a function)."""
    if isinstance(ref, Immediate):
        return ("#", ref.bits)
    return (type(ref).__name__, getattr(ref, "name", repr(ref)))


def _same(a: Operand, b: Operand) -> bool:
    return _ref(a.ref) == _ref(b.ref) and (a.abs, a.neg) == (b.abs, b.neg)


def _trace(old: Operand, new: Operand, defs: dict[str, Instruction]) -> list[str] | None:
    """The optimizer steps that turn the source `old` into `new`: through fmovs
    (fmov-prop, composing modifiers as Mesa's agx_compose_float_src), movs (copyprop) and a
    last mov_imm (inline-imm); None when no chain of them explains it."""
    steps: list[str] = []
    current = old
    for _ in range(16):
        if _same(current, new):
            return steps
        value = current.value
        definition = defs.get(value.name) if value is not None else None
        if definition is None:
            break
        if is_fmov(definition) and not definition.sat:
            x = definition.srcs[0]
            abs_ = True if current.abs else x.abs
            neg = (False if current.abs else x.neg) ^ current.neg
            steps.append("fmov-prop")
            current = Operand(x.ref, abs_, neg)
            continue
        if (definition.name == "bitop" and definition.attrs.get("tt") == MOV
                and not definition.srcs[0].is_immediate):
            steps.append("copyprop")
            current = Operand(definition.srcs[0].ref, current.abs, current.neg)
            continue
        if definition.name == "mov_imm" and new.is_immediate:
            steps.append("inline-imm")
            return steps
        break
    if _ref(current.ref) == _ref(new.ref):  # the modifiers composed otherwise than Mesa composes them
        return steps or None
    return None


Site = tuple[str, str, str]  # (kind, where, what)


def changes(before: Function, after: Function) -> set[Site]:
    """What an optimizer did to `before` to make `after` (both in Mesa's spelling), as
    sites: a source rewritten (`src 1 = #3`), a compare folded into a select or a branch,
    an fmov folded into its producer, an instruction removed; anything else is `other`."""
    old, old_defs = _keyed(before)
    new, _ = _keyed(after)
    sites: set[Site] = set()
    renamed: set[str] = set()  # producers whose result an fmov-rev took over
    for key, ins in old.items():
        got = new.get(key)
        if got is None:
            continue
        if is_fmov(ins) and not is_fmov(got):
            inner = ins.srcs[0].value
            producer = old_defs.get(inner.name) if inner is not None else None
            if producer is not None and got.name == producer.name and got.name in FLOAT_OPS:
                sites.add(("fmov-rev", key, f"{got.name}{'.sat' if got.sat else ''}"))
                renamed.add(f"%{inner.name}")
                # the producer's sources, as they now stand, are compared below
                _sources(producer, got, old_defs, sites, key)
                continue
        positions = list(range(len(ins.srcs)))
        base = ins
        compare = _fused_compare(ins, got, old_defs)
        if compare is not None:
            kind = "cmpsel" if ins.name == "icmpsel" else "if-cmp"
            sites.add((kind, key, f"{got.name} cond={got.attrs.get('cond')}"))
            # the fused instruction reads the compare's sources, then its own payloads
            swapped = ins.name == "icmpsel" and compare.attrs.get("inv") == 0
            base = SimpleNamespace(srcs=[*compare.srcs, *(ins.srcs[2:4][::-1] if swapped
                                                           else ins.srcs[2:4])],
                                   opcode=got.opcode)
            positions = list(range(len(got.srcs)))
        elif ins.name != got.name or ins.attrs != got.attrs:
            sites.add(("other", key, f"{format_instruction(ins)} became "
                       f"{format_instruction(got)}"))
            continue
        if len(base.srcs) != len(got.srcs):
            sites.add(("other", key, f"{len(base.srcs)} sources became {len(got.srcs)}"))
            continue
        for position in positions:
            _source(key, position, base.srcs[position], got, old_defs, sites)
        if got.sat != ins.sat and compare is None:
            sites.add(("other", key, "saturation changed"))
    for key, ins in old.items():
        if key not in new and key not in renamed:
            sites.add(("dce", key, ins.name))
    for key, ins in new.items():
        if key not in old:
            sites.add(("other", key, f"new {ins.name}"))
    names = [block.name for block in before.blocks]

    def label(key: str) -> str:  # `@3#2` as the input's `b2#2`
        if not key.startswith("@"):
            return key
        number, _, place = key[1:].partition("#")
        index = int(number)
        return f"{names[index] if index < len(names) else key}#{place}"

    return {(kind, label(where), what) for kind, where, what in sites}


def _fused_compare(ins: Instruction, got: Instruction, defs) -> Instruction | None:
    """The compare folded into `got`, when `ins` is a select (`icmpsel %t, #0, x, y
    cond=ueq`) or an exec-mask branch (`if_icmp`/`while_icmp %t, #0 cond=ueq`) on a
    compare's result and `got` no longer reads that result."""
    if ins.name != "icmpsel" and ins.name not in BRANCHES or not ins.srcs:
        return None
    src0 = ins.srcs[0].value
    compare = defs.get(src0.name) if src0 is not None else None
    if compare is None or compare.name not in ("icmp", "fcmp") or ins.attrs.get("cond") != "ueq":
        return None
    if got.srcs and _same(got.srcs[0], ins.srcs[0]):
        return None
    fused = ("icmpsel", "fcmpsel") if ins.name == "icmpsel" else BRANCHES[ins.name]
    return compare if got.name in fused else None


def _source(key: str, position: int, was: Operand, got: Instruction, defs, sites) -> None:
    now = got.srcs[position]
    if _same(was, now):
        return
    steps = _trace(was, now, defs)
    what = f"src {position} = {operand_text(got, position)}"
    for step in steps if steps is not None else ["other"]:
        sites.add((step, key, what))


def _sources(producer: Instruction, got: Instruction, defs, sites, at: str) -> None:
    if len(producer.srcs) != len(got.srcs):
        sites.add(("other", at, "fused producer's sources changed in number"))
        return
    for position, was in enumerate(producer.srcs):
        _source(at, position, was, got, defs, sites)


def without_the_dead(mesa: set[Site], model: set[Site]) -> tuple[set[Site], set[Site]]:
    """Both sides' sites less the changes each made to an instruction the other removed
    as dead (the model's DCE removes dead phi webs agx_dce keeps): what happens to code
    one side deletes is not compared, its removal is (as `dce`)."""
    dead_mesa = {where for kind, where, _ in mesa if kind == "dce"}
    dead_model = {where for kind, where, _ in model if kind == "dce"}
    return ({s for s in mesa if s[0] == "dce" or s[1] not in dead_model},
            {s for s in model if s[0] == "dce" or s[1] not in dead_mesa})


def by_kind(sites: set[Site]) -> dict[str, set[Site]]:
    out: dict[str, set[Site]] = {}
    for site in sites:
        out.setdefault(site[0], set()).add(site)
    return out


def classify(model: set[Site], mesa: set[Site]) -> str | None:
    """One kind's class in one program: None when neither side made that change."""
    if not model and not mesa:
        return None
    if model == mesa:
        return "both"
    if mesa < model:
        return "model only"
    if model < mesa:
        return "Mesa only"
    return "different"


# --- one program --------------------------------------------------------------------------
@dataclass
class ProgramResult:
    index: int
    text: str  # the exec-level input
    size: int
    classes: dict[str, str] = field(default_factory=dict)  # kind -> class
    model_sites: set = field(default_factory=set)
    mesa_sites: set = field(default_factory=set)
    rule_hits: Counter = field(default_factory=Counter)  # (model pass, rule) -> hits
    model_only_passes: set = field(default_factory=set)  # MODEL_ONLY passes that changed it
    meaning: str | None = None  # how the two outputs differ in meaning, if they do
    wrong: str | None = None  # "Mesa", "the model", "both"
    input_set: object = None
    mesa_output: str = ""
    model_output: str = ""
    skipped: str | None = None  # why the program was not compared
    ssa_text: str = ""  # the SSA program (what a finding's replay starts from)


def run_model(ssa: Function) -> tuple[Function, Counter]:
    """The model's counterpart passes on (a copy of) the SSA program `ssa` (Mesa's
    spelling), at the level they are written for, then `lower-cf`: the exec-level output
    in Mesa's spelling and the rules that fired, by (pass, rule)."""
    work = model_spelling(clone_function(ssa))
    hits: Counter = Counter()
    for name in MODEL_PIPELINE:
        with counting_rule_hits() as counted:
            get_pass(name).run(work)
        for rule, count in counted.items():
            hits[name, rule] += count
    registered("lower-cf").run(work)
    return mesa_spelling(work), hits


def run_mesa(fn: Function) -> Function:
    """Mesa's optimizer and DCE on (a copy of) `fn`; raises what the Mesa passes raise."""
    work = clone_function(fn)
    for name in MESA_PIPELINE:
        mesa_pass(name).run(work)
    return work


def model_only_changes(fn: Function) -> set[str]:
    """The MODEL_ONLY passes that change `fn` (each run alone on a copy)."""
    changed = set()
    for name in MODEL_ONLY:
        if get_pass(name).run(model_spelling(clone_function(fn))):
            changed.add(name)
    return changed


def judge(fn: Function, mesa: Function, model: Function, input_sets, fuel: int):
    """(how the two outputs differ in meaning, which side is wrong, the input set), or
    (None, None, None). The input is the arbiter: where it is undefined or runs out of
    fuel anything goes; an output out of fuel is not judged."""
    source = run_wave(fn, input_sets, fuel=fuel)
    outs = {side: run_wave(out, input_sets, fuel=fuel * 4)
            for side, out in (("Mesa", mesa), ("the model", model))}
    for index, want in enumerate(source):
        if not isinstance(want, Returned):
            continue
        got = {side: outs[side][index] for side in outs}
        if any(isinstance(o, OutOfFuel) for o in got.values()):
            continue
        between = first_difference(got["the model"], got["Mesa"], ("the model", "Mesa")) \
            if isinstance(got["the model"], Returned) else (
                None if not isinstance(got["Mesa"], Returned) else "the model did not return")
        if between is None:
            continue
        wrong = [side for side in ("Mesa", "the model") if first_difference(want, got[side])]
        verdict = " and ".join(wrong) if wrong else "neither (both refine the input)"
        return between, verdict, input_sets[index]
    return None, None, None


def compare_program(index: int, ssa: Function, fn: Function, input_sets, *,
                    fuel: int | None = None, mesa_run=None, model_run=None) -> ProgramResult:
    """One program through both sides: `ssa` the SSA program, `fn` its exec level (what
    `lower-cf` makes of it, Mesa's input and the arbiter). `mesa_run(fn)` and
    `model_run(ssa)` replace a side (the tests plant a wrong output this way)."""
    fuel = DEFAULT_FUEL if fuel is None else fuel
    result = ProgramResult(index, print_function(fn), fn.instruction_count())
    try:
        mesa = (mesa_run or run_mesa)(fn)
    except Exception as error:  # a Mesa crash is a finding of `run --mesa`; not compared
        result.skipped = f"{type(error).__name__}: {error}"
        return result
    model, result.rule_hits = (model_run or run_model)(ssa)
    result.mesa_output, result.model_output = print_function(mesa), print_function(model)
    result.mesa_sites, result.model_sites = without_the_dead(changes(fn, mesa),
                                                             changes(fn, model))
    mine, theirs = by_kind(result.model_sites), by_kind(result.mesa_sites)
    for kind in KINDS:
        found = classify(mine.get(kind, set()), theirs.get(kind, set()))
        if found:
            result.classes[kind] = found
    result.model_only_passes = model_only_changes(ssa)
    result.meaning, result.wrong, result.input_set = judge(fn, mesa, model, input_sets, fuel)
    return result


def exec_cases(seed: int, count: int, *, threads: int = 32, sets: int = 8):
    """(index, SSA program, its exec level, input sets) for the first `count` programs of
    `seed` that lower-cf can structure, drawn as `run --mesa` draws them (the campaign's
    per-program seeds, the translatable profile)."""
    config = SimpleNamespace(size=50, threads=threads, sets=sets)
    index = made = 0
    while made < count:
        ssa, inputs = translatable_case(ChoiceSource.from_seed(program_seed(seed, index)),
                                        config)
        index += 1
        if structurable(ssa) is not None:
            continue
        fn = clone_function(ssa)
        registered("lower-cf").run(fn)
        made += 1
        yield index - 1, ssa, fn, inputs


__all__ = ["CLASSES", "KINDS", "MESA_PIPELINE", "MODEL_ONLY", "MODEL_PIPELINE",
           "ProgramResult", "changes", "classify", "compare_program", "exec_cases",
           "is_fmov", "judge", "mesa_spelling", "model_spelling", "run_mesa", "run_model"]
