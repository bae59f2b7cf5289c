/* lanevm_run: executes a lane-VM program (vm.h) over the rows of R, op after op, until
 * OP_END or a taken OP_CALL/OP_CALLIF. Every op is one loop over the lanes of whole rows;
 * each op's result must equal, bit for bit, the numpy expression vm.h gives for it (the
 * float ops reproduce floats.py through floats.h).
 */
#include "vm.h"
#include "floats.h"

#include <string.h>

/* gcc's -O2 vectorizer (the "very cheap" cost model) refuses a plain lane loop: it would
 * need a run-time alias check, since d may equal a. Computing a chunk of lanes into a local
 * array before storing it is correct under any aliasing of whole rows and has no check to
 * make, so it vectorizes at -O2; unrolled, the chunk lives in registers, not on the stack.
 * EXPR reads lane k of the chunk through LANE(row). */
#define CHUNK 8
#define LANE(row) (row)[i + k]
#define FOR_LANES(out, EXPR)                                                  \
    do {                                                                      \
        Py_ssize_t i = 0;                                                     \
        for (; i + CHUNK <= lanes; i += CHUNK) {                              \
            uint64_t chunk[CHUNK];                                            \
            _Pragma("GCC unroll 8") for (int k = 0; k < CHUNK; k++)           \
                chunk[k] = (EXPR);                                            \
            _Pragma("GCC unroll 8") for (int k = 0; k < CHUNK; k++)           \
                (out)[i + k] = chunk[k];                                      \
        }                                                                     \
        for (; i < lanes; i++) {                                              \
            const int k = 0;                                                  \
            (out)[i + k] = (EXPR);                                            \
        }                                                                     \
    } while (0)

/* The program and R, held as buffers for the whole call (released on every path). */
typedef struct {
    Py_buffer program, rows;
    int have_program, have_rows;
    Py_ssize_t n_ops, n_rows, lanes;
} run_args;

static void
release(run_args *run)
{
    if (run->have_program)
        PyBuffer_Release(&run->program);
    if (run->have_rows)
        PyBuffer_Release(&run->rows);
}

/* A struct-module format naming an 8-byte integer: numpy writes "L" or "Q" for uint64 and
 * "l" or "q" for int64, possibly after a byte-order character for the native order. */
static int
is_int64_format(const char *format, int want_unsigned)
{
    if (format == NULL)
        return 0;
    if (format[0] == '@' || format[0] == '=' || format[0] == '<')
        format++;
    if (format[0] == '\0' || format[1] != '\0')
        return 0;
    return want_unsigned ? (format[0] == 'L' || format[0] == 'Q')
                         : (format[0] == 'l' || format[0] == 'q' || format[0] == 'L' ||
                            format[0] == 'Q');
}

