/* lanevm_access: a load or store of the lane VM done in C, in the common case only: every
 * active lane's address inside the one buffer the first active lane names. It does what
 * oracles/interp/lanes.py `Lanes.load` / `Lanes.store` do in that case, to the same bytes
 * (an access of n bytes reads or writes the n-byte word its offset falls in, as their
 * numpy views index it), and returns the buffer's number; in any other case it changes
 * nothing and returns -1, and the caller takes the Python path, which also decides what is
 * out of bounds (undefined behaviour). The caller logs the access for the race check
 * (`Lanes.accessed_in_place`).
 */
#include "vm.h"

#include <string.h>

typedef struct {
    Py_buffer view;
    int held;
} held_buffer;

static int
get(PyObject *object, held_buffer *out, int flags, int ndim, Py_ssize_t itemsize,
    const char *what)
{
    if (PyObject_GetBuffer(object, &out->view, flags | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    out->held = 1;
    if (out->view.ndim != ndim || out->view.itemsize != itemsize) {
        PyErr_Format(PyExc_TypeError, "access: %s must be a %d-D array of %zd-byte items", what,
                     ndim, itemsize);
        return -1;
    }
    return 0;
}

static int
row_index(PyObject *object, Py_ssize_t rows, Py_ssize_t *out, const char *what)
{
    *out = PyLong_AsSsize_t(object);
    if (*out == -1 && PyErr_Occurred())
        return -1;
    if (*out < 0 || *out >= rows) {
        PyErr_Format(PyExc_IndexError, "access: %s row %zd is not a row of R", what, *out);
        return -1;
    }
    return 0;
}

static uint64_t
read_word(const uint8_t *at, Py_ssize_t nbytes)
{
    if (nbytes == 4) {
        uint32_t word;
        memcpy(&word, at, 4);
        return word;
    }
    if (nbytes == 2) {
        uint16_t half;
        memcpy(&half, at, 2);
        return half;
    }
    return at[0];
}

static void
write_word(uint8_t *at, uint64_t value, Py_ssize_t nbytes)
{
    if (nbytes == 4) {
        const uint32_t word = (uint32_t)value;
        memcpy(at, &word, 4);
    } else if (nbytes == 2) {
        const uint16_t half = (uint16_t)value;
        memcpy(at, &half, 2);
    } else {
        at[0] = (uint8_t)value;
    }
}

/* access(R, address, act, data, nbytes, store, memory, lane_set, sizes, starts, buffers)
 * -> (buffer, disjoint): the buffer's number or -1, and whether the access's lanes of each
 * input set, in lane order, touch bytes at increasing places none of which overlap (then
 * no two of its threads share a byte: the race check may skip it when it is alone). Rows address, act (nonzero: active) and data (a load's destination, a store's
 * value) of R; memory the (sets x bytes) uint8 image; lane_set each lane's input set
 * (int64); sizes and starts each buffer's size and place in a set's image (int64);
 * buffers how many there are (sizes and starts may hold one more entry). */
PyObject *
lanevm_access(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "access takes 11 arguments");
        return NULL;
    }
    held_buffer R = {0}, memory = {0}, lane_set = {0}, sizes = {0}, starts = {0};
    PyObject *result = NULL;
    Py_ssize_t address, act, data, nbytes, buffers;
    const int store = PyObject_IsTrue(args[5]);
    if (store < 0 || get(args[0], &R, PyBUF_WRITABLE, 2, 8, "R") < 0 ||
        get(args[6], &memory, store ? PyBUF_WRITABLE : 0, 2, 1, "memory") < 0 ||
        get(args[7], &lane_set, 0, 1, 8, "lane_set") < 0 ||
        get(args[8], &sizes, 0, 1, 8, "sizes") < 0 || get(args[9], &starts, 0, 1, 8, "starts") < 0)
        goto done;
    const Py_ssize_t rows = R.view.shape[0], lanes = R.view.shape[1];
    if (row_index(args[1], rows, &address, "address") < 0 || row_index(args[2], rows, &act, "act") < 0 ||
        row_index(args[3], rows, &data, "data") < 0)
        goto done;
    nbytes = PyLong_AsSsize_t(args[4]);
    buffers = PyLong_AsSsize_t(args[10]);
    if (PyErr_Occurred())
        goto done;
    if (lane_set.view.shape[0] != lanes || buffers > sizes.view.shape[0] ||
        buffers > starts.view.shape[0]) {
        PyErr_SetString(PyExc_ValueError, "access: lane_set, sizes or starts do not fit R");
        goto done;
    }
    const uint64_t *base = R.view.buf;
    const uint64_t *where = base + address * lanes, *on = base + act * lanes;
    uint64_t *value = (uint64_t *)base + data * lanes;
    const int64_t *set_of = lane_set.view.buf;
    const Py_ssize_t sets = memory.view.shape[0], width = memory.view.shape[1];
    Py_ssize_t first = 0;
    while (first < lanes && on[first] == 0)
        first++;
    long found = -1;
    int disjoint = 1;  /* each set's active lanes' bytes in lane order, none overlapping */
    if (first == lanes || (nbytes != 1 && nbytes != 2 && nbytes != 4))
        goto answer;
    const uint64_t number = where[first] >> 32;
    if (number < 1 || number > (uint64_t)buffers)
        goto answer;
    const int64_t size = ((const int64_t *)sizes.view.buf)[number - 1];
    const int64_t start = ((const int64_t *)starts.view.buf)[number - 1];
    if (size < nbytes || start < 0 || start + size > width)
        goto answer;
    const uint64_t last = (uint64_t)(size - nbytes), low = number << 32;
    for (Py_ssize_t lane = first; lane < lanes; lane++) {  /* every lane checked first */
        if (on[lane] && (where[lane] - low > last || set_of[lane] < 0 || set_of[lane] >= sets))
            goto answer;
    }
    uint8_t *image = memory.view.buf;
    int64_t previous_set = -1;
    Py_ssize_t previous_flat = 0;
    for (Py_ssize_t lane = 0; lane < lanes; lane++) {
        if (!on[lane]) {
            if (!store)
                value[lane] = 0;
            continue;
        }
        const Py_ssize_t flat = (Py_ssize_t)(start + (int64_t)(where[lane] - low));
        if (set_of[lane] == previous_set && flat < previous_flat + nbytes)
            disjoint = 0;  /* (not increasing is not proof of a shared byte, only no proof) */
        previous_set = set_of[lane];
        previous_flat = flat;
        uint8_t *at = image + set_of[lane] * width + flat / nbytes * nbytes;
        if (store)
            write_word(at, value[lane], nbytes);
        else
            value[lane] = read_word(at, nbytes);
    }
    found = (long)(number - 1);
answer:
    result = Py_BuildValue("(lO)", found, found >= 0 && disjoint ? Py_True : Py_False);
done:
    if (R.held)
        PyBuffer_Release(&R.view);
    if (memory.held)
        PyBuffer_Release(&memory.view);
    if (lane_set.held)
        PyBuffer_Release(&lane_set.view);
    if (sizes.held)
        PyBuffer_Release(&sizes.view);
    if (starts.held)
        PyBuffer_Release(&starts.view);
    return result;
}
