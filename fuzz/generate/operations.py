"""Emitting instructions: operand choice from dominating values, and one emitter per plain
opcode family, each producing only instructions the verifier accepts (the shape modules'
emitters build on these; `families` weighs them all).

`Emitter` owns the scoped pools of values available at the current point (per size; small
bounded 32-bit values usable as indices; address values with their buffer, largest offset
and alignment; compare results for the fusion patterns; the thread id). The program builder
(`fuzz.generate.program`) fills and truncates the pools while it walks the dominator tree,
so every operand drawn here dominates its use.

Operands follow the row's `Src`: sizes and width rules, the immediate class (IMM8, FIMM8;
memory indices are built by the memory emitters), uniforms where allowed, and `.abs`/`.neg`
only where the row allows them. Memory stays in bounds and race free by construction: loads
read input buffers at bounded, thread-dependent indices; stores write slot
`thread_id * SITES + site` of the output buffer, one slot per store site.
"""

from __future__ import annotations

from agxir.ir import Immediate, Instruction, Operand, Uniform, Value
from agxir.opcodes import OPCODES
from agxir.opcodes.spec import ADDR, AT_MOST_DEST, FIMM8, SAME_AS_DEST, Opcode
from fuzz.generate.choices import ChoiceSource
from fuzz.generate.features import Features

SITES = 8  # store slots per thread in the output buffer
SLOT_BYTES = 4
MAX_THREADS = 64  # programs index buffers assuming thread_id < 64
OUTPUT_BYTES = MAX_THREADS * SITES * SLOT_BYTES
FORMATS = (("i32", 4, 2), ("i16", 2, 1), ("i8", 1, 0))  # name, bytes, log2

_IMM_OPS = [Operand(Immediate(k)) for k in range(256)]
IMM0 = _IMM_OPS[0]
# Integer immediates worth hitting often; a choice past the table draws any 0..255.
_IMM8_TABLE = (0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255)
# Minifloats: 0.0, 1.0, 0.5, -1.0, -0.0, 2.0, 31.0 (largest), 0.015625 (smallest), 1.5, -2.0.
_FIMM8_TABLE = (0x00, 0x30, 0x20, 0xB0, 0x80, 0x40, 0x7F, 0x01, 0x38, 0xC0)
_FLOAT_BITS = {16: (0x3C00, 0x3800, 0xBC00, 0x8000, 0x7C00, 0x7E00, 0x0001, 0x7BFF),
               32: (0x3F800000, 0x3F000000, 0xBF800000, 0x80000000, 0x7F800000,
                    0x7FC00000, 0x00000001, 0x7F7FFFFF),
               64: (0x3FF0000000000000, 0x8000000000000000)}  # fmt: skip

R = OPCODES


def immediate(bits: int) -> Operand:
    return _IMM_OPS[bits] if bits < 256 else Operand(Immediate(bits))


def _lowbit(value: int) -> int:
    return value & -value if value else 1 << 16


# --- per-row plans, shared by every program ------------------------------------------------

_PLANS: dict[tuple[str, int, tuple[int, ...]], tuple] = {}
_ROW_ATTRS: dict[str, tuple] = {}


def _src_sizes(spec, dest: int, enabled: tuple[int, ...]) -> tuple[int, ...]:
    if spec.kind == ADDR:
        return (64,)
    sizes = [s for s in spec.sizes if s in enabled]
    if dest and spec.width_rule == SAME_AS_DEST:
        sizes = [s for s in sizes if s == dest]
    elif dest and spec.width_rule == AT_MOST_DEST:
        sizes = [s for s in sizes if s <= dest]
    preferred = dest if dest in sizes else (32 if 32 in sizes else sizes[0])
    return (preferred,) * 3 + tuple(s for s in sizes if s != preferred)


def plans(row: Opcode, dest: int, enabled: tuple[int, ...]) -> tuple:
    """Per source: (weighted sizes, immediate class, uniform allowed, modifier bits)."""
    key = (row.name, dest, enabled)
    found = _PLANS.get(key)
    if found is None:
        found = tuple(
            (
                _src_sizes(spec, dest, enabled),
                spec.imm,
                spec.uniform,
                ("abs" in spec.mods) | (("neg" in spec.mods) << 1),
            )
            for spec in row.srcs
        )
        _PLANS[key] = found
    return found


_DEST_SIZES: dict[tuple[str, tuple[int, ...]], tuple[int, ...]] = {}


