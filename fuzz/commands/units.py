"""The passes under test a command line names, and the pipelines a campaign runs them in;
the replay flags that bring a finding's pipeline back."""

from __future__ import annotations

from fuzz.commands.errors import UsageError


def units_under_test(args) -> tuple[list, list[list]]:
    """The passes under test and the pipelines to run: each pass alone, plus the default and
    the address pipelines (no --passes and no user pass) or the passes in the order given."""
    from agxir.passes import ADDRESS_PIPELINE, DEFAULT_PIPELINE, PASSES, UnknownPass
    from fuzz.passes_under_test import (
        PassLoadError,
        command_pass,
        named_units,
        python_pass,
        registered,
    )

    user = []
    try:
        user += [python_pass(spec) for spec in args.python_passes or []]
        user += [command_pass(command) for command in args.pass_commands or []]
        if args.passes is not None:
            names = [n.strip() for n in args.passes.split(",") if n.strip()]
        else:
            names = [] if user else list(PASSES)
        units = named_units(names) + user
    except (UnknownPass, PassLoadError) as error:
        raise UsageError(f"agxfuzz: {error}") from None
    from agxir.machine.pipeline import MACHINE_PASSES, MACHINE_PIPELINES
    from fuzz.passes_under_test import machine_prefix

    by_name = {unit.name: unit for unit in units}
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


def replay_flags(units):
    from fuzz.passes_under_test import replay_arguments

    by_name = {unit.name: unit for unit in units}
    return lambda finding: replay_arguments([by_name[name] for name in finding.pipeline])


