"""Mesa's real AGX backend passes as passes under test: `mesa:optimizer`, `mesa:cse`,
`mesa:dce`, `mesa:schedule`, `mesa:ra`, `mesa:lower-pseudo`, `mesa:liveness` and
`mesa:backend` (agx_compile.c's post-isel order of the passes the bridge builds).

`mesa:ra` is agx_ra with its parallel copies kept as `parallel_copy` (the bridge wraps
agx_emit_parallel_copies) so the RA checker reads Mesa's allocation; `mesa:lower-copies`
sequentializes them with Mesa's own code; `mesa:backend` runs agx_ra untouched.

Each is a `PassUnderTest` whose `run(fn)` sends the function to the bridge (one bridge
process per Python process, built from the Mesa tree on first use: `$AGXFUZZ_MESA_SRC`
or the shared tree) and replaces it with Mesa's answer, so the harness judges Mesa's output
with the oracles it has. What Mesa does wrong surfaces as an exception the harness reports
as a crash finding: `MesaCrash` (an assert or agx_validate, its text the signature),
`MesaLivenessDiffers` (`mesa:liveness` against the reference), `WireError`
(Mesa answered something the model cannot spell); a hang is `fuzz.pass_unit.PassTimedOut`,
a timeout finding. A function Mesa has no counterpart for
raises `NotTranslatable`, which a campaign counts by opcode and does not report.

`MESA_CONTRACTS` declares each as a `Contract` (agxir.passes.contract): its levels, its
promises (`mesa:backend` is a whole backend) and its place after lower-cf in `MESA_PIPELINES`.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable

from agxir.ir import EXEC, MACHINE, SSA, Function
from agxir.passes import UnknownPass
from agxir.passes.contract import WHOLE_BACKEND, Contract, placed
from agxir.text import print_function
from fuzz.mesa.build import build_bridge
from fuzz.mesa.client import BACKEND, BridgeClient, run_passes
from fuzz.mesa.opcodes import untranslatable
from fuzz.mesa.wire import Untranslatable
from fuzz.pass_unit import PassTimedOut, PassUnderTest
from oracles.liveness_reference import reference_liveness

PREFIX = "mesa:"
# Mesa's passes, one line each: the agxfuzz name (after `mesa:`), the bridge's pass list, a
# summary, the levels it takes and gives, its promises (agxir.passes.contract). Adding one is
# a branch in bridge_run_pass (fuzz/mesa/c/bridge.c) and a line here; its place is computed
# from MESA_PIPELINES. No rule tables: Mesa's C is not rules.
_DECLARED: tuple[tuple[str, tuple[str, ...], str, str, str, frozenset[str]], ...] = (
    ("optimizer", ("optimizer",), "Mesa's agx_optimizer", "exec", "exec", frozenset()),
    ("cse", ("cse",), "Mesa's agx_opt_cse", "exec", "exec", frozenset()),
    ("dce", ("dce",), "Mesa's agx_dce", "exec", "exec", frozenset()),
    ("schedule", ("schedule",), "Mesa's agx_pressure_schedule", "exec", "exec", frozenset()),
    ("ra", ("ra",), "Mesa's agx_ra, its parallel copies and phis kept", "exec", "machine", frozenset()),
    ("lower-copies", ("lower-copies",), "Mesa's parallel-copy lowering (agx_emit_parallel_copies)", "machine", "machine", frozenset()),
    ("lower-pseudo", ("lower-pseudo",), "Mesa's agx_lower_pseudo", "machine", "machine", frozenset()),
    ("liveness", ("liveness",), "Mesa's agx_compute_liveness, against the reference", "exec", "exec", frozenset()),
    ("backend", BACKEND, "Mesa's post-isel passes in agx_compile.c's order, agx_ra untouched", "exec", "machine", frozenset({WHOLE_BACKEND})),
)  # fmt: skip
# agxfuzz name -> the bridge's pass list
MESA_PASSES: dict[str, tuple[str, ...]] = {line[0]: line[1] for line in _DECLARED}
# `run --mesa`: each pass alone after lower-cf, and Mesa's order (with RA) whole.
MESA_PIPELINES: tuple[tuple[str, ...], ...] = (
    *((f"{PREFIX}{name}",) for name in ("optimizer", "cse", "dce", "schedule", "liveness")),
    # agx_ra's contract: DCE first ("RA correctness depends on DCE", agx_compile.c); a dead
    # destination would stay in its demand to the block's end
    (f"{PREFIX}dce", f"{PREFIX}ra", f"{PREFIX}lower-copies", f"{PREFIX}lower-pseudo"),
    (f"{PREFIX}backend",),
)
# Mesa's isel output is the exec level: the model's lower-cf brings an SSA program to it.
ISEL = ("lower-cf",)


class NotTranslatable(Exception):
    """The program uses opcodes Mesa has no counterpart for; `counts` says which."""

    def __init__(self, counts: Counter) -> None:
        self.counts = counts
        super().__init__("not translatable: " + ", ".join(
            f"{name} x{count}" for name, count in sorted(counts.items())))


class MesaCrash(Exception):
    """Mesa aborted or exited (an assert, agx_validate): the message is its text."""


class MesaLivenessDiffers(Exception):
    """agx_compute_liveness disagrees with the reference liveness."""


_CLIENT: BridgeClient | None = None
# Programs a Mesa pass was given and could not translate, by opcode, in this process.
NOT_TRANSLATABLE: Counter = Counter()


def client() -> BridgeClient:
    """This process's bridge, built (or found in the cache) on first use."""
    global _CLIENT
    wanted = os.environ.get("AGXFUZZ_MESA_BRIDGE")  # a zoo variant's bridge replaces ours
    if _CLIENT is not None and wanted and str(_CLIENT.binary) != wanted:
        if _CLIENT.owner_pid == os.getpid():
            _CLIENT.close()
        _CLIENT = None
    if _CLIENT is None or _CLIENT.owner_pid != os.getpid():
        # AGXFUZZ_MESA_BRIDGE: a bridge binary already built (the tests' session build)
        binary = os.environ.get("AGXFUZZ_MESA_BRIDGE") or build_bridge().path
        # A backstop: the harness's own deadline (--pass-timeout) comes first and, when it
        # interrupts a request, the client restarts the bridge
        timeout = float(os.environ.get("AGXFUZZ_MESA_TIMEOUT", "60"))
        _CLIENT = BridgeClient(binary, timeout=timeout)
    return _CLIENT


