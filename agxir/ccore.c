/* agxir.ccore: the compiled core of two hot loops over a whole function.
 *
 * clone(fn)           what agxir.ir._clone does (the reference), object for object;
 * same_body(old, new) the block-by-block part of agxir.structural.prints_as, as
 *                     agxir.structural.same_body (the reference) does it.
 *
 * Both cost about 1.5-2 us per instruction in tight Python and run once or twice per pass
 * step, so on long functions they were the largest single costs of checking a program
 * (docs/performance.md, "Scale"). The Python references stay the specification:
 * tests/agxir/test_ccore.py checks that the two agree, object graph for object graph.
 *
 * The IR's classes are plain Python dataclasses; agxir.ir hands them over once with
 * bind(). Their attributes are read and written as Python would (see "attribute access"),
 * never through an instance's __dict__: asking for it makes CPython build a real dict for
 * the object, slower and larger than the attribute array it keeps otherwise.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The IR's classes (agxir.ir), owned references set by bind(). */
static PyObject *Value, *Operand, *Instruction, *Block, *Function;
static PyObject *Uniform, *Immediate, *Register, *VirtualRegister;

static PyObject *empty_tuple;
static PyObject *s_name, *s_size, *s_ref, *s_abs, *s_neg, *s_opcode, *s_dest, *s_srcs,
    *s_attrs, *s_blocks, *s_sat, *s_dests, *s_instructions, *s_logical_successors,
    *s_uniforms, *s_level, *s_notes, *s_bits, *s_copy;

#define IS_A(obj, type) PyObject_TypeCheck((obj), (PyTypeObject *)(type))

static int
bound(void)
{
    if (Value == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "agxir.ccore: bind() was never called");
        return 0;
    }
    return 1;
}

/* --- attribute access -------------------------------------------------------------- */
/* Reading and writing an attribute through the generic protocol costs a type lookup and a
 * hash probe of the instance's keys each time; that was most of what these loops cost (as
 * much as the Python they replace, which CPython's specializing interpreter makes fast by
 * remembering where each attribute lives). On CPython 3.11, whose layout this knows, `get`
 * and `store` do what that interpreter does (LOAD_ATTR_INSTANCE_VALUE and
 * STORE_ATTR_INSTANCE_VALUE): an instance of a class without __slots__ keeps its
 * attributes in an array laid out by keys the class shares with all its instances, so the
 * place of `name` is found once per class and version and then read or written directly.
 * Anything unusual (another Python version, a class with its own __getattribute__ or
 * __setattr__, a data descriptor of that name, an instance whose attributes were moved to
 * a real dict, a name not yet among the shared keys) takes the generic protocol instead. */

/* (-DGENERIC_ATTRIBUTES builds the other way on 3.11 too, to test it.) */
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && !defined(GENERIC_ATTRIBUTES)
#define DIRECT_ATTRIBUTES 1
#define Py_BUILD_CORE 1
#include "internal/pycore_dict.h"
#undef Py_BUILD_CORE

/* 3.11's _PyObject_ValuesPointer (internal/pycore_object.h, which cannot be included
 * after Python.h): the attribute array sits four pointers before the object. */
#define VALUES_POINTER(obj) (((PyDictValues **)(obj)) - 4)

/* Where (class, name) lives in its instances' attribute arrays, for the class's version. */
typedef struct {
    PyTypeObject *type;
    PyObject *name;
    unsigned int version;
    Py_ssize_t index;
} Place;

static Place places[64];

/* The index of `name` in the attribute arrays of `type`'s instances, or -1 for "use the
 * generic protocol". The names are interned, so they are found among the keys by identity. */
static Py_ssize_t
place_of(PyTypeObject *type, PyObject *name)
{
    Place *place = &places[(((uintptr_t)type >> 4) ^ ((uintptr_t)name >> 4)) & 63];
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
#endif
}

