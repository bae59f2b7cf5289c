"""The project's structural rules, checked over the source tree.

Imports flow agxir -> oracles -> fuzz; z3 is imported only inside oracles/smt; no module but
the entry point imports the command-line front fuzz.cli; modules stay
near 600 lines and open with a docstring; docs/opcodes.md matches the opcode table; no
module outside tests/ reaches for another module's private (`_`) name; no new import circle
(the circles of today are listed, each with why it is there, and may only shrink).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agxir", "oracles", "fuzz")
SOURCES = sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))
# Where the private-name rule applies: every source and benchmark module (tests/ may reach
# into internals).
NOT_TESTS = SOURCES + sorted((ROOT / "bench").rglob("*.py"))


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


# --- private names and import circles -----------------------------------------------------------


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in SOURCES}


def _absolute(module: str, node: ast.ImportFrom) -> str | None:
    """The module a `from ... import` names, a relative one resolved against `module`."""
    if node.level == 0:
        return node.module
    package = module.split(".")
    if MODULES.get(module, Path()).name != "__init__.py":
        package = package[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join(package + ([node.module] if node.module else [])) or None


def imports_of(path: Path) -> tuple[set[str], list[tuple[str, str]]]:
    """The project modules `path` imports (at the top, inside functions or under
    TYPE_CHECKING alike: `from P import m` names the module P.m when there is one, else P
    itself), and the private names it takes from another module: (module, name) for each
    `from M import _x` and each `m._x` where `m` is a name bound to a project module."""
    module = module_name(path)
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    private: list[tuple[str, str]] = []
    bound: dict[str, str] = {}  # local name -> the project module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    found.add(alias.name)
                    top = alias.name if alias.asname else alias.name.split(".")[0]
                    bound[alias.asname or top] = top
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            if source not in MODULES:
                continue
            for alias in node.names:
                child = f"{source}.{alias.name}"
                if child in MODULES:
                    found.add(child)
                    bound[alias.asname or alias.name] = child
                    continue
                found.add(source)
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    private.append((source, alias.name))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            chain, base = [], node.value
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id in bound:
                target = ".".join([bound[base.id], *reversed(chain)])
                private.append((target, node.attr))
    found.discard(module)
    return found, [(m, name) for m, name in private if m != module]


# Private names some module still takes from another, each with why it is not public yet.
# The rule fails on any other; delete an entry when its import goes.
PRIVATE_IMPORTS_ALLOWED: set[tuple[str, str, str]] = set()


def test_no_module_takes_another_modules_private_names():
    found = set()
    for path in NOT_TESTS:
        for module, name in imports_of(path)[1]:
            found.add((module_name(path) if path in SOURCES else str(path.relative_to(ROOT)),
                       module, name))
    assert found - PRIVATE_IMPORTS_ALLOWED == set(), (
        "make the name public in the module that defines it (or add a reasoned entry to "
        "PRIVATE_IMPORTS_ALLOWED)")


def import_circles(graph: dict[str, list[str]] | None = None) -> list[set[str]]:
    """The strongly connected components of more than one module of an import graph (by
    default agxir's, oracles' and fuzz's; Tarjan's algorithm, iteratively)."""
    if graph is None:
        graph = {module: sorted(imports_of(path)[0]) for module, path in MODULES.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(graph[succ])))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        circles.append(component)
    return circles


# Import circles allowed, each with why it is there: none today. The rule fails on any
# circle not inside one of these.
CIRCLES_ALLOWED: tuple[set[str], ...] = ()


def test_no_new_import_circle():
    new = [sorted(circle) for circle in import_circles()
           if not any(circle <= allowed for allowed in CIRCLES_ALLOWED)]
    assert new == [], "a new import circle (break it, or add a reasoned entry to CIRCLES_ALLOWED)"


def test_the_circle_finder_finds_circles():
    graph = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": [], "e": ["e"], "f": ["d"]}
    assert import_circles(graph) == [{"a", "b", "c"}]  # a self-import is no circle of modules


def late_imports_without_a_reason(path: Path) -> list[tuple[int, str]]:
    """Imports made inside a function of `path` with no comment saying "loaded late" (on
    the import's line, or on a line of its function before it): (line, text) each."""
    text = path.read_text()
    lines = text.splitlines()
    found = []
    for function in ast.walk(ast.parse(text)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import | ast.ImportFrom):
                said = lines[function.lineno - 1: node.lineno]
                if not any("loaded late" in line.lower() for line in said):
                    found.append((node.lineno, lines[node.lineno - 1].strip()))
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_inside_functions_only_load_late_what_is_heavy(path: Path):
    """An import inside a function is for a heavy or optional dependency loaded only when
    needed (redis, matplotlib, z3, the Mesa bridge), with a comment saying so; anything
    else belongs at the top, where a reader sees what a module depends on."""
    assert late_imports_without_a_reason(path) == []


def test_the_late_import_rule_sees_an_unexplained_import(tmp_path: Path):
    module = tmp_path / "m.py"
    module.write_text('def f():\n    import json\n    return json\n\n\n'
                      'def g():\n    import redis  # loaded late: optional\n    return redis\n')
    assert late_imports_without_a_reason(module) == [(2, "import json")]
