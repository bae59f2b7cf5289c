"""Address-heavy generation: arrays and arrays of structs behind NIR-style address math.

Mesa's AGX address lowering (seed 001, design notes section 7) looks for 64-bit address
arithmetic of a few shapes and folds it into the load/store addressing mode
`base64 + (ext64(index32) << (log2 bytes + shift))`. This module makes programs contain those
shapes often, and their near misses:

* relaxed GL/VK math: `base + u2u64(amul(i, #2^s))`, `base + u2u64(amul(i, #c))`,
  `base + u2u64(aadd(#field, amul(i, #stride)))` (either operand order), `amul(amul(i, #b),
  #c)` chains;
* shifts as NIR lowers them: `bfi #0, x, #s`, `iadd #0, x shift=s`, `imul x, #2^s`;
* the same with plain 32-bit `iadd`/`imul`, which may wrap (a pass must not promote them):
  some wrap on every input, some only for some inputs (an index plus `u & 0x80000000`) or
  threads (`bfi #0, tid, #31`), and the wrapped-away high bit never reaches the address;
* CL-style 64-bit math: `base + imul64(u2u64 i, #c)`, `bfi64 #0, w, #s`, `iadd base, w
  shift=s`, and `iadd64` of a base and a 32-bit offset (implicit sign/zero extension);
* `ulea`/`ilea` written directly, with every shift that divides the stride (so also shifts
  below the format's, which must not fold);
* sign extension for real: `ilea`/`i2i64`/a sign-extended load index with negative element
  indices into the middle of an array (base = array + half its size);
* zero extension for real: an index with the high bit set (`iadd e, #0x80000000`) against
  a base 2^31 << s below the array, through `ulea`, `u2u64` or a `.abs` load index;
* field offsets as a trailing `iadd addr, #K` or as the load/store's immediate index;
* the already-fused form: a buffer uniform base and an index operand with fmt and shift.

Every access stays in bounds for up to `MAX_THREADS` threads whatever the inputs: each array
knows its element count and every index form has a known range within it; amul/aadd
operands stay far below INT32_MAX. Stores go only to output arrays, each thread to the
elements it owns (`tid * k + j`, j < k), so there are no races; outputs are never loaded.

`AddressEmitter` adds this to `operations.Emitter`; `program_table` is the emitter table of
a program with the address emitters included.
"""

from __future__ import annotations

import functools

from agxir.ir import Immediate, Operand, Uniform
from agxir.opcodes import OPCODES
from fuzz.generate.choices import ChoiceSource, Weighted
from fuzz.generate.families import emitter_pairs
from fuzz.generate.features import Features
from fuzz.generate.operations import (
    FORMATS,
    IMM0,
    MAX_THREADS,
    SITES,
    SLOT_BYTES,
    Emitter,
    immediate,
)

__all__ = ["AddressEmitter", "Array", "program_table", "ARRAY_BYTES"]

R = OPCODES
H = 1 << 31  # the 32-bit sign bit
M32 = (1 << 32) - 1
M64 = (1 << 64) - 1
ARRAY_BYTES = 48  # choice bytes of the array declarations of an address-heavy program
# Struct strides; 12 and 24 (not powers of two) twice as often.
STRUCT_STRIDES = (12, 24, 4, 8, 16, 12, 24)
INPUT_COUNTS = (64, 128, 256, 512)
START_OFFSETS = (0, 0, 64, 256)  # bytes before element 0 inside the buffer
OWNED = (1, 1, 2, 4)  # output elements per thread
_FACTORS = {4: (2, 2), 8: (2, 4), 12: (3, 4), 16: (4, 4), 24: (3, 8), 6: (2, 3)}


def _ctz(value: int) -> int:
    return (value & -value).bit_length() - 1


def _lowbit(value: int) -> int:
    return value & -value if value else 1 << 16


