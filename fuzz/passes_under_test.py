"""Passes put under test: the registered ones, a user's Python callable, an external command.

Each is a `PassUnderTest` with a name and `run(fn) -> bool` that mutates the function in
place and says whether it changed it, the contract the registered passes follow.

`contract_of` is the one lookup of what a pass is and promises (agxir.passes.contract): the
model's registry and Mesa's passes composed; `registered` and `machine_prefix` go through it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from agxir.ir import Function
from agxir.passes import UnknownPass
from agxir.passes.contract import Contract
from agxir.passes.registry import CONTRACTS
from agxir.text import ParseError, parse_function, print_function
from fuzz.pass_unit import PassFailed, PassLoadError, PassTimedOut, PassUnderTest

# The pass types live in fuzz.pass_unit (no pass imported there); named here as well, where
# callers have always found them.
__all__ = [
    "PassFailed",
    "PassLoadError",
    "PassTimedOut",
    "PassUnderTest",
    "command_pass",
    "contract_of",
    "machine_prefix",
    "named_units",
    "python_pass",
    "registered",
    "replay_arguments",
    "units_from_flags",
]


def contract_of(name: str) -> Contract | None:
    """The one lookup of a pass by name: its contract, from the model's registry
    (agxir.passes.registry) or, for a `mesa:` name, Mesa's (fuzz.mesa.passes); None for a
    name neither holds (a user's `--pass` or `--pass-cmd` pass: it declares nothing)."""
    if name.startswith("mesa:"):  # Mesa's real backend, through the bridge (fuzz/mesa/)
        from fuzz.mesa.passes import MESA_CONTRACTS  # the bridge: loaded late

        return MESA_CONTRACTS.get(name)
    return CONTRACTS.get(name)


def registered(name: str) -> PassUnderTest:
    if name.startswith("mesa:"):  # the bridge is built (or found) now, not inside a deadline
        from fuzz.mesa.passes import mesa_unit  # the bridge: loaded late

        return mesa_unit(name)

    found = contract_of(name)
    if found is None:  # name every pass a --passes list may hold
        error = UnknownPass(name)
        error.message = f"unknown pass {name!r}; known passes: {', '.join(CONTRACTS)}, mesa:NAME"
        raise error
    return PassUnderTest(found.name, found.run, ("--passes", found.name), found)


def machine_prefix(name: str) -> list[str]:
    """A machine-level pass runs after the steps that bring an SSA program to its level:
    its contract's prefix, ending with it (just `name` for an SSA pass, or one with no
    contract)."""
    found = contract_of(name)
    return list(found.prefix) if found else [name]


def python_pass(spec: str) -> PassUnderTest:
    """MODULE:CALLABLE, MODULE a dotted name or a path to a .py file."""
    module_name, sep, attribute = spec.rpartition(":")
    if not sep or not module_name or not attribute:
        raise PassLoadError(f"--pass {spec!r}: expected MODULE:CALLABLE")
    try:
        if module_name.endswith(".py") or "/" in module_name:
            path = Path(module_name)
            loader_spec = importlib.util.spec_from_file_location(path.stem, path)
            if loader_spec is None or not path.exists():
                raise PassLoadError(f"--pass {spec!r}: no such file {module_name}")
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[path.stem] = module
            loader_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except PassLoadError:
        raise
    except Exception as error:  # the user's module failed to import
        raise PassLoadError(f"--pass {spec!r}: cannot import {module_name}: {error}") from None
    function = getattr(module, attribute, None)
    if not callable(function):
        raise PassLoadError(f"--pass {spec!r}: {module_name} has no callable {attribute}")

    def run(fn: Function) -> bool:
        return bool(function(fn))

    if module_name.endswith(".py") or "/" in module_name:  # records replay from anywhere
        spec = f"{os.path.abspath(module_name)}:{attribute}"
    return PassUnderTest(f"{Path(module_name).stem}:{attribute}", run, ("--pass", spec))


def command_pass(command: str, timeout: float = 30.0) -> PassUnderTest:
    """An external program that reads IR text on stdin and writes IR text on stdout."""
    try:
        argv = shlex.split(command)
    except ValueError as error:  # an unterminated quote, say
        raise PassLoadError(f"--pass-cmd: {error}: {command}") from None
    if not argv:
        raise PassLoadError("--pass-cmd: empty command")
    if shutil.which(argv[0]) is None:
        raise PassLoadError(f"--pass-cmd: no such program: {argv[0]}")

    def run(fn: Function) -> bool:
        before = print_function(fn)
        try:
            # Its own process group, so a timeout kills whatever the command started too.
            process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True, start_new_session=True)
        except FileNotFoundError:
            raise PassFailed(f"command not found: {argv[0]}") from None
        try:
            stdout, stderr = process.communicate(before, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise PassFailed(f"command did not finish within {timeout:g} s") from None
        done = subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise PassFailed(f"command exited with status {done.returncode}: {last}")
        try:
            after = parse_function(done.stdout, filename="<pass-cmd output>")
        except ParseError as error:
            raise PassFailed(f"command printed malformed IR: {error}") from None
        fn.name, fn.uniforms, fn.blocks = after.name, after.uniforms, after.blocks
        fn.level, fn.notes = after.level, after.notes
        return print_function(fn) != before

    return PassUnderTest(f"cmd:{Path(argv[0]).name}", run, ("--pass-cmd", command))


def named_units(names: Sequence[str]) -> list[PassUnderTest]:
    """The entries of a `--passes` list: MODULE:CALLABLE ones are Python passes (so a replay
    keeps a wrong pass in its place between the machine steps around it), the rest registered."""
    return [python_pass(name) if ":" in name and not name.startswith("mesa:")
            else registered(name) for name in names]


def units_from_flags(flags: Sequence[str]) -> list[PassUnderTest]:
    """What `replay_arguments` undoes: the passes a finding's replay flags name, in the order
    the flags give them. Raises PassLoadError (or UnknownPass) for flags naming none."""
    if len(flags) % 2:
        raise PassLoadError(f"the flags are not flag-value pairs: {list(flags)}")
    units: list[PassUnderTest] = []
    for flag, value in zip(flags[::2], flags[1::2]):
        if flag == "--passes":
            units += named_units([name.strip() for name in value.split(",") if name.strip()])
        elif flag == "--pass":
            units.append(python_pass(value))
        elif flag == "--pass-cmd":
            units.append(command_pass(value))
        else:
            raise PassLoadError(f"the flags hold {flag!r}, which names no pass")
    return units


def replay_arguments(pipeline: Sequence[PassUnderTest]) -> list[str]:
    """Command-line flags that rebuild `pipeline`: registered and Python passes in order in
    one `--passes` list when a Python pass sits between registered ones (a machine-level
    variant between the lowering steps); otherwise registered passes first, then Python
    passes, then commands, which is the order `check` and `run` compose them in."""
    kinds = [p.flag[0] for p in pipeline]
    if "--passes" in kinds and "--pass" in kinds and "--pass-cmd" not in kinds:
        first_python = kinds.index("--pass")
        if "--passes" in kinds[first_python:]:
            return ["--passes", ",".join(p.flag[1] for p in pipeline)]
    registered_names = [p.flag[1] for p in pipeline if p.flag[0] == "--passes"]
    arguments = ["--passes", ",".join(registered_names)] if registered_names else []
    for step in pipeline:
        if step.flag[0] != "--passes":
            arguments += list(step.flag)
    return arguments