def dest_sizes(row: Opcode, enabled: tuple[int, ...]) -> tuple[int, ...]:
    """Weighted destination sizes: 32 (or the row's only size) first and most often."""
    key = (row.name, enabled)
    found = _DEST_SIZES.get(key)
    if found is None:
        sizes = [s for s in row.dest_sizes if s in enabled] or list(row.dest_sizes)
        first = 32 if 32 in sizes else sizes[0]
        found = _DEST_SIZES[key] = (first, first) + tuple(s for s in sizes if s != first)
    return found


def row_attrs(row: Opcode) -> tuple:
    found = _ROW_ATTRS.get(row.name)
    if found is None:
        found = _ROW_ATTRS[row.name] = tuple((a.name, a.values) for a in row.attrs)
    return found


class Emitter:
    """Operand choice and instruction emitters over scoped pools (see the module doc)."""

    def __init__(self, source: ChoiceSource, features: Features):
        self.source = source
        self.below = source.below
        self.f = features
        self.sizes = (
            (16, 32, 64)
            if features.values16 and features.values64
            else ((16, 32) if features.values16 else ((32, 64) if features.values64 else (32,)))
        )
        self.alu_sizes = tuple(s for s in self.sizes if s != 64)
        # For "any size" choices: 32 first, so a 0 choice is the plain 32-bit case.
        self.any_sizes = (32,) + tuple(s for s in self.sizes if s != 32)
        self.pools: dict[int, list[Operand]] = {16: [], 32: [], 64: []}
        self.small: list[tuple[Operand, int]] = []  # 32-bit values with a known maximum
        self.addrs: list[tuple[Operand, Uniform, int, int]] = []  # base, buffer, max off, align
        self.cmps: list[Operand] = []  # icmp/fcmp results
        self.tids: list[Operand] = []  # 32-bit thread ids
        self.scalars: dict[int, list[Operand]] = {16: [], 32: [], 64: []}
        self.inputs: list[Uniform] = []
        self.output: Uniform | None = None
        self.sites_used = 0
        self.count = 0
        self.ins: list[Instruction] = []  # the current block's instructions
        self.use_imm = features.immediates
        self.use_mods = features.modifiers
        # Export slots no other export may write (the program builder moves the others off
        # them when it is done: fuzz.generate.observe), and the exports that own them.
        self.marked_slots: set[int] = set()
        self.marker_ins: set[int] = set()
        # A value read by nothing but the next phi sources of its size at the end of the
        # current block (an out-of-SSA copy is its last read; the program builder uses it).
        self.phi_offer: Operand | None = None

    # --- values ------------------------------------------------------------------------------
    def emit(self, row: Opcode, size: int, srcs: list, attrs: dict, sat: bool = False):
        """Appends an instruction; returns its destination operand (None without one)."""
        if not size:
            self.ins.append(Instruction(row, None, srcs, attrs, [], sat))
            return None
        self.count += 1
        value = Value(str(self.count), size)
        op = Operand(value)
        self.ins.append(Instruction(row, value, srcs, attrs, [], sat))
        self.pools[size].append(op)
        return op

    def new_value(self, size: int) -> tuple[Value, Operand]:
        self.count += 1
        value = Value(str(self.count), size)
        return value, Operand(value)

    def recent(self, pool: list):
        """0 picks the newest entry; otherwise newest-heavy."""
        n = len(pool)
        r = self.below(n + 4)
        return pool[n - 1 - (r if r < n else 0)] if r < 4 else pool[n - 1 - (r - 4)]

    def value(self, size: int) -> Operand:
        pool = self.pools[size]
        if pool:
            return self.recent(pool)
        return self.materialize(size)

    def materialize(self, size: int) -> Operand:
        """A fresh value of `size` where none is available: a small constant."""
        return self.emit(R["mov_imm"], size, [], {"value": self.below(16)})

    def imm8(self) -> Operand:
        r = self.below(24)
        return _IMM_OPS[_IMM8_TABLE[r] if r < 16 else self.below(256)]

    def fimm8(self) -> Operand:
        r = self.below(14)
        return _IMM_OPS[_FIMM8_TABLE[r] if r < 10 else self.below(256)]

    def operand(self, plan) -> Operand:
        sizes, imm, uniform_ok, mods = plan
        below = self.below
        # One draw decides the size, the kind of operand and the modifiers; 0 is the
        # preferred size, an immediate where allowed, no modifiers.
        n = len(sizes)
        r = below(n << 7)
        size = sizes[r % n]
        r //= n
        modifier = r >> 4
        r &= 15
        if r < 3 and imm is not None and self.use_imm:
            op = self.fimm8() if imm == FIMM8 else self.imm8()
        elif r < 5 and uniform_ok and self.scalars[size]:
            scalars = self.scalars[size]
            op = scalars[below(len(scalars))]
        else:
            pool = self.pools[size]
            if pool:
                op = self.recent(pool)
            elif imm is not None:
                op = self.fimm8() if imm == FIMM8 else self.imm8()
            else:
                op = self.materialize(size)
        if modifier >= 5 and mods and self.use_mods:
            use_abs = modifier != 6 and bool(mods & 1)
            use_neg = modifier != 5 and bool(mods & 2)
            if use_abs or use_neg:
                op = Operand(op.ref, use_abs, use_neg)
        return op

    def attrs(self, row: Opcode, dest: int) -> dict:
        below = self.below
        out = {}
        for name, values in row_attrs(row):
            out[name] = below(dest + 1) if name == "mask" else values[below(len(values))]
        return out

    def generic(self, row: Opcode, dest: int = 0, first: Operand | None = None):
        """Any row with ordinary sources; `dest` 0 draws the size."""
        if not dest:
            sizes = dest_sizes(row, self.sizes)
            dest = sizes[self.below(len(sizes))] if len(sizes) > 1 else sizes[0]
        srcs = [self.operand(plan) for plan in plans(row, dest, self.sizes)]
        if first is not None:
            srcs[0] = first
        sat = row.sat and self.use_mods and self.below(6) == 5
        return self.emit(row, dest, srcs, self.attrs(row, dest), sat)

    # --- bounded values (indices, amul/aadd operands) ------------------------------------------
    def tid(self) -> Operand:
        if self.tids:
            return self.tids[-1]
        op = self.emit(R["get_sr"], 32, [], {"sr": "thread_id"})
        self.tids.append(op)
        self.small.append((op, MAX_THREADS - 1))
        return op

    def masked(self, mask: int) -> Operand:
        """`and x, #mask` on a 16/32-bit value or uniform: at most mask (<= 255)."""
        plan = plans(R["bitop"], 32, self.sizes)[0]
        x = self.operand(plan)
        if x.is_immediate:
            x = self.value(32)
        op = self.emit(R["bitop"], 32, [x, _IMM_OPS[mask]], {"tt": 0x8})
        self.small.append((op, mask))
        return op

    def bounded(self, limit: int) -> tuple[Operand, int]:
        """A 32-bit-readable operand whose value is at most `limit` (>= 0), and its bound."""
        below = self.below
        top = min(limit, 255)
        r = below(6)
        if r == 0 or top < 1:
            k = below(top + 1)
            return _IMM_OPS[k], k
        if r == 1 and limit >= MAX_THREADS - 1:
            return self.tid(), MAX_THREADS - 1
        if r == 2 and self.small:
            small = self.small
            for i in range(len(small) - 1, max(len(small) - 8, 0) - 1, -1):
                if small[i][1] <= limit and below(2):
                    return small[i]
        if r == 3 and limit >= 2 * MAX_THREADS and self.f.int_arith:
            k = 1 + below(min(limit // MAX_THREADS - 1, 7))
            c = below(min(limit - (MAX_THREADS - 1) * k, 255) + 1)
            op = self.emit(R["imad"], 32, [self.tid(), _IMM_OPS[k], _IMM_OPS[c]], {"shift": 0})
            bound = (MAX_THREADS - 1) * k + c
            self.small.append((op, bound))
            return op, bound
        mask = (1 << below((top + 1).bit_length())) - 1
        return self.masked(mask), mask

    def bounded_value(self, limit: int) -> tuple[Operand, int]:
        """Like `bounded`, but never an immediate (for RAW sources)."""
        op, bound = self.bounded(limit)
        if op.is_immediate:
            mask = (1 << (min(limit, 255) + 1).bit_length() - 1) - 1
            op, bound = self.masked(mask), mask
        return op, bound

    # --- opcode families -------------------------------------------------------------------------
    def any_size(self) -> int:
        sizes = self.any_sizes
        return sizes[self.below(len(sizes))]

    def e_mov_imm(self):
        size = self.any_size()
        mask = (1 << size) - 1
        r = self.below(12)
        if r < 2:
            value = r
        elif r == 2:
            value = mask
        elif r == 3:
            value = 1 << (size - 1)
        elif r == 4:
            value = self.below(256)
        elif r == 5:
            value = mask - self.below(256)  # a small negative number
        elif r == 6:
            table = _FLOAT_BITS[size]
            value = table[self.below(len(table))]
        else:
            value = self.source.bits(size)
        return self.emit(R["mov_imm"], size, [], {"value": value})

    def e_get_sr(self):
        if 16 in self.sizes and self.below(3) == 2:
            return self.emit(R["get_sr"], 16, [], {"sr": "thread_id"})
        op = self.emit(R["get_sr"], 32, [], {"sr": "thread_id"})
        self.tids.append(op)
        self.small.append((op, MAX_THREADS - 1))
        return op

    def e_compare(self, floats: bool | None = None) -> Operand:
        """icmp or fcmp, with an operand drawn from the uniforms when the policy says so."""
        if floats is None:
            floats = self.f.floats and (not self.f.compares or self.below(3) == 2)
        row = R["fcmp"] if floats else R["icmp"]
        dest = 16 if 16 in self.sizes and self.below(3) == 2 else 32
        plan = plans(row, dest, self.sizes)
        srcs = [self.operand(plan[0]), self.operand(plan[1])]
        if self.f.uniform_operands and self.below(2):
            sizes = plan[0][0]
            scalars = self.scalars[sizes[self.below(len(sizes))]]
            if scalars:
                srcs[self.below(2)] = scalars[self.below(len(scalars))]
        op = self.emit(row, dest, srcs, self.attrs(row, dest))
        self.cmps.append(op)
        return op

    def compare_result(self) -> Operand:
        if self.cmps and self.below(3) == 2:
            return self.recent(self.cmps)
        return self.e_compare()

    def payload(self, size: int) -> Operand:
        """A select payload: RAW, exactly `size` bits, imm8 or uniform allowed."""
        if self.f.uniform_operands and self.below(3) == 2 and self.scalars[size]:
            scalars = self.scalars[size]
            return scalars[self.below(len(scalars))]
        return self.operand(((size,), "imm8", True, 0))

    def e_convert(self):
        below = self.below
        modes = ("u2f", "s2f", "f2u", "f2s", "f2f")
        mode = modes[below(5)] if self.f.floats else modes[below(2)]
        alu = self.alu_sizes
        dest = alu[below(len(alu))]
        if mode in ("u2f", "s2f"):
            options = self.sizes
        elif mode == "f2f":
            options = tuple(s for s in alu if s != dest)
            if not options:
                mode, options = "u2f", self.sizes
        else:
            options = alu
        src = self.operand(((options[below(len(options))],), None, True, 0))
        return self.emit(R["convert"], dest, [src], {"mode": mode})

    def e_amul(self):
        return self.address_arith(R["amul"])

    def e_aadd(self):
        return self.address_arith(R["aadd"])

    def address_arith(self, row: Opcode):
        """amul/aadd on bounded operands (rarely an unbounded one: may overflow, UB)."""
        a, bound_a = self.bounded(255)
        if self.below(50) == 0:
            a, bound_a = self.value(32), 1 << 32
        if self.use_imm and self.below(2):
            b = self.imm8()
            bound_b = b.ref.bits
        else:
            b, bound_b = self.bounded(255)
        if self.below(2):
            a, b = b, a
        op = self.emit(row, 32, [a, b], {})
        bound = bound_a * bound_b if row.name == "amul" else bound_a + bound_b
        if bound <= 0xFFFF:
            self.small.append((op, bound))
        return op

    def e_export(self):
        op = self.operand(((self.any_size(),), None, True, 0))
        return self.emit(R["export"], 0, [op], {"slot": self.below(8)})

    # --- memory ------------------------------------------------------------------------------------
    def address(self, buffer: Uniform) -> tuple[Operand, int, int]:
        """A computed 64-bit address into `buffer`: (operand, largest offset, alignment),
        shaped like what Mesa's address lowering matches (lea, iadd of u2u64(amul ...))."""
        below = self.below
        room = buffer.buffer_bytes // 2
        base = Operand(buffer)
        r = below(5)
        shift = below(5)
        if r == 0:
            index, bound = self.bounded_value(room >> shift)
            row = R["ulea"] if below(2) else R["ilea"]
            op = self.emit(row, 64, [base, index], {"shift": shift})
            return op, bound << shift, 1 << shift
        if r == 1:
            index, bound = self.bounded(room >> shift)
            if self.use_mods and below(2) and not index.is_immediate:
                index = Operand(index.ref, True, False)
            op = self.emit(R["iadd"], 64, [base, index], {"shift": shift})
            if index.is_immediate:
                return op, bound << shift, _lowbit(bound << shift)
            return op, bound << shift, 1 << shift
        if r == 2 or r == 3:
            scale = 1 << shift
            index, bound = self.bounded(min(255, room // scale))
            offset = self.emit(R["amul"], 32, [index, _IMM_OPS[scale]], {})
            bound *= scale
            align = scale
            if r == 3:
                extra = 4 * below(16)
                offset = self.emit(R["aadd"], 32, [_IMM_OPS[extra], offset], {})
                bound += extra
                align = min(scale, _lowbit(extra))
        else:
            offset, bound = self.bounded_value(min(255, room))
            align = 1
        widen = R["u2u64"] if r != 4 or below(2) else R["i2i64"]
        wide = self.emit(widen, 64, [offset], {})
        op = self.emit(R["iadd"], 64, [base, wide], {"shift": 0})
        return op, bound, align

    def e_address(self):
        if not self.inputs:
            return self.generic(R["ulea"])
        buffer = self.inputs[self.below(len(self.inputs))]
        op, bound, align = self.address(buffer)
        self.addrs.append((op, buffer, bound, align))
        return op

    def e_load(self):
        below = self.below
        if not self.inputs:
            return self.e_get_sr()
        name, nbytes, log2 = FORMATS[below(3)]
        dest = 32 if nbytes == 4 or 16 not in self.sizes or below(2) else 16
        shift = below(3)
        stride = nbytes << shift
        r = below(4) if self.f.address_math else 0
        base = None
        if r == 1 and self.addrs:
            entry = self.addrs[len(self.addrs) - 1 - below(min(len(self.addrs), 4))]
            op, buffer, offset, align = entry
            if align >= nbytes and offset + nbytes <= buffer.buffer_bytes:
                base = op
        elif r == 2:
            buffer = self.inputs[below(len(self.inputs))]
            op, offset, align = self.address(buffer)
            self.addrs.append((op, buffer, offset, align))
            if align >= nbytes:
                base = op
        if base is None:
            buffer = self.inputs[below(len(self.inputs))]
            base, offset = Operand(buffer), 0
        limit = (buffer.buffer_bytes - offset - nbytes) // stride
        index, _ = self.bounded(limit)
        if self.use_mods and below(3) == 2:
            index = Operand(index.ref, True, False)
        return self.emit(R["device_load"], dest, [base, index], {"fmt": name, "shift": shift})

    def e_store(self):
        """A store to this site's own slot: thread_id * SITES + site (4-byte slots)."""
        if self.output is None or self.sites_used >= SITES:
            return self.e_export() if self.f.exports else None
        size = 16 if 16 in self.sizes and self.below(3) == 2 else 32
        options = FORMATS if size == 32 else FORMATS[1:]
        value = self.operand(((size,), None, True, 0))
        return self.store(value, options[self.below(len(options))])

    def store_whole(self, op: Operand) -> bool:
        """Stores `op` (16 or 32 bits) in its whole width to the next site, if one is free.
        The address arithmetic stays out of the pools: the newest values, which later
        instructions and phi sources mostly read, remain the program's own."""
        if self.output is None or self.sites_used >= SITES or op.ref.size == 64:
            return False
        pools = self.pools
        lengths = [(pools[size], len(pools[size])) for size in (32, 64)]
        self.store(op, FORMATS[0] if op.ref.size == 32 else FORMATS[1])
        for pool, length in lengths:
            del pool[length:]
        return True

    def store(self, value: Operand, fmt: tuple):
        """`value` stored in format `fmt` (of FORMATS) to the next site (one must be free)."""
        below = self.below
        site = self.sites_used
        self.sites_used += 1
        name, nbytes, log2 = fmt
        base = Operand(self.output)
        tid = self.tid()
        r = below(4)
        shift = 2 - log2
        if r == 0:
            index = self.emit(R["imad"], 32, [tid, _IMM_OPS[SITES], _IMM_OPS[site]], {"shift": 0})
        elif r == 1:
            index = self.emit(R["iadd"], 32, [_IMM_OPS[site], tid], {"shift": 3})
        elif r == 2:
            base = self.emit(R["ulea"], 64, [base, tid], {"shift": 5})
            index = _IMM_OPS[site]
        else:
            scale = SLOT_BYTES // nbytes
            index = self.emit(R["imad"], 32, [tid, _IMM_OPS[SITES * scale], _IMM_OPS[site * scale]],
                              {"shift": 0})  # fmt: skip
            shift = 0
        if self.use_mods and below(2) and not index.is_immediate:
            index = Operand(index.ref, True, False)
        return self.emit(R["device_store"], 0, [value, base, index], {"fmt": name, "shift": shift})
