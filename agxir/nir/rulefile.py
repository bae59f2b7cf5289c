"""Loading a nir_algebraic rule file: it is Python, executed to read its module-level lists.

The file runs as a module named `nir_rules_under_audit` (not `__main__`, so its `main()` is
not called), top-level statement by top-level statement, stopping before the first that
would run the generator (a call of `parse_args` or `render`), with stand-ins for the generator modules it may import: `nir_algebraic`
(`ignore_exact` returns its expression as a tuple; nothing is rendered) and `nir_opcodes`
(`type_sizes`). Like `--pass`, the file is trusted code: it can do anything the user can.
Every module-level list whose items look like rules (a tuple whose first item is a tuple)
is a rule list; `--lists` picks some by name. Problems with the file itself raise
`RuleFileError` with `file:line: message`; a malformed rule is reported for that rule.
"""

from __future__ import annotations

import ast
import re
import sys
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path

from agxir.nir.pattern import PatternError, Rule, UnsupportedPattern, parse_rule

MODULE_NAME = "nir_rules_under_audit"


class RuleFileError(Exception):
    """The file cannot be read or run, or a named list is missing: one line to show."""


@dataclass
class BadRule:
    list_name: str
    index: int
    line: int | None
    message: str
    unsupported: bool = False  # valid nir_algebraic the model cannot express (opcode, swizzle)

    @property
    def where(self) -> str:
        return f"{self.list_name}[{self.index}]"


@dataclass
class RuleFile:
    path: str
    lists: dict[str, list] = field(default_factory=dict)  # name -> [Rule | BadRule]

    def rules(self):
        for entries in self.lists.values():
            yield from entries


def _type_sizes(type_: str) -> list[int]:
    found = re.match(r"(int|uint|float|bool)(\d+)?$", type_)
    if found and found.group(2):
        return [int(found.group(2))]
    return {"bool": [1, 8, 16, 32], "float": [16, 32, 64]}.get(type_, [1, 8, 16, 32, 64])


def _stub_modules() -> dict[str, types.ModuleType]:
    algebraic = types.ModuleType("nir_algebraic")
    algebraic.ignore_exact = lambda *expr: tuple(expr)

    class AlgebraicPass:  # present so a module-level reference resolves; never rendered
        def __init__(self, *args, **kwargs):
            self.args = args

        def render(self):
            raise RuntimeError("agxfuzz does not render nir_algebraic passes")

    algebraic.AlgebraicPass = AlgebraicPass
    opcodes = types.ModuleType("nir_opcodes")
    opcodes.type_sizes = _type_sizes
    opcodes.opcodes = {}
    return {"nir_algebraic": algebraic, "nir_opcodes": opcodes}


def _error_line(error: BaseException, path: str) -> int | None:
    if isinstance(error, SyntaxError) and error.filename == path:
        return error.lineno
    line = None
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename == path:
            line = frame.lineno
    return line


def _runs_generator(statement: ast.stmt) -> bool:
    """True for a statement that would run the generator: it calls `parse_args` or
    `render` (Mesa's nir_opt_algebraic.py does both at module level)."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                node.func.attr in ("parse_args", "render")):
            return True
    return False


def _execute(path: str, text: str) -> dict:
    try:
        tree = ast.parse(text, path)
    except SyntaxError as error:
        raise RuleFileError(f"{path}:{error.lineno}:{error.offset or 1}: {error.msg}") from None
    namespace = {"__name__": MODULE_NAME, "__file__": path, "__builtins__": __builtins__}
    saved = {name: sys.modules.get(name) for name in _stub_modules()}
    saved_argv = sys.argv
    sys.modules.update(_stub_modules())
    sys.argv = [path]
    try:
        for statement in tree.body:
            if _runs_generator(statement):
                break  # the rule lists are complete; what follows renders C
            code = compile(ast.Module([statement], type_ignores=[]), path, "exec")
            exec(code, namespace)  # noqa: S102 - the rule file is code, like --pass (documented)
    except SystemExit as error:
        raise RuleFileError(f"{path}: the file exited ({error.code}) while loading") from None
    except Exception as error:  # the user's file: any failure is a bad file, never a traceback
        line = _error_line(error, path)
        where = f"{path}:{line}" if line else path
        raise RuleFileError(f"{where}: {type(error).__name__}: {error}") from None
    finally:
        sys.argv = saved_argv
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    return namespace


def _assignment_lines(text: str) -> dict[str, int]:
    lines: dict[str, int] = {}
    for node in ast.parse(text).body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name):
                lines.setdefault(target.id, node.lineno)
    return lines


def _looks_like_rules(value) -> bool:
    return (isinstance(value, list) and bool(value)
            and all(isinstance(item, tuple) and item and isinstance(item[0], tuple)
                    for item in value))


def load_rule_file(path: str, wanted: list[str] | None = None) -> RuleFile:
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise RuleFileError(f"{path}: cannot read: {reason}") from None
    namespace = _execute(path, text)
    lines = _assignment_lines(text)
    found = {name: value for name, value in namespace.items()
             if not name.startswith("__") and _looks_like_rules(value)}
    if wanted:
        missing = [name for name in wanted if name not in found]
        if missing:
            known = ", ".join(found) or "none"
            raise RuleFileError(f"{path}: no rule list named {', '.join(missing)} "
                                f"(rule lists: {known})")
        found = {name: found[name] for name in wanted}
    if not found:
        raise RuleFileError(f"{path}: no module-level list of (search, replace) rules")
    result = RuleFile(path)
    for name, entries in found.items():
        result.lists[name] = [_parse(entry, name, i, lines.get(name))
                              for i, entry in enumerate(entries)]
    return result


def _parse(entry, list_name: str, index: int, line: int | None) -> Rule | BadRule:
    try:
        return parse_rule(entry, list_name, index, line)
    except UnsupportedPattern as error:
        return BadRule(list_name, index, line, str(error), unsupported=True)
    except PatternError as error:
        return BadRule(list_name, index, line, str(error))


def loaded_rules(rule_file: RuleFile) -> list[Rule | BadRule]:
    return list(rule_file.rules())


__all__ = ["BadRule", "Rule", "RuleFile", "RuleFileError", "load_rule_file"]
