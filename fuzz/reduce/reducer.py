"""The reducer's fixed-point loop, its size order and its interestingness test.

Hypothesis-style: each delta pass runs to exhaustion (after an accepted candidate it starts
again from the new best case, at the position where it succeeded), and the whole list of
passes repeats until a round changes nothing. A candidate is accepted only if it is smaller
in `size_of` order, passes `agxir.verifier.verify`, and is interesting. Every accepted case
is strictly smaller in a well-founded order, so the loop ends.

`SameFailure` is the interestingness test the command uses: the case, run by
`fuzz.harness.Harness` through its pipeline, fails with the same (pass, oracle, signature)
as the original. The reducer itself takes any callable, which is how tests simulate Ctrl-C.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from agxir.text import print_function
from agxir.verifier import verify
from fuzz.harness import INPUT, Finding, Harness
from fuzz.processes import check_supervised
from fuzz.reduce.deltas import DELTAS, Case, Delta
from oracles.interp import DEFAULT_FUEL

__all__ = ["DeltaStats", "Reducer", "SameFailure", "Size", "choose_failure", "size_of"]


# --- size -----------------------------------------------------------------------------------


class Size(NamedTuple):
    """Compared as a tuple: what matters most first. `detail` breaks ties so that the
    simplifying deltas (an operand made a constant, a modifier dropped) count as progress."""

    instructions: int
    blocks: int
    threads: int  # summed over input sets, so dropping a set is progress
    input_bytes: int  # nonzero bytes of scalars and buffers, over all sets
    passes: int
    detail: tuple[int, ...]

    def describe(self) -> str:
        def n(count: int, one: str, many: str) -> str:
            return f"{count} {one if count == 1 else many}"

        return ", ".join((
            n(self.instructions, "instruction", "instructions"),
            n(self.blocks, "block", "blocks"),
            n(self.threads, "thread", "threads"),
            n(self.input_bytes, "nonzero input byte", "nonzero input bytes"),
            n(self.passes, "pass", "passes"),
        ))


def _nonzero_bytes(value: int) -> int:
    return sum(1 for byte in value.to_bytes((value.bit_length() + 7) // 8 or 1, "little") if byte)


def size_of(case: Case) -> Size:
    fn = case.fn
    position = {}
    value_operands = uniform_operands = modifiers = constants = depth = phi_sources = 0
    branches = 0
    for index, ins in enumerate(fn.instructions()):
        if ins.dest is not None:
            position[ins.dest] = index
    for ins in fn.instructions():
        modifiers += ins.sat
        if len(ins.blocks) == 2 and ins.is_terminator:
            branches += 1
        if ins.is_phi:
            phi_sources += len(ins.srcs)
        for src in ins.srcs:
            modifiers += src.abs + src.neg
            if src.is_immediate:
                constants += src.ref.bits
            elif src.is_uniform:
                uniform_operands += 1
            else:
                value_operands += 1
                depth += position.get(src.ref, 0)
        for attr in ins.opcode.attrs:
            value = ins.attrs.get(attr.name)
            if isinstance(attr.values, range) and isinstance(value, int):
                constants += value - attr.values.start
            elif value in attr.values:
                constants += attr.values.index(value)
    input_bytes = magnitude = 0
    for input_set in case.inputs:
        for value in input_set.scalars.values():
            input_bytes += _nonzero_bytes(value)
            magnitude += value
        for data in input_set.buffers.values():
            input_bytes += len(data) - data.count(0)
            magnitude += sum(data)
    buffer_bytes = sum(u.buffer_bytes for u in fn.uniforms if u.is_buffer)
    detail = (
        len(fn.uniforms), buffer_bytes, branches, phi_sources, value_operands,
        uniform_operands, modifiers, depth, constants, len(case.inputs), magnitude,
    )
    return Size(
        fn.instruction_count(), len(fn.blocks), sum(s.threads for s in case.inputs),
        input_bytes, len(case.pipeline), detail,
    )


# --- interestingness ------------------------------------------------------------------------


def choose_failure(findings: Sequence[Finding], oracle: str | None = None) -> Finding | None:
    """The failure to preserve: of those with `oracle` (any when None), a pass's failure
    before the input program's own liveness finding."""
    pool = [f for f in findings if oracle is None or f.oracle == oracle]
    by_pass = [f for f in pool if f.pass_name != INPUT]
    return (by_pass or pool or [None])[0]


def _case_key(case: Case) -> tuple:
    inputs = tuple(
        (s.threads, tuple(sorted(s.scalars.items())), tuple(sorted(s.buffers.items())))
        for s in case.inputs
    )
    return print_function(case.fn), inputs, tuple((p.name, p.flag) for p in case.pipeline)


