"""The machine-level rows of the opcode table: exec-mask control flow and parallel copies.

AGX runs a whole wave on one program counter. Each lane has a 16-bit nesting counter in
r0l, and after every instruction below the lane is active exactly when r0l == 0. The
update rules are the hardware's (dougallj/applegpu, quoted in Mesa commit 41b78916), with
`c = cond(a, b) XOR inv`:

    if_*cmp n:    if r0l != 0: r0l += n      elif !c: r0l = 1
    else_*cmp n:  if r0l == 0: r0l = n       elif r0l == 1: r0l = c ? 0 : 1
    while_*cmp n: if r0l < n:  r0l = c ? 0 : n
    pop_exec n:   r0l = max(0, r0l - n)
    push_exec n:  if_fcmp #0.0, #0.0, eq, n  (always true: inactive lanes get +n)
    break n:      active lanes: r0l = n      (AGX: mov_imm r0l, n; pop_exec 0)

Each rule is written once here, against the bit-vector interface (`agxir.opcodes.bitvectors`),
as `update(m, ins, r0l) -> r0l`; the condition is the SSA branch's own semantics. These rows
exist only at the exec, vreg and machine levels (`opcodes_for_level`); at the SSA level
`if_icmp` is still the two-target terminator.
"""

from __future__ import annotations

from collections.abc import Callable

from agxir.opcodes import effects
from agxir.opcodes.spec import INT, Attr, Opcode
from agxir.opcodes.table import FCOND, ICOND, INVERT, OPCODES, compare_srcs

NEST = Attr("n", range(1 << 16))
R0L_BITS = 16


def _counter_if(m, r0l, c, n: int):
    zero = m.const(0, R0L_BITS)
    active = m.eq(r0l, zero, R0L_BITS)
    entered = m.select(c, zero, m.const(1, R0L_BITS), R0L_BITS)
    return m.select(active, entered, m.add(r0l, m.const(n, R0L_BITS), R0L_BITS), R0L_BITS)


def if_icmp(m, ins, r0l):
    return _counter_if(m, r0l, effects.if_icmp(m, ins), ins.attrs["n"])


def if_fcmp(m, ins, r0l):
    return _counter_if(m, r0l, effects.if_fcmp(m, ins), ins.attrs["n"])


def _counter_else(m, r0l, c, n: int):
    zero, one = m.const(0, R0L_BITS), m.const(1, R0L_BITS)
    flipped = m.select(c, zero, one, R0L_BITS)
    waiting = m.select(m.eq(r0l, one, R0L_BITS), flipped, r0l, R0L_BITS)
    return m.select(m.eq(r0l, zero, R0L_BITS), m.const(n, R0L_BITS), waiting, R0L_BITS)


def else_icmp(m, ins, r0l):
    return _counter_else(m, r0l, effects.if_icmp(m, ins), ins.attrs["n"])


def else_fcmp(m, ins, r0l):
    return _counter_else(m, r0l, effects.if_fcmp(m, ins), ins.attrs["n"])


def _counter_while(m, r0l, c, n: int):
    nest = m.const(n, R0L_BITS)
    again = m.select(c, m.const(0, R0L_BITS), nest, R0L_BITS)
    return m.select(m.ult(r0l, nest, R0L_BITS), again, r0l, R0L_BITS)


def while_icmp(m, ins, r0l):
    return _counter_while(m, r0l, effects.if_icmp(m, ins), ins.attrs["n"])


def while_fcmp(m, ins, r0l):
    return _counter_while(m, r0l, effects.if_fcmp(m, ins), ins.attrs["n"])


def pop_exec(m, ins, r0l):
    nest = m.const(ins.attrs["n"], R0L_BITS)
    below = m.ult(r0l, nest, R0L_BITS)
    return m.select(below, m.const(0, R0L_BITS), m.sub(r0l, nest, R0L_BITS), R0L_BITS)


def push_exec(m, ins, r0l):
    always = m.eq(m.const(0, R0L_BITS), m.const(0, R0L_BITS), R0L_BITS)
    return _counter_if(m, r0l, always, ins.attrs["n"])


def break_(m, ins, r0l):
    active = m.eq(r0l, m.const(0, R0L_BITS), R0L_BITS)
    return m.select(active, m.const(ins.attrs["n"], R0L_BITS), r0l, R0L_BITS)


def _no_value(m, ins, r0l=None):
    return r0l


def _compare_row(name: str, kind: str, update: Callable, summary: str) -> Opcode:
    cond = ICOND if kind == INT else FCOND
    return Opcode(name, summary, compare_srcs(kind), None, update, (cond, INVERT, NEST),
                  pure=False)


MACHINE_ROWS: tuple[Opcode, ...] = (
    _compare_row("if_icmp", INT, if_icmp, "enter: r0l==0 stays active where c, else r0l=1; inactive +n"),
    _compare_row("if_fcmp", "float", if_fcmp, "enter: r0l==0 stays active where c, else r0l=1; inactive +n"),
    _compare_row("else_icmp", INT, else_icmp, "active lanes r0l=n; lanes at 1 become active where c"),
    _compare_row("else_fcmp", "float", else_fcmp, "active lanes r0l=n; lanes at 1 become active where c"),
    _compare_row("while_icmp", INT, while_icmp, "lanes below n: active again where c, else r0l=n"),
    _compare_row("while_fcmp", "float", while_fcmp, "lanes below n: active again where c, else r0l=n"),
    Opcode("pop_exec", "r0l = max(0, r0l - n)", (), None, pop_exec, (NEST,), pure=False),
    Opcode("push_exec", "if_fcmp #0, #0, eq, n: inactive lanes get +n", (), None, push_exec,
           (NEST,), pure=False),
    Opcode("break", "active lanes leave: r0l = n", (), None, break_, (NEST,), pure=False),
    Opcode("jmp_exec_any", "the whole wave branches to the target if any lane is active", (),
           None, _no_value, targets=1, pure=False),
    Opcode("jmp_exec_none", "the whole wave branches to the target if no lane is active", (),
           None, _no_value, targets=1, pure=False),
    Opcode("parallel_copy", "dest i = src i for every i, all sources read before any write",
           (), None, _no_value, variadic=True),
)  # fmt: skip

EXEC_UPDATES: dict[str, Callable] = {
    row.name: row.semantics
    for row in MACHINE_ROWS
    if row.name not in ("jmp_exec_any", "jmp_exec_none", "parallel_copy")
}
WAVE_BRANCHES = frozenset({"jmp_exec_any", "jmp_exec_none"})

# SSA rows that have no meaning once control is the wave's: the SSA branch terminators.
_SSA_ONLY = frozenset({"jump", "if_icmp", "if_fcmp"})


def opcodes_for_level(level: str) -> dict[str, Opcode]:
    """The opcode table a function of `level` may use.

    exec keeps SSA phis; vreg has parallel copies instead; machine allows both register phis
    (the register allocator's output, before `lower_phis`) and parallel copies.
    """
    if level == "ssa":
        return dict(OPCODES)
    table = {name: row for name, row in OPCODES.items() if name not in _SSA_ONLY}
    table.update({row.name: row for row in MACHINE_ROWS})
    if level == "exec":
        del table["parallel_copy"]
    elif level == "vreg":
        del table["phi"]
    return table
