"""A slow, simple compiler of emitted block source to lane-VM programs, with the result
`lanevm.compile` gives (vm.h, oracles/interp/vm.py), written over Python's `ast`.

It is a test aid, not the VM's compiler: it lets the glue (row layout, relocation, driver,
both interpreters' run loops) be tested against the numpy executor independently of
compile.c, and it is a second opinion on compile.c's output. It reuses no temporary and
copies every storage read, which is always safe and never small.
"""

from __future__ import annotations

import ast
import re
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from oracles.interp import vm

VM_H = Path(__file__).resolve().parents[3] / "oracles" / "interp" / "lanevm_src" / "vm.h"
_ENUM = re.search(r"enum vm_opcode \{(.*?)\};", VM_H.read_text(), re.S).group(1)
OP = {name: number for number, name in enumerate(re.findall(r"^\s*(OP_\w+)", _ENUM, re.M))}

_BINARY = {ast.Add: "OP_ADD", ast.Sub: "OP_SUB", ast.Mult: "OP_MUL", ast.BitAnd: "OP_AND",
           ast.BitOr: "OP_OR", ast.BitXor: "OP_XOR", ast.LShift: "OP_SHL", ast.RShift: "OP_SHR"}
_LOGICAL = (ast.BitAnd, ast.BitOr, ast.BitXor)
_COMPARE = {ast.Eq: "OP_EQ", ast.Lt: "OP_LT", ast.LtE: "OP_LE"}
_FCOMPARE = {ast.Eq: "OP_FEQ", ast.Lt: "OP_FLT", ast.LtE: "OP_FLE"}
_FIXED = {"act": ("act", True), "here": ("here", True), "cf": ("cf", False),
          "LB": ("LB", False), "TID": ("TID", False)}


class Unsupported(ValueError):
    pass