static inline void
prefetch_attributes(PyObject *obj)
{
#ifdef DIRECT_ATTRIBUTES
    PyDictValues *values = attribute_array(obj);
    if (values != NULL)
        __builtin_prefetch(values->values);
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
static PyObject *
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

/* `obj.<name> = value` (past: `object.__setattr__(obj, name, value)`, past a frozen
 * dataclass's __setattr__, as its __init__ and agxir.ir._clone do). */
static int
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

/* --- cloning ----------------------------------------------------------------------- */

/* object.__new__(type): an instance with no attributes yet, as _clone's `new(Value)`. */
static PyObject *
bare(PyObject *type)
{
    return PyBaseObject_Type.tp_new((PyTypeObject *)type, empty_tuple, NULL);
}

/* `made.<name> = obj.<name>` for an ordinary (not frozen) dataclass. */
static int
copy_attr(PyObject *made, PyObject *obj, PyObject *name)
{
    PyObject *value = get(obj, name);
    if (value == NULL)
        return -1;
    int failed = store(made, name, value, 0);
    Py_DECREF(value);
    return failed;
}

/* Sets `made.<name> = value` and drops the caller's reference to value, failed or not. */
static int
set_new(PyObject *made, PyObject *name, PyObject *value)
{
    if (value == NULL)
        return -1;
    int failed = store(made, name, value, 0);
    Py_DECREF(value);
    return failed;
}

/* `map.get(key, key)`, a new reference. */
static PyObject *
mapped(PyObject *map, PyObject *key)
{
    PyObject *found = PyDict_GetItemWithError(map, key);
    if (found == NULL) {
        if (PyErr_Occurred())
            return NULL;
        found = key;
    }
    return Py_NewRef(found);
}

/* What _clone's `storage(dest)` gives: a Value's clone, anything else itself. */
static PyObject *
storage(PyObject *values, PyObject *dest)
{
    return IS_A(dest, Value) ? mapped(values, dest) : Py_NewRef(dest);
}

/* `[map.get(x, x) for x in items]` (only_values: `[storage(x) for x in items]`) when
 * `items` is true, else `[]`: the shape of _clone's blocks, dests and successors. */
static PyObject *
mapped_list(PyObject *items, PyObject *map, int only_values)
{
    int truth = PyObject_IsTrue(items);
    if (truth <= 0)
        return truth < 0 ? NULL : PyList_New(0);
    PyObject *seq = PySequence_Fast(items, "a list was expected");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *made = only_values ? storage(map, item) : mapped(map, item);
        if (made == NULL)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, made);
    }
    Py_DECREF(seq);
    return out;
}

/* One source, as _clone's loop body: a fresh Operand for a Value ref (set past the frozen
 * dataclass's __setattr__, as its __init__ does), the same Operand for anything else. */
static PyObject *
clone_src(PyObject *src, PyObject *values)
{
    PyObject *ref = get(src, s_ref);
    if (ref == NULL)
        return NULL;
    PyObject *op = NULL;
    if (IS_A(ref, Value)) {
        op = bare(Operand);
        PyObject *new_ref = op ? mapped(values, ref) : NULL;
        PyObject *abs = new_ref ? get(src, s_abs) : NULL;
        PyObject *neg = abs ? get(src, s_neg) : NULL;
        if (neg == NULL || store(op, s_ref, new_ref, 1) < 0
            || store(op, s_abs, abs, 1) < 0
            || store(op, s_neg, neg, 1) < 0)
            Py_CLEAR(op);
        Py_XDECREF(new_ref);
        Py_XDECREF(abs);
        Py_XDECREF(neg);
    }
    else if (Py_IS_TYPE(src, (PyTypeObject *)Operand)) {
        op = Py_NewRef(src);
    }
    else {  /* not an Operand at all: _clone rebuilds one, Operand(ref, src.abs, src.neg) */
        PyObject *abs = get(src, s_abs);
        PyObject *neg = abs ? get(src, s_neg) : NULL;
        if (neg != NULL)
            op = PyObject_CallFunctionObjArgs(Operand, ref, abs, neg, NULL);
        Py_XDECREF(abs);
        Py_XDECREF(neg);
    }
    Py_DECREF(ref);
    return op;
}

static PyObject *
clone_srcs(PyObject *ins, PyObject *values)
{
    PyObject *srcs = get(ins, s_srcs);
    if (srcs == NULL)
        return NULL;
    PyObject *seq = PySequence_Fast(srcs, "srcs must be a list");
    Py_DECREF(srcs);
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        PyObject *op = clone_src(PySequence_Fast_GET_ITEM(seq, i), values);
        if (op == NULL)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, op);
    }
    Py_DECREF(seq);
    return out;
}

/* `ins.attrs.copy()` */
static PyObject *
copied_attrs(PyObject *ins)
{
    PyObject *attrs = get(ins, s_attrs);
    if (attrs == NULL)
        return NULL;
    PyObject *copy = PyDict_CheckExact(attrs) ? PyDict_Copy(attrs)
                                              : PyObject_CallMethodNoArgs(attrs, s_copy);
    Py_DECREF(attrs);
    return copy;
}

/* `<items>` read from obj, then mapped_list'ed. */
static PyObject *
mapped_attr(PyObject *obj, PyObject *name, PyObject *map, int only_values)
{
    PyObject *items = get(obj, name);
    if (items == NULL)
        return NULL;
    PyObject *out = mapped_list(items, map, only_values);
    Py_DECREF(items);
    return out;
}

/* A fresh Instruction, its fields set in the dataclass's order (as its __init__ would:
 * the instance's attributes then list in the same order as the original's). */
