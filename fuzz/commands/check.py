"""`agxfuzz check`: every pass under test on one program, in a child process that a hang or
a crash cannot take the command down with."""

from __future__ import annotations

from fuzz.commands.isolation import check_isolated, pass_memory
from fuzz.commands.loaders import load_function, seeded_input_sets, writable_directory
from fuzz.commands.units import replay_flags, units_under_test
from fuzz.findings import FindingStore
from fuzz.harness import Harness


def check_command(args) -> int:
    fn = load_function(args.file)
    writable_directory(args.out, "--out")  # now, not after a finding was found
    units, pipelines = units_under_test(args, fn.level)
    sets = seeded_input_sets(fn, args)
    harness = Harness(sets, tv_threads=max(s.threads for s in sets) if args.tv else 0)
    # Passes named: in the order given. None named: the campaign's pipelines (machine
    # passes after the steps that bring a program to their level, never after each other).
    given = args.passes is not None or args.python_passes or args.pass_commands
    findings = check_isolated(harness, fn, [units] if given else pipelines,
                              memory_mb=pass_memory(args))
    names = " -> ".join(unit.name for unit in units) or "(no passes)"
    if not given:
        names = f"{len(units)} passes in {len(pipelines)} pipelines"
    if not findings:
        unjudged = not_judged(harness.stats)
        if not unjudged:
            print(f"{args.file}: {names}: every oracle agrees on {len(sets)} input sets")
        else:  # no finding, but "agrees" would claim more than was checked
            print(f"{args.file}: {names}: no oracle disagrees on {len(sets)} input sets; "
                  f"not judged: {'; '.join(unjudged)}")
        return 0
    for finding in findings:
        print(f"{args.file}: {finding.pass_name}: {finding.oracle}: {finding.message}")
    if args.out:
        store = FindingStore(args.out, replay_flags(units))
        for finding in findings:
            print(f"  written: {store.write(finding).reproducer}")
    return 1


def not_judged(stats) -> list[str]:
    """What a green check did not judge (counted, not findings: docs/guarantees.md)."""
    notes = []
    if stats.inconclusive:
        notes.append(f"refinement inconclusive on {stats.inconclusive} steps (the output ran "
                     "out of the budget the input's own step count gives it; --fuel raises it)")
    if stats.unstructurable:
        notes.append("not structurable, so the machine pipelines did not run")
    if stats.unallocatable:
        notes.append("over the register bound, so the allocators' pipelines stopped there")
    if stats.not_translatable:
        opcodes = ", ".join(sorted(stats.not_translatable_opcodes))
        notes.append(f"not translatable to Mesa (opcodes: {opcodes})")
    return notes
