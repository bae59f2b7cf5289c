/* agxir.ccore's same_body(before, after): the block-by-block part of
 * agxir.structural.prints_as (the harness's no-change check), clause for clause as
 * agxir.structural.same_body (the reference) does it: the same blocks, instructions,
 * operands and attributes at the same places, fresh Values matched by name and size.
 *
 * It is C because the comparison runs after every pass step over the whole function and
 * cost about 1.5-2 us per instruction in Python (core.h). tests/agxir/test_ccore.py
 * compares it with the reference on every machine pipeline's steps.
 */
#include "core.h"

/* Each check returns 1 (the same), 0 (not vouched for) or -1 (an exception is set), and
 * mirrors one clause of agxir.structural.same_body, in the same order. */

/* `a != b`, as Python evaluates it (no shortcut on identity, unlike RichCompareBool). */
static int
differ(PyObject *a, PyObject *b)
{
    /* An object equal to itself, without a call: a clone's names and sizes are its
     * original's objects, and so are its registers, which compare (in Python, with the
     * dataclass's __eq__) field by field. */
    PyTypeObject *kind = Py_TYPE(a);
    if (a == b && (kind == &PyUnicode_Type || kind == &PyLong_Type
                   || kind == (PyTypeObject *)Register || kind == (PyTypeObject *)VirtualRegister))
        return 0;
    PyObject *result = PyObject_RichCompare(a, b, Py_NE);
    if (result == NULL)
        return -1;
    int truth = PyObject_IsTrue(result);
    Py_DECREF(result);
    return truth;
}

/* `a.<name> != b.<name>` */
static int
differ_at(PyObject *a, PyObject *b, PyObject *name)
{
    PyObject *x = get(a, name);
    PyObject *y = x ? get(b, name) : NULL;
    int result = y ? differ(x, y) : -1;
    Py_XDECREF(x);
    Py_XDECREF(y);
    return result;
}

/* Two Values (the caller has checked both types): a fresh one of the same name and size. */
static int
same_fresh_value(PyObject *x, PyObject *y)
{
    if (x == y)
        return 0;
    int d = differ_at(x, y, s_name);
    if (d == 0)
        d = differ_at(x, y, s_size);
    return d < 0 ? -1 : !d;
}

/* The reference's same_storage: the same register, or a fresh Value of the same name and
 * size. */
static int
same_storage(PyObject *x, PyObject *y)
{
    PyTypeObject *kind = Py_TYPE(y);
    if (kind != Py_TYPE(x))
        return 0;
    if (x == Py_None)
        return 1;
    if (kind == (PyTypeObject *)Value)
        return same_fresh_value(x, y);
    if (kind != (PyTypeObject *)Register && kind != (PyTypeObject *)VirtualRegister)
        return 0;
    int d = differ(x, y);  /* `x == y` on these frozen dataclasses is `not x != y` */
    return d < 0 ? -1 : !d;
}

/* Where each block of a function stands in it: id(block) -> index (the last for a block
 * listed twice, as the reference's dict comprehension has it). */
static PyObject *
block_index(PyObject *blocks)
{
    PyObject *index = PyDict_New();
    for (Py_ssize_t k = 0; index != NULL && k < PySequence_Fast_GET_SIZE(blocks); k++) {
        PyObject *key = PyLong_FromVoidPtr(PySequence_Fast_GET_ITEM(blocks, k));
        PyObject *at = key ? PyLong_FromSsize_t(k) : NULL;
        if (at == NULL || PyDict_SetItem(index, key, at) < 0)
            Py_CLEAR(index);
        Py_XDECREF(key);
        Py_XDECREF(at);
    }
    return index;
}

/* The index `index` holds for `block`, borrowed; NULL with no exception when it has none. */
static PyObject *
index_of(PyObject *index, PyObject *block)
{
    PyObject *key = PyLong_FromVoidPtr(block);
    if (key == NULL)
        return NULL;
    PyObject *found = PyDict_GetItemWithError(index, key);
    Py_DECREF(key);
    return found;
}

typedef struct {
    PyObject *old_index, *new_index;  /* block_index of the two functions */
    PyObject *uniforms;  /* the after function's uniforms, as a sequence */
} Body;

/* Two lists of blocks naming the blocks at the same places of their functions. */
static int
same_blocks(PyObject *xs, PyObject *ys, Body *body)
{
    PyObject *x_seq = PySequence_Fast(xs, "a list of blocks was expected");
    PyObject *y_seq = x_seq ? PySequence_Fast(ys, "a list of blocks was expected") : NULL;
    int same = y_seq == NULL ? -1
               : PySequence_Fast_GET_SIZE(x_seq) == PySequence_Fast_GET_SIZE(y_seq);
    for (Py_ssize_t i = 0; same == 1 && i < PySequence_Fast_GET_SIZE(x_seq); i++) {
        PyObject *k = index_of(body->new_index, PySequence_Fast_GET_ITEM(y_seq, i));
        PyObject *j = k ? index_of(body->old_index, PySequence_Fast_GET_ITEM(x_seq, i)) : NULL;
        if (PyErr_Occurred())
            same = -1;
        else if (k == NULL || j == NULL)
            same = 0;
        else {
            int d = differ(j, k);
            same = d < 0 ? -1 : !d;
        }
    }
    Py_XDECREF(x_seq);
    Py_XDECREF(y_seq);
    return same;
}

