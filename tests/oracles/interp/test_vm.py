"""The lane VM (oracles.interp.lanevm, glued in by oracles/interp/vm.py) against the numpy
executor of the same emitted text, the reference.

The extension must be built in this checkout (a failed build is red here, not silently
slow). The glue's parts are checked on hand-built compile results (the row layout, the
relocation of programs and calls, the driver's calls back into the lanes' state); then on
SSA programs of the campaign (generated ones, and what the default pipelines' SSA passes make
of them) and on the goldens (which reach every fate) both executors must give the same
outcomes, every field, and every campaign function must take the VM under "auto". The VM's
programs come from the extension's compiler and from tests' reference compiler
(reference_compile.py), so the glue and the executor are tested apart from compile.c too.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from agxir.ir import SSA
from agxir.text import ParseError, parse_function, print_function
from fuzz.campaign import CampaignConfig
from fuzz.generate.cases import build_case
from oracles.inputs import random_input_sets
from oracles.interp import CompiledFunction, vm
from oracles.interp.vm import ACT, FIXED_ROWS, FLOW, HERE, TID, CompiledSource, VMFunction
from tests.oracles.interp.reference_compile import compiled_by
from tests.oracles.machine.pipeline_programs import default_pipelines, pipeline_steps

VM_H = Path(vm.__file__).parent / "lanevm_src" / "vm.h"


def _opcodes() -> dict[str, int]:
    enum = re.search(r"enum vm_opcode \{(.*?)\};", VM_H.read_text(), re.S).group(1)
    names = re.findall(r"^\s*(OP_\w+)", enum, re.M)
    return {name: number for number, name in enumerate(names)}


OP = _opcodes()


def _program(*records) -> np.ndarray:
    """Records (op name, d, a, b, c, imm), OP_END appended."""
    rows = [(OP[op], *fields) for op, *fields in records] + [(OP["OP_END"], 0, 0, 0, 0, 0)]
    return np.array(rows, dtype=np.int64).reshape(-1, 6)


def test_the_call_ops_the_driver_knows_are_vm_h_s():
    assert (vm.OP_CALL, vm.OP_CALLIF) == (OP["OP_CALL"], OP["OP_CALLIF"])


def test_the_lane_vm_is_built():
    assert vm.LANEVM is not None, (
        "oracles.interp.lanevm (oracles/interp/lanevm_src/) is not built or not complete: run "
        "`python setup.py build_ext --inplace`"
    )


# --- layout and relocation (no extension needed) -----------------------------------------------
def _block(program, externals, temps, callbacks=(), result=("none",)):
    return CompiledSource(program, tuple(externals), tuple(callbacks), result, temps)


def test_layout_gives_each_place_one_row_and_shares_temporaries():
    first = _block(_program(("OP_ADD", 4, 0, 1, 0, 0)),
                   [("V", "x"), ("C", 5), ("act", None), ("U", "u0")], temps=2)
    second = _block(_program(("OP_MOVE", 3, 1, 0, 0, 0)),
                    [("H", 7), ("V", "x"), ("cf", None)], temps=5)
    layout = VMFunction([first, second])
    assert layout.names == ["x"] and layout.halves == [7]
    assert layout.uniforms == ["u0"] and layout.constants == [5]
    v, h, u, c = (layout.row[key] for key in [("V", "x"), ("H", 7), ("U", "u0"), ("C", 5)])
    assert (v, h, u, c) == (FIXED_ROWS, FIXED_ROWS + 1, FIXED_ROWS + 2, FIXED_ROWS + 3)
    assert layout.temp_base == FIXED_ROWS + 4
    assert layout.rows == layout.temp_base + 5  # the largest block's temporaries
    # Block 1: t(4) = V['x'](0) + C(1); unused field c (0) relocated like the rest.
    assert layout.blocks[0].program[0].tolist() == [OP["OP_ADD"], layout.temp_base, v, c, v, 0]
    # Block 2: local 3 is its first temporary, 1 is V['x'], 0 is H[7].
    assert layout.blocks[1].program[0].tolist() == [OP["OP_MOVE"], layout.temp_base, v, h, h, 0]
    assert layout.blocks[1].program[1].tolist() == [OP["OP_END"], h, h, h, h, 0]
    assert layout.row[("cf", None)] == FLOW and layout.row[("act", None)] == ACT


def test_relocation_does_not_change_the_cached_compile_result():
    program = _program(("OP_ADD", 1, 0, 0, 0, 0))
    before = program.copy()
    VMFunction([_block(program, [("V", "a")], temps=1)])
    assert (program == before).all()


def test_relocation_maps_calls_and_the_result():
    block = _block(
        _program(("OP_CALL", 0, 0, 0, 0, 0), ("OP_CALLIF", 0, 2, 0, 0, 1)),
        [("act", None), ("V", "a")], temps=2,
        callbacks=[("load", 2, (("row", 1), ("int", 4), ("bool", 0))),
                   ("undefined", -1, (("bool", 3), ("str", "why")))],
        result=("row", 2),
    )
    layout = VMFunction([block])
    relocated = layout.blocks[0]
    assert relocated.result_kind == "row" and relocated.result_row == layout.temp_base
    assert relocated.calls[0] is not None and relocated.calls[1] is not None


def _closure(call) -> tuple:
    """What a relocated call performs: its kind and the rows and constants it captured."""
    def seen(value):
        if isinstance(value, list):  # the generic call's readers: what each reads
            return tuple(reader.__defaults__ for reader in value)
        return value

    cells = tuple(cell.cell_contents for cell in call.__closure__ or ())
    return call.__name__, tuple(seen(c) for c in cells if not callable(c))


def test_every_block_relocated_at_once_is_what_relocating_it_alone_gives(monkeypatch):
    """`VMFunction` renumbers all its blocks in one indexing (`_relocated`); `relocate`,
    one block at a time, is the reference: the same program, result row and calls, over
    the functions of generated programs and every step the default pipelines make of
    them, and the goldens, both levels."""
    from oracles.machine.wave import CompiledWave

    pipelines = default_pipelines()
    config = CampaignConfig(seed=4, pipelines=pipelines)
    functions = golden_programs(SSA) + golden_programs("machine")
    for index in range(6):
        fn, _ = build_case(4, index, config)
        functions += [fn] + [after for _, _, after in pipeline_steps(fn, pipelines)]
    texts = []
    original = vm.vm_function
    monkeypatch.setattr(vm, "vm_function", lambda sources: texts.append(sources) or original(sources))
    for fn in functions:
        CompiledFunction(fn) if fn.level == SSA else CompiledWave(fn)
    checked = 0
    for sources in texts:
        sources = [vm.compiled(text) for text in sources]
        if None in sources:
            continue
        layout = VMFunction(sources)
        for bulk, source in zip(layout.blocks, sources, strict=True):
            alone = layout.relocate(source)
            assert bulk.program.tolist() == alone.program.tolist()
            assert (bulk.result_kind, bulk.result_row) == (alone.result_kind, alone.result_row)
            assert [_closure(c) for c in bulk.calls] == [_closure(c) for c in alone.calls]
            assert sorted(bulk.call_at) == sorted(alone.call_at)
            checked += 1
    assert checked > 500


def test_a_block_touching_no_row_relocates():
    layout = VMFunction([_block(_program(), [], temps=0)])
    assert layout.rows == FIXED_ROWS
    assert layout.blocks[0].program.tolist() == [[OP["OP_END"], 0, 0, 0, 0, 0]]


def test_a_program_naming_a_row_it_does_not_have_is_refused():
    with pytest.raises(ValueError):
        VMFunction([_block(_program(("OP_MOVE", 2, 0, 0, 0, 0)), [("V", "a")], temps=1)])


def test_initial_rows():
    block = _block(_program(), [("V", "a"), ("H", 3), ("U", "u"), ("C", 9), ("TID", None)], 1)
    layout = VMFunction([block])
    lanes = 4
    tid = np.arange(lanes, dtype=np.uint64)
    uniform = np.full(lanes, 77, dtype=np.uint64)
    halves = np.arange(8 * lanes, dtype=np.uint64).reshape(8, lanes)
    def names(n):
        return np.full(n, 5, np.uint64)

    def all_halves(n):
        return halves

    R = layout.start(lanes, tid, {"u": uniform}, names, all_halves)
    assert R.dtype == np.uint64 and R.shape == (layout.rows, lanes) and R.flags.c_contiguous
    assert (R[ACT] == 1).all() and (R[HERE] == 1).all()
    assert (R[FLOW].view(np.int64) == -1).all() and (R[TID] == tid).all()
    assert (R[layout.row[("V", "a")]] == 5).all()
    assert (R[layout.row[("H", 3)]] == halves[3]).all()
    assert (R[layout.row[("U", "u")]] == 77).all()
    assert (R[layout.row[("C", 9)]] == 9).all()
    R[TID] = 0  # a run's rows are its own: the next run starts afresh
    again = layout.start(lanes, tid, {"u": uniform}, names, all_halves)
    assert (again[TID] == tid).all() and (again[layout.row[("H", 3)]] == halves[3]).all()


# --- the driver (the executor's integer ops) -------------------------------------------------
class RecordingLanes:
    """Stands for `Lanes`: records what each call was given (copies: a row argument is a
    view of R, valid only during the call), loads return address + 1."""

    def __init__(self, lanes: int = 8):
        self.calls = []
        self.views = []  # whether each call's first argument was a view of R
        # No buffer: the executor's in-place access (memory.c) declines every load.
        self.layout = SimpleNamespace(lane_set=np.zeros(lanes, np.int64), n_buffers=0,
                                      sizes=np.zeros(1, np.int64), starts=np.zeros(1, np.int64))
        self.memory = np.zeros((1, 8), np.uint8)

    def load(self, address, nbytes, act):
        self.views.append(address.base is not None)
        self.calls.append(("load", address.copy(), nbytes, act))
        return address + np.uint64(1)

    def undefined(self, hit, reason):
        self.views.append(hit.base is not None)
        self.calls.append(("undefined", hit.copy(), reason))


def test_the_driver_performs_calls_with_views_and_bools():
    # t4 = V['x'] + C[5]; t5 = X.load(t4, 4, act); V['x'] = where(act, t5, V['x']);
    # t4 = t5 == C[5]... (a bool); if t4.any(): X.undefined(t4, 'r'); return t5
    externals = [("V", "x"), ("C", 5), ("act", None), ("TID", None)]
    block = _block(
        _program(("OP_ADD", 4, 0, 1, 0, 0), ("OP_CALL", 0, 0, 0, 0, 0),
                 ("OP_MERGE", 0, 5, 2, 0, 0), ("OP_EQ", 4, 3, 1, 0, 0),
                 ("OP_CALLIF", 0, 4, 0, 0, 1)),
        externals, temps=2,
        callbacks=[("load", 5, (("row", 4), ("int", 4), ("bool", 2))),
                   ("undefined", -1, (("bool", 4), ("str", "r")))],
        result=("row", 5),
    )
    layout = VMFunction([block])
    lanes = 8
    tid = np.arange(lanes, dtype=np.uint64)
    R = layout.start(lanes, tid, {}, lambda n: np.full(n, 100, np.uint64))
    act = np.array([1, 1, 0, 1, 0, 1, 1, 1], dtype=bool)
    R[ACT] = act
    X = RecordingLanes()
    result = layout.blocks[0].run(R, X, False)
    (_, address, nbytes, given_act), (_, hit, reason) = X.calls
    assert (address == 105).all() and nbytes == 4
    assert given_act.dtype == bool and (given_act == act).all()
    assert X.views == [True, False]  # a row as R's own, not copied; a bool computed
    v = layout.row[("V", "x")]
    assert (R[v] == np.where(act, 106, 100)).all()
    assert (result == 106).all() and not np.shares_memory(result, R)
    assert hit.dtype == bool and (hit == (tid == 5)).all() and reason == "r"


def test_a_call_if_on_no_lane_is_not_made():
    block = _block(_program(("OP_CALLIF", 0, 0, 0, 0, 0)), [("C", 0)], temps=0,
                   callbacks=[("undefined", -1, (("bool", 0), ("str", "never")))])
    layout = VMFunction([block])
    R = layout.start(4, np.arange(4, dtype=np.uint64), {})
    X = RecordingLanes()
    assert layout.blocks[0].run(R, X, True) is None
    assert X.calls == []


# --- agreement on the campaign's SSA programs --------------------------------------------------
PROGRAMS_WANTED = 150
FUELS = (3000, 40)  # the second runs most loops out of fuel


@cache
def ssa_programs() -> tuple:
    """(fn, input sets) for generated programs and what the default pipelines' SSA steps
    make of them, distinct by text, up to PROGRAMS_WANTED."""
    pipelines = default_pipelines()
    config = CampaignConfig(seed=11, pipelines=pipelines)
    found: dict[str, tuple] = {}
    index = 0
    while len(found) < PROGRAMS_WANTED:
        fn, inputs = build_case(11, index, config)
        index += 1
        found.setdefault(print_function(fn), (fn, inputs[:3]))
        for pipeline in pipelines:
            for _step, _before, work in pipeline_steps(fn, [pipeline]):
                if work.level != SSA:
                    break
                found.setdefault(print_function(work), (work, inputs[:3]))
    return tuple(found.values())[:PROGRAMS_WANTED]


def _run(fn, inputs, fuel, backend):
    compiled = CompiledFunction(fn, backend)
    outcomes = compiled.run(inputs, fuel)
    return compiled, outcomes


@pytest.fixture(params=["lanevm", "reference"])
def compiler(request, monkeypatch):
    """Which compiler makes the VM's programs: the extension's, or tests' reference."""
    with compiled_by(request.param, monkeypatch):
        yield request.param


