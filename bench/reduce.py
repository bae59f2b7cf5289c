"""Reducer quality and speed: findings of deliberately wrong passes, reduced.

    python bench/reduce.py [--per-variant K] [--seed S] [--search N]

For each wrong pass (examples/wrong_cmpsel.py and the variants below) the campaign's own
program builder (`fuzz.generate.cases.build_case`, as `agxfuzz run --fail-fast` uses it) is run over
program indices until K findings of that pass appear; each is reduced with the same
interestingness test as `agxfuzz reduce`. Prints per finding the original and reduced
instruction counts and the seconds taken, then the median and max reduced size.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agxir.ir import Function, Operand  # noqa: E402
from agxir.opcodes.table import OPCODES  # noqa: E402
from agxir.passes import copyprop  # noqa: E402
from agxir.passes.pass_ import compared_value, definitions  # noqa: E402
from fuzz.campaign import CampaignConfig  # noqa: E402
from fuzz.generate.cases import build_case  # noqa: E402
from fuzz.harness import Harness  # noqa: E402
from fuzz.passes_under_test import PassUnderTest, python_pass  # noqa: E402
from fuzz.reduce import Case, Reducer, SameFailure  # noqa: E402
from fuzz.reduce.reducer import choose_failure  # noqa: E402

# --- wrong variants of the registered passes -------------------------------------------------


def wrong_branch_cmp(fn: Function) -> bool:
    """branch-cmp without the invert XOR: takes the compare's invert flag as is, which is
    right only for `inv=1` branches (`t != 0`) and wrong for `if_icmp t, #0 ... inv=0`."""
    defs = definitions(fn)
    changed = False
    for block in fn.blocks:
        branch = block.terminator
        if branch is None or branch.name != "if_icmp":
            continue
        compare = compared_value(branch, defs)
        if compare is None:
            continue
        branch.opcode = OPCODES["if_" + compare.name]
        branch.srcs = [compare.srcs[0], compare.srcs[1]]
        branch.attrs = {"cond": compare.attrs["cond"], "inv": compare.attrs["inv"]}
        changed = True
    return changed


def wrong_copyprop(fn: Function) -> bool:
    """copyprop that also copies a narrow value through a sign-extending mov (no `.abs`)
    into INT sources, as `x.abs`: a negative narrow x is then zero-extended instead."""
    changed = False
    movs = {ins.dest: ins for ins in fn.instructions() if copyprop.is_mov(ins)}
    for ins in fn.instructions():
        if ins.is_phi:
            continue
        for position, src in enumerate(ins.srcs):
            mov = movs.get(src.ref)
            if mov is None or position >= len(ins.opcode.srcs):
                continue
            x = mov.srcs[0]
            spec = ins.opcode.srcs[position]
            if x.is_immediate or x.neg or x.ref is mov.dest:
                continue
            if x.size == mov.dest.size:
                new = Operand(x.ref, src.abs, src.neg)
            elif spec.kind == "int" and spec.allows("abs") and x.size in spec.sizes and (
                ins.dest is None or x.size <= ins.dest.size
            ):
                new = Operand(x.ref, abs=True, neg=src.neg)  # the bug: x.abs not required
            else:
                continue
            if spec.uniform or not x.is_uniform:
                if new != src:
                    ins.srcs[position] = new
                    changed = True
    return changed


def wrong_dce(fn: Function) -> bool:
    """dce whose roots forget device_store: a store nobody reads back is deleted."""
    live = [ins for ins in fn.instructions() if ins.is_terminator or ins.name == "export"]
    defs = definitions(fn)
    keep = set(live)
    while live:
        for value in live.pop().uses():
            definition = defs.get(value)
            if definition is not None and definition not in keep:
                keep.add(definition)
                live.append(definition)
    if all(ins in keep for ins in fn.instructions()):
        return False
    for block in fn.blocks:
        block.instructions[:] = [ins for ins in block.instructions if ins in keep]
    return True


def variants() -> list[PassUnderTest]:
    here = f"{Path(__file__).resolve()}"
    return [python_pass(f"{ROOT / 'examples' / 'wrong_cmpsel.py'}:wrong_cmpsel")] + [
        PassUnderTest(name, run, ("--pass", f"{here}:{name.replace('-', '_')}"))
        for name, run in (
            ("wrong-branch-cmp", wrong_branch_cmp),
            ("wrong-copyprop", wrong_copyprop),
            ("wrong-dce", wrong_dce),
        )
    ]


# --- the benchmark -------------------------------------------------------------------------


def find_failures(unit: PassUnderTest, seed: int, wanted: int, search: int):
    config = CampaignConfig(seed=seed, pipelines=[[unit]])
    found = []
    for index in range(search):
        fn, inputs = build_case(seed, index, config)
        findings = Harness(inputs).check(fn, [[unit]])
        finding = choose_failure([f for f in findings if f.pass_name == unit.name])
        if finding is not None:
            found.append((index, fn, inputs, finding))
            if len(found) == wanted:
                break
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-variant", type=int, default=3, help="findings reduced per pass")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--search", type=int, default=2000, help="programs tried per pass")
    args = parser.parse_args()

    sizes = []
    print(f"{'pass':<26} {'program':>7} {'oracle':<11} {'before':>6} {'after':>5} {'seconds':>8}"
          f" {'tested':>7}")
    for unit in variants():
        failures = find_failures(unit, args.seed, args.per_variant, args.search)
        if not failures:
            print(f"{unit.name:<26} no finding in {args.search} programs")
        for index, fn, inputs, finding in failures:
            test = SameFailure(finding)
            case = Case(fn, tuple(inputs), (unit,))
            started = time.perf_counter()
            reducer = Reducer(case, test)
            best = reducer.run()
            seconds = time.perf_counter() - started
            after = best.fn.instruction_count()
            sizes.append(after)
            print(f"{unit.name:<26} {index:>7} {finding.oracle:<11} "
                  f"{fn.instruction_count():>6} {after:>5} {seconds:>8.2f} {reducer.attempts:>7}")
    if sizes:
        print(f"reduced size: median {statistics.median(sizes):g} instructions, "
              f"max {max(sizes)} ({len(sizes)} reproducers)")


if __name__ == "__main__":
    main()
