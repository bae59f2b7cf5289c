"""The passes under test a command line names, and the pipelines a campaign runs them in;
the replay flags that bring a finding's pipeline back."""

from __future__ import annotations

from agxir.machine.pipeline import MACHINE_PASSES, MACHINE_PIPELINES
from agxir.passes import ADDRESS_PIPELINE, DEFAULT_PIPELINE, PASSES, UnknownPass
from agxir.passes.registry import CONTRACTS
from fuzz.commands.errors import UsageError
from fuzz.passes_under_test import (
    PassLoadError,
    command_pass,
    contract_of,
    machine_prefix,
    named_units,
    python_pass,
    registered,
    replay_arguments,
)

# The level of function each machine pass takes (its first check raises on any other): a
# view of the registry's contracts.
TAKES_LEVEL = {name: CONTRACTS[name].takes for name in MACHINE_PASSES}


def from_level(pipeline: list[str], level: str) -> list[str]:
    """The steps of a machine pipeline from the first that takes a `level` function (a
    program already at that level skips the lowering before it); [] if none does. A step
    with no contract (a user's pass) is taken to take an SSA program."""
    for position, name in enumerate(pipeline):
        contract = contract_of(name)
        if (contract.takes if contract else "ssa") == level:
            return list(pipeline[position:])
    return []


def units_under_test(args, level: str = "ssa") -> tuple[list, list[list]]:
    """The passes under test and the pipelines to run: each pass alone, plus the default and
    the address pipelines (no --passes and no user pass) or the passes in the order given.
    For a program below SSA (`level` exec, vreg or machine) the defaults are the machine
    pipelines from the step that takes that level, and a machine pass named alone runs
    after the steps from that level to its own."""
    user = []
    try:
        user += [python_pass(spec) for spec in args.python_passes or []]
        user += [command_pass(command) for command in args.pass_commands or []]
        if args.passes is not None:
            names = [n.strip() for n in args.passes.split(",") if n.strip()]
            if not names and not user:  # a green result must mean something was checked
                raise UsageError(f"agxfuzz: --passes {args.passes!r} names no pass: an empty "
                                 "pass list would check nothing")
        else:
            names = [] if user else list(PASSES)
        units = named_units(names) + user
    except (UnknownPass, PassLoadError) as error:
        raise UsageError(f"agxfuzz: {error}") from None

    by_name = {unit.name: unit for unit in units}
    if level != "ssa":
        return _below_ssa(args, units, user, level)
    pipelines = [
        [by_name.get(n) or registered(n) for n in machine_prefix(unit.name)]
        for unit in units
        if unit.name not in MACHINE_PASSES or args.passes is not None
    ]
    if args.passes is None and not user:
        pipelines.append([registered(name) for name in DEFAULT_PIPELINE])
        pipelines.append([registered(name) for name in ADDRESS_PIPELINE])
        # The machine level: Mesa's route (SSA-based RA), the vreg route, and each
        # register-level pass after the steps that bring a program to it.
        units += [registered(name) for name in MACHINE_PASSES]
        machine = {unit.name: unit for unit in units}
        pipelines += [[machine[name] for name in pipeline] for pipeline in MACHINE_PIPELINES]
    elif len(units) > 1:
        pipelines.append(list(units))
    return units, pipelines


def _below_ssa(args, units, user, level: str) -> tuple[list, list[list]]:
    """`units_under_test` for an exec, vreg or machine program."""
    if args.passes is None and not user:
        names: list[list[str]] = []
        for pipeline in MACHINE_PIPELINES:
            steps = from_level(list(pipeline), level)
            if steps and steps not in names:
                names.append(steps)
        if not names:
            raise UsageError(f"agxfuzz: no registered pass takes a {level}-level program")
        found = {name: registered(name) for steps in names for name in steps}
        return list(found.values()), [[found[name] for name in steps] for steps in names]
    by_name = {unit.name: unit for unit in units}
    pipelines = []
    for unit in units:
        steps = from_level(machine_prefix(unit.name), level) or [unit.name]
        pipelines.append([by_name.get(n) or registered(n) for n in steps])
    if len(units) > 1:
        pipelines.append(list(units))
    return units, pipelines


def replay_flags(units):
    by_name = {unit.name: unit for unit in units}
    return lambda finding: replay_arguments([by_name[name] for name in finding.pipeline])