@pytest.mark.parametrize("fuel", FUELS)
def test_vm_and_numpy_give_the_same_outcomes(fuel, compiler):
    kinds = set()
    for fn, inputs in ssa_programs():
        numpy_run, expected = _run(fn, inputs, fuel, "numpy")
        vm_run, outcomes = _run(fn, inputs, fuel, "vm")
        assert vm_run.backend == "vm" and numpy_run.backend == "numpy"
        assert outcomes == expected, print_function(fn)
        assert vm_run.lane_instructions == numpy_run.lane_instructions
        assert vm_run.diverged == numpy_run.diverged
        assert vm_run.set_steps == numpy_run.set_steps
        kinds |= {o.kind for o in outcomes}
    assert len(ssa_programs()) == PROGRAMS_WANTED
    assert "returned" in kinds
    if fuel == FUELS[1]:
        assert "out_of_fuel" in kinds


GOLDEN = Path(__file__).resolve().parents[2] / "golden"
REGRESSIONS = Path(__file__).resolve().parents[2] / "regressions"


def golden_programs(level) -> list:
    """The goldens' and regressions' programs of `level` (they reach every fate: undefined
    behaviour of each kind, running out of fuel), those that parse."""
    found = []
    for path in sorted(GOLDEN.glob("*.agx")) + sorted(GOLDEN.glob("machine/*.agx")) + sorted(
            REGRESSIONS.glob("*.agx")):
        try:
            fn = parse_function(path.read_text())
        except ParseError:
            continue
        if (fn.level == SSA) == (level == SSA):
            found.append(fn)
    return found