class Array:
    """`count` elements of `stride` bytes from byte `start` of `buffer`; `fields` are
    (offset, format, bytes), naturally aligned. `owned` > 0 marks an output array whose
    thread t writes only elements t * owned .. t * owned + owned - 1."""

    __slots__ = ("buffer", "stride", "count", "start", "fields", "owned")

    def __init__(self, buffer, stride, count, start, fields, owned=0):
        self.buffer: Uniform = buffer
        self.stride: int = stride
        self.count: int = count
        self.start: int = start
        self.fields: tuple[tuple[int, str, int], ...] = fields
        self.owned: int = owned

    @property
    def size_bytes(self) -> int:
        return self.start + self.count * self.stride


def layout(source: ChoiceSource) -> tuple[int, tuple[tuple[int, str, int], ...]]:
    """A plain array of one format, or a struct of naturally aligned fields: (stride,
    fields). A 0 choice is a plain i32 array."""
    below = source.below
    r = below(8)
    if r < 3:
        name, nbytes, _ = FORMATS[r]
        return nbytes, ((0, name, nbytes),)
    stride = STRUCT_STRIDES[below(len(STRUCT_STRIDES))]
    fields, pos = [], 0
    while pos < stride:
        options = [f for f in FORMATS if pos % f[1] == 0 and pos + f[1] <= stride]
        name, nbytes, _ = options[below(len(options))]
        fields.append((pos, name, nbytes))
        pos += nbytes
    return stride, tuple(fields)