/* Two operands' refs (the caller has checked they are of one type, `kind`). */
static int
same_ref(PyObject *ra, PyObject *rb, PyTypeObject *kind, Body *body)
{
    if (kind == (PyTypeObject *)Value)
        return same_fresh_value(ra, rb);
    if (kind == (PyTypeObject *)Immediate) {
        PyObject *x = get(ra, s_bits);
        PyObject *y = x ? get(rb, s_bits) : NULL;
        int d = y ? differ(x, y) : -1;
        int same = d < 0 ? -1 : !d && Py_TYPE(x) == Py_TYPE(y);
        Py_XDECREF(x);
        Py_XDECREF(y);
        return same;
    }
    if (kind == (PyTypeObject *)Uniform) {  /* the same uniform, one the function declares */
        if (ra != rb)
            return 0;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(body->uniforms); i++)
            if (PySequence_Fast_GET_ITEM(body->uniforms, i) == rb)
                return 1;
        return 0;
    }
    if (kind == (PyTypeObject *)Register || kind == (PyTypeObject *)VirtualRegister) {
        int d = differ(ra, rb);
        return d < 0 ? -1 : !d;
    }
    return 0;
}

static int
same_src(PyObject *a, PyObject *b, Body *body)
{
    PyObject *fields[6] = {NULL};  /* a.abs, b.abs, a.neg, b.neg, a.ref, b.ref */
    PyObject *names[3] = {s_abs, s_neg, s_ref};
    int same = -1;
    for (int f = 0; f < 6; f++)
        if ((fields[f] = get(f % 2 ? b : a, names[f / 2])) == NULL)
            goto done;
    if (fields[0] != fields[1] || fields[2] != fields[3])
        same = 0;
    else if (Py_TYPE(fields[5]) != Py_TYPE(fields[4]))
        same = 0;
    else
        same = same_ref(fields[4], fields[5], Py_TYPE(fields[5]), body);
done:
    for (int f = 0; f < 6; f++)
        Py_XDECREF(fields[f]);
    return same;
}

/* Two lists of the same length whose items pairwise pass `same` (the lengths differ: 0). */
static int
same_items(PyObject *xs, PyObject *ys, int (*same)(PyObject *, PyObject *, Body *),
           Body *body)
{
    PyObject *x_seq = PySequence_Fast(xs, "a list was expected");
    PyObject *y_seq = x_seq ? PySequence_Fast(ys, "a list was expected") : NULL;
    int result = y_seq == NULL ? -1
                 : PySequence_Fast_GET_SIZE(x_seq) == PySequence_Fast_GET_SIZE(y_seq);
    for (Py_ssize_t i = 0; result == 1 && i < PySequence_Fast_GET_SIZE(x_seq); i++)
        result = same(PySequence_Fast_GET_ITEM(x_seq, i), PySequence_Fast_GET_ITEM(y_seq, i),
                      body);
    Py_XDECREF(x_seq);
    Py_XDECREF(y_seq);
    return result;
}

static int
same_storage_in(PyObject *x, PyObject *y, Body *body)
{
    (void)body;
    return same_storage(x, y);
}

/* The attributes: equal dicts whose values are of the same types (`shift=0` and
 * `shift=False` are equal but print differently). Only plain dicts are vouched for. */
static int
same_attrs(PyObject *x, PyObject *y)
{
    if (!PyDict_CheckExact(x) || !PyDict_CheckExact(y))
        return 0;
    int d = differ(x, y);
    if (d != 0)
        return d < 0 ? -1 : 0;
    Py_ssize_t pos = 0;
    PyObject *name, *value;
    while (PyDict_Next(x, &pos, &name, &value)) {
        PyObject *other = PyDict_GetItemWithError(y, name);
        if (other == NULL)
            return PyErr_Occurred() ? -1 : 0;
        if (Py_TYPE(value) != Py_TYPE(other))
            return 0;
    }
    return 1;
}

/* `items` non-empty or `others` non-empty (`x.blocks or y.blocks`). */
static int
either_true(PyObject *items, PyObject *others)
{
    int truth = PyObject_IsTrue(items);
    return truth != 0 ? truth : PyObject_IsTrue(others);
}

enum { OPCODE, SAT, ATTRS, DEST, DESTS, SRCS, BLOCKS, FIELDS };

