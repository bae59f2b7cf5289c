"""Levels as objects: `Level` compares and hashes like its name, a Function holds the Level
whatever it is given, pickling keeps the one object per level, and the front doors
dispatch through the registry (`agxir.levels`)."""

from __future__ import annotations

import ast
import copy
import pickle
from pathlib import Path

import pytest

from agxir import ir, levels
from agxir.text import ParseError, parse_function, print_function
from agxir.verifier import verify

ROOT = Path(__file__).resolve().parents[3]

MACHINE_TEXT = """\
func.machine @f(u0:32) {
entry: -> done
  r2 = iadd u0, #1 shift=0
  jmp_exec_none -> done
done:
  export r2 slot=0
  stop
}
"""


def test_a_level_is_its_name_for_comparison_hashing_and_printing():
    assert ir.MACHINE == "machine" and "machine" == ir.MACHINE
    assert ir.MACHINE != "exec" and ir.MACHINE != ir.EXEC
    assert ir.EXEC in ("exec", "vreg")
    assert hash(ir.VREG) == hash("vreg") and {"vreg": 1}[ir.VREG] == 1
    assert {ir.VREG: 1}["vreg"] == 1
    assert str(ir.SSA) == "ssa" and f"func.{ir.EXEC}" == "func.exec" and f"{ir.SSA:>4}" == " ssa"
    assert not isinstance(ir.SSA, str)


def test_levels_are_in_pipeline_order_and_say_what_they_lower_to():
    assert [level.name for level in ir.LEVELS] == ["ssa", "exec", "vreg", "machine"]
    assert [level.order for level in ir.LEVELS] == [0, 1, 2, 3]
    assert ir.SSA.may_lower_to("exec") and not ir.SSA.may_lower_to(ir.MACHINE)
    assert ir.EXEC.may_lower_to(ir.VREG) and ir.EXEC.may_lower_to("machine")
    assert ir.VREG.may_lower_to(ir.MACHINE) and not ir.MACHINE.lowers_to
    for level in ir.LEVELS:
        assert all(ir.level_named(lower).order > level.order for lower in level.lowers_to)


def test_a_function_holds_the_level_whether_given_a_name_or_a_level():
    fn = ir.Function("f", level="machine")
    assert fn.level is ir.MACHINE
    assert ir.Function("f").level is ir.SSA
    assert ir.Function("f", [], [], "vreg").level is ir.VREG
    fn.level = "exec"  # what the lowering passes do
    assert fn.level is ir.EXEC
    fn.level = ir.VREG
    assert fn.level is ir.VREG
    assert ir.clone_function(fn).level is ir.VREG
    with pytest.raises(ValueError, match="no IR level 'bogus'"):
        ir.Function("f", level="bogus")


def test_pickling_and_copying_keep_the_one_level_object():
    fn = parse_function(MACHINE_TEXT)
    back = pickle.loads(pickle.dumps(fn))
    assert back.level is ir.MACHINE
    assert print_function(back) == MACHINE_TEXT
    # (not `verify(back)`: opcode rows unpickle as copies, which the machine verifier's
    # identity check on rows rejects, as before levels were objects)
    assert pickle.loads(pickle.dumps(ir.EXEC)) is ir.EXEC
    assert copy.deepcopy(fn).level is ir.MACHINE and copy.copy(ir.VREG) is ir.VREG


def test_the_registry_lists_one_module_per_level_in_order():
    assert tuple(module.LEVEL for module in levels.MODULES) == ir.LEVELS
    assert levels.header_spellings() == ("func", "func.exec", "func.vreg", "func.machine")
    assert levels.hooks("machine").LEVEL is ir.MACHINE
    assert levels.hooks(ir.SSA).HEADER == "func"
    assert levels.from_header(None) is ir.SSA and levels.from_header("vreg") is ir.VREG
    assert levels.from_header("ssa") is None
    assert "phi" not in levels.hooks("vreg").opcodes()
    assert "jump" in levels.hooks("ssa").opcodes() and "jump" not in levels.hooks("exec").opcodes()


def test_the_front_doors_dispatch_by_level():
    fn = parse_function(MACHINE_TEXT)
    assert fn.level is ir.MACHINE and fn.notes == {}
    assert levels.hooks(fn.level).print_function(fn) == print_function(fn) == MACHINE_TEXT
    fn.level = "exec"  # registers are not allowed at the exec level (only r0l)
    assert any("register r2 at the exec level" in str(e) for e in verify(fn))
    with pytest.raises(ParseError, match="expected func, func.exec, func.vreg or func.machine"):
        parse_function("func.ssa @f() {\n}\n")
    with pytest.raises(ParseError, match="expected 'func', found 'fun'"):
        parse_function("fun @f() {\n}\n")


SSA_CORE = ["agxir/ir.py", "agxir/verifier.py", "agxir/ssa_verifier.py",
            *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "agxir" / "text").glob("*.py")))]


@pytest.mark.parametrize("path", SSA_CORE)
def test_the_ssa_core_never_imports_the_machine_level(path):
    tree = ast.parse((ROOT / path).read_text())
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        assert not [name for name in names if name.startswith("agxir.machine")], path
