"""The project's structural rules, checked over the source tree.

Imports flow agxir -> oracles -> fuzz; z3 is imported only inside oracles/smt; no module but
the entry point imports the command-line front fuzz.cli; modules stay
near 600 lines and open with a docstring; docs/opcodes.md matches the opcode table.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agxir", "oracles", "fuzz")
SOURCES = sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_flow_one_way(path: Path):
    package = path.relative_to(ROOT).parts[0]
    tops = {name.split(".")[0] for name in imported_modules(path)}
    forbidden = {"agxir": {"oracles", "fuzz", "z3"}, "oracles": {"fuzz"}, "fuzz": set()}[package]
    assert not tops & forbidden
    if "z3" in tops:
        assert path.relative_to(ROOT).parts[:2] == ("oracles", "smt")


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_are_small_and_say_what_they_own(path: Path):
    text = path.read_text()
    assert len(text.splitlines()) <= 650
    if text.strip():
        assert ast.get_docstring(ast.parse(text)), "module docstring missing"


def test_opcode_reference_is_current():
    from agxir.opcodes.reference import render

    assert (ROOT / "docs" / "opcodes.md").read_text() == render(), (
        "regenerate with: python -m agxir.opcodes.reference > docs/opcodes.md"
    )


def test_commands_never_import_the_command_line_front():
    """The command-line front (fuzz.cli) imports the commands, lazily; a command that
    imported it back would make the two one tangle again."""
    commands = sorted((ROOT / "fuzz" / "commands").glob("*.py"))
    assert len(commands) >= 12
    for path in commands + [p for p in SOURCES if p.name != "cli.py" and p.name != "__main__.py"]:
        assert "fuzz.cli" not in imported_modules(path), path