def test_vm_and_numpy_agree_on_the_goldens(compiler):
    reasons = set()
    for fn in golden_programs(SSA):
        for seed in (1, 2):
            inputs = random_input_sets(fn, 32, seed=seed, count=4)
            numpy_run, expected = _run(fn, inputs, 3000, "numpy")
            vm_run, outcomes = _run(fn, inputs, 3000, "vm")
            assert outcomes == expected, print_function(fn)
            assert vm_run.lane_instructions == numpy_run.lane_instructions
            assert (vm_run.diverged, vm_run.set_steps) == (numpy_run.diverged, numpy_run.set_steps)
            reasons |= {o.reason for o in outcomes if o.kind == "undefined"}
    assert {"aadd overflow", "data race", "out-of-bounds access", "misaligned access"} <= reasons


def test_every_campaign_function_takes_the_vm():
    backends = [CompiledFunction(fn, "auto").backend for fn, _ in ssa_programs()]
    assert backends.count("vm") == len(backends) == PROGRAMS_WANTED


def test_a_block_outside_the_vm_language_runs_by_numpy():
    assert vm.compiled("def block(V, U, C, act, cf, unmasked, X, TID):\n    print(1)") is None


def test_a_shared_start_is_kept_whole_and_handed_out_as_copies():
    block = _block(_program(("OP_ADD", 0, 1, 2, 0, 0)), [("V", "x"), ("U", "u"), ("TID", None)],
                   temps=0)
    layout = VMFunction([block])
    tid = np.arange(4, dtype=np.uint64)
    tid.flags.writeable = False
    uniforms = {"u": np.full(4, 7, np.uint64)}
    fresh = layout.start(4, tid.copy(), {"u": uniforms["u"].copy()})
    for _ in range(4):  # kept from the second run on
        R = layout.start(4, tid, uniforms, shared=True)
        assert (R == fresh).all()
        R[:] = 99  # a run writes its R: the next start must not see it
    kept = layout._started[next(iter(layout._started))][2]
    assert kept is not None and (kept == fresh).all()
    other = {"u": np.full(4, 8, np.uint64)}  # other uniforms: not the kept start
    assert (layout.start(4, tid, other, shared=True)[layout.row[("U", "u")]] == 8).all()