static int
same_instruction(PyObject *x, PyObject *y, Body *body)
{
    static PyObject **names[FIELDS] = {&s_opcode, &s_sat, &s_attrs, &s_dest, &s_dests,
                                        &s_srcs, &s_blocks};
    PyObject *a[FIELDS] = {NULL}, *b[FIELDS] = {NULL};
    int same = -1, any;
    for (int f = 0; f < FIELDS; f++)
        if ((a[f] = get(x, *names[f])) == NULL
            || (b[f] = get(y, *names[f])) == NULL)
            goto done;
    if (a[OPCODE] != b[OPCODE] || a[SAT] != b[SAT]) {
        same = 0;
        goto done;
    }
    if ((same = same_attrs(a[ATTRS], b[ATTRS])) != 1)
        goto done;
    if (Py_TYPE(a[DEST]) == (PyTypeObject *)Value)  /* the common case, as in the reference */
        same = Py_TYPE(b[DEST]) == (PyTypeObject *)Value ? same_fresh_value(a[DEST], b[DEST])
                                                         : 0;
    else
        same = same_storage(a[DEST], b[DEST]);
    if (same != 1)
        goto done;
    any = either_true(a[DESTS], b[DESTS]);
    if (any != 0 && (same = any < 0 ? -1 : same_items(a[DESTS], b[DESTS], same_storage_in,
                                                          body)) != 1)
        goto done;
    if ((same = same_items(a[SRCS], b[SRCS], same_src, body)) != 1)
        goto done;
    any = either_true(a[BLOCKS], b[BLOCKS]);
    same = any <= 0 ? (any < 0 ? -1 : 1) : same_blocks(a[BLOCKS], b[BLOCKS], body);
done:
    for (int f = 0; f < FIELDS; f++) {
        Py_XDECREF(a[f]);
        Py_XDECREF(b[f]);
    }
    return same;
}

/* One block against its counterpart: name, length, logical successors, instructions. */
static int
same_block(PyObject *old, PyObject *new, Body *body)
{
    PyObject *old_list = NULL, *new_list = NULL, *old_succ = NULL, *new_succ = NULL;
    int same = differ_at(old, new, s_name);
    same = same < 0 ? -1 : !same;
    if (same == 1 && ((old_list = sequence_attr(old, s_instructions)) == NULL
                      || (new_list = sequence_attr(new, s_instructions)) == NULL))
        same = -1;
    if (same == 1 && PySequence_Fast_GET_SIZE(old_list) != PySequence_Fast_GET_SIZE(new_list))
        same = 0;
    if (same == 1 && ((old_succ = get(old, s_logical_successors)) == NULL
                      || (new_succ = get(new, s_logical_successors)) == NULL))
        same = -1;
    if (same == 1 && (old_succ == Py_None) != (new_succ == Py_None))
        same = 0;
    if (same == 1 && old_succ != Py_None)
        same = same_blocks(old_succ, new_succ, body);
    Py_ssize_t count = same == 1 ? PySequence_Fast_GET_SIZE(old_list) : 0;
    for (Py_ssize_t i = 0; same == 1 && i < count; i++) {
        prefetch_ahead(old_list, i, count);
        prefetch_ahead(new_list, i, count);
        same = same_instruction(PySequence_Fast_GET_ITEM(old_list, i),
                                PySequence_Fast_GET_ITEM(new_list, i), body);
    }
    Py_XDECREF(old_list);
    Py_XDECREF(new_list);
    Py_XDECREF(old_succ);
    Py_XDECREF(new_succ);
    return same;
}

PyObject *
same_body(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (!bound())
        return NULL;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "same_body takes 2 arguments: before, after");
        return NULL;
    }
    Body body = {NULL, NULL, NULL};
    PyObject *old_blocks = sequence_attr(args[0], s_blocks);
    PyObject *new_blocks = old_blocks ? sequence_attr(args[1], s_blocks) : NULL;
    int same = -1;
    if (new_blocks != NULL && (body.uniforms = sequence_attr(args[1], s_uniforms)) != NULL
        && (body.old_index = block_index(old_blocks)) != NULL
        && (body.new_index = block_index(new_blocks)) != NULL) {
        Py_ssize_t n = Py_MIN(PySequence_Fast_GET_SIZE(old_blocks),
                              PySequence_Fast_GET_SIZE(new_blocks));  /* zip's length */
        same = 1;
        for (Py_ssize_t b = 0; same == 1 && b < n; b++)
            same = same_block(PySequence_Fast_GET_ITEM(old_blocks, b),
                              PySequence_Fast_GET_ITEM(new_blocks, b), &body);
    }
    Py_XDECREF(old_blocks);
    Py_XDECREF(new_blocks);
    Py_XDECREF(body.uniforms);
    Py_XDECREF(body.old_index);
    Py_XDECREF(body.new_index);
    return same < 0 ? NULL : PyBool_FromLong(same);
}
