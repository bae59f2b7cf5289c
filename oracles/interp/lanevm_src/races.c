/* lanevm_races: the race check's search (oracles/interp/lanes.py, `Lanes.find_races`) in
 * C. `lanes.racing_threads`, the numpy search, is the specification: for each input set,
 * the highest thread id touching the first byte (in byte order) of that set's memory that
 * two different threads touched, at least one of them writing; -1 where there is none.
 * tests/oracles/interp/test_races.py checks the two agree on random access logs.
 *
 * Why C: the numpy search sorts every byte touched and reduces over groups, a dozen numpy
 * calls plus a few per access, and the in-place accesses (the lane VM's) were each turned
 * into lanes and offsets by numpy first; most runs touch a few thousand bytes, so the calls'
 * overhead, not the work, was its cost. Here one pass puts every byte touched in a hash
 * table of (lowest thread, highest thread, written) by its place, and one pass over the
 * table finds each set's first racing byte: no sort, as the answer depends on no order.
 *
 * Anything unexpected (an array of another layout, a lane, set or offset out of range, an
 * exception on the way) gives NotImplemented, and the caller runs the reference.
 */
#include "vm.h"

#include <string.h>

/* The array formats taken (numpy's on a little-endian machine): the reference computes
 * with the dtypes the interpreters pass, and another dtype (an int64 address less a
 * uint64 base is a float64 in numpy) would not compute the same. */
#define SIGNED "qln"    /* int64: lane indices, byte offsets, sets, starts */
#define UNSIGNED "QLN"  /* uint64: addresses */
#define ANY_INT SIGNED UNSIGNED  /* thread ids (the reference's .astype(int64)) */
#define BOOLS "?"       /* act */

typedef struct {
    Py_buffer view;
    int held;
} array_view;

