/* The lane VM's contract, shared by its two halves: compile.c (a block's emitted numpy
 * source -> a program of the ops below) and run.c (a program executed over the rows of R).
 *
 * R is a C-contiguous 2-D array of uint64: row = one storage place (a value, a register
 * half, a constant, a temporary), column = one lane. Every op reads and writes whole rows,
 * lane by lane, with the numpy semantics the emitted source has (oracles/interp/emit.py,
 * floats.py): the Python text run by numpy is the reference, the VM must give the same bits.
 * Booleans are rows holding 0 or 1. Ops may alias (d == a is allowed).
 *
 * A program is an array of vm_op (six int64 fields each); d, a, b, c are row numbers, imm
 * an immediate. A field an op does not use holds 0.
 */
#ifndef AGXFUZZ_LANEVM_H
#define AGXFUZZ_LANEVM_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef struct {
    int64_t op, d, a, b, c, imm;
} vm_op;

enum vm_opcode {
    OP_END = 0,   /* stop: run() returns -1 */
    OP_MOVE,      /* d = a */
    OP_ADD,       /* d = a + b (mod 2**64, numpy uint64) */
    OP_SUB,       /* d = a - b */
    OP_MUL,       /* d = a * b */
    OP_AND,       /* d = a & b */
    OP_OR,        /* d = a | b */
    OP_XOR,       /* d = a ^ b */
    OP_SHL,       /* d = a << b; numpy uint64: b >= 64 gives 0 */
    OP_SHR,       /* d = a >> b; numpy uint64: b >= 64 gives 0 */
    OP_NOT,       /* d = ~a (uint64) */
    OP_LNOT,      /* d = a ^ 1 (numpy ~ on a bool row) */
    OP_EQ,        /* d = a == b (0/1) */
    OP_LT,        /* d = a < b, unsigned */
    OP_LE,        /* d = a <= b, unsigned */
    OP_WHERE,     /* d = a ? b : c (a nonzero) */
    OP_MERGE,     /* d = b ? a : d  (a masked write: H[n] = where(act, x, H[n])) */
    OP_COMMIT,    /* run()'s `unmasked` true: d = a; else d = b ? a : d (b is the act row) */
    OP_FADD,      /* d = bits{imm}(f{imm}(a) + f{imm}(b)), imm = 16 or 32 (floats.py) */
    OP_FMUL,      /* d = bits{imm}(f{imm}(a) * f{imm}(b)) */
    OP_FFMA,      /* d = ffma(a, b, c, imm)            (floats.ffma) */
    OP_FEQ,       /* d = f{imm}(a) == f{imm}(b) (0/1) */
    OP_FLT,       /* d = f{imm}(a) < f{imm}(b) */
    OP_FLE,       /* d = f{imm}(a) <= f{imm}(b) */
    OP_FISNAN,    /* d = isnan(f{imm}(a)) */
    OP_FCONVERT,  /* d = fconvert(a, from, to); imm = from | to << 8 */
    OP_I2F,       /* d = int_to_float(a, width, fw, signed); imm = width | fw << 8 | signed << 16 */
    OP_F2I,       /* d = float_to_int(a, fw, width, signed); imm = fw | width << 8 | signed << 16 */
    OP_ASHR,      /* d = ashr(a, b, imm)                (floats.ashr, imm = width) */
    OP_CALL,      /* return to Python: run() returns this op's index (imm = callback number) */
    OP_CALLIF,    /* the same, but only when some lane of row a is nonzero; else go on */
    OP_COUNT
};

/* run(program, R, pc, unmasked) -> int  (run.c) */
PyObject *lanevm_run(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
/* count(R, row) -> int  (run.c) */
PyObject *lanevm_count(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
/* access(R, address, act, data, nbytes, store, memory, lane_set, sizes, starts, buffers)
 * -> (int, bool)  (memory.c) */
PyObject *lanevm_access(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
/* compile(source) -> tuple  (compile.c) */
PyObject *lanevm_compile(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
/* key_setup(Value, Immediate, Register, VirtualRegister, Uniform, format_instruction, rows,
 * wave_branches, kind_parts) -> None and unit_keys(units, prefixes, number, escaping,
 * first_unit, vreg_widths) -> list or NotImplemented  (keys.c) */
PyObject *lanevm_key_setup(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
PyObject *lanevm_unit_keys(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
/* races(lane_set, tid, sets, width, starts, logged, in_place) -> list or NotImplemented
 * (races.c) */
PyObject *lanevm_races(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

#endif