def test_the_same_block_texts_share_one_vm_function_and_a_refused_text_none():
    sources = [_EMPTY_SSA_BLOCK, _EMPTY_SSA_BLOCK.replace("return None", "return act")]
    first = vm.vm_function(sources)
    assert first is not None and vm.vm_function(list(sources)) is first
    assert vm.vm_function(sources[:1]) is not first
    refused = [sources[0].replace("return None", "return frobnicate(act)")]
    assert vm.vm_function(refused) is None and vm.vm_function(refused) is None
    for _ in range(vm._FUNCTIONS_LIMIT + 3):  # bounded
        vm.vm_function([sources[0] + f"\n    # {_}"])
        assert len(vm._FUNCTIONS) <= vm._FUNCTIONS_LIMIT


def test_call_sites_are_the_ops_the_executor_stops_at():
    block = _block(_program(("OP_ADD", 0, 0, 0, 0, 0), ("OP_CALL", 0, 0, 0, 0, 1),
                            ("OP_CALLIF", 0, 0, 0, 0, 0)), [("C", 0)], temps=0,
                   callbacks=[("undefined", -1, (("bool", 0), ("str", "a"))),
                              ("undefined", -1, (("bool", 0), ("str", "b")))])
    assert block.call_sites == ((1, 1), (2, 0))


_EMPTY_SSA_BLOCK = "def block(V, U, C, act, cf, unmasked, X, TID):\n    return None"


def test_a_function_exporting_both_as_rows_and_by_calls_runs_by_numpy():
    """Exports written as rows are handed to the lanes at the end of the run
    (`VMFunction.hand_outputs`): beside an export by a call their order would be lost."""
    header = "def block(V, U, C, act, cf, unmasked, X, TID):\n    a = V['a']\n"
    as_rows = header + "    X.export(0, a, act)\n    return None"
    by_call = header + "    t = a == C[0x1]\n    X.export(0, a, t)\n    return None"
    assert ("O", 0) in vm.compiled(as_rows).externals
    assert [c[0] for c in vm.compiled(by_call).callbacks] == ["export"]
    assert vm.vm_function([as_rows]) is not None and vm.vm_function([by_call]) is not None
    assert vm.vm_function([as_rows, by_call]) is None