class _Compiler:
    def __init__(self):
        self.externals: dict[tuple, int] = {}
        self.temps = 0
        self.ops: list[list] = []  # fields are ("e", k) / ("t", k) / ints
        self.locals: dict[str, tuple] = {}  # name -> (row, is_bool)
        self.callbacks: list[tuple] = []
        self.result = ("none",)

    # rows
    def ext(self, kind, key=None):
        return ("e", self.externals.setdefault((kind, key), len(self.externals)))

    def temp(self):
        self.temps += 1
        return ("t", self.temps - 1)

    def emit(self, op, d=None, a=None, b=None, c=None, imm=0):
        self.ops.append([OP[op], d, a, b, c, imm])

    # expressions: (row, is_bool)
    def value(self, node):
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return self.locals[node.id]
            if node.id in _FIXED:
                kind, is_bool = _FIXED[node.id]
                return self.ext(kind), is_bool
            raise Unsupported(node.id)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return self.ext("C", node.value), False
        if isinstance(node, ast.Subscript):
            table, key = node.value.id, node.slice.value
            if table in ("V", "H"):  # a copy: storage may be written while it is still used
                row = self.temp()
                self.emit("OP_MOVE", row, self.ext(table, key))
                return row, False
            if table in ("U", "C"):
                return self.ext(table, key), False
            raise Unsupported(table)
        if isinstance(node, ast.BinOp):
            (a, a_bool), (b, b_bool) = self.value(node.left), self.value(node.right)
            row = self.temp()
            self.emit(_BINARY[type(node.op)], row, a, b)
            return row, a_bool and b_bool and isinstance(node.op, _LOGICAL)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            a, a_bool = self.value(node.operand)
            row = self.temp()
            self.emit("OP_LNOT" if a_bool else "OP_NOT", row, a)
            return row, a_bool
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right, op = node.left, node.comparators[0], type(node.ops[0])
            row = self.temp()
            if _is_float_view(left):
                width = int(left.func.id[1:])
                self.emit(_FCOMPARE[op], row, self.value(left.args[0])[0],
                          self.value(right.args[0])[0], imm=width)
            else:
                self.emit(_COMPARE[op], row, self.value(left)[0], self.value(right)[0])
            return row, True
        if isinstance(node, ast.Call):
            return self.call(node)
        raise Unsupported(ast.dump(node))

    def call(self, node):
        func = node.func
        if isinstance(func, ast.Attribute):  # X.load / X.ballot
            row = self.temp()
            self.emit("OP_CALL", imm=self.callback(func.attr, row, node.args))
            return row, False
        name, args = func.id, node.args
        row = self.temp()
        if name == "where":
            (c, _), (a, a_bool), (b, b_bool) = (self.value(x) for x in args)
            self.emit("OP_WHERE", row, c, a, b)
            return row, a_bool and b_bool
        if name == "isnan":
            self.emit("OP_FISNAN", row, self.value(args[0].args[0])[0],
                      imm=int(args[0].func.id[1:]))
            return row, True
        if name in ("bits32", "bits16"):
            inner = args[0]
            op = {ast.Add: "OP_FADD", ast.Mult: "OP_FMUL"}[type(inner.op)]
            self.emit(op, row, self.value(inner.left.args[0])[0],
                      self.value(inner.right.args[0])[0], imm=int(name[4:]))
            return row, False
        numbers = [a.value for a in args if isinstance(a, ast.Constant)]
        if name == "ffma":
            a, b, c = (self.value(x)[0] for x in args[:3])
            self.emit("OP_FFMA", row, a, b, c, imm=args[3].value)
        elif name == "fconvert":
            self.emit("OP_FCONVERT", row, self.value(args[0])[0], imm=numbers[-2] | numbers[-1] << 8)
        elif name in ("int_to_float", "float_to_int"):
            first, second, signed = (a.value for a in args[1:])
            op = "OP_I2F" if name == "int_to_float" else "OP_F2I"
            self.emit(op, row, self.value(args[0])[0], imm=first | second << 8 | int(signed) << 16)
        elif name == "ashr":
            self.emit("OP_ASHR", row, self.value(args[0])[0], self.value(args[1])[0],
                      imm=args[2].value)
        else:
            raise Unsupported(name)
        return row, False

    def callback(self, method, dest, args):
        described = []
        for arg in args:
            if isinstance(arg, ast.Constant):
                described.append(("str" if isinstance(arg.value, str) else "int", arg.value))
            else:
                row, is_bool = self.value(arg)
                described.append(("bool" if is_bool else "row", row))
        self.callbacks.append((method, dest, tuple(described)))
        return len(self.callbacks) - 1

    # statements
    def statement(self, node):
        if isinstance(node, ast.Assign):
            (target,) = node.targets
            if isinstance(target, ast.Name) and target.id == "act":
                row, _ = self.value(node.value)
                self.emit("OP_MOVE", self.ext("act"), row)
            elif isinstance(target, ast.Name):
                self.locals[target.id] = self.value(node.value)
            elif isinstance(target.slice, ast.Name):  # LB[act] = N
                self.emit("OP_MERGE", self.ext("LB"), self.value(node.value)[0], self.ext("act"))
            else:
                row, _ = self.value(node.value)
                self.emit("OP_MOVE", self.ext(target.value.id, target.slice.value), row)
        elif isinstance(node, ast.Expr):
            self.emit("OP_CALL", imm=self.callback(node.value.func.attr, -1, node.value.args))
        elif isinstance(node, ast.If) and isinstance(node.test, ast.Name):  # the commit
            for line in node.body:
                target = line.targets[0]
                self.emit("OP_COMMIT", self.ext("V", target.slice.value),
                          self.value(line.value)[0], self.ext("act"))
        elif isinstance(node, ast.If):  # if t.any(): X.undefined(t, 'reason')
            call = node.body[0].value
            hit, _ = self.value(node.test.func.value)
            self.emit("OP_CALLIF", a=hit, imm=self.callback(call.func.attr, -1, call.args))
        elif isinstance(node, ast.Return):
            if isinstance(node.value, ast.Constant):
                self.result = ("none",)
            else:
                row, is_bool = self.value(node.value)
                self.result = ("bool" if is_bool else "row", row)
        else:
            raise Unsupported(ast.dump(node))

    def finish(self):
        count = len(self.externals)

        def local(field):
            if field is None:
                return 0
            kind, k = field
            return k if kind == "e" else count + k

        records = [[op, *(local(f) for f in fields[:4]), fields[4]] for op, *fields in self.ops]
        records.append([OP["OP_END"], 0, 0, 0, 0, 0])
        program = np.array(records, dtype=np.int64).tobytes()
        callbacks = tuple((m, local(d) if d != -1 else -1,
                           tuple((k, local(v) if k in ("row", "bool") else v) for k, v in args))
                          for m, d, args in self.callbacks)
        result = self.result if self.result[0] == "none" else (self.result[0], local(self.result[1]))
        return program, tuple(self.externals), callbacks, result, self.temps


def _is_float_view(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("f32", "f16")


def reference_compile(source: str):
    """compile()'s result for `source` (a block's emitted function); ValueError when it is
    outside what this compiler knows."""
    try:
        function = ast.parse(source).body[0]
        compiler = _Compiler()
        for statement in function.body:
            compiler.statement(statement)
        return compiler.finish()
    except (Unsupported, KeyError, AttributeError, IndexError, TypeError) as error:
        raise ValueError(f"outside the reference compiler's language: {error}") from error


@contextmanager
def compiled_by(compiler: str, monkeypatch):
    """Within it, the VM's programs come from `compiler`: "lanevm" (the extension's) or
    "reference" (this module's, run by the extension's executor). Compile results are
    cached by text whoever made them, so the cache is emptied on the way in and out."""
    if compiler == "reference":
        extension = vm._extension
        assert extension is not None, "oracles.interp.lanevm is not built"
        monkeypatch.setattr(vm, "LANEVM", SimpleNamespace(compile=reference_compile, run=extension.run))
    vm._COMPILED.clear()
    try:
        yield
    finally:
        vm._COMPILED.clear()
