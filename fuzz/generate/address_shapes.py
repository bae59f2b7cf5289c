"""Which address shapes a function contains, found by walking its IR.

`address_shapes(fn)` returns the names (from `ADDRESS_SHAPES`) of the shapes present, in the
forms Mesa's AGX address lowering matches (design notes section 7) and their near misses.
The tests and `bench/generate.py` use it to check that generated programs contain them
often; a pass author can use it to pick programs worth running.
"""

from __future__ import annotations

from agxir.ir import Function, Immediate, Instruction, Operand, Uniform, Value

__all__ = ["ADDRESS_SHAPES", "address_shapes"]

ADDRESS_SHAPES = (
    "u2u64(amul #2^s)",  # iadd64 of a base and u2u64(amul x, #2^s)
    "u2u64(amul #c)",  # ... amul by a constant that is not a power of two
    "u2u64(aadd #f, amul)",  # ... aadd of a constant and an amul by a constant
    "amul chain",  # amul(amul(x, #b), #c)
    "ext64(shift)",  # u2u64/i2i64 of bfi #0, x, #s / iadd #0, x shift=s / imul x, #2^s
    "ext64(plain)",  # u2u64/i2i64 of a plain 32-bit iadd/imul/imad
    "i2i64 addend",  # iadd64 of a base and i2i64(...)
    "64-bit offset",  # iadd64 of a 64-bit imul/bfi result, or iadd64 with shift > 0
    "iadd64 #K",  # iadd64 of an address and a constant
    "ulea",
    "ilea",
    "high-bit index",  # a 32-bit iadd of a value with the sign bit possibly set (wraps)
    "negative index",  # a 32-bit iadd subtracting a constant (.neg or a large mov_imm)
    "computed base, #0",  # device_load/store with a computed base and index #0
    "fused index",  # device_load/store with a buffer uniform base and a value index
    "stride 12",
    "stride 24",
    "i8",
    "i16",
    "i32",
)

_MULS = ("amul", "imul", "imad")


def _constant(op: Operand, defs) -> int | None:
    if isinstance(op.ref, Immediate):
        return None if op.neg else op.ref.bits
    if isinstance(op.ref, Value):
        producer = defs.get(op.ref)
        if producer is not None and producer.name == "mov_imm":
            return producer.attrs["value"]
    return None


def _producer(op: Operand, defs) -> Instruction | None:
    return defs.get(op.ref) if isinstance(op.ref, Value) else None


def _scale(op: Operand, defs, depth: int = 6) -> int:
    """The constant factor between `op` and the index it was scaled from (1 if none)."""
    ins = _producer(op, defs)
    if ins is None or depth == 0:
        return 1
    name = ins.name
    if name in ("u2u64", "i2i64"):
        return _scale(ins.srcs[0], defs, depth - 1)
    if name in _MULS:
        a, b = ins.srcs[0], ins.srcs[1]
        cb, ca = _constant(b, defs), _constant(a, defs)
        if cb is not None and ca is None:
            return cb * _scale(a, defs, depth - 1)
        if ca is not None and cb is None:
            return ca * _scale(b, defs, depth - 1)
        return 1
    if name == "bfi" and _constant(ins.srcs[0], defs) == 0:
        s = _constant(ins.srcs[2], defs)
        return _scale(ins.srcs[1], defs, depth - 1) << s if s is not None and s < 32 else 1
    if name in ("iadd", "aadd"):
        a, b = ins.srcs[0], ins.srcs[1]
        shift = ins.attrs.get("shift", 0)
        if _constant(a, defs) is not None:
            return _scale(b, defs, depth - 1) << shift
        if _constant(b, defs) is not None and not shift:
            return _scale(a, defs, depth - 1)
    return 1


def _is_pow2(value: int | None) -> bool:
    return value is not None and value > 0 and value & (value - 1) == 0


