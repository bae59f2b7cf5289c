"""Find, reduce and near-miss one case per rule: the tool that wrote `rule_cases/*.agx`.

Not a test and not run by one: the stored cases are committed, read by
`tests/agxir/passes/test_rule_cases.py`. Run it to add cases for new rules (existing ones
are kept):

    python tests/agxir/passes/rule_cases/find_cases.py [--programs N] [--seed S]

For each rule of each table (`agxir.passes.RULE_TABLES`) it looks, over generated programs
and the intermediate programs of the registered pipelines, for a program on which the
rule's pass fires that rule; reduces it with the project's reducer (`fuzz.reduce`) while
the rule still fires (and, where it can, only that rule); then tries single changes to the
reduced case (an immediate, a modifier, an attribute, a size, an operand) for a near miss:
one that verifies, on which the rule does not fire but its root still matched (the rule
near-missed at a source, its precondition, or its result being no change).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections import Counter
from pathlib import Path

from agxir.ir import Immediate, Operand, clone_function
from agxir.passes import (
    ADDRESS_PIPELINE,
    DEFAULT_PIPELINE,
    MESA_OPTIMIZER_PIPELINE,
    PASSES,
    RULE_TABLES,
)
from agxir.rewrite import counting_rule_hits
from agxir.rewrite.matcher import recording_near_misses
from agxir.text import parse_function, print_function
from agxir.verifier import verify

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[3]))
from tests.agxir.passes.rule_cases.cases import CaseFile, RuleCase, read_cases, write_cases  # noqa: E402


def hits_of(pass_name: str, fn):
    work = clone_function(fn)
    with counting_rule_hits() as hits, recording_near_misses() as misses:
        PASSES[pass_name].run(work)
    return Counter(hits), set(misses)


def candidates(programs: int, seed: int):
    """(pass, rule) -> the smallest program text seen on which the pass fires the rule."""
    from fuzz.campaign import CampaignConfig
    from fuzz.generate.cases import build_case

    best: dict[tuple[str, str], str] = {}
    pipelines = [DEFAULT_PIPELINE, ADDRESS_PIPELINE, MESA_OPTIMIZER_PIPELINE] + [
        (name,) for name in RULE_TABLES]
    wanted = {(p, r.name) for p, rules in RULE_TABLES.items() for r in rules}
    for index in range(programs):
        config = CampaignConfig(seed=seed, pipelines=[], address_heavy=index % 2 == 1)
        fn, _ = build_case(seed, index, config)
        for pipeline in pipelines:
            current = fn
            for name in pipeline:
                work = clone_function(current)
                with counting_rule_hits() as hits:
                    PASSES[name].run(work)
                if name in RULE_TABLES and hits:
                    text = print_function(current)
                    for rule in hits:
                        key = (name, rule)
                        if key not in best or len(text) < len(best[key]):
                            best[key] = text
                current = work
        if index % 100 == 99:
            print(f"{index + 1} programs: {len(best)} of {len(wanted)} rules fired",
                  file=sys.stderr, flush=True)
        if wanted <= best.keys():
            break
    return best


def reduce_case(pass_name: str, rule: str, text: str, seconds: float) -> str:
    from fuzz.reduce.deltas import DELTAS, Case
    from fuzz.reduce.reducer import Reducer

    deltas = [d for d in DELTAS if d.name not in (
        "drop-passes", "shrink-threads", "shrink-inputs", "shrink-buffers")]

    def fires(case) -> bool:
        return rule in hits_of(pass_name, case.fn)[0]

    def alone(case) -> bool:
        return set(hits_of(pass_name, case.fn)[0]) == {rule}

    case = Case(parse_function(text), (), ())
    case = Reducer(case, fires, deltas=deltas, seconds=seconds).run()
    if not alone(case):
        # only this rule: from the original, so the reducer may drop what fires the others
        first = Case(parse_function(text), (), ())
        if alone(first):
            case = Reducer(first, alone, deltas=deltas, seconds=seconds).run()
    return print_function(case.fn)


def _attr_values(attr, value, size: int, wide: bool) -> list:
    if isinstance(attr.values, tuple) or attr.values.stop - attr.values.start <= 80:
        return [v for v in attr.values if v != value]
    found = [value + 1, value - 1, 0, 1, 2, 3, 4, 5, 255, 256, 0x10000]
    if wide:
        found += [1 << k for k in range(33)] + [3 << k for k in range(8)] + [5, 6, 7, 12]
        found += [(1 << size) - k for k in (1, 2, 3, 4, 8, 16, 32, 64, 128, 256)]
    return [v for v in dict.fromkeys(found) if v != value and v in attr.values]


def _immediates(bits: int, wide: bool) -> list[int]:
    found = [bits + 1, bits ^ 1, 0, 1, 255, 256]
    if wide:
        found += [1 << k for k in range(16)] + [3, 5, 6, 7, 12, 24, 48, 96, 192, 0xFFFF]
    return [v for v in dict.fromkeys(found) if v != bits and 0 <= v < 1 << 16]


def _siblings(ins) -> list:
    """Opcodes that take the same sources and attributes and can write this destination."""
    from agxir.opcodes.table import ROWS

    row = ins.opcode
    if row.variadic or row.terminator:
        return []
    names = {a.name for a in row.attrs}
    return [other for other in ROWS if other is not row and not other.variadic
            and len(other.srcs) == len(row.srcs) and {a.name for a in other.attrs} == names
            and (other.dest_sizes is None) == (row.dest_sizes is None)
            and (ins.dest is None or ins.dest.size in other.dest_sizes)]


def _mutants(fn, wide: bool = False):
    """(description, source position or None, function) for each single change to `fn`;
    `wide`: more values, operand swaps and opcode swaps (to reach a sibling rule's case)."""
    positions = [(b, i) for b, block in enumerate(fn.blocks)
                 for i in range(len(block.instructions))]

    def at(copy, b, i):
        return copy.blocks[b].instructions[i]

    for b, i in positions:
        ins = fn.blocks[b].instructions[i]
        label = f"{ins.name}"
        size = ins.dest.size if ins.dest is not None else 32
        for name, value in ins.attrs.items():
            attr = ins.opcode.attr(name)
            for other in _attr_values(attr, value, size, wide):
                copy = clone_function(fn)
                at(copy, b, i).attrs[name] = other
                yield f"{label} {name}={value} became {other}", None, copy
        for row in _siblings(ins):
            copy = clone_function(fn)
            at(copy, b, i).opcode = row
            yield f"{label} became {row.name}", None, copy
        if ins.sat:
            copy = clone_function(fn)
            at(copy, b, i).sat = False
            yield f"{label} loses .sat", None, copy
        elif ins.opcode.sat:
            copy = clone_function(fn)
            at(copy, b, i).sat = True
            yield f"{label} gains .sat", None, copy
        if wide and len(ins.srcs) >= 2 and not ins.is_phi:
            copy = clone_function(fn)
            srcs = at(copy, b, i).srcs
            srcs[0], srcs[1] = srcs[1], srcs[0]
            yield f"{label} sources 0 and 1 swapped", None, copy
        for position, src in enumerate(ins.srcs):
            for modifier in ("abs", "neg"):
                copy = clone_function(fn)
                target = at(copy, b, i)
                old = target.srcs[position]
                target.srcs[position] = Operand(old.ref, **{
                    "abs": old.abs, "neg": old.neg, modifier: not getattr(old, modifier)})
                state = "gains" if not getattr(src, modifier) else "loses"
                yield f"{label} source {position} {state} .{modifier}", position, copy
            if isinstance(src.ref, Immediate):
                for bits in _immediates(src.ref.bits, wide):
                    copy = clone_function(fn)
                    target = at(copy, b, i)
                    target.srcs[position] = Operand(Immediate(bits), src.abs, src.neg)
                    yield f"{label} source {position} #{src.ref.bits} became #{bits}", position, copy


def seeded(pass_name: str, rule: str, seeds: list[str], depth: int = 2,
           budget: int = 4000) -> str | None:
    """A program on which `rule` fires, found by up to `depth` changes to one of `seeds`
    (cases of the pass's other rules): for the rules generated programs never reach."""
    frontier = [parse_function(text) for text in seeds]
    seen = {print_function(fn) for fn in frontier}
    for _ in range(depth):
        following = []
        for fn in frontier:
            for _, _, mutant in _mutants(fn, wide=True):
                text = print_function(mutant)
                if text in seen:
                    continue
                seen.add(text)
                if len(seen) > budget:
                    return None
                if verify(mutant):
                    continue
                if rule in hits_of(pass_name, mutant)[0]:
                    return text
                following.append(mutant)
        frontier = following
    return None


def near_miss(pass_name: str, rule: str, text: str):
    """(description, where, text) of the best single change on which `rule` does not fire
    but near-misses; preferring one on which the pass changes nothing at all."""
    fn = parse_function(text)
    found = []
    for description, position, mutant in _mutants(fn):
        if verify(mutant):
            continue
        hits, misses = hits_of(pass_name, mutant)
        if rule in hits:
            continue
        wheres = {where for name, where in misses if name == rule}
        # where the change is, if the rule missed there; else its precondition; else any;
        # "none" when the rule's root no longer matches or another rule took the site
        where = next((w for w in (f"src{position}", "precondition", "unchanged") if w in wheres),
                     min(wheres) if wheres else "none")
        # a failed precondition first, then another value (an immediate, an attribute), a
        # modifier, another opcode: the near misses that say most about the rule first
        if where == "precondition":
            kind = 0
        elif re.fullmatch(r"\w+ became \w+", description):
            kind = 3
        else:
            kind = 2 if " gains ." in description or " loses ." in description else 1
        rank = (where == "none", bool(hits), kind, len(description))
        found.append((rank, description, where, print_function(mutant)))
    if not found:
        return None
    found.sort(key=lambda item: item[0])
    return found[0][1:]


def slug(rule: str, kind: str) -> str:
    return f"{kind}.{re.sub(r'[^A-Za-z0-9]+', '.', rule).strip('.')}"


def _join_unreachable(fn) -> None:
    """A block that ends in `stop` followed by an unreachable block without phis (what the
    reducer leaves of a branch): the two become one, the first's `stop` dropped."""
    from agxir.cfg import CFG

    joined = True
    while joined:
        joined = False
        preds = CFG(fn).preds
        for index, block in enumerate(fn.blocks[:-1]):
            after = fn.blocks[index + 1]
            if (block.instructions and block.instructions[-1].name == "stop"
                    and not preds[after] and not any(ins.is_phi for ins in after.instructions)):
                block.instructions[-1:] = after.instructions
                fn.blocks.remove(after)
                joined = True
                break


def canonical(text: str) -> str:
    """The function with its uniforms, blocks and values renamed in order: u0.., b0.., %0.."""
    from agxir.ir import Value

    fn = parse_function(text)
    _join_unreachable(fn)
    for index, uniform in enumerate(fn.uniforms):
        uniform.name = f"u{index}"
    for index, block in enumerate(fn.blocks):
        block.name = f"b{index}"
    values = [d for ins in fn.instructions() for d in ins.defs() if isinstance(d, Value)]
    for index, value in enumerate(values):
        value.name = str(index)
    return print_function(fn)


def renamed(text: str, name: str) -> str:
    return re.sub(r"^func @[\w.]+", f"func @{name}", text, count=1, flags=re.M)


def renew_near_misses(only: str | None) -> int:
    """Every misses-case found again from its rule's stored fires-case."""
    for path in sorted(HERE.glob("*.agx")):
        existing = read_cases(path)
        if only and existing.pass_name not in only.split(","):
            continue
        cases = []
        for case in existing.cases:
            if case.kind == "misses":
                continue
            cases.append(case)
            miss = near_miss(existing.pass_name, case.rule, case.program)
            if miss is None:
                print(f"{existing.pass_name}/{case.rule}: no near miss found by a single change")
                continue
            description, where, text = miss
            cases.append(RuleCase("misses", case.rule, renamed(text, slug(case.rule, "misses")),
                                  where=where, why=description))
        write_cases(path, CaseFile(existing.pass_name, cases))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reduce-seconds", type=float, default=20.0)
    parser.add_argument("--only", help="a comma-separated list of passes")
    parser.add_argument("--near-misses", action="store_true",
                        help="find every near miss again from the stored fires-cases")
    args = parser.parse_args(argv)
    if args.near_misses:
        return renew_near_misses(args.only)
    tables = {p: rules for p, rules in RULE_TABLES.items()
              if not args.only or p in args.only.split(",")}
    missing = {}
    for pass_name, rules in tables.items():
        path = HERE / f"{pass_name}.agx"
        existing = read_cases(path) if path.exists() else CaseFile(pass_name, [])
        have = {(c.kind, c.rule) for c in existing.cases}
        todo = [r.name for r in rules if ("fires", r.name) not in have
                or ("misses", r.name) not in have]
        if todo:
            missing[pass_name] = (existing, todo)
    if not missing:
        print("every rule has both cases")
        return 0
    best = candidates(args.programs, args.seed)
    for pass_name, (existing, todo) in missing.items():
        cases = list(existing.cases)
        for rule in todo:
            text = best.get((pass_name, rule))
            if text is None:
                # the cases of the rules named most like this one first: a sibling's case
                # is usually one change away (another constant, the operands swapped)
                def likeness(other: str, rule=rule) -> int:
                    return -len(os.path.commonprefix([other, rule]))

                seeds = [c.program for c in sorted(cases, key=lambda c: likeness(c.rule))
                         if c.kind == "fires"]
                seeds += [t for (p, r), t in sorted(best.items(), key=lambda i: likeness(i[0][1]))
                          if p == pass_name]
                text = seeded(pass_name, rule, seeds)
                if text is None:
                    print(f"{pass_name}/{rule}: never fired in {args.programs} programs, nor "
                          "after two changes to a case of another rule")
                    continue
                print(f"{pass_name}/{rule}: never fired in {args.programs} programs; made "
                      "from another rule's case")
            reduced = canonical(reduce_case(pass_name, rule, text, args.reduce_seconds))
            hits = sorted(hits_of(pass_name, parse_function(reduced))[0])
            cases = [c for c in cases if c.rule != rule]
            also = [h for h in hits if h != rule]
            cases.append(RuleCase("fires", rule, renamed(reduced, slug(rule, "fires")),
                                  also=tuple(also)))
            miss = near_miss(pass_name, rule, reduced)
            if miss is None:
                print(f"{pass_name}/{rule}: no near miss found by a single change")
            else:
                description, where, text = miss
                cases.append(RuleCase("misses", rule, renamed(text, slug(rule, "misses")),
                                      where=where, why=description))
            print(f"{pass_name}/{rule}: {len(reduced.splitlines())} lines"
                  + (f", also fires {', '.join(also)}" if also else "")
                  + (f"; near miss at {miss[1]}: {miss[0]}" if miss else ""), flush=True)
        order = {r.name: n for n, r in enumerate(RULE_TABLES[pass_name])}
        cases.sort(key=lambda c: (order.get(c.rule, 1 << 20), c.kind != "fires"))
        write_cases(HERE / f"{pass_name}.agx", CaseFile(pass_name, cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
