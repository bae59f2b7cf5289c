"""Features: what one program reached while it was checked, as short strings.

A guided campaign keeps a program in its corpus when it reaches a feature no program of the
campaign (or of the stored corpus) reached before. The harness names them as it checks:

* `changed:<pass>` and `changed:<pass>@<step>`: the pass changed the program (at that step
  of its pipeline);
* `rule:<pass>/<rule>`: a rewrite rule fired;
* `near:<pass>/<rule>/<where>`: a rule's root opcode matched but its match failed at
  `where` (a source position, the precondition, ...: `agxir.rewrite.matcher`);
* `oracle:<path>`: which paths of the oracles ran: `undefined` (and `undefined:<reason>`),
  `out-of-fuel`, `divergent` (lanes of one input set took different branches),
  `unstructurable` (control-flow lowering declined the program), `returned`;
* `arc:<file>:<from>-><to>`: a branch arc of the passes under test (`agxir/passes`,
  `agxir/machine`), measured by coverage.py for one program in K (`CoverageSampler`).
"""

from __future__ import annotations

import re
import sys
import time
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "CoverageSampler", "arc", "changed", "changed_at", "feature_kind", "near", "oracle", "rule",
]  # fmt: skip

KINDS = ("changed", "rule", "near", "oracle", "arc")


def changed(pass_name: str) -> str:
    return f"changed:{pass_name}"


def changed_at(pass_name: str, step: int) -> str:
    return f"changed:{pass_name}@{step}"


def rule(pass_name: str, rule_name: str) -> str:
    return f"rule:{pass_name}/{rule_name}"


def near(pass_name: str, rule_name: str, where: str) -> str:
    return f"near:{pass_name}/{rule_name}/{where}"


def oracle(path: str) -> str:
    return f"oracle:{path}"


def arc(file: str, start: int, end: int) -> str:
    return f"arc:{file}:{start}->{end}"


def feature_kind(feature: str) -> str:
    return feature.split(":", 1)[0]


_NUMBERS = re.compile(r"\b(0x[0-9a-fA-F]+|\d+)\b")


def undefined_reason(reason: str) -> str:
    """An interpreter's undefined-behaviour reason without its numbers and names, so one kind
    of trap is one feature ("amul overflow", "load out of bounds", ...)."""
    words = _NUMBERS.sub("N", reason).split()
    return " ".join(w for w in words[:4] if not w.startswith("%"))


_AGXIR = Path(__file__).resolve().parent.parent.parent / "agxir"
UNDER_TEST = ("passes", "machine")  # the packages whose branch arcs are features
# Modules of those packages that judge or print rather than transform: their arcs say
# nothing about what a pass did, and they moved whenever the verifier or the printer was
# made faster (the C printer skips the Python loop), changing a seed's feature count.
NOT_UNDER_TEST = ("machine/text.py", "machine/verifier.py")


class CoverageSampler:
    """Branch coverage of the passes under test for one program in `every` (0: never).

    One `coverage.Coverage` per process, started and stopped around each sampled program;
    its new arcs become `arc:` features. It also times what it costs: `seconds` under
    coverage for `programs` sampled programs (the campaign compares that with its plain
    programs). When another tracer is active (a debugger, pytest-cov) it measures nothing
    rather than take the tracer over (`unavailable` says why)."""

    def __init__(self, every: int):
        self.every = every
        self._coverage = None
        self.unavailable: str | None = None
        if every:
            try:
                import coverage  # loaded late: only when coverage guidance is on
            except ImportError:  # pragma: no cover - coverage is a dependency
                self.unavailable = "coverage.py is not installed"
                return
            include = [str(_AGXIR / package / "*") for package in UNDER_TEST]
            omit = [str(_AGXIR / module) for module in NOT_UNDER_TEST]
            self._coverage = coverage.Coverage(branch=True, include=include, omit=omit,
                                               data_file=None, config_file=False)
            # A sampled program may run no code of the passes (none applies to it).
            self._coverage.set_option("run:disable_warnings", ["no-data-collected"])
            self._root = str(_AGXIR.parent) + "/"

    def wants(self, index: int) -> bool:
        return bool(self.every) and self._coverage is not None and index % self.every == 0

    @contextmanager
    def measuring(self, into: set):
        """Adds the block's arcs to `into` as `arc:` features."""
        if sys.gettrace() is not None:
            self.unavailable = "another tracer is active"
            yield
            return
        cov = self._coverage
        cov.erase()
        cov.start()
        try:
            yield
        finally:
            cov.stop()
        data = cov.get_data()
        for path in data.measured_files():
            name = path[len(self._root):] if path.startswith(self._root) else path
            for start, end in data.arcs(path) or ():
                into.add(arc(name, start, end))


@contextmanager
def timed(stats, attribute: str):
    """Adds the block's wall time to `stats.<attribute>`."""
    started = time.perf_counter()
    try:
        yield
    finally:
        setattr(stats, attribute, getattr(stats, attribute) + time.perf_counter() - started)
