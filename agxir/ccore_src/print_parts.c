/* print_parts.c: the compiled printer's text buffer and its spelling of values,
 * operands and destinations, as agxir.text.printer's format_operand and format_dest and
 * Python's f-strings spell them (print.h declares them; print.c puts them together).
 */
#include "print.h"

int
buf_grow(Buf *b, Py_ssize_t need)
{
    Py_ssize_t cap = b->cap;
    while (cap - b->len < need)
        cap *= 2;
    char *data = PyMem_Malloc(cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return FAIL;
    }
    memcpy(data, b->data, b->len);
    buf_free(b);
    b->data = data;
    b->cap = cap;
    return OK;
}

/* An exact str, as UTF-8 (ODD for anything else or a string UTF-8 cannot hold). */
int
put_str(Buf *b, PyObject *text)
{
    if (!PyUnicode_CheckExact(text))
        return ODD;
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &n);
    if (utf8 == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeError))
            return FAIL;
        PyErr_Clear();
        return ODD;
    }
    return put(b, utf8, n);
}

int
put_long(Buf *b, long long value)
{
    char digits[24];
    char *end = digits + sizeof digits, *at = end;
    unsigned long long magnitude = value < 0 ? 0ULL - (unsigned long long)value
                                             : (unsigned long long)value;
    do
        *--at = (char)('0' + magnitude % 10);
    while ((magnitude /= 10) != 0);
    if (value < 0)
        *--at = '-';
    return put(b, at, end - at);
}

/* `obj` as an f-string's `{obj}` spells it: format(obj, ''). */
int
put_formatted(Buf *b, PyObject *obj)
{
    if (PyUnicode_CheckExact(obj))
        return put_str(b, obj);
    if (PyLong_CheckExact(obj)) {
        int overflow;
        long long value = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (!overflow)
            return put_long(b, value);
    }
    PyObject *text = PyObject_Format(obj, s_empty);
    if (text == NULL)
        return FAIL;
    int status = put_str(b, text);
    Py_DECREF(text);
    return status;
}

/* An attribute `name`'s value as put_formatted spells it. */
int
put_attribute(Buf *b, PyObject *obj, PyObject *name)
{
    PyObject *value = get(obj, name);
    if (value == NULL)
        return FAIL;
    int status = put_formatted(b, value);
    Py_DECREF(value);
    return status;
}

/* An exact int that fits a long long (ODD otherwise). */
static int
small_int(PyObject *obj, long long *out)
{
    if (!PyLong_CheckExact(obj))
        return ODD;
    int overflow;
    *out = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow)
        return ODD;
    return OK;
}

static int
int_attribute(PyObject *obj, PyObject *name, long long *out)
{
    PyObject *value = get(obj, name);
    if (value == NULL)
        return FAIL;
    int status = small_int(value, out);
    Py_DECREF(value);
    return status;
}
/* ---- operands and destinations ---- */

/* What Register.name spells for (half, size) with size 16, 32 or 64 and half >= 0,
 * written into `text` (ODD for any other register: Python's spelling of those is left to
 * Python). Returns the length; *colon is where `:` is, or -1. */
static int
register_spelling(PyObject *reg, char *text, int *length, int *colon)
{
    long long half, size;
    int status = int_attribute(reg, s_half, &half);
    if (status == OK)
        status = int_attribute(reg, s_size, &size);
    if (status != OK)
        return status;
    if (half < 0 || half > 1000000000 || (size != 16 && size != 32 && size != 64))
        return ODD;
    /* h<half>:<size> misaligned; r<pair>l/h, r<pair>, d<pair> by size */
    Buf spelled;
    buf_init(&spelled);
    *colon = -1;
    if (half % (size / 16) != 0) {
        put(&spelled, "h", 1);
        put_long(&spelled, half);
        *colon = (int)spelled.len;
        put(&spelled, ":", 1);
        put_long(&spelled, size);
    }
    else {
        put(&spelled, size == 16 || size == 32 ? "r" : "d", 1);
        put_long(&spelled, half / 2);
        if (size == 16)
            put(&spelled, &"lh"[half % 2], 1);
    }
    int n = (int)spelled.len;  /* (at most 24 bytes: the inline buffer never grows) */
    memcpy(text, spelled.data, n);
    *length = n;
    return OK;
}