static PyObject *
clone_instruction(PyObject *ins, PyObject *values, PyObject *blocks)
{
    PyObject *made = bare(Instruction);
    if (made == NULL)
        return NULL;
    PyObject *dest = NULL;
    if (copy_attr(made, ins, s_opcode) < 0
        || (dest = get(ins, s_dest)) == NULL
        || set_new(made, s_dest, storage(values, dest)) < 0
        || set_new(made, s_srcs, clone_srcs(ins, values)) < 0
        || set_new(made, s_attrs, copied_attrs(ins)) < 0
        || set_new(made, s_blocks, mapped_attr(ins, s_blocks, blocks, 0)) < 0
        || copy_attr(made, ins, s_sat) < 0
        || set_new(made, s_dests, mapped_attr(ins, s_dests, values, 1)) < 0)
        Py_CLEAR(made);
    Py_XDECREF(dest);
    return made;
}

/* `fn.<name>` as a sequence (a new reference to a list or tuple). */
static PyObject *
sequence_attr(PyObject *obj, PyObject *name)
{
    PyObject *items = get(obj, name);
    if (items == NULL)
        return NULL;
    PyObject *seq = PySequence_Fast(items, "a list was expected");
    Py_DECREF(items);
    return seq;
}

/* _clone's first two loops: every block's fresh Block(name), every Value destination's
 * fresh Value (later definitions of the same Value win, as in the dict of the reference). */
static int
fresh_blocks_and_values(PyObject *old_blocks, PyObject *blocks, PyObject *values)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(old_blocks);
    for (Py_ssize_t b = 0; b < n; b++) {
        PyObject *block = PySequence_Fast_GET_ITEM(old_blocks, b);
        PyObject *name = get(block, s_name);
        PyObject *made = name ? PyObject_CallOneArg(Block, name) : NULL;
        Py_XDECREF(name);
        int failed = made == NULL || PyDict_SetItem(blocks, block, made) < 0;
        Py_XDECREF(made);
        if (failed)
            return -1;
    }
    for (Py_ssize_t b = 0; b < n; b++) {
        PyObject *instructions = sequence_attr(PySequence_Fast_GET_ITEM(old_blocks, b),
                                               s_instructions);
        if (instructions == NULL)
            return -1;
        Py_ssize_t count = PySequence_Fast_GET_SIZE(instructions);
        for (Py_ssize_t i = 0; i < count; i++) {
            prefetch_ahead(instructions, i, count);
            PyObject *dest = get(PySequence_Fast_GET_ITEM(instructions, i), s_dest);
            int failed = dest == NULL;
            if (!failed && IS_A(dest, Value)) {
                PyObject *made = bare(Value);
                failed = made == NULL || copy_attr(made, dest, s_name) < 0
                         || copy_attr(made, dest, s_size) < 0
                         || PyDict_SetItem(values, dest, made) < 0;
                Py_XDECREF(made);
            }
            Py_XDECREF(dest);
            if (failed) {
                Py_DECREF(instructions);
                return -1;
            }
        }
        Py_DECREF(instructions);
    }
    return 0;
}

/* _clone's third loop, for one block: its instructions and logical successors. */
static int
fill_block(PyObject *block, PyObject *blocks, PyObject *values)
{
    PyObject *made = PyDict_GetItemWithError(blocks, block);  /* borrowed */
    if (made == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, block);
        return -1;
    }
    PyObject *instructions = sequence_attr(block, s_instructions);
    if (instructions == NULL)
        return -1;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(instructions);
    PyObject *cloned = PyList_New(count);
    for (Py_ssize_t i = 0; cloned != NULL && i < count; i++) {
        prefetch_ahead(instructions, i, count);
        PyObject *ins = clone_instruction(PySequence_Fast_GET_ITEM(instructions, i), values,
                                          blocks);
        if (ins == NULL)
            Py_CLEAR(cloned);
        else
            PyList_SET_ITEM(cloned, i, ins);
    }
    Py_DECREF(instructions);
    Py_INCREF(made);  /* held across the calls below, which could drop blocks' entry */
    int failed = set_new(made, s_instructions, cloned) < 0;
    PyObject *successors = failed ? NULL : get(block, s_logical_successors);
    failed = failed || successors == NULL;
    if (!failed && successors != Py_None)
        failed = set_new(made, s_logical_successors, mapped_list(successors, blocks, 0)) < 0;
    Py_XDECREF(successors);
    Py_DECREF(made);
    return failed ? -1 : 0;
}

/* Function(fn.name, list(fn.uniforms), [blocks[b] for b in fn.blocks], fn.level,
 * dict(fn.notes)) */
