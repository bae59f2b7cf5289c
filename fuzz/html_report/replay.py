"""What the report shows of a finding beyond its record, found by replaying it.

The reproducer goes through the record's pipeline under the harness, as `agxfuzz repro`
replays it, in a forked child (a pass that hangs or kills its process takes only the child
down). Each pass of the pipeline is wrapped to keep the function before and after it and to
count, under `agxir.rewrite.counting_rule_hits`, which of its rules fired. From the pass
that fails: the CFG before and after it as dot text (the rows it changed highlighted), the
rules that fired, and, on the finding's input set, the lanes whose outputs or memory differ
between the reference the refinement oracle compares with (the function before the pass,
or the SSA program the pipeline started from at the machine levels) and the function after
it. What cannot be replayed (a --pass-cmd that no longer exists, a reproducer that is gone)
comes back as a note, never an exception.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field, replace

from agxir.ir import SSA, clone_function
from agxir.passes import RULE_TABLES, UnknownPass
from agxir.rewrite import counting_rule_hits
from agxir.text import ParseError, parse_function, print_function
from agxir.verifier import verify
from fuzz.harness import INPUT, Harness, normalized
from fuzz.html_report.cfg_dot import ADDED, REMOVED, cfg_dot, changed_rows, too_large
from fuzz.html_report.records import Record
from fuzz.passes_under_test import PassLoadError, PassUnderTest, registered, units_from_flags
from fuzz.processes import (
    HarnessError,
    check_supervised,
    describe_death,
    pass_memory_limit,
    recorded_memory_limit,
    run_in_child,
    watchdog_seconds,
)
from oracles.inputs import InputError, InputSet, check_inputs, random_input_sets
from oracles.interp import CompiledFunction
from oracles.machine import run_wave
from oracles.outcomes import Returned

SAME, DIFFERENT, PASSES, NOT_REPLAYED = "same", "different", "passes", "not-replayed"
MAX_LANES = 200  # differences kept per finding; the page says how many more there were
REPLAY_MEMORY_MB = 4096


@dataclass
class Lane:
    """One difference on the finding's input set: a thread's output slot, or a memory word
    (thread None: memory is the wave's)."""

    thread: int | None
    where: str
    expected: str
    got: str


@dataclass
class Picture:
    label: str
    dot: str | None = None
    note: str | None = None  # why there is no picture
    highlighted: int = 0  # rows filled with the highlight colour


@dataclass
class Replay:
    status: str
    note: str = ""
    step: str | None = None  # the pass whose before and after are shown
    before: Picture | None = None
    after: Picture | None = None
    after_error: str | None = None  # the pass raised, timed out or left no function
    rules: list[tuple[str, int, str]] = field(default_factory=list)  # (rule, hits, why)
    rule_note: str = ""
    lanes: list[Lane] = field(default_factory=list)
    lanes_total: int = 0
    lanes_note: str = ""
    input_summary: str = ""


class ReplayError(Exception):
    """The record cannot be replayed: a one-line reason for the page."""


def replay(record: Record, *, pass_timeout: float = 10.0) -> Replay:
    """Replay `record` in a forked child; never raises for anything the record or the pass
    under test does."""
    if record.reproducer_text is None:
        return Replay(NOT_REPLAYED, "; ".join(record.problems) or "no reproducer to replay")
    steps = max(1, len(record.pipeline))
    seconds = watchdog_seconds(pass_timeout) * steps + 120
    kind, value = run_in_child(replay_here, record, pass_timeout, seconds=seconds,
                               memory_mb=_memory_mb(record))
    if kind == "ok":
        return value
    if kind == "raised":
        return Replay(NOT_REPLAYED, f"the replay failed: {value}")
    if kind == "hung":
        return Replay(NOT_REPLAYED, f"the replay did not finish within {seconds:g} s")
    return Replay(NOT_REPLAYED, f"the replay's process {describe_death(value)}: the pass "
                  "took it down")


def _memory_mb(record: Record) -> int:
    """The pass memory limit to replay under: the finding's own for a memory-limit one."""
    return recorded_memory_limit(record.oracle, record.message) or REPLAY_MEMORY_MB


def replay_here(record: Record, pass_timeout: float) -> Replay:
    """The replay itself, in this process (`replay` runs it in a child)."""
    try:
        return _replay(record, pass_timeout)
    except ReplayError as error:
        return Replay(NOT_REPLAYED, str(error))


def flag_units(flags: list[str]) -> list:
    """The passes a record's replay flags name (as `agxfuzz check` reads them)."""
    try:
        return units_from_flags(flags)
    except UnknownPass as error:
        raise ReplayError(f"cannot replay: {error.message}") from None
    except PassLoadError as error:
        raise ReplayError(f"cannot replay: {error}") from None


def resolve_pipeline(names: list[str], flags: list[str]) -> list:
    """The passes of the record's pipeline, by name: a pass its flags bring back, else a
    registered one, else the next of its flags' own passes no name claims (a zoo variant is
    recorded under its zoo name and replayed from its module)."""
    units = flag_units(flags)
    by_name = {unit.name: unit for unit in units}
    spare = [unit for unit in units if unit.name not in names
             and (unit.flag[0] != "--passes" or ":" in unit.flag[1])]
    pipeline = []
    for name in names:
        if name in by_name:
            pipeline.append(by_name[name])
            continue
        try:
            pipeline.append(registered(name))
            continue
        except UnknownPass:
            pass
        if not spare:
            raise ReplayError(f"cannot replay: the pipeline names {name!r}, which neither the "
                              "record's flags nor the registered passes bring back")
        pipeline.append(spare.pop(0))
    return pipeline


def _input_sets(record: Record, fn):
    if record.inputs is None:
        seed = record.data.get("seed")
        return random_input_sets(fn, 32, seed if isinstance(seed, int) else 0, 8), False

    try:
        sets = [InputSet.from_json(item) for item in json.loads(record.inputs.read_text())]
        for input_set in sets:
            check_inputs(fn, input_set)
    except (OSError, ValueError, KeyError, TypeError, InputError) as error:
        raise ReplayError(f"{record.inputs}: not input sets for this program: {error}") from None
    if not sets:
        raise ReplayError(f"{record.inputs}: no input sets")
    return sets, True


def _replay(record: Record, pass_timeout: float) -> Replay:
    try:
        fn = parse_function(record.reproducer_text, filename=str(record.reproducer))
    except ParseError as error:
        raise ReplayError(f"the reproducer does not parse: {error}") from None
    errors = verify(fn)
    if errors:
        raise ReplayError(f"the reproducer does not verify: {errors[0]}")
    names = record.pipeline
    units = resolve_pipeline(names, record.flags)
    input_sets, recorded = _input_sets(record, fn)
    captured: dict[int, dict] = {}

    def wrapped(index: int, name: str, unit) -> PassUnderTest:
        def run(work):
            entry = captured[index] = {"before": clone_function(work), "after": work}
            with counting_rule_hits() as hits:
                entry["hits"] = hits
                changed = unit.run(work)
            entry["ran"] = True
            return changed

        return replace(unit, name=name, run=run)  # its flag and contract

    if _took_its_process_down(record) and units:
        return _replay_death(record, fn, names, units, input_sets, pass_timeout)
    pipeline = [wrapped(i, name, unit) for i, (name, unit) in enumerate(zip(names, units))]
    harness = Harness(input_sets, pass_timeout=pass_timeout)
    text = print_function(fn)
    if not pipeline:  # a finding about the input program itself (its liveness)
        difference = harness.liveness_difference(fn, text)
        verdict = ("(input)", "liveness", difference) if difference else None
        result = Replay(_status(record, verdict), _status_note(record, verdict),
                        before=_picture("the input program", fn, {}, ""))
        if result.status == PASSES:
            result.note = ("agxir's liveness analysis agrees with the reference on this "
                           "program: the record does not name the analysis that failed (a "
                           "zoo variant's, say)")
        result.rule_note = "no pass ran: the finding is about an analysis of the input program"
        return result
    finding = harness.check_pipeline(fn, text, pipeline)
    verdict = (finding.pass_name, finding.oracle, finding.message) if finding else None
    status = _status(record, verdict)
    shown = len(finding.pipeline) - 1 if finding else len(names) - 1
    result = Replay(status, _status_note(record, verdict), step=names[shown])
    entry = captured.get(shown)
    if entry is None:
        result.note += f"; {names[shown]} did not run"
        return result
    before, after = entry["before"], entry["after"]
    ran = entry.get("ran", False)
    if finding and finding.oracle in ("crash", "timeout"):
        result.after_error = finding.message
        ran = False
    earlier = f"after {names[shown - 1]}" if shown else "the reproducer"
    if ran:
        removed, added = changed_rows(before, after)
        result.before = _picture(f"before {names[shown]} ({earlier})", before, removed, REMOVED)
        result.after = _picture(f"after {names[shown]}", after, added, ADDED)
    else:
        result.before = _picture(f"before {names[shown]} ({earlier})", before, {}, "")
    result.rules, result.rule_note = _rules(names[shown], units[shown], entry.get("hits"))
    input_set = finding.input_set if finding and finding.input_set else (
        input_sets[0] if recorded else None)
    if input_set is not None:
        result.input_summary = _describe_inputs(input_set)
        if ran:
            reference = before if after.level == SSA else fn
            _lanes(result, reference, after, input_set, harness.fuel)
        else:
            result.lanes_note = "the pass left no function to run"
    else:
        result.lanes_note = (f"the {record.oracle} oracle judges without running the program: "
                             "its message says what is wrong")
    return result


def _took_its_process_down(record: Record) -> bool:
    """A finding of a pass that exited or was killed (by a signal, by its memory limit):
    replayed in a supervised child, since it would take the replay's own process down."""
    return record.oracle in ("crash", "memory-limit") and str(record.message).startswith(
        "the pass took its process down")


def _replay_death(record: Record, fn, names, units, input_sets, pass_timeout: float) -> Replay:
    """The pipeline under `fuzz.processes.check_supervised`, as `run` and `check` judged
    it: the same death (status and signal), another failure, or none. The picture is the
    function before the failing pass; after it there is no function (nor lanes) to show."""
    harness = Harness(input_sets, pass_timeout=pass_timeout)
    try:
        found = check_supervised(harness, fn, [list(units)], memory_mb=_memory_mb(record))
    except HarnessError as error:
        raise ReplayError(f"the replay failed: {error}") from None
    finding = next((f for f in found if f.pass_name != INPUT), None)
    verdict = (finding.pass_name, finding.oracle, finding.message) if finding else None
    shown = len(finding.pipeline) - 1 if finding else len(names) - 1
    result = Replay(_status(record, verdict), _status_note(record, verdict), step=names[shown])
    before = clone_function(fn)
    for unit in units[:shown]:  # these ran without dying before the failing step did
        with pass_memory_limit():
            unit.run(before)
    earlier = f"after {names[shown - 1]}" if shown else "the reproducer"
    result.before = _picture(f"before {names[shown]} ({earlier})", before, {}, "")
    result.rules, result.rule_note = _rules(names[shown], units[shown], None)
    if finding is not None:
        result.after_error = finding.message
    if input_sets:
        result.input_summary = _describe_inputs(finding.input_set if finding and
                                                finding.input_set else input_sets[0])
    result.lanes_note = ("the pass took its process down: no function after it to run"
                         if finding else "the pipeline ran without dying")
    return result


def _status(record: Record, verdict) -> str:
    """SAME when the replay fails in the same pass, oracle and message (numbers and names
    blanked, as signatures are), DIFFERENT when it fails otherwise, PASSES when it does not."""
    if not verdict:
        return PASSES
    name, oracle, message = verdict
    same = (name, oracle) == (record.pass_name, record.oracle) and (
        normalized(message) == normalized(record.message))
    return SAME if same else DIFFERENT


def _status_note(record: Record, verdict) -> str:
    status = _status(record, verdict)
    if status == SAME:
        return "the same pass, oracle and message as recorded"
    if status == DIFFERENT:
        return f"now: {verdict[0]}: {verdict[1]}: {verdict[2]}"
    return ("fixed, or it failed under a variant analysis or input set the record does "
            "not name")


def _picture(label: str, fn, highlight: dict[str, set[int]], colour: str) -> Picture:
    reason = too_large(fn)
    if reason:
        return Picture(label, note=reason)
    try:
        dot = cfg_dot(fn, highlight, colour=colour or "#ffffff")
    except Exception as error:  # noqa: BLE001 - a pass may leave a function no CFG fits
        return Picture(label, note=f"cannot draw: {type(error).__name__}: {error}")
    return Picture(label, dot, highlighted=sum(len(rows) for rows in highlight.values()))


def _rules(name: str, unit, hits: Counter | None) -> tuple[list, str]:
    table = RULE_TABLES.get(name) or RULE_TABLES.get(unit.flag[1]) or ()
    why = {rule.name: rule.why for rule in table}
    fired = sorted((hits or Counter()).items(), key=lambda item: (-item[1], item[0]))
    rules = [(rule, count, why.get(rule, "")) for rule, count in fired]
    if rules:
        return rules, ""
    if table:
        return [], f"none of {name}'s {len(table)} rules fired"
    return [], f"no rewrite rule fired: {name} changes the function with code of its own"


def _describe_inputs(input_set) -> str:
    parts = [f"{input_set.threads} thread{'s' if input_set.threads != 1 else ''}"]
    parts += [f"{name} = {value:#x}" for name, value in input_set.scalars.items()]
    for name, data in input_set.buffers.items():
        shown = bytes(data).hex()
        parts.append(f"{name} = {shown[:64]}{'…' if len(shown) > 64 else ''}")
    return ", ".join(parts)


def _run_one(fn, input_set, fuel: int):
    if fn.level == SSA:
        return CompiledFunction(fn).run([input_set], fuel=fuel)[0]

    return run_wave(fn, [input_set], fuel=fuel)[0]


def _lanes(result: Replay, reference, after, input_set, fuel: int) -> None:
    try:
        want = _run_one(reference, input_set, fuel)
        got = _run_one(after, input_set, fuel)
    except Exception as error:  # noqa: BLE001 - a broken function the interpreter refuses
        result.lanes_note = f"cannot run the functions: {type(error).__name__}: {error}"
        return
    which = "the function before the pass" if reference.level == SSA and (
        after.level == SSA) else "the SSA program the pipeline started from"
    if not isinstance(want, Returned):
        result.lanes_note = (f"{which} ended in {want.describe()} on this input set: any "
                             "behaviour after the pass is allowed")
        return
    if not isinstance(got, Returned):
        result.lanes_note = f"{which} returned, but after the pass: {got.describe()}"
        return
    lanes = differences(want, got)
    result.lanes_total = len(lanes)
    result.lanes = lanes[:MAX_LANES]
    result.lanes_note = (f"expected: {which}; got: the function after the pass"
                         if lanes else "every lane agrees on this input set")


def differences(want, got) -> list[Lane]:
    """Every output slot of every thread, then every memory word, that differs."""
    lanes = []
    for thread, (a, b) in enumerate(zip(want.outputs, got.outputs)):
        slots = max(len(a), len(b))
        a = tuple(a) + (None,) * (slots - len(a))
        b = tuple(b) + (None,) * (slots - len(b))
        for slot, (x, y) in enumerate(zip(a, b)):
            if x != y:
                lanes.append(Lane(thread, f"output slot {slot}", _hex(x), _hex(y)))
    for name, old in want.memory.items():
        new = got.memory.get(name, b"")
        size = max(len(old), len(new))
        for start in range(0, size, 4):
            x, y = old[start:start + 4], new[start:start + 4]
            if x != y:
                end = min(start + 4, size) - 1
                where = f"bytes {start}..{end}" if end > start else f"byte {start}"
                lanes.append(Lane(None, f"buffer {name} {where}", x.hex() or "-", y.hex() or "-"))
    return lanes


def _hex(value: int | None) -> str:
    return "not written" if value is None else f"{value:#x}"