/* `.abs` and `.neg` as the operand has them. */
static int
put_modifiers(Buf *b, int abs, int neg)
{
    if (abs && PUT(b, ".abs") < 0)
        return FAIL;
    if (neg && PUT(b, ".neg") < 0)
        return FAIL;
    return OK;
}

int
truth(PyObject *obj, PyObject *name)
{
    PyObject *value = get(obj, name);
    if (value == NULL)
        return -1;
    int result = value == Py_True ? 1 : value == Py_False ? 0 : PyObject_IsTrue(value);
    Py_DECREF(value);
    return result;
}

/* One source as format_operand spells it (the fast paths of format_instruction spell the
 * same text). `is_float`: the row reads it as a float (minifloat immediates). */
int
put_operand(Buf *b, PyObject *src, int is_float)
{
    if (Py_TYPE(src) != (PyTypeObject *)Operand)
        return ODD;
    int abs = truth(src, s_abs);
    if (abs < 0)
        return FAIL;
    int neg = truth(src, s_neg);
    if (neg < 0)
        return FAIL;
    PyObject *ref = get(src, s_ref);
    if (ref == NULL)
        return FAIL;
    PyTypeObject *type = Py_TYPE(ref);
    int status;
    if (type == (PyTypeObject *)Value) {
        PyObject *name = get(ref, s_name);
        if (name == NULL)
            status = FAIL;
        else {
            status = PUT(b, "%");
            if (status == OK)
                status = put_str(b, name);
            Py_DECREF(name);
        }
    }
    else if (type == (PyTypeObject *)Uniform) {
        PyObject *name = get(ref, s_name);
        status = name == NULL ? FAIL : put_str(b, name);
        Py_XDECREF(name);
    }
    else if (type == (PyTypeObject *)Register) {
        /* Modifiers attach to the name, before a size: `h5.neg:32`. */
        char text[48];
        int length, colon;
        status = register_spelling(ref, text, &length, &colon);
        if (status == OK) {
            Py_DECREF(ref);
            if (colon < 0)
                return put(b, text, length) < 0 ? FAIL : put_modifiers(b, abs, neg);
            if (put(b, text, colon) < 0 || put_modifiers(b, abs, neg) < 0)
                return FAIL;
            return put(b, text + colon, length - colon);
        }
        Py_DECREF(ref);
        return status;
    }
    else if (type == (PyTypeObject *)VirtualRegister) {
        long long index, size;
        status = int_attribute(ref, s_index, &index);
        if (status == OK)
            status = int_attribute(ref, s_size, &size);
        Py_DECREF(ref);
        if (status != OK)
            return status;
        if (PUT(b, "v") < 0 || put_long(b, index) < 0 || put_modifiers(b, abs, neg) < 0
            || PUT(b, ":") < 0)
            return FAIL;
        return put_long(b, size);
    }
    else if (type == (PyTypeObject *)Immediate) {
        long long bits;
        status = int_attribute(ref, s_bits, &bits);
        if (status == OK) {
            if (is_float && bits >= 0 && bits <= 0xFF)
                status = put_str(b, PyTuple_GET_ITEM(minifloats, bits));
            else
                status = PUT(b, "#") < 0 ? FAIL : put_long(b, bits);
        }
    }
    else
        status = ODD;
    Py_DECREF(ref);
    if (status != OK)
        return status;
    return put_modifiers(b, abs, neg);
}

/* A destination as format_dest spells it: `%x:32`, `r2`, `h5:32` or `v3:32`. */
int
put_dest(Buf *b, PyObject *dest)
{
    PyTypeObject *type = Py_TYPE(dest);
    if (type == (PyTypeObject *)Value) {
        int status = PUT(b, "%");
        if (status == OK)
            status = put_attribute(b, dest, s_name);
        if (status == OK)
            status = PUT(b, ":");
        if (status == OK)
            status = put_attribute(b, dest, s_size);
        return status;
    }
    if (type == (PyTypeObject *)Register) {
        char text[48];
        int length, colon;
        int status = register_spelling(dest, text, &length, &colon);
        return status == OK ? put(b, text, length) : status;
    }
    if (type == (PyTypeObject *)VirtualRegister) {
        int status = PUT(b, "v");
        if (status == OK)
            status = put_attribute(b, dest, s_index);
        if (status == OK)
            status = PUT(b, ":");
        if (status == OK)
            status = put_attribute(b, dest, s_size);
        return status;
    }
    return ODD;
}