static PyObject *
new_function(PyObject *fn, PyObject *old_blocks, PyObject *blocks)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(old_blocks);
    PyObject *name = NULL, *uniforms = NULL, *level = NULL, *notes = NULL, *made = NULL;
    PyObject *new_blocks = PyList_New(n);
    for (Py_ssize_t b = 0; new_blocks != NULL && b < n; b++) {
        PyObject *block = PySequence_Fast_GET_ITEM(old_blocks, b);
        PyObject *found = PyDict_GetItemWithError(blocks, block);
        if (found == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetObject(PyExc_KeyError, block);
            Py_CLEAR(new_blocks);
        }
        else
            PyList_SET_ITEM(new_blocks, b, Py_NewRef(found));
    }
    PyObject *raw = NULL;
    if (new_blocks != NULL && (name = get(fn, s_name)) != NULL
        && (raw = get(fn, s_uniforms)) != NULL
        && (uniforms = PySequence_List(raw)) != NULL
        && (level = get(fn, s_level)) != NULL) {
        Py_SETREF(raw, get(fn, s_notes));
        if (raw != NULL && (notes = PyObject_CallOneArg((PyObject *)&PyDict_Type, raw)) != NULL)
            made = PyObject_CallFunctionObjArgs(Function, name, uniforms, new_blocks, level,
                                                notes, NULL);
    }
    Py_XDECREF(raw);
    Py_XDECREF(name);
    Py_XDECREF(uniforms);
    Py_XDECREF(new_blocks);
    Py_XDECREF(level);
    Py_XDECREF(notes);
    return made;
}

static PyObject *
clone_function(PyObject *module, PyObject *fn)
{
    if (!bound())
        return NULL;
    PyObject *old_blocks = sequence_attr(fn, s_blocks);
    if (old_blocks == NULL)
        return NULL;
    PyObject *made = NULL;
    PyObject *blocks = PyDict_New();
    PyObject *values = PyDict_New();
    if (blocks == NULL || values == NULL
        || fresh_blocks_and_values(old_blocks, blocks, values) < 0)
        goto done;
    for (Py_ssize_t b = 0; b < PySequence_Fast_GET_SIZE(old_blocks); b++)
        if (fill_block(PySequence_Fast_GET_ITEM(old_blocks, b), blocks, values) < 0)
            goto done;
    made = new_function(fn, old_blocks, blocks);
done:
    Py_DECREF(old_blocks);
    Py_XDECREF(blocks);
    Py_XDECREF(values);
    return made;
}

/* --- the structural comparison ------------------------------------------------------ */
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

static PyObject *
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

/* --- the module --------------------------------------------------------------------- */

static PyObject *
bind(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject **slots[] = {&Value, &Operand, &Instruction, &Block, &Function,
                          &Uniform, &Immediate, &Register, &VirtualRegister};
    Py_ssize_t count = sizeof slots / sizeof slots[0];
    if (nargs != count) {
        PyErr_Format(PyExc_TypeError, "bind takes %zd arguments", count);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++)
        if (!PyType_Check(args[i])) {
            PyErr_Format(PyExc_TypeError, "bind: argument %zd is not a class", i + 1);
            return NULL;
        }
    for (Py_ssize_t i = 0; i < count; i++)
        Py_XSETREF(*slots[i], Py_NewRef(args[i]));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"bind", (PyCFunction)(void (*)(void))bind, METH_FASTCALL,
     "bind(Value, Operand, Instruction, Block, Function, Uniform, Immediate, Register, "
     "VirtualRegister): the IR's classes, once, from agxir.ir."},
    {"clone", clone_function, METH_O, "clone(fn): what agxir.ir._clone(fn) gives."},
    {"same_body", (PyCFunction)(void (*)(void))same_body, METH_FASTCALL,
     "same_body(before, after): what agxir.structural.same_body gives."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "agxir.ccore",
    "The compiled core of agxir.ir's clone and agxir.structural's comparison (ccore.c).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit_ccore(void)
{
    struct { PyObject **slot; const char *text; } names[] = {
        {&s_name, "name"}, {&s_size, "size"}, {&s_ref, "ref"}, {&s_abs, "abs"},
        {&s_neg, "neg"}, {&s_opcode, "opcode"}, {&s_dest, "dest"}, {&s_srcs, "srcs"},
        {&s_attrs, "attrs"}, {&s_blocks, "blocks"}, {&s_sat, "sat"}, {&s_dests, "dests"},
        {&s_instructions, "instructions"}, {&s_logical_successors, "logical_successors"},
        {&s_uniforms, "uniforms"}, {&s_level, "level"}, {&s_notes, "notes"},
        {&s_bits, "bits"}, {&s_copy, "copy"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (*names[i].slot == NULL
            && (*names[i].slot = PyUnicode_InternFromString(names[i].text)) == NULL)
            return NULL;
    if (empty_tuple == NULL && (empty_tuple = PyTuple_New(0)) == NULL)
        return NULL;
    return PyModule_Create(&module_def);
}
