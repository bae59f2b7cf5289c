"""The registry of IR levels: which module implements each level of `agxir.ir.LEVELS`.

Each level (`agxir.ir.Level`: its name, its place in the pipeline, what it may be lowered
to) has one module here that owns its hooks: `opcodes()` (the rows a function of the level
may use), `parse(tokens, filename)`, `print_function(fn)`, `verify(fn)`, and `HEADER`, the
keyword its text opens with. The four are listed below explicitly, in pipeline order;
nothing registers itself on import. The front doors (`agxir.text.parse_function`,
`agxir.text.print_function`, `agxir.verifier.verify`) look a level up here.
"""

from __future__ import annotations

from types import ModuleType

from agxir import ir
from agxir.levels import exec as exec_level
from agxir.levels import machine, ssa, vreg

MODULES: tuple[ModuleType, ...] = (ssa, exec_level, vreg, machine)
_BY_LEVEL: dict[ir.Level, ModuleType] = {module.LEVEL: module for module in MODULES}
assert tuple(_BY_LEVEL) == ir.LEVELS, "one module per level, in pipeline order"
_BY_HEADER: dict[str, ir.Level] = {module.HEADER: module.LEVEL for module in MODULES}


def hooks(level: ir.Level | str) -> ModuleType:
    """The module of `level` (a Level or its name): its opcodes, parse, print and verify."""
    return _BY_LEVEL[ir.level_named(level)]


def from_header(suffix: str | None) -> ir.Level | None:
    """The level whose text opens with `func.SUFFIX` (`func` alone: suffix None), or None."""
    return _BY_HEADER.get("func" if suffix is None else f"func.{suffix}")


def header_spellings() -> tuple[str, ...]:
    """Every level's opening keyword, in pipeline order (for error messages)."""
    return tuple(module.HEADER for module in MODULES)


__all__ = ["MODULES", "from_header", "header_spellings", "hooks"]
