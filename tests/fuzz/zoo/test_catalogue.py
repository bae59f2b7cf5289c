"""The zoo's list (fuzz.zoo.catalogue) and its variants' contracts: each wrong pass is
declared `of=` the registered pass it wraps and inherits that pass's contract, and the
passes run around it are that pass's place (what each variant once listed by hand)."""

from __future__ import annotations

import pytest

from agxir.ir import SSA, Function
from agxir.passes.contract import LOWERS_PRESSURE, PROMOTES_ADDRESS_MATH
from agxir.passes.registry import CONTRACTS
from fuzz.step_oracles import STEP_ORACLES, Step, lowers_pressure
from fuzz.zoo import exec_cmp_variants, reuse_variants
from fuzz.zoo.catalogue import ZOO, UnknownVariant, select

EVERY = (*ZOO, *reuse_variants.HAND_WRITTEN, *exec_cmp_variants.UNREACHABLE)
# Variants of no registered pass: wrong liveness analyses, and a rule set standing for Mesa's
# encoder.
OF_NO_PASS = {"liveness-phi-dests-live-in", "liveness-back-edge-phi-sources",
              "liveness-kill-flags-dropped", "liveness-defs-stay-live", "uadd-sat-packing"}
# The passes each variant ran before and after it when they were written out by hand.
_TO_RA, _COPIES = ("lower-cf", "ra", "lower-phis"), ("lower-phis", "lower-copies")
_VREG = ("lower-cf", "out-of-ssa")
PLACES = {
    **{f"cf-{n}": ((), ("ra", *_COPIES)) for n in ("else-wrong-block", "break-wrong-nesting",
                                                     "missing-pop-exec")},
    **{f"ra-{n}": (("lower-cf",), _COPIES) for n in ("free-at-last-use-in-loop",
                                                      "demand-phis-twice")},
    **{f"copies-{n}": (_TO_RA, ()) for n in ("no-cycle-breaking", "swap-as-two-moves",
                                               "64-one-half")},
    **{v.name: ((*_TO_RA, "lower-copies"), ()) for v in EVERY if v.name.startswith("fuse-exec")},
    **{v.name: (_VREG, ("vreg-ra", "lower-copies")) for v in EVERY if v.name.startswith("reuse")},
    "vreg-ra-narrow-write-kills": (_VREG, ("lower-copies",)),
}


def test_the_zoo_lists_every_family_once_in_its_order():
    names = [v.name for v in ZOO]
    assert len(names) == len(set(names)) == 51
    assert names[0] == "cmpsel-blog-swap" and names[-1] == "schedule-moves-exports"
    assert [v.name for v in select("dce-removes-stores, ra-demand-phis-twice")] == [
        "dce-removes-stores", "ra-demand-phis-twice"]
    assert select(None) == list(ZOO) == select("")
    with pytest.raises(UnknownVariant, match="unknown variant 'nope'; known: cmpsel-blog-swap"):
        select("dce-removes-stores,nope")


@pytest.mark.parametrize("variant", EVERY, ids=lambda v: v.name)
def test_each_variant_inherits_the_contract_of_the_pass_it_wraps(variant):
    if variant.name in OF_NO_PASS:
        assert variant.of is None and variant.contract is None
        assert (variant.before, variant.after) == ((), ())
        return
    of = CONTRACTS[variant.of]
    contract, unit = variant.contract, variant.make_pass()
    assert (contract.name, contract.run, contract.of) == (unit.name, unit.run, of.name)
    assert contract.summary == variant.description and contract.rules is None
    assert (contract.takes, contract.gives, contract.promises, contract.after) == (
        of.takes, of.gives, of.promises, of.after)
    assert contract.prefix == (*of.prefix[:-1], unit.name)
    assert (variant.before, variant.after) == (contract.prefix[:-1], contract.after)
    assert (variant.before, variant.after) == PLACES.get(variant.name, ((), ()))
    assert [step.name for step in variant.pipeline()] == [
        *variant.before, unit.name, *variant.after]


@pytest.mark.parametrize("variant", [v for v in EVERY if v.of], ids=lambda v: v.name)
def test_the_pressure_oracle_holds_a_variant_to_what_its_contract_promises(variant):
    """The wrong pass in a variant's pipeline carries its contract, which the step oracles
    read; a replay names it `--pass MODULE:CALLABLE` with no contract, and the name rule
    they keep for such passes must agree with the contract, for the variant's own name and
    for the replay's."""
    unit = variant.make_pass()
    promised = LOWERS_PRESSURE in variant.contract.promises
    carried = variant.pipeline()[len(variant.before)]
    assert carried.name == unit.name and carried.contract == variant.contract
    assert lowers_pressure(unit.name) == promised
    module, _, attribute = unit.flag[1].rpartition(":")
    assert lowers_pressure(f"{module.rpartition('.')[0]}:{attribute}") == promised


class _Judge:
    check_liveness = True
    tv_threads = 0
    promotion_ms = 1000


@pytest.mark.parametrize("variant", [v for v in EVERY if v.of], ids=lambda v: v.name)
def test_a_variant_gets_the_step_oracles_of_its_contracts_promises(variant):
    """The wrong pass's step (as the harness builds it from the unit in the variant's
    pipeline) is judged by the promotion and pressure oracles exactly when the pass it is a
    variant of promises what they hold (seed 001's promoted-address bugs meet z3 too)."""
    carried = variant.pipeline()[len(variant.before)]
    fn = Function("f", [], [], SSA)
    step = Step(carried.name, fn, "", fn, "", fn, "", carried.contract)
    applying = {oracle.name for oracle in STEP_ORACLES if oracle.applies(_Judge(), step)}
    promises = CONTRACTS[variant.of].promises
    assert ("promotion" in applying) == (PROMOTES_ADDRESS_MATH in promises)
    assert ("pressure" in applying) == (LOWERS_PRESSURE in promises)