/* A 1-D C-contiguous array of `itemsize`-byte items of one of `formats`, held for the call. */
static int
hold(PyObject *object, array_view *out, Py_ssize_t itemsize, const char *formats)
{
    if (PyObject_GetBuffer(object, &out->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    out->held = 1;
    const char *format = out->view.format != NULL ? out->view.format : "B";
    if (format[0] == '@' || format[0] == '=' || format[0] == '<')  /* (little-endian here) */
        format++;
    if (out->view.ndim != 1 || out->view.itemsize != itemsize || format[0] == '\0' ||
        format[1] != '\0' || strchr(formats, format[0]) == NULL) {
        PyErr_SetString(PyExc_TypeError, "races: an array of another layout");
        return -1;
    }
    return 0;
}

static void
release(array_view *array)
{
    if (array->held)
        PyBuffer_Release(&array->view);
    array->held = 0;
}

/* ---- the bytes touched, by their place (set * width + byte) ---- */

typedef struct {
    int64_t key;  /* -1: empty */
    int64_t lowest, highest;
    int64_t written;
} cell;

typedef struct {
    cell *cells;
    uint64_t mask;
    int shift;
} byte_table;

static int
table_init(byte_table *table, Py_ssize_t records)
{
    uint64_t size = 64;
    int bits = 6;
    while (size < 2 * (uint64_t)records) {
        size <<= 1;
        bits++;
    }
    table->cells = PyMem_Malloc(size * sizeof(cell));
    if (table->cells == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memset(table->cells, 0xff, size * sizeof(cell));  /* every key -1 */
    table->mask = size - 1;
    table->shift = 64 - bits;
    return 0;
}

/* Thread `thread` touched the byte at `key` (writing or not). The table has room: it holds
 * at most one cell per byte touched, and has twice as many. */
static inline void
touch(byte_table *table, int64_t key, int64_t thread, int64_t writing)
{
    uint64_t at = ((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> table->shift;
    for (;; at = (at + 1) & table->mask) {
        cell *c = &table->cells[at];
        if (c->key == key) {
            if (thread < c->lowest)
                c->lowest = thread;
            if (thread > c->highest)
                c->highest = thread;
            c->written |= writing;
            return;
        }
        if (c->key < 0) {
            *c = (cell){key, thread, thread, writing};
            return;
        }
    }
}

/* What every access shares: the lanes' sets and thread ids, the memory's shape. */
typedef struct {
    const int64_t *lane_set, *tid;
    Py_ssize_t lanes, sets, width;
    byte_table table;
} search;

/* One lane's access of `nbytes` at byte `flat` of its set's memory; 0, or -1 when it is
 * outside what the reference would index the same way (then the reference runs). */
static inline int
lane_touches(search *s, Py_ssize_t lane, int64_t flat, int64_t nbytes, int64_t writing)
{
    if (lane < 0 || lane >= s->lanes || flat < 0 || flat > s->width - nbytes)
        return -1;
    const int64_t set = s->lane_set[lane];
    if (set < 0 || set >= s->sets)
        return -1;
    const int64_t first = set * s->width + flat, thread = s->tid[lane];
    for (int64_t b = 0; b < nbytes; b++)
        touch(&s->table, first + b, thread, writing);
    return 0;
}

/* An entry's nbytes (positive, at most the width) and writing flag; -1 with an exception. */
static int
size_and_flag(PyObject *nbytes_object, PyObject *writing_object, Py_ssize_t width,
              int64_t *nbytes, int64_t *writing)
{
    *nbytes = PyLong_AsLongLong(nbytes_object);
    if (*nbytes == -1 && PyErr_Occurred())
        return -1;
    const int flag = PyObject_IsTrue(writing_object);
    if (flag < 0)
        return -1;
    *writing = flag;
    if (*nbytes < 1 || *nbytes > width) {
        PyErr_SetString(PyExc_ValueError, "races: an access's size is out of range");
        return -1;
    }
    return 0;
}

/* A logged access (lanes, flat, nbytes, writing): 0, or -1 with an exception (ValueError
 * where the reference must judge it). */
static int
logged_access(search *s, PyObject *entry)
{
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 4) {
        PyErr_SetString(PyExc_TypeError, "races: a logged access is (lanes, flat, nbytes, writing)");
        return -1;
    }
    int64_t nbytes, writing;
    if (size_and_flag(PyTuple_GET_ITEM(entry, 2), PyTuple_GET_ITEM(entry, 3), s->width, &nbytes,
                      &writing) < 0)
        return -1;
    array_view lanes = {0}, flat = {0};
    int status = -1;
    if (hold(PyTuple_GET_ITEM(entry, 0), &lanes, 8, SIGNED) < 0 ||
        hold(PyTuple_GET_ITEM(entry, 1), &flat, 8, SIGNED) < 0)
        goto done;
    const Py_ssize_t count = lanes.view.shape[0];
    if (flat.view.shape[0] != count) {
        PyErr_SetString(PyExc_ValueError, "races: lanes and offsets differ in length");
        goto done;
    }
    const int64_t *lane = lanes.view.buf, *at = flat.view.buf;
    for (Py_ssize_t i = 0; i < count; i++)
        if (lane_touches(s, (Py_ssize_t)lane[i], at[i], nbytes, writing) < 0) {
            PyErr_SetString(PyExc_ValueError, "races: a lane or an offset is out of range");
            goto done;
        }
    status = 0;
done:
    release(&lanes);
    release(&flat);
    return status;
}

/* An access the lane VM made in place (buffer, address, act, nbytes, writing, disjoint),
 * Lanes.accessed_in_place's entry: every lane with act nonzero, at byte address - base of
 * `buffer` (placed at starts[buffer] in its set's memory). */
static int
in_place_access(search *s, PyObject *entry, const int64_t *starts, Py_ssize_t buffers)
{
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 6) {
        PyErr_SetString(PyExc_TypeError, "races: an in-place access has six fields");
        return -1;
    }
    const long long buffer = PyLong_AsLongLong(PyTuple_GET_ITEM(entry, 0));
    if (buffer == -1 && PyErr_Occurred())
        return -1;
    int64_t nbytes, writing;
    if (size_and_flag(PyTuple_GET_ITEM(entry, 3), PyTuple_GET_ITEM(entry, 4), s->width, &nbytes,
                      &writing) < 0)
        return -1;
    if (buffer < 0 || buffer >= buffers || buffer >= (1LL << 31)) {
        PyErr_SetString(PyExc_ValueError, "races: no such buffer");
        return -1;
    }
    array_view address = {0}, act = {0};
    int status = -1;
    if (hold(PyTuple_GET_ITEM(entry, 1), &address, 8, UNSIGNED) < 0 ||
        hold(PyTuple_GET_ITEM(entry, 2), &act, 1, BOOLS) < 0)
        goto done;
    if (address.view.shape[0] != s->lanes || act.view.shape[0] != s->lanes) {
        PyErr_SetString(PyExc_ValueError, "races: an in-place access is not over every lane");
        goto done;
    }
    const uint64_t *where = address.view.buf, base = (uint64_t)(buffer + 1) << 32;
    const uint8_t *on = act.view.buf;
    const int64_t start = starts[buffer];
    for (Py_ssize_t lane = 0; lane < s->lanes; lane++) {
        /* (as the reference: the offset's uint64 bits as int64, plus the buffer's start) */
        if (on[lane] && lane_touches(s, lane, (int64_t)(where[lane] - base) + start, nbytes, writing) < 0) {
            PyErr_SetString(PyExc_ValueError, "races: an offset is out of range");
            goto done;
        }
    }
    status = 0;
done:
    release(&address);
    release(&act);
    return status;
}

/* races(lane_set, tid, sets, width, starts, logged, in_place) -> list or NotImplemented:
 * per input set the thread id racing_threads reports, or -1. lane_set and tid are the
 * lanes' int64 sets and (u)int64 thread ids; sets x width the memory's shape; starts the
 * int64 place of each buffer in a set's memory; logged a list of (lanes, flat, nbytes,
 * writing) (int64 lane indices and byte offsets), in_place a list of accessed_in_place
 * entries: together every access to a buffer something was stored to. */
PyObject *
lanevm_races(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 7) {
        PyErr_Format(PyExc_TypeError, "races takes 7 arguments (%zd given)", nargs);
        return NULL;
    }
    PyObject *logged = args[5], *in_place = args[6], *result = NULL;
    array_view lane_set = {0}, tid = {0}, starts = {0};
    search s = {0};
    int64_t *first = NULL;  /* per set: its first racing byte's key, then that byte's thread */
    if (!PyList_CheckExact(logged) || !PyList_CheckExact(in_place))
        goto decline;
    s.sets = PyLong_AsSsize_t(args[2]);
    s.width = PyLong_AsSsize_t(args[3]);
    if (PyErr_Occurred() || hold(args[0], &lane_set, 8, SIGNED) < 0 ||
        hold(args[1], &tid, 8, ANY_INT) < 0 || hold(args[4], &starts, 8, SIGNED) < 0)
        goto decline;
    s.lanes = lane_set.view.shape[0];
    if (tid.view.shape[0] != s.lanes || s.sets < 1 || s.width < 1 || s.sets > (INT64_MAX >> 2) / s.width)
        goto decline;
    s.lane_set = lane_set.view.buf;
    s.tid = tid.view.buf;
    /* At most this many bytes are touched: the table's size. */
    Py_ssize_t records = 0;
    for (int pass = 0; pass < 2; pass++) {
        PyObject *entries = pass ? in_place : logged;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(entries); i++) {
            PyObject *entry = PyList_GET_ITEM(entries, i);
            if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != (pass ? 6 : 4))
                goto decline;
            const Py_ssize_t count = PyObject_Length(PyTuple_GET_ITEM(entry, pass ? 1 : 0));
            const Py_ssize_t nbytes = PyLong_AsSsize_t(PyTuple_GET_ITEM(entry, pass ? 3 : 2));
            if (count < 0 || nbytes < 1 || nbytes > s.width || PyErr_Occurred() ||
                count > (PY_SSIZE_T_MAX / 4 - records) / nbytes)
                goto decline;
            records += count * nbytes;
        }
    }
    if (table_init(&s.table, records) < 0)
        goto decline;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(logged); i++)
        if (logged_access(&s, PyList_GET_ITEM(logged, i)) < 0)
            goto decline;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(in_place); i++)
        if (in_place_access(&s, PyList_GET_ITEM(in_place, i), starts.view.buf, starts.view.shape[0]) < 0)
            goto decline;
    first = PyMem_Malloc(2 * s.sets * sizeof(int64_t));
    if (first == NULL)
        goto decline;
    int64_t *thread = first + s.sets;
    for (Py_ssize_t set = 0; set < s.sets; set++)
        first[set] = thread[set] = -1;
    for (uint64_t at = 0; at <= s.table.mask; at++) {
        const cell *c = &s.table.cells[at];
        if (c->key < 0 || !c->written || c->lowest == c->highest)
            continue;
        const int64_t set = c->key / s.width;
        if (first[set] < 0 || c->key < first[set]) {
            first[set] = c->key;
            thread[set] = c->highest;
        }
    }
    result = PyList_New(s.sets);
    for (Py_ssize_t set = 0; result != NULL && set < s.sets; set++) {
        PyObject *number = PyLong_FromLongLong(thread[set]);
        if (number == NULL)
            Py_CLEAR(result);
        else
            PyList_SET_ITEM(result, set, number);
    }
    if (result != NULL)
        goto done;
decline:
    /* The reference judges what this did not expect (an interrupt or the like goes on up). */
    if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_Exception)) {
        PyErr_Clear();
        result = Py_NewRef(Py_NotImplemented);
    }
done:
    PyMem_Free(first);
    PyMem_Free(s.table.cells);
    release(&lane_set);
    release(&tid);
    release(&starts);
    return result;
}