class AddressEmitter(Emitter):
    """`Emitter` plus array declarations, index forms and the address shapes."""

    def __init__(self, source: ChoiceSource, features: Features):
        super().__init__(source, features)
        self.counters: list[tuple[Operand, int]] = []  # bounded loop counters (scoped)
        self.in_arrays: list[Array] = []
        self.out_arrays: list[Array] = []
        self.am = features.address_math
        self.next_slot = 0  # export slot of the next exported load (address-heavy)
        self.shape_table = _shape_table(features)

    # --- declarations ---------------------------------------------------------------------
    def declare_arrays(self, uniforms: list[Uniform]) -> None:
        """Address-heavy programs: input arrays sized for the indices they get, output
        arrays of `owned` elements per thread, and a 32-bit scalar for input-driven wraps."""
        f = self.f
        if not f.address_heavy:
            return
        source = self.source.frame(ARRAY_BYTES)
        below = source.below
        if f.loads:
            for _ in range(1 + below(3)):
                stride, fields = layout(source)
                count = INPUT_COUNTS[below(len(INPUT_COUNTS))]
                start = START_OFFSETS[below(len(START_OFFSETS))]
                buffer = Uniform(f"u{len(uniforms)}", 64, buffer_bytes=start + count * stride)
                uniforms.append(buffer)
                self.inputs.append(buffer)
                self.in_arrays.append(Array(buffer, stride, count, start, fields))
        if f.stores:
            for _ in range(1 + below(2)):
                stride, fields = layout(source)
                owned = OWNED[below(len(OWNED))]
                start = 32 * below(2)
                count = MAX_THREADS * owned
                buffer = Uniform(f"u{len(uniforms)}", 64, buffer_bytes=start + count * stride)
                uniforms.append(buffer)
                self.out_arrays.append(Array(buffer, stride, count, start, fields, owned))
        if f.uniforms and not self.scalars[32] and below(2):
            uniform = Uniform(f"u{len(uniforms)}", 32)
            uniforms.append(uniform)
            self.scalars[32].append(Operand(uniform))

    def input_array(self) -> Array | None:
        """A declared input array, or a struct view of an input buffer (made on demand)."""
        below = self.below
        arrays = self.in_arrays
        if arrays and (below(4) or not self.inputs):
            return arrays[len(arrays) - 1 - below(len(arrays))]
        if not self.inputs:
            return None
        buffer = self.inputs[below(len(self.inputs))]
        stride, fields = layout(self.source)
        count = buffer.buffer_bytes // stride
        view = Array(buffer, stride, count, 0, fields)
        arrays.append(view)
        return view

    # --- constants and small helpers ---------------------------------------------------------
    def const32(self, value: int) -> Operand:
        value &= M32
        return (
            immediate(value) if value < 256 else self.emit(R["mov_imm"], 32, [], {"value": value})
        )

    def const64(self, value: int) -> Operand:
        value &= M64
        return (
            immediate(value) if value < 256 else self.emit(R["mov_imm"], 64, [], {"value": value})
        )

    def add64(self, a: Operand, b: Operand, shift: int = 0) -> Operand:
        """iadd 64; the base first, except now and then (the rules are commutative)."""
        if not shift and self.below(4) == 3:
            a, b = b, a
        return self.emit(R["iadd"], 64, [a, b], {"shift": shift})

    def op32(self, name: str, a: Operand, b: Operand, **attrs) -> Operand:
        """A commutative 32-bit op, operands now and then swapped (never a `.neg` into a)."""
        if not attrs.get("shift") and not b.neg and self.below(3) == 2:
            a, b = b, a
        if name == "iadd":
            attrs.setdefault("shift", 0)
        return self.emit(R[name], 32, [a, b], attrs)

    def widen(self, op: Operand, signed: bool) -> Operand:
        """A 32-bit value as a 64-bit addend: u2u64/i2i64, or (without address math, or
        now and then) the 32-bit value itself, sign-extended by the reader or `.abs`."""
        if self.am and self.below(5):
            return self.emit(R["i2i64" if signed else "u2u64"], 64, [op], {})
        if not signed and self.use_mods:
            return Operand(op.ref, True, False)
        return op

    def shift32(self, x: Operand, s: int) -> Operand:
        """x << s in 32 bits the ways NIR/AGX write it (all wrap)."""
        r = self.below(4)
        if r == 0:
            mask = 0 if self.below(2) else 32 - s
            return self.emit(R["bfi"], 32, [IMM0, x, immediate(s)], {"mask": mask})
        if r == 1 and s <= 4:
            return self.emit(R["iadd"], 32, [IMM0, x], {"shift": s})
        return self.op32("imul", x, immediate(1 << s))

    def mul32(self, e: Operand, c: int, relaxed: bool) -> Operand:
        """e * c: amul (sometimes a chain of two) when relaxed, else a plain form."""
        if c == 1:
            return e
        if relaxed:
            pair = _FACTORS.get(c)
            if pair is not None and self.below(4) == 0:
                b, d = pair if self.below(2) else pair[::-1]
                return self.op32("amul", self.op32("amul", e, immediate(b)), immediate(d))
            return self.op32("amul", e, self.const32(c))
        if c & (c - 1) == 0 and self.below(2):
            return self.shift32(e, _ctz(c))
        if self.below(4) == 0 and c < 256:
            return self.emit(R["imad"], 32, [e, immediate(c), IMM0], {"shift": 0})
        return self.op32("imul", e, self.const32(c))

    def affine32(self, e: Operand, m: int, c: int, relaxed: bool) -> Operand:
        """e * m + c (relaxed: amul/aadd; else imad or imul+iadd)."""
        if not relaxed and m > 1 and c and m < 256 and c < 256 and self.below(2):
            return self.emit(R["imad"], 32, [e, immediate(m), immediate(c)], {"shift": 0})
        off = self.mul32(e, m, relaxed)
        if c:
            off = self.op32("aadd" if relaxed else "iadd", self.const32(c), off)
        return off

    # --- element indices ---------------------------------------------------------------------
    def tid_affine(self, k: int, c: int) -> tuple[Operand, int]:
        """thread_id * k + c in one of its forms, and its largest value."""
        tid = self.tid()
        bound = (MAX_THREADS - 1) * k + c
        if k == 1 and c == 0:
            return tid, bound
        r = self.below(4)
        if r == 0 and k < 256 and c < 256:
            op = self.emit(R["imad"], 32, [tid, immediate(k), immediate(c)], {"shift": 0})
        elif r == 1 and k & (k - 1) == 0 and k <= 16 and c < 256:
            op = self.emit(R["iadd"], 32, [immediate(c), tid], {"shift": _ctz(k)})
        else:
            op = self.affine32(tid, k, c, self.am and r == 2)
        self.small.append((op, bound))
        return op, bound

    def element(self, array: Array) -> tuple[Operand, int]:
        """A 32-bit element index of `array` (a value, never an immediate) and its maximum:
        for an output array one the thread owns, else any in range."""
        below = self.below
        if array.owned:
            k = array.owned
            return self.tid_affine(k, below(k))
        hi = array.count - 1
        r = below(6)
        if r == 0 and hi >= MAX_THREADS - 1:
            return self.tid(), MAX_THREADS - 1
        if r == 1 and hi >= MAX_THREADS - 1:
            k = 1 + below(min(hi // (MAX_THREADS - 1), 8))
            c = below(min(hi - (MAX_THREADS - 1) * k, 255) + 1)
            return self.tid_affine(k, c)
        if r == 2 and self.counters:
            counter, bound = self.counters[len(self.counters) - 1 - below(len(self.counters))]
            if bound + MAX_THREADS - 1 <= hi and below(2):
                op = self.op32("iadd", self.tid(), counter)
                return op, bound + MAX_THREADS - 1
            if bound <= hi:
                return counter, bound
        if r == 3 and self.small:
            small = self.small
            for i in range(len(small) - 1, max(len(small) - 8, 0) - 1, -1):
                if small[i][1] <= hi and below(2):
                    return small[i]
        mask = (1 << below(min(hi + 1, 256).bit_length())) - 1
        return self.masked(mask), mask

    # --- the accesses ------------------------------------------------------------------------
    def e_array_load(self):
        below = self.below
        array = self.input_array()
        if array is None:
            return self.e_get_sr()
        fo, name, nbytes = array.fields[below(len(array.fields))]
        e, hi = self.element(array)
        base, index, shift = self.pick_shape(array, fo, nbytes, e, hi)
        dest = 32 if nbytes == 4 or 16 not in self.sizes or below(2) else 16
        if index is IMM0 and not isinstance(base.ref, Uniform):
            disp = array.start + fo
            align = min(_lowbit(array.stride), _lowbit(disp))
            self.addrs.append((base, array.buffer, disp + hi * array.stride, align))
        loaded = self.emit(R["device_load"], dest, [base, index], {"fmt": name, "shift": shift})
        if self.f.address_heavy and self.f.exports and below(2):
            # Observable: a wrong address that lands in bounds still changes an output.
            self.emit(R["export"], 0, [loaded], {"slot": self.next_slot})
            self.next_slot = (self.next_slot + 1) & 7
        return loaded

    def e_array_store(self):
        below = self.below
        if self.out_arrays and (self.output is None or below(4)):
            array = self.out_arrays[below(len(self.out_arrays))]
            fo, name, nbytes = array.fields[below(len(array.fields))]
        elif self.output is not None:
            # The plain output buffer as an array of per-thread structs of SITES slots.
            array = Array(self.output, SITES * SLOT_BYTES, MAX_THREADS, 0, (), 1)
            site = self.sites_used if self.sites_used < SITES else below(SITES)
            self.sites_used = min(self.sites_used + 1, SITES)
            name, nbytes, _ = FORMATS[below(3)]
            fo = site * SLOT_BYTES + nbytes * below(SLOT_BYTES // nbytes)
        else:
            return self.e_export() if self.f.exports else None
        size = 32 if nbytes == 4 or 16 not in self.sizes or below(3) else 16
        value = self.operand(((size,), None, True, 0))
        e, hi = self.element(array)
        base, index, shift = self.pick_shape(array, fo, nbytes, e, hi)
        return self.emit(R["device_store"], 0, [value, base, index], {"fmt": name, "shift": shift})

    def pick_shape(self, array, fo, nbytes, e, hi):
        """(base, index, shift) addressing byte start + e * stride + fo of the buffer."""
        shape = self.source.pick(self.shape_table)
        found = shape(self, array, array.start + fo, nbytes, e, hi)
        return found if found is not None else self.s_fused(array, array.start + fo, nbytes, e, hi)

    def finish(self, addr: Operand, disp: int, nbytes: int):
        """Adds the remaining displacement: `iadd addr, #K` or the access's immediate index."""
        if not disp:
            return addr, IMM0, 0
        units = [
            s for s in range(3) if disp % (nbytes << s) == 0 and disp // (nbytes << s) < 0x8000
        ]
        if units and self.below(2):
            s = units[self.below(len(units))]
            return addr, immediate(disp // (nbytes << s)), s
        return self.add64(addr, self.const64(disp)), IMM0, 0

    def lea_shift(self, stride: int) -> int:
        """A shift s with 2^s dividing the stride, 0..4; the largest most often."""
        top = min(_ctz(stride), 4)
        return top if self.below(2) else self.below(top + 1)

    # --- the shapes: each returns (base, index, shift), or None when it does not apply -----
    def s_fused(self, a: Array, disp, nbytes, e, hi):
        """Buffer base (or base + field) and the element index in the access itself."""
        below = self.below
        shifts = [s for s in range(3) if a.stride % (nbytes << s) == 0]
        sh = shifts[below(len(shifts))]
        unit = nbytes << sh
        m = a.stride // unit
        relaxed = self.am and below(2) == 1
        if disp % unit == 0 and below(2):
            index, base = self.affine32(e, m, disp // unit, relaxed), Operand(a.buffer)
        else:
            index = self.mul32(e, m, relaxed)
            base = self.add64(Operand(a.buffer), self.const64(disp)) if disp else Operand(a.buffer)
        if self.use_mods and below(3) == 2:
            index = Operand(index.ref, True, False)
        return base, index, sh

    def s_relaxed(self, a: Array, disp, nbytes, e, hi):
        """base + u2u64(amul(e, #stride)), with the field as aadd(#f, ...) or left over."""
        below = self.below
        if self.tids and e is self.tids[-1] and 16 in self.sizes and below(8) == 0:
            e = self.emit(R["get_sr"], 16, [], {"sr": "thread_id"})  # a 16-bit amul source
        off = self.mul32(e, a.stride, True)
        if disp and below(5) >= 3:
            off, disp = self.op32("aadd", self.const32(disp), off), 0
        wide = self.emit(R["u2u64"], 64, [off], {})
        return self.finish(self.add64(Operand(a.buffer), wide), disp, nbytes)

    def s_plain(self, a: Array, disp, nbytes, e, hi):
        """The same with plain imul/iadd (no wrap here) and any extension."""
        below = self.below
        fold = disp if below(2) else 0
        off = self.affine32(e, a.stride, fold, False)
        wide = self.widen(off, bool(below(2)))
        return self.finish(self.add64(Operand(a.buffer), wide), disp - fold, nbytes)

    def s_shift(self, a: Array, disp, nbytes, e, hi):
        """base + ext64(x << s) with the shift as bfi / iadd shift / imul / amul."""
        below = self.below
        top = _ctz(a.stride)
        if not top:
            return None
        s = 1 + below(top)
        e1 = self.mul32(e, a.stride >> s, self.am and bool(below(2)))
        if self.am and below(4) == 0:
            off = self.op32("amul", e1, immediate(1 << s))
        else:
            off = self.shift32(e1, s)
        if disp and below(3) == 0:
            off, disp = self.op32("iadd", self.const32(disp), off), 0
        wide = self.widen(off, bool(below(3) == 0))
        return self.finish(self.add64(Operand(a.buffer), wide), disp, nbytes)

    def s_lea(self, a: Array, disp, nbytes, e, hi):
        """ulea/ilea(base, e * (stride >> s) [+ field >> s], s) for any s dividing the stride."""
        below = self.below
        s = self.lea_shift(a.stride)
        m = a.stride >> s
        base = Operand(a.buffer)
        c = 0
        if disp % (1 << s) == 0 and below(2):
            c, disp = disp >> s, 0
        elif disp and below(2):
            base, disp = self.add64(base, self.const64(disp)), 0
        index = self.affine32(e, m, c, bool(below(2)))
        row = R["ulea"] if below(3) else R["ilea"]
        return self.finish(self.emit(row, 64, [base, index], {"shift": s}), disp, nbytes)

    def s_wide(self, a: Array, disp, nbytes, e, hi):
        """CL style: the index extended first, then 64-bit multiply / shift / shifted iadd."""
        below = self.below
        w = self.widen(e, bool(below(3) == 0))
        stride = a.stride
        base = Operand(a.buffer)
        r = below(3)
        if stride & (stride - 1) == 0 and r < 2:
            s = _ctz(stride)
            if r == 0 and s <= 4:
                return self.finish(self.add64(base, w, s), disp, nbytes)
            mask = 0 if below(2) else 64 - s
            off = self.emit(R["bfi"], 64, [IMM0, w, immediate(s)], {"mask": mask})
        else:
            off = self.emit(R["imul"], 64, [w, self.const32(stride)], {})
        return self.finish(self.add64(base, off), disp, nbytes)

    def s_negative(self, a: Array, disp, nbytes, e, hi):
        """Signed element indices e - count/2 against the middle of the array."""
        below = self.below
        half = a.count // 2
        if half < 256 and self.use_mods and below(2):
            ec = self.op32("iadd", e, Operand(Immediate(half), False, True))
        else:
            ec = self.op32("iadd", e, self.const32(-half))  # wraps for e >= half
        stride = a.stride
        mid = half * stride  # disp holds the start
        r = below(4)
        if r == 0 and self.am:
            s = self.lea_shift(stride)
            m = stride >> s
            index = ec if m == 1 else self.mul32(ec, m, False)
            base = self.add64(Operand(a.buffer), self.const64(mid + disp))
            return self.emit(R["ilea"], 64, [base, index], {"shift": s}), IMM0, 0
        if r == 3:
            shifts = [s for s in range(3) if stride % (nbytes << s) == 0]
            sh = shifts[below(len(shifts))]
            index = self.mul32(ec, stride // (nbytes << sh), False)
            base = self.add64(Operand(a.buffer), self.const64(mid + disp))
            return base, index, sh
        midop = self.add64(Operand(a.buffer), self.const64(mid))
        if r == 1 and stride & (stride - 1) == 0 and stride <= 16:
            return self.finish(self.add64(midop, ec, _ctz(stride)), disp, nbytes)
        off = self.mul32(ec, stride, False)
        if disp and below(2):
            off, disp = self.op32("iadd", self.const32(disp), off), 0
        return self.finish(self.add64(midop, self.widen(off, True)), disp, nbytes)

    def s_high(self, a: Array, disp, nbytes, e, hi):
        """An index with the high bit set, zero-extended, against a base 2^31 << s below the
        array: through ulea, u2u64, `iadd base, index.abs shift=s` or the access's index.abs."""
        below = self.below
        am, mods = self.am, self.use_mods
        if not (am or mods):
            return None
        r = below(4)
        in_access = r == 3 and mods
        if in_access:
            shifts = [s for s in range(3) if a.stride % (nbytes << s) == 0]
            sh = shifts[below(len(shifts))]
            s = _ctz(nbytes) + sh
        else:
            s = self.lea_shift(a.stride)
        e1 = self.mul32(e, a.stride >> s, am and bool(below(2)))
        index = self.op32("iadd", e1, self.const32(H))
        base_disp, disp = (disp, 0) if below(2) else (0, disp)
        base = self.add64(Operand(a.buffer), self.const64(base_disp - (H << s)))
        if in_access:
            if disp:
                base = self.add64(base, self.const64(disp))
            return base, Operand(index.ref, True, False), sh
        if am and (r == 0 or s or not mods):
            addr = self.emit(R["ulea"], 64, [base, index], {"shift": s})
        elif am and r == 1:
            addr = self.add64(base, self.emit(R["u2u64"], 64, [index], {}))
        else:
            addr = self.add64(base, Operand(index.ref, True, False), s)
        return self.finish(addr, disp, nbytes)

    def s_wrap(self, a: Array, disp, nbytes, e, hi):
        """Plain 32-bit math through a value with the high bit maybe set, wrapped away: on
        every input (a constant), for some inputs (`u & 0x80000000`) or some threads."""
        below = self.below
        r = below(3)
        scalars = self.scalars[32]
        if r == 1 and scalars:
            u = scalars[below(len(scalars))]
            high = self.emit(R["bitop"], 32, [u, self.const32(H)], {"tt": 0x8})
        elif r == 2:
            high = self.emit(R["bfi"], 32, [IMM0, self.tid(), immediate(31)], {"mask": 1})
        else:
            high = self.const32(H)
        x = self.op32("iadd", e, high)
        stride = a.stride
        even = stride % 2 == 0
        r = below(6)
        if r < 3 and even:
            off = self.op32("imul", x, self.const32(stride))  # (e + h) * even == e * even
        elif r == 3 and even:
            s = _ctz(stride)
            off = self.mul32(self.shift32(x, s), stride >> s, False)
        elif r == 4 and even and self.am:
            s = below(min(_ctz(stride), 5))  # stride >> s stays even
            index = self.op32("imul", x, self.const32(stride >> s))
            row = R["ulea"] if below(2) else R["ilea"]
            addr = self.emit(row, 64, [Operand(a.buffer), index], {"shift": s})
            return self.finish(addr, disp, nbytes)
        else:
            back = self.op32("iadd", x, high)  # e + 2h == e (mod 2^32)
            off = self.mul32(back, stride, False)
        if disp and below(2):
            off, disp = self.op32("iadd", self.const32(disp), off), 0
        wide = self.widen(off, bool(below(2)))
        return self.finish(self.add64(Operand(a.buffer), wide), disp, nbytes)


E = AddressEmitter
SHAPES = {
    "fused": (E.s_fused, 3, False),
    "relaxed": (E.s_relaxed, 7, True),
    "plain": (E.s_plain, 2, False),
    "shift": (E.s_shift, 2, False),
    "lea": (E.s_lea, 3, True),
    "wide": (E.s_wide, 2, False),
    "negative": (E.s_negative, 4, False),
    "high": (E.s_high, 3, False),
    "wrap": (E.s_wrap, 5, False),
}


@functools.lru_cache(maxsize=64)
def _shape_table(features: Features) -> Weighted:
    """The address shapes; a 0 choice is the already-fused form."""
    return Weighted([(fn, w) for fn, w, am in SHAPES.values() if features.address_math or not am])


@functools.lru_cache(maxsize=256)
def program_table(features: Features) -> Weighted:
    """The emitter table of a program: `families.emitter_pairs` plus the array accesses,
    which dominate the memory accesses of an address-heavy program."""
    f = features
    on = f.address and (f.loads or f.stores)
    heavy = 12 if f.address_heavy else 1
    pairs = emitter_pairs(f)
    if on:
        pairs = pairs + [
            (E.e_array_load, 3 * heavy * f.loads),
            (E.e_array_store, 1 * heavy * f.stores),
        ]
    return Weighted(pairs)