def _shift_form(ins: Instruction, defs) -> bool:
    name = ins.name
    if name == "bfi":
        return _constant(ins.srcs[0], defs) == 0 and _constant(ins.srcs[2], defs) is not None
    if name == "iadd":
        return ins.attrs["shift"] > 0 and _constant(ins.srcs[0], defs) == 0
    if name in ("imul", "amul"):
        return any(_is_pow2(_constant(src, defs)) for src in ins.srcs)
    return False


def address_shapes(fn: Function) -> set[str]:
    """The names of the `ADDRESS_SHAPES` that occur in `fn`."""
    defs = {ins.dest: ins for ins in fn.instructions() if ins.dest is not None}
    found: set[str] = set()
    strides: set[int] = set()
    for ins in fn.instructions():
        name = ins.name
        size = ins.dest.size if ins.dest is not None else 0
        if name == "iadd" and size == 64:
            if ins.attrs["shift"]:
                found.add("64-bit offset")
            for src in ins.srcs:
                strides.add(_scale(src, defs) << ins.attrs["shift"])
                if _constant(src, defs) is not None:
                    found.add("iadd64 #K")
                p = _producer(src, defs)
                if p is None:
                    continue
                if p.name == "i2i64":
                    found.add("i2i64 addend")
                if p.name in ("imul", "bfi") and p.dest.size == 64:
                    found.add("64-bit offset")
                if p.name != "u2u64":
                    continue
                q = _producer(p.srcs[0], defs)
                if q is not None and q.name == "amul":
                    constants = [_constant(s, defs) for s in q.srcs]
                    if any(_is_pow2(c) for c in constants):
                        found.add("u2u64(amul #2^s)")
                    elif any(c is not None for c in constants):
                        found.add("u2u64(amul #c)")
                elif q is not None and q.name == "aadd":
                    kinds = [_producer(s, defs) for s in q.srcs]
                    if any(_constant(s, defs) is not None for s in q.srcs) and any(
                        k is not None and k.name == "amul" for k in kinds
                    ):
                        found.add("u2u64(aadd #f, amul)")
        elif name in ("u2u64", "i2i64"):
            q = _producer(ins.srcs[0], defs)
            if q is not None and q.dest.size == 32:
                if _shift_form(q, defs):
                    found.add("ext64(shift)")
                if q.name in ("iadd", "imul", "imad"):
                    found.add("ext64(plain)")
        elif name == "amul":
            for src in ins.srcs:
                p = _producer(src, defs)
                if (
                    p is not None
                    and p.name == "amul"
                    and any(_constant(s, defs) is not None for s in p.srcs)
                ):
                    found.add("amul chain")
            strides.add(_scale(Operand(ins.dest), defs))
        elif name in ("imul", "imad"):
            strides.add(_scale(Operand(ins.dest), defs))
        elif name in ("ulea", "ilea"):
            found.add(name)
            strides.add(_scale(ins.srcs[1], defs) << ins.attrs["shift"])
        elif name == "iadd" and size == 32:
            for src in ins.srcs:
                c = _constant(src, defs)
                p = _producer(src, defs)
                if (src.neg and isinstance(src.ref, Immediate)) or (c or 0) >= 0xFFFF0000:
                    found.add("negative index")
                if c == 1 << 31 or (
                    p is not None
                    and (
                        (p.name == "bitop" and any(_constant(s, defs) == 1 << 31 for s in p.srcs))
                        or (p.name == "bfi" and _constant(p.srcs[2], defs) == 31)
                    )
                ):
                    found.add("high-bit index")
        elif name in ("device_load", "device_store"):
            base, index = ins.srcs[-2], ins.srcs[-1]
            fmt = ins.attrs["fmt"]
            found.add(fmt)
            if isinstance(base.ref, Uniform):
                if isinstance(index.ref, Value):
                    found.add("fused index")
            elif isinstance(index.ref, Immediate) and index.ref.bits == 0:
                found.add("computed base, #0")
            nbytes = {"i8": 1, "i16": 2, "i32": 4}[fmt]
            strides.add(_scale(index, defs) * nbytes << ins.attrs["shift"])
    for stride in (12, 24):
        if stride in strides:
            found.add(f"stride {stride}")
    return found