def is_mesa(name: str) -> bool:
    return name.startswith(PREFIX)


def mesa_names() -> list[str]:
    return [PREFIX + name for name in MESA_PASSES]


def reference_difference(fn: Function, liveness) -> str | None:
    reference = reference_liveness(fn)
    for block in fn.blocks:
        # Mesa's live_in is taken after the block's phis (agx_compute_liveness skips
        # them), the reference's before: Mesa's holds the live phi destinations too.
        phi_dests = {ins.dest.name for ins in block.phis()}
        for kind, got, want in (("live_in", liveness.live_in, reference.live_in),
                                ("live_out", liveness.live_out, reference.live_out)):
            have = set(got.get(block.name, []))
            if kind == "live_in":
                have -= phi_dests
            expected = {value.name for value in want[block]}
            if have != expected:
                extra = sorted(have - expected)
                missing = sorted(expected - have)
                parts = ([f"has %{', %'.join(extra)} the reference does not"] if extra else [])
                parts += ([f"lacks %{', %'.join(missing)}"] if missing else [])
                return f"Mesa's {kind}[{block.name}] {' and '.join(parts)}"
    return None


def mesa_pass(name: str) -> PassUnderTest:
    """The pass under test `mesa:NAME`, with its contract (`MESA_CONTRACTS`) and the contract's
    run; a name the bridge runs without one (a test's) gets a run of its own; KeyError for a
    name Mesa's bridge does not run."""
    contract = MESA_CONTRACTS.get(name)
    run = contract.run if contract is not None else _bridge_run(name)
    return PassUnderTest(name, run, ("--passes", name), contract)


def _bridge_run(name: str) -> Callable[[Function], bool]:
    """`run(fn)` of the pass `mesa:NAME`: the function through the bridge, in place."""
    bridge_passes = MESA_PASSES[name[len(PREFIX):]]

    def run(fn: Function) -> bool:
        missing = untranslatable(fn) if fn.level in (EXEC, MACHINE) else None
        if missing:
            NOT_TRANSLATABLE.update(missing)
            raise NotTranslatable(missing)
        before = print_function(fn)
        try:
            outcome = run_passes(client(), fn, bridge_passes, checked=fn.level != SSA)
        except Untranslatable as error:
            raise NotTranslatable(Counter({str(error): 1})) from None
        result = outcome.result
        if result.status == "crash":
            raise MesaCrash(f"Mesa {result.detail}: {result.message}")
        if result.status == "timeout":  # the harness's timeout oracle, as for any pass
            raise PassTimedOut(f"Mesa ran past the bridge's timeout ({result.message})")
        if result.status == "error":
            raise RuntimeError(f"the bridge refused the request: {result.message}")
        if outcome.liveness is not None:
            difference = reference_difference(fn, outcome.liveness)
            if difference:
                raise MesaLivenessDiffers(difference)
        after = outcome.function
        # Mesa's demand and bound when the bridge measured them (mesa:ra), else none
        fn.blocks, fn.level, fn.notes = after.blocks, after.level, dict(after.notes)
        return print_function(fn) != before

    return run


# Mesa's passes in the one registry's terms, each placed after ISEL in the first of
# MESA_PIPELINES that holds it; fuzz.passes_under_test.contract_of composes them with the
# model's (agxir.passes.registry).
MESA_CONTRACTS: dict[str, Contract] = {
    PREFIX + name: placed(Contract(PREFIX + name, summary, _bridge_run(PREFIX + name), takes,
                                   gives, promises=promises), MESA_PIPELINES, ISEL)
    for name, _, summary, takes, gives, promises in _DECLARED
}


def mesa_unit(name: str) -> PassUnderTest:
    """`registered()` for a `mesa:` name; UnknownPass for one the bridge does not run."""
    if name[len(PREFIX):] not in MESA_PASSES:
        error = UnknownPass(name)
        error.message = f"unknown Mesa pass {name!r}; Mesa passes: {', '.join(mesa_names())}"
        error.args = (error.message,)
        raise error
    client()  # build (or find) the bridge now, not inside the pass's deadline
    return mesa_pass(name)


def mesa_prefix(name: str) -> list[str]:
    """`machine_prefix()` for a `mesa:` name: what brings an SSA program to the pass (its
    contract's prefix: Mesa's isel output is the exec level, lower-cf; agx_ra runs after DCE,
    as agx_compile.c runs it; agx_lower_pseudo after RA and the copy lowering)."""
    contract = MESA_CONTRACTS.get(name)
    return list(contract.prefix) if contract else [*ISEL, name]
