/* agxir.ccore's attribute access, the part that is not inline (attributes.h says how and
 * why): where each (class, name) lives in its instances' attribute arrays, and `get`,
 * `store` and `sequence_attr`, which every loop of the clone and the comparison calls. */
#include "core.h"

#ifdef DIRECT_ATTRIBUTES
/* Where (class, name) lives in its instances' attribute arrays, for the class's version. */
typedef struct {
    PyTypeObject *type;
    PyObject *name;
    unsigned int version;
    Py_ssize_t index;
} Place;

/* Direct-mapped by a multiplicative hash of both pointers: with 64 slots and a hash of
 * shifted pointers, Operand.abs and Register.half met in one slot and missed each time. */
#define PLACES 512
static Place places[PLACES];

/* The index of `name` in the attribute arrays of `type`'s instances, or -1 for "use the
 * generic protocol". The names are interned, so they are found among the keys by identity. */
static Py_ssize_t
place_of(PyTypeObject *type, PyObject *name)
{
    uint64_t mixed = ((uint64_t)(uintptr_t)type ^ ((uint64_t)(uintptr_t)name << 1))
                     * UINT64_C(0x9E3779B97F4A7C15);
    Place *place = &places[mixed >> (64 - 9)];  /* the top 9 bits: PLACES == 1 << 9 */
    if (place->type == type && place->name == name && place->version == type->tp_version_tag
        && type->tp_version_tag != 0)
        return place->index;
    if (!(type->tp_flags & Py_TPFLAGS_MANAGED_DICT))
        return -1;
    PyObject *descriptor = _PyType_Lookup(type, name);  /* also assigns a version tag */
    if (descriptor != NULL && Py_TYPE(descriptor)->tp_descr_set != NULL)
        return -1;  /* a data descriptor comes before the instance's own attributes */
    PyDictKeysObject *keys = ((PyHeapTypeObject *)type)->ht_cached_keys;
    if (keys == NULL || !DK_IS_UNICODE(keys) || type->tp_version_tag == 0)
        return -1;
    PyDictUnicodeEntry *entries = DK_UNICODE_ENTRIES(keys);
    for (Py_ssize_t i = 0; i < keys->dk_nentries; i++)
        if (entries[i].me_key == name) {
            *place = (Place){type, name, type->tp_version_tag, i};
            return i;
        }
    return -1;
}
#endif

PyObject *
get(PyObject *obj, PyObject *name)
{
#ifdef DIRECT_ATTRIBUTES
    PyDictValues *values = attribute_array(obj);
    if (values != NULL && Py_TYPE(obj)->tp_getattro == PyObject_GenericGetAttr) {
        Py_ssize_t index = place_of(Py_TYPE(obj), name);
        if (index >= 0 && values->values[index] != NULL)
            return Py_NewRef(values->values[index]);
    }
#endif
    return PyObject_GetAttr(obj, name);
}

int
store(PyObject *obj, PyObject *name, PyObject *value, int past)
{
#ifdef DIRECT_ATTRIBUTES
    PyDictValues *values = attribute_array(obj);
    int generic = past || Py_TYPE(obj)->tp_setattro == PyObject_GenericSetAttr;
    Py_ssize_t index = values != NULL && generic ? place_of(Py_TYPE(obj), name) : -1;
    if (index >= 0) {
        PyObject *old = values->values[index];
        values->values[index] = Py_NewRef(value);
        if (old == NULL)
            _PyDictValues_AddToInsertionOrder(values, index);  /* the order vars(obj) has */
        else
            Py_DECREF(old);
        return 0;
    }
#endif
    return past ? PyObject_GenericSetAttr(obj, name, value) : PyObject_SetAttr(obj, name, value);
}

PyObject *
sequence_attr(PyObject *obj, PyObject *name)
{
    PyObject *items = get(obj, name);
    if (items == NULL)
        return NULL;
    PyObject *seq = PySequence_Fast(items, "a list was expected");
    Py_DECREF(items);
    return seq;
}