static int
get_program(PyObject *program, run_args *run)
{
    if (PyObject_GetBuffer(program, &run->program, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Format(PyExc_TypeError,
                     "run: program must be a C-contiguous buffer of int64 (bytes or a numpy "
                     "int64 array), not %.100s", Py_TYPE(program)->tp_name);
        return -1;
    }
    run->have_program = 1;
    Py_buffer *view = &run->program;
    if (view->itemsize != 1 && !(view->itemsize == 8 && is_int64_format(view->format, 0))) {
        PyErr_Format(PyExc_TypeError,
                     "run: program must hold bytes or 8-byte integers, not items of format "
                     "'%.20s' and size %zd", view->format ? view->format : "B",
                     view->itemsize);
        return -1;
    }
    if (view->len % (Py_ssize_t)sizeof(vm_op) != 0) {
        PyErr_Format(PyExc_ValueError,
                     "run: program is %zd bytes, not a whole number of %zu-byte records "
                     "(six int64 each)", view->len, sizeof(vm_op));
        return -1;
    }
    run->n_ops = view->len / (Py_ssize_t)sizeof(vm_op);
    return 0;
}

static int
get_rows(PyObject *rows, run_args *run)
{
    if (PyObject_GetBuffer(rows, &run->rows,
                           PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Format(PyExc_TypeError,
                     "run: R must be a writable C-contiguous 2-D uint64 array, not %.100s "
                     "(read-only or not contiguous)", Py_TYPE(rows)->tp_name);
        return -1;
    }
    run->have_rows = 1;
    Py_buffer *view = &run->rows;
    if (view->ndim != 2 || view->itemsize != 8 || !is_int64_format(view->format, 1)) {
        PyErr_Format(PyExc_TypeError,
                     "run: R must be a 2-D array of uint64, not %d-D with items of format "
                     "'%.20s' and size %zd", view->ndim, view->format ? view->format : "B",
                     view->itemsize);
        return -1;
    }
    if (((uintptr_t)view->buf & 7) != 0) {
        PyErr_SetString(PyExc_ValueError, "run: R's data is not 8-byte aligned");
        return -1;
    }
    run->n_rows = view->shape[0];
    run->lanes = view->shape[1];
    return 0;
}

static int
check_rows(const vm_op *op, Py_ssize_t index, Py_ssize_t n_rows)
{
    static const char *const names[] = {"d", "a", "b", "c"};
    const int64_t fields[] = {op->d, op->a, op->b, op->c};
    for (int f = 0; f < 4; f++) {
        if (fields[f] < 0 || fields[f] >= n_rows) {
            PyErr_Format(PyExc_IndexError,
                         "run: op %zd (opcode %lld) field %s = %lld is not a row of R "
                         "(R has %zd rows)", index, (long long)op->op, names[f],
                         (long long)fields[f], n_rows);
            return -1;
        }
    }
    return 0;
}

static int
bad_immediate(const vm_op *op, Py_ssize_t index, const char *what)
{
    PyErr_Format(PyExc_ValueError, "run: op %zd (opcode %lld) has imm %lld: %s", index,
                 (long long)op->op, (long long)op->imm, what);
    return -1;
}

static int
is_float_width(int64_t fw)
{
    return fw == 16 || fw == 32;
}

static int
is_int_width(int64_t width)
{
    return width >= 1 && width <= 64;
}

/* The immediates each op reads, checked before any lane is touched. */
static int
check_immediate(const vm_op *op, Py_ssize_t index)
{
    const int64_t imm = op->imm;
    switch (op->op) {
    case OP_FADD: case OP_FMUL: case OP_FFMA: case OP_FEQ: case OP_FLT: case OP_FLE:
    case OP_FISNAN:
        return is_float_width(imm) ? 0 : bad_immediate(op, index, "the float width is 16 or 32");
    case OP_FCONVERT:
        if (imm < 0 || imm >> 16 || !is_float_width(imm & 0xff) || !is_float_width(imm >> 8))
            return bad_immediate(op, index, "want from | to << 8, each 16 or 32");
        return 0;
    case OP_I2F:
        if (imm < 0 || imm >> 17 || !is_int_width(imm & 0xff) ||
            !is_float_width((imm >> 8) & 0xff))
            return bad_immediate(op, index, "want width | fw << 8 | signed << 16");
        return 0;
    case OP_F2I:
        if (imm < 0 || imm >> 17 || !is_float_width(imm & 0xff) ||
            !is_int_width((imm >> 8) & 0xff))
            return bad_immediate(op, index, "want fw | width << 8 | signed << 16");
        return 0;
    case OP_ASHR:
        return is_int_width(imm) ? 0 : bad_immediate(op, index, "the width is 1..64");
    default:
        return 0;
    }
}

static int
any_nonzero(const uint64_t *row, Py_ssize_t lanes)
{
    uint64_t seen = 0;
    for (Py_ssize_t i = 0; i < lanes; i++)
        seen |= row[i];
    return seen != 0;
}

/* Executes from `pc`; returns the op index that stops it (-1 for OP_END) or -2 with an
 * exception set. */
static Py_ssize_t
execute(const char *program, const run_args *run, Py_ssize_t pc, int unmasked)
{
    uint64_t *const base = run->rows.buf;
    const Py_ssize_t lanes = run->lanes, n_rows = run->n_rows;
    for (;; pc++) {
        if (pc >= run->n_ops) {
            PyErr_Format(PyExc_IndexError,
                         "run: ran past the program's last op (%zd ops) without OP_END",
                         run->n_ops);
            return -2;
        }
        vm_op op;
        memcpy(&op, program + pc * (Py_ssize_t)sizeof(vm_op), sizeof op);
        if (op.op == OP_END)
            return -1;
        if (op.op < 0 || op.op >= OP_COUNT) {
            PyErr_Format(PyExc_ValueError, "run: op %zd has unknown opcode %lld", pc,
                         (long long)op.op);
            return -2;
        }
        if (check_rows(&op, pc, n_rows) < 0 || check_immediate(&op, pc) < 0)
            return -2;
        uint64_t *const d = base + op.d * lanes;
        const uint64_t *const a = base + op.a * lanes;
        const uint64_t *const b = base + op.b * lanes;
        const uint64_t *const c = base + op.c * lanes;
        const int64_t imm = op.imm;
        switch ((enum vm_opcode)op.op) {
        case OP_MOVE:
            if (d != a)
                memmove(d, a, (size_t)lanes * sizeof *d);
            break;
        case OP_ADD: FOR_LANES(d, LANE(a) + LANE(b)); break;
        case OP_SUB: FOR_LANES(d, LANE(a) - LANE(b)); break;
        case OP_MUL: FOR_LANES(d, LANE(a) * LANE(b)); break;
        case OP_AND: FOR_LANES(d, LANE(a) & LANE(b)); break;
        case OP_OR: FOR_LANES(d, LANE(a) | LANE(b)); break;
        case OP_XOR: FOR_LANES(d, LANE(a) ^ LANE(b)); break;
        /* numpy's uint64 shifts give 0 for an amount of 64 or more (C leaves it undefined). */
        case OP_SHL: FOR_LANES(d, LANE(b) < 64 ? LANE(a) << LANE(b) : 0); break;
        case OP_SHR: FOR_LANES(d, LANE(b) < 64 ? LANE(a) >> LANE(b) : 0); break;
        case OP_NOT: FOR_LANES(d, ~LANE(a)); break;
        case OP_LNOT: FOR_LANES(d, LANE(a) ^ 1); break;
        case OP_EQ: FOR_LANES(d, (uint64_t)(LANE(a) == LANE(b))); break;
        case OP_LT: FOR_LANES(d, (uint64_t)(LANE(a) < LANE(b))); break;
        case OP_LE: FOR_LANES(d, (uint64_t)(LANE(a) <= LANE(b))); break;
        case OP_WHERE: FOR_LANES(d, LANE(a) ? LANE(b) : LANE(c)); break;
        case OP_MERGE: FOR_LANES(d, LANE(b) ? LANE(a) : LANE(d)); break;
        case OP_COMMIT:
            if (unmasked) {
                if (d != a)
                    memmove(d, a, (size_t)lanes * sizeof *d);
            } else {
                FOR_LANES(d, LANE(b) ? LANE(a) : LANE(d));
            }
            break;
        case OP_ASHR: FOR_LANES(d, lane_ashr(LANE(a), LANE(b), (int)imm)); break;
        case OP_FADD:
            if (imm == 32) FOR_LANES(d, lane_fadd32(LANE(a), LANE(b)));
            else FOR_LANES(d, lane_fadd16(LANE(a), LANE(b)));
            break;
        case OP_FMUL:
            if (imm == 32) FOR_LANES(d, lane_fmul32(LANE(a), LANE(b)));
            else FOR_LANES(d, lane_fmul16(LANE(a), LANE(b)));
            break;
        case OP_FFMA:
            if (imm == 32) FOR_LANES(d, lane_ffma32(LANE(a), LANE(b), LANE(c)));
            else FOR_LANES(d, lane_ffma16(LANE(a), LANE(b), LANE(c)));
            break;
        case OP_FEQ:
            FOR_LANES(d, (uint64_t)(lane_float(LANE(a), imm) == lane_float(LANE(b), imm)));
            break;
        case OP_FLT:
            FOR_LANES(d, (uint64_t)(lane_float(LANE(a), imm) < lane_float(LANE(b), imm)));
            break;
        case OP_FLE:
            FOR_LANES(d, (uint64_t)(lane_float(LANE(a), imm) <= lane_float(LANE(b), imm)));
            break;
        case OP_FISNAN: FOR_LANES(d, lane_isnan(LANE(a), imm)); break;
        case OP_FCONVERT:
            FOR_LANES(d, lane_fconvert(LANE(a), imm & 0xff, imm >> 8));
            break;
        case OP_I2F:
            FOR_LANES(d, lane_int_to_float(LANE(a), imm & 0xff, (imm >> 8) & 0xff,
                                           (imm >> 16) & 1));
            break;
        case OP_F2I:
            FOR_LANES(d, lane_float_to_int(LANE(a), imm & 0xff, (imm >> 8) & 0xff));
            break;
        case OP_CALL:
            return pc;
        case OP_CALLIF:
            if (any_nonzero(a, lanes))
                return pc;
            break;
        case OP_END:
        case OP_COUNT:
            break; /* unreachable: handled above */
        }
    }
}

PyObject *
lanevm_run(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError,
                     "run(program, R, pc, unmasked) takes 4 arguments (%zd given)", nargs);
        return NULL;
    }
    Py_ssize_t pc = PyLong_AsSsize_t(args[2]);
    if (pc == -1 && PyErr_Occurred())
        return NULL;
    int unmasked = PyObject_IsTrue(args[3]);
    if (unmasked < 0)
        return NULL;
    run_args run = {0};
    Py_ssize_t stopped = -2;
    if (get_program(args[0], &run) < 0 || get_rows(args[1], &run) < 0)
        goto done;
    if (pc < 0 || pc >= run.n_ops) {
        PyErr_Format(PyExc_IndexError, "run: pc %zd is outside the program (%zd ops)", pc,
                     run.n_ops);
        goto done;
    }
    stopped = execute(run.program.buf, &run, pc, unmasked);
done:
    release(&run);
    return stopped == -2 ? NULL : PyLong_FromSsize_t(stopped);
}

/* count(R, row) -> int: how many lanes of R's row are nonzero (a branch condition's taken
 * lanes, without making the bool array numpy would). */
PyObject *
lanevm_count(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "count(R, row) takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    const Py_ssize_t row = PyLong_AsSsize_t(args[1]);
    if (row == -1 && PyErr_Occurred())
        return NULL;
    run_args run = {0};
    Py_ssize_t found = -1;
    if (get_rows(args[0], &run) < 0)
        goto done;
    if (row < 0 || row >= run.n_rows) {
        PyErr_Format(PyExc_IndexError, "count: row %zd is not a row of R (%zd rows)", row,
                     run.n_rows);
        goto done;
    }
    const uint64_t *lane = (const uint64_t *)run.rows.buf + row * run.lanes;
    found = 0;
    for (Py_ssize_t i = 0; i < run.lanes; i++)
        found += lane[i] != 0;
done:
    release(&run);
    return found < 0 ? NULL : PyLong_FromSsize_t(found);
}
