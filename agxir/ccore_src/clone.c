/* agxir.ccore's clone(fn): what agxir.ir._clone (the reference, agxir.ir.clone_reference)
 * gives, object for object: fresh blocks, Values, Instructions and Operands where it makes
 * them, the original's objects where it shares them, attributes set in the same order.
 *
 * It is C because cloning runs once or twice per pass step over the whole function and cost
 * about 1.5-2 us per instruction in Python (core.h). tests/agxir/test_ccore.py compares it
 * with the reference, object graph for object graph.
 */
#include "core.h"

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
    PyObject *seq = sequence_attr(ins, s_srcs);
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

PyObject *
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