class SameFailure:
    """Is a case failing like `target`: same pass, same oracle, same signature?

    Calls return the matching finding (truthy) or None. Results are memoized by the case's
    text, inputs and pipeline, since different deltas often propose the same candidate.
    A harness error on a candidate counts as "not interesting" (and in `errors`): one
    odd variant must not end a long reduction.

    `supervised`: each candidate is checked in a forked child under the limits a campaign
    worker has (`fuzz.processes.check_supervised`: `memory_mb` per pass, the deadline
    watched from outside), so a pass that exits, kills its process or outgrows its memory
    is a finding of the candidate (interesting when it dies the same way), never the
    reducer's own death.
    """

    def __init__(
        self, target: Finding | None = None, *, pass_timeout: float = 10.0,
        fuel: int = DEFAULT_FUEL, harness_options: dict | None = None,
        supervised: bool = False, memory_mb: int | None = None,
    ) -> None:
        self.target = target
        self.pass_timeout = pass_timeout
        self.fuel = fuel
        # The oracles the failure was found under (a liveness analysis, tv), kept while reducing.
        self.harness_options = harness_options or {}
        self.supervised = supervised
        self.memory_mb = memory_mb
        self.calls = 0
        self.errors = 0
        self._memo: dict[tuple, Finding | None] = {}

    def findings(self, case: Case) -> list[Finding]:
        harness = Harness(
            case.inputs, fuel=self.fuel, pass_timeout=self.pass_timeout, **self.harness_options
        )
        if self.supervised:
            return check_supervised(harness, case.fn, [list(case.pipeline)],
                                    memory_mb=self.memory_mb)
        return harness.check(case.fn, [list(case.pipeline)])

    def matches(self, finding: Finding) -> bool:
        target = self.target
        return target is not None and (
            (finding.pass_name, finding.oracle, finding.signature)
            == (target.pass_name, target.oracle, target.signature)
        )

    def __call__(self, case: Case) -> Finding | None:
        key = _case_key(case)
        if key in self._memo:
            return self._memo[key]
        self.calls += 1
        try:
            found = self.findings(case)
        except Exception:  # a harness bug on an odd candidate: not this failure
            self.errors += 1
            found = []
        result = next((f for f in found if self.matches(f)), None)
        self._memo[key] = result
        return result


# --- the loop -------------------------------------------------------------------------------


@dataclass
class DeltaStats:
    attempts: int = 0  # candidates put to the interestingness test
    successes: int = 0  # ... and accepted
    invalid: int = 0  # rejected by the verifier first
    seconds: float = 0.0  # generating, verifying and testing


class _OutOfTime(Exception):
    pass


class Reducer:
    """Shrinks `case` while `interesting(candidate)` holds.

    `interesting` returns something truthy for a candidate that still fails; when that is a
    `Finding` with an input set, the set's index becomes the case's `focus`. `on_improve` is
    called with every new best case (to write it out at once). `seconds` bounds the whole
    run's time, `attempts` the candidates it tests (a campaign's budget: the reproducer
    a seed gives does not depend on the machine's load). Ctrl-C during `run` stops it: `interrupted` is set and the best case so far is
    returned, as is the case when the time is up (`timed_out`).
    """

    def __init__(
        self,
        case: Case,
        interesting: Callable[[Case], object],
        *,
        deltas: Iterable[Delta] = DELTAS,
        on_improve: Callable[[Case], None] | None = None,
        seconds: float | None = None,
        attempts: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.original = case
        self.best = case
        self.best_size = size_of(case)
        self.interesting = interesting
        self.deltas = tuple(deltas)
        self.on_improve = on_improve
        self.clock = clock
        self.deadline = None if seconds is None else clock() + seconds
        self.max_attempts = attempts  # candidates tested in all: a budget the load cannot move
        self.attempts = 0
        self.stats = {delta.name: DeltaStats() for delta in self.deltas}
        self.rounds = 0
        self.interrupted = False
        self.timed_out = False
        self.finding: Finding | None = None  # what the best case last failed with

    def run(self) -> Case:
        try:
            progress = True
            while progress:
                self.rounds += 1
                progress = False
                for delta in self.deltas:
                    progress |= self.exhaust(delta)
        except KeyboardInterrupt:
            self.interrupted = True
        except _OutOfTime:
            self.timed_out = True
        return self.best

    def exhaust(self, delta: Delta) -> bool:
        """Run one delta pass until none of its candidates is accepted; True on progress.

        After a success the pass restarts on the new case at the index that succeeded:
        earlier candidates were just rejected on a bigger case, and the next round of the
        outer loop retries them anyway.
        """
        stats = self.stats[delta.name]
        start = 0
        progressed = False
        while True:
            accepted = False
            began = self.clock()
            try:
                for index, candidate in enumerate(delta.candidates(self.best)):
                    if index < start:
                        continue
                    if self.deadline is not None and self.clock() > self.deadline:
                        raise _OutOfTime()
                    if self.max_attempts is not None and self.attempts >= self.max_attempts:
                        raise _OutOfTime()
                    if self.consider(candidate, stats):
                        start, accepted, progressed = index, True, True
                        break
            finally:
                stats.seconds += self.clock() - began
            if not accepted:
                return progressed

    def consider(self, candidate: Case, stats: DeltaStats) -> bool:
        size = size_of(candidate)
        if not size < self.best_size:
            return False
        if verify(candidate.fn):
            stats.invalid += 1
            return False
        stats.attempts += 1
        self.attempts += 1
        result = self.interesting(candidate)
        if not result:
            return False
        stats.successes += 1
        focus = None
        if isinstance(result, Finding):
            self.finding = result
            if result.input_set is not None:
                focus = next(
                    (i for i, s in enumerate(candidate.inputs) if s == result.input_set), None
                )
        self.best = candidate.replace(focus=focus)
        self.best_size = size
        if self.on_improve is not None:
            self.on_improve(self.best)
        return True
