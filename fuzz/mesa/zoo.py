"""`agxfuzz zoo --mesa`: the wrong variants planted in Mesa's C (`fuzz/mesa/variants/`),
each built into a bridge of its own (cached like the clean one, the patch part of the key)
and hunted by a campaign over the pipelines `agxfuzz run --mesa` runs, through the model
zoo's runner (`fuzz/zoo/runner.py`) and table.

Mesa 23.3.6 as it is has findings a campaign reaches (docs/mesa-findings.md), so a variant
counts as caught only by a failure its patch causes. Each Mesa pass of a variant's
pipelines is gated (each, since the reducer may drop passes): it sends its input through the
rest of the pipeline's Mesa passes on the clean bridge and on the variant's (one request
each). The pipeline stops there, counted like a
program Mesa cannot take and never judged, where both answer alike (the patch changed
nothing on this program) or where clean Mesa has a finding of its own by an oracle that
needs no inputs (a crash, the verifier, the demand oracle, liveness); elsewhere the
variant's pipeline runs under every oracle. A catch is confirmed once more: the reduced
reproducer through the same pipeline on the clean bridge must not fail the same way
(refinement included), else the variant is reported as not caught, with why.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from agxir.ir import EXEC, MACHINE, clone_function
from agxir.text import parse_function
from agxir.verifier import verify
from fuzz.generate import ChoiceSource, generate_inputs
from fuzz.harness import Harness
from fuzz.mesa import variants as patches
from fuzz.mesa.build import build_bridge, check_tree, default_mesa_src
from fuzz.mesa.client import BridgeClient, run_passes
from fuzz.mesa.opcodes import untranslatable
from fuzz.mesa.passes import (
    MESA_PASSES,
    MESA_PIPELINES,
    PREFIX,
    NotTranslatable,
    mesa_prefix,
    reference_difference,
)
from fuzz.mesa.wire import Untranslatable, encode
from fuzz.passes_under_test import PassUnderTest, registered
from fuzz.zoo.runner import Variant
from oracles.machine.pressure_oracle import demand_difference

GATED = "(no difference from clean Mesa)"
# Where each planted bug lives, for the table and the docs.
PATCHED = {
    "agx_optimizer.c": "agx_optimizer",
    "agx_register_allocate.c": "agx_ra",
    "agx_lower_parallel_copy.c": "agx_emit_parallel_copies",
    "agx_liveness.c": "agx_compute_liveness",
    "agx_pressure_schedule.c": "agx_pressure_schedule",
}


def _comparable(result) -> tuple:
    """What two bridges' answers are compared by: an `ok` answer's lines exactly; a crash by
    its signature (the shader agx_validate dumps aside), without file paths and line numbers
    (a patched file is compiled from elsewhere and its lines moved)."""
    if result.status == "ok":
        return (result.status, tuple(result.lines))
    return (result.status, result.detail,
            re.sub(r":\d+", ":N", re.sub(r"\S*/", "", result.message)))


class _Clients:
    """One bridge process per binary per process (campaign workers are forked)."""

    def __init__(self) -> None:
        self.clients: dict[str, object] = {}

    def get(self, binary: str):
        client = self.clients.get(binary)
        if client is None or client.owner_pid != os.getpid():
            client = self.clients[binary] = BridgeClient(Path(binary), timeout=10.0)
        return client


_CLIENTS = _Clients()


def clean_fails_unaided(fn, names: list[str], clean: str) -> bool:
    """Clean Mesa's own finding on `fn` through the Mesa passes `names`, by every oracle that
    needs no inputs: a crash, the verifier after each step, the demand oracle after agx_ra,
    agx_compute_liveness against the reference. (Refinement needs the campaign's inputs: a
    clean refinement failure is caught by `MesaBuild.confirm` instead.)"""
    current = fn
    for name in names:
        outcome = run_passes(_CLIENTS.get(clean), current, MESA_PASSES[name[len(PREFIX):]])
        if outcome.result.status != "ok":
            return True
        if outcome.liveness is not None and reference_difference(current, outcome.liveness):
            return True
        after = clone_function(current)
        got = outcome.function
        after.blocks, after.level, after.notes = got.blocks, got.level, dict(got.notes)
        if verify(after):
            return True
        if name == f"{PREFIX}ra" and current.level == EXEC and demand_difference(current,
                                                                                 after):
            return True
        current = after
    return False


def gated(unit: PassUnderTest, names: list[str], clean: str, variant: str) -> PassUnderTest:
    """`unit` (the pipeline's first Mesa pass), run only when the bridge passes of `names`
    (the rest of the pipeline's Mesa passes) answer differently on the clean and the variant
    bridge, and clean Mesa has no finding of its own there (`clean_fails_unaided`)."""
    passes = _bridge_passes(names)

    def run(fn) -> bool:
        if fn.level in (EXEC, MACHINE) and not untranslatable(fn):
            try:
                lines, _ = encode(fn)
            except Untranslatable:
                lines = None
            if lines is not None:
                answers = [_CLIENTS.get(binary).request(list(passes), lines)
                           for binary in (clean, variant)]
                # alike: the patch changed nothing here; clean Mesa crashing: its own
                # finding (docs/mesa-findings.md), whatever the variant does
                if (_comparable(answers[0]) == _comparable(answers[1])
                        or answers[0].status != "ok" or clean_fails_unaided(fn, names, clean)):
                    raise NotTranslatable(Counter({GATED: 1}))
        return unit.run(fn)

    return replace(unit, run=run)  # its name, flag and contract


def mesa_pipeline_names() -> list[list[str]]:
    """The pipelines `run --mesa` runs, by name (fuzz/mesa/campaign.py's)."""
    names: list[list[str]] = []
    for pipeline in MESA_PIPELINES:
        full = mesa_prefix(pipeline[0])[:-1] + list(pipeline)
        if full not in names:
            names.append(full)
    return names


def _bridge_passes(names: list[str]) -> tuple[str, ...]:
    return tuple(p for name in names if name.startswith(PREFIX)
                 for p in MESA_PASSES[name[len(PREFIX):]])


@dataclass(frozen=True)
class MesaBuild:
    """A variant's bridge (`Variant.mesa`): what `fuzz.zoo.runner.run_variant` asks of it."""

    patch: object  # fuzz.mesa.variants.Patch
    binary: str
    clean: str

    def pipelines(self) -> list[list[PassUnderTest]]:
        out = []
        with self.bridge():
            for names in mesa_pipeline_names():
                # every Mesa pass, not only the first: the reducer may drop passes
                out.append([gated(registered(name), names[i:], self.clean, self.binary)
                            if name.startswith(PREFIX) else registered(name)
                            for i, name in enumerate(names)])
        return out

    @contextmanager
    def bridge(self, binary: str | None = None):
        """Mesa passes in this process and the workers it forks use the variant's bridge."""
        old = os.environ.get("AGXFUZZ_MESA_BRIDGE")
        os.environ["AGXFUZZ_MESA_BRIDGE"] = binary or self.binary
        try:
            yield
        finally:
            if old is None:
                os.environ.pop("AGXFUZZ_MESA_BRIDGE", None)
            else:
                os.environ["AGXFUZZ_MESA_BRIDGE"] = old

    def confirm(self, outcome):
        """Not caught after all when the clean bridge fails the reproducer the same way."""
        if not outcome.caught:
            return outcome
        same = clean_fails_alike(outcome.finding, self.clean)
        if same is None:
            return outcome
        return replace(outcome, caught=False,
                       message=f"clean Mesa fails the reproducer too: {same}")


def _signature(finding) -> tuple:
    """Pass, oracle and message exactly (a demand of 4 against 2 is not one of 3 against 2),
    file paths and line numbers aside."""
    message = re.sub(r"\.c:\d+", ".c:N", re.sub(r"\S*/", "", finding.message))
    return (finding.pass_name, finding.oracle, message)


def clean_fails_alike(finding, clean: str) -> str | None:
    """The clean bridge's finding on `finding`'s reproducer and pipeline when it has the
    same pass, oracle and message (paths aside), else None."""
    fn = parse_function(finding.program)
    inputs = ([finding.input_set] if finding.input_set is not None
              else generate_inputs(fn, ChoiceSource.from_seed(0), threads=32, sets=8))
    with MesaBuild(None, clean, clean).bridge():
        pipeline = [registered(name) for name in finding.pipeline]
        found = Harness(inputs).check(fn, [pipeline])
    for other in found:
        if _signature(other) == _signature(finding):
            return f"{other.pass_name}: {other.oracle}: {other.message}"
    return None


@dataclass(frozen=True)
class Refused:
    """A variant whose patch does not apply to the tree given (reported by name)."""

    name: str
    message: str


def mesa_variants(only: list[str] | None = None, src: Path | None = None,
                  on_build=None) -> tuple[list, list[Refused]]:
    """(the zoo's Variants, one per patch, each with its bridge built or found in the
    cache; the patches that do not apply to `src`). `on_build(name, bridge)` is called
    after each build. MesaBuildError for a tree that does not build at all."""
    tree = Path(src if src is not None else default_mesa_src() or ".").resolve()
    check_tree(tree)
    applying, refused = [], []
    for name in only or patches.names():  # refused before anything is built
        patch = patches.load(name)
        try:
            patches.apply(patch, lambda path: (tree / path).read_text()
                          if (tree / path).is_file() else None)
        except patches.PatchDoesNotApply as error:
            refused.append(Refused(name, str(error)))
            continue
        applying.append(patch)
    clean = str(build_bridge(tree).path) if applying else ""
    out = []
    for patch in applying:
        name = patch.name
        bridge = build_bridge(tree, patches=[patch])
        if on_build is not None:
            on_build(name, bridge)
        where = ", ".join(PATCHED.get(Path(path).name, path) for path, _ in patch.files)
        out.append(Variant(name, f"{patch.mirrors()}; patch in {where}", patch.bug_class(),
                           mesa=MesaBuild(patch, str(bridge.path), clean)))
    return out, refused
