/* agxir.ccore's attribute access: reading and writing the IR objects' attributes as Python
 * would, fast on CPython 3.11 (included by core.h, which comes first; attributes.c holds
 * the part that is not inline).
 *
 * Reading and writing an attribute through the generic protocol costs a type lookup and a
 * hash probe of the instance's keys each time; that was most of what the clone and the
 * comparison cost (as much as the Python they replace, which CPython's specializing
 * interpreter makes fast by remembering where each attribute lives). On CPython 3.11, whose
 * layout this knows, `get` and `store` do what that interpreter does
 * (LOAD_ATTR_INSTANCE_VALUE and STORE_ATTR_INSTANCE_VALUE): an instance of a class without
 * __slots__ keeps its attributes in an array laid out by keys the class shares with all its
 * instances, so the place of `name` is found once per class and version and then read or
 * written directly. Anything unusual (another Python version, a class with its own
 * __getattribute__ or __setattr__, a data descriptor of that name, an instance whose
 * attributes were moved to a real dict, a name not yet among the shared keys) takes the
 * generic protocol instead.
 */
#ifndef AGXIR_CCORE_ATTRIBUTES_H
#define AGXIR_CCORE_ATTRIBUTES_H

/* (-DGENERIC_ATTRIBUTES builds the other way on 3.11 too, to test it.) */
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && !defined(GENERIC_ATTRIBUTES)
#define DIRECT_ATTRIBUTES 1
#define Py_BUILD_CORE 1
#include "internal/pycore_dict.h"
#undef Py_BUILD_CORE

/* 3.11's _PyObject_ValuesPointer (internal/pycore_object.h, which cannot be included
 * after Python.h): the attribute array sits four pointers before the object. */
#define VALUES_POINTER(obj) (((PyDictValues **)(obj)) - 4)

/* The attribute array of `obj` when it has one, else NULL. */
static inline PyDictValues *
attribute_array(PyObject *obj)
{
    return Py_TYPE(obj)->tp_flags & Py_TPFLAGS_MANAGED_DICT ? *VALUES_POINTER(obj)
                                                             : NULL;
}
#endif

static inline void
prefetch_object(PyObject *obj)
{
#ifdef DIRECT_ATTRIBUTES
    __builtin_prefetch(VALUES_POINTER(obj));
#else
    (void)obj;
#endif
}

static inline void
prefetch_attributes(PyObject *obj)
{
#ifdef DIRECT_ATTRIBUTES
    PyDictValues *values = attribute_array(obj);
    if (values != NULL)
        __builtin_prefetch(values->values);
#else
    (void)obj;
#endif
}

/* Before the loops over a block's instructions read item `i` of `items`: the objects a few
 * places on, and the attribute arrays of the ones nearer, asked of memory early (reading
 * them is mostly waiting for memory; a loop this long leaves the processor no way to see
 * them coming). */
static inline void
prefetch_ahead(PyObject *items, Py_ssize_t i, Py_ssize_t count)
{
    if (i + 8 < count)
        prefetch_object(PySequence_Fast_GET_ITEM(items, i + 8));
    if (i + 4 < count)
        prefetch_attributes(PySequence_Fast_GET_ITEM(items, i + 4));
}

/* `obj.<name>`, a new reference. */
CCORE_INTERNAL PyObject *get(PyObject *obj, PyObject *name);

/* `obj.<name> = value` (past: `object.__setattr__(obj, name, value)`, past a frozen
 * dataclass's __setattr__, as its __init__ and agxir.ir._clone do). */
CCORE_INTERNAL int store(PyObject *obj, PyObject *name, PyObject *value, int past);

/* `obj.<name>` as a sequence (a new reference to a list or tuple). */
CCORE_INTERNAL PyObject *sequence_attr(PyObject *obj, PyObject *name);

#endif
