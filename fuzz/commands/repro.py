"""`agxfuzz repro`: replay a finding record or a reduced reproducer against its pipeline."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from fuzz.commands.errors import UsageError
from fuzz.commands.isolation import PASS_MEMORY_MB, check_isolated
from fuzz.commands.loaders import input_sets_for, load_function, read_text
from fuzz.commands.units import units_under_test
from fuzz.harness import Harness
from fuzz.processes import recorded_memory_limit


def repro_command(args) -> int:
    """Replay a finding's JSON record: exit 1 if it still fails the same way, 0 if it no
    longer fails, 4 if it now fails differently."""
    try:
        record = json.loads(read_text(args.finding))
        reproducer, flags = record["file"], record["flags"]
        signature = record["signature"]
        if not (isinstance(reproducer, str) and isinstance(signature, str)
                and isinstance(flags, list) and all(isinstance(f, str) for f in flags)
                and len(flags) % 2 == 0):
            raise TypeError("its file, signature or flags are not what `run` writes")
    except (ValueError, KeyError, TypeError) as error:
        raise UsageError(f"{args.finding}: not a finding record: {error}") from None
    base = Path(args.finding).parent
    reproducer = path_beside(reproducer, base)
    replay = argparse.Namespace(passes=None, python_passes=[], pass_commands=[])
    for flag, value in zip(flags[::2], flags[1::2], strict=True):
        if flag == "--passes":
            replay.passes = value
        elif flag == "--pass":
            replay.python_passes.append(value)
        elif flag == "--pass-cmd":
            replay.pass_commands.append(value)
    units, _ = units_under_test(replay)
    fn = load_function(reproducer)
    inputs = record.get("inputs")
    replay.inputs = path_beside(inputs, base) if inputs else None
    replay.threads, replay.sets, replay.seed = 32, 8, record.get("seed") or 0
    memory = recorded_memory_limit(record.get("oracle", ""), str(record.get("message", "")))
    findings = check_isolated(Harness(input_sets_for(fn, replay)), fn, [units],
                              memory_mb=memory or PASS_MEMORY_MB)
    same = [f for f in findings if f.signature == signature]
    if same:
        print(f"{args.finding}: still fails: {same[0].pass_name}: {same[0].oracle}: {same[0].message}")
        return 1
    if findings:
        other = findings[0]
        print(f"{args.finding}: fails differently now: {other.pass_name}: {other.oracle}: {other.message}")
        return 4
    print(f"{args.finding}: no longer fails")
    return 0


def path_beside(path: str, base) -> str:
    """A path from a record, or the same file name next to the record if it moved."""
    if Path(path).exists():
        return path
    return str(Path(base) / Path(path).name)
