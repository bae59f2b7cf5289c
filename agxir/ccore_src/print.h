/* The compiled printer's shared declarations (print_parts.c: the text buffer and the
 * spelling of values, operands and destinations; print.c: opcode rows' facts, instructions,
 * functions and the module's printing functions). print.c's opening comment says what the
 * printer does and why.
 */
#ifndef AGXIR_CCORE_PRINT_H
#define AGXIR_CCORE_PRINT_H

#include "core.h"

#include <string.h>

/* OK: written; FAIL: a Python exception is set; ODD: the C does not spell this for certain,
 * the reference must (nothing raised). */
enum { OK = 0, FAIL = -1, ODD = 1 };

/* Bound by bind_printer (print.c). */
extern CCORE_INTERNAL PyObject *minifloats;  /* "#" + repr(minifloat_value(bits)) by bits */
extern CCORE_INTERNAL PyObject *s_half, *s_index, *s_buffer_bytes, *s_empty, *s_hex_spec;

/* Text as UTF-8, growing from a buffer inside the struct (most lines fit it). */
typedef struct {
    char *data;
    Py_ssize_t len, cap;
    char inline_data[512];
} Buf;

static inline void
buf_init(Buf *b)
{
    b->data = b->inline_data;
    b->len = 0;
    b->cap = sizeof b->inline_data;
}

static inline void
buf_free(Buf *b)
{
    if (b->data != b->inline_data)
        PyMem_Free(b->data);
}

CCORE_INTERNAL int buf_grow(Buf *b, Py_ssize_t need);

static inline int
put(Buf *b, const char *text, Py_ssize_t n)
{
    if (b->cap - b->len < n && buf_grow(b, n) < 0)
        return FAIL;
    memcpy(b->data + b->len, text, n);
    b->len += n;
    return OK;
}

/* (a string literal only: its size is taken) */
#define PUT(b, literal) put((b), "" literal, (Py_ssize_t)(sizeof(literal) - 1))

CCORE_INTERNAL int put_str(Buf *b, PyObject *text);
CCORE_INTERNAL int put_long(Buf *b, long long value);
CCORE_INTERNAL int put_formatted(Buf *b, PyObject *obj);
CCORE_INTERNAL int put_attribute(Buf *b, PyObject *obj, PyObject *name);
CCORE_INTERNAL int truth(PyObject *obj, PyObject *name);
CCORE_INTERNAL int put_operand(Buf *b, PyObject *src, int is_float);
CCORE_INTERNAL int put_dest(Buf *b, PyObject *dest);

#endif
