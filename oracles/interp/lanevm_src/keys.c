/* lanevm_unit_keys: the interpreters' emit-cache keys (oracles/interp/emit_cache.py), built
 * in C. `emit_cache.unit_keys_reference` is the specification: for the same arguments this
 * gives the same list, key for key and part for part (the same types: True, not 1; tuples,
 * not lists), or the same all-None list. tests/oracles/interp/test_unit_keys.py checks the
 * two agree on every unit of the interpreters' corpora.
 *
 * Why C: the harness builds the keys of every block (SSA) or unit (wave) of every step of
 * every pipeline, about 8 us a unit in Python, of which the canonical text (already the
 * compiled printer's) is under half; the rest was the loop over sources and destinations.
 *
 * What the keys name (the IR's classes, the printer, the dict of opcode rows, the wave
 * branches' mnemonics and the kind parts) is bound once by key_setup, from emit_cache.
 * Whatever this does not expect (a container of another type, any exception on the way)
 * gives NotImplemented, and the caller runs the reference: it is never the one to be wrong.
 */
#include "vm.h"

/* Bound by key_setup (owned references). */
static PyTypeObject *Value_type, *Immediate_type, *Register_type, *VirtualRegister_type,
    *Uniform_type;
static PyObject *format_instruction, *opcode_rows, *wave_branches;
static PyObject *register_part, *immediate_part, *value_dest_part, *plain_vreg_part;
/* Interned by key_setup. */
static PyObject *s_opcode, *s_srcs, *s_dest, *s_dests, *s_blocks, *s_ref, *s_size, *s_name,
    *s_buffer_bytes, *s_u, *s_v, *s_phi;

/* ---- what a key needs of an opcode row, by the row's identity ---- */

typedef struct {
    PyObject *row;  /* owned: held, so no other object takes its address while it is here */
    PyObject *id;   /* owned: id(row) */
    int phi;        /* row.name == "phi" */
    int branch;     /* row.name in WAVE_BRANCHES */
} row_facts;

#define ROW_SLOTS 256
static row_facts row_cache[ROW_SLOTS];

static void
forget_rows(void)
{
    for (int i = 0; i < ROW_SLOTS; i++) {
        Py_CLEAR(row_cache[i].row);
        Py_CLEAR(row_cache[i].id);
    }
}

/* The facts of `row` copied to *out (out->id a new reference), or -1 with an exception. */
static int
facts_of(PyObject *row, row_facts *out)
{
    const uint64_t mixed = (uint64_t)(uintptr_t)row * UINT64_C(0x9E3779B97F4A7C15);
    row_facts *slot = &row_cache[mixed >> (64 - 8)];  /* the top 8 bits: ROW_SLOTS == 1 << 8 */
    if (slot->row != row) {
        PyObject *name = PyObject_GetAttr(row, s_name);
        if (name == NULL)
            return -1;
        const int phi = PyObject_RichCompareBool(name, s_phi, Py_EQ);
        const int branch = phi < 0 ? -1 : PySequence_Contains(wave_branches, name);
        Py_DECREF(name);
        PyObject *id = branch < 0 ? NULL : PyLong_FromVoidPtr(row);
        if (id == NULL)
            return -1;
        PyObject *old_row = slot->row, *old_id = slot->id;
        *slot = (row_facts){Py_NewRef(row), id, phi, branch};
        Py_XDECREF(old_row);  /* (after the slot is whole: a finalizer may look up rows) */
        Py_XDECREF(old_id);
    }
    *out = *slot;
    Py_INCREF(out->id);
    return 0;
}

/* ---- one key's parts, owned, before they become its tuple ---- */

typedef struct {
    PyObject **items;
    Py_ssize_t count, capacity;
} parts_buffer;

/* Appends `item` (stolen; NULL: an exception is set, and -1). */
static int
push(parts_buffer *parts, PyObject *item)
{
    if (item == NULL)
        return -1;
    if (parts->count == parts->capacity) {
        Py_ssize_t capacity = parts->capacity ? 2 * parts->capacity : 64;
        PyObject **grown = PyMem_Realloc(parts->items, capacity * sizeof(PyObject *));
        if (grown == NULL) {
            Py_DECREF(item);
            PyErr_NoMemory();
            return -1;
        }
        parts->items = grown;
        parts->capacity = capacity;
    }
    parts->items[parts->count++] = item;
    return 0;
}

static void
drop_parts(parts_buffer *parts)
{
    for (Py_ssize_t i = 0; i < parts->count; i++)
        Py_DECREF(parts->items[i]);
    parts->count = 0;
}

/* The parts as a tuple (they move into it), or NULL. */
static PyObject *
take_parts(parts_buffer *parts)
{
    PyObject *key = PyTuple_New(parts->count);
    if (key == NULL) {
        drop_parts(parts);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < parts->count; i++)
        PyTuple_SET_ITEM(key, i, parts->items[i]);
    parts->count = 0;
    return key;
}

/* ---- the walk ---- */

/* What one call shares across its units. */
typedef struct {
    PyObject *values, *uniforms;  /* name -> the object it stood for first (owned dicts) */
    PyObject *vreg_codes;         /* name -> ("v", width), or NULL: none wider (owned) */
    PyObject *number, *escaping, *first_unit;  /* borrowed arguments */
    parts_buffer parts;
} walk_state;

enum { WALKED = 0, FAILED = -1, NO_KEYS = 1 };

/* `dict.setdefault(name, object) is object`: FAILED, NO_KEYS (another object has the
 * name) or WALKED. */
static int
first_of_name(PyObject *dict, PyObject *object)
{
    PyObject *name = PyObject_GetAttr(object, s_name);
    if (name == NULL)
        return FAILED;
    PyObject *found = PyDict_SetDefault(dict, name, object);  /* borrowed */
    Py_DECREF(name);
    return found == NULL ? FAILED : found == object ? WALKED : NO_KEYS;
}

/* A virtual register's part: ("v", its widest access) or the plain one. */
static PyObject *
vreg_part(walk_state *walk, PyObject *vreg)
{
    if (walk->vreg_codes == NULL)  /* (the reference's lookup of .name finds nothing then) */
        return Py_NewRef(plain_vreg_part);
    PyObject *name = PyObject_GetAttr(vreg, s_name);
    if (name == NULL)
        return NULL;
    PyObject *code = PyDict_GetItemWithError(walk->vreg_codes, name);  /* borrowed */
    Py_DECREF(name);
    if (code == NULL)
        return PyErr_Occurred() ? NULL : Py_NewRef(plain_vreg_part);
    return Py_NewRef(code);
}

static int
walk_source(walk_state *walk, PyObject *src)
{
    PyObject *ref = PyObject_GetAttr(src, s_ref);
    if (ref == NULL)
        return FAILED;
    PyTypeObject *kind = Py_TYPE(ref);
    int status = WALKED;
    if (kind == Value_type) {
        status = push(&walk->parts, PyObject_GetAttr(ref, s_size));
        if (status == WALKED)
            status = first_of_name(walk->values, ref);
    } else if (kind == Immediate_type) {
        status = push(&walk->parts, Py_NewRef(immediate_part));
    } else if (kind == Register_type) {
        status = push(&walk->parts, Py_NewRef(register_part));
    } else if (kind == VirtualRegister_type) {
        status = push(&walk->parts, vreg_part(walk, ref));
    } else if (kind == Uniform_type) {
        PyObject *size = PyObject_GetAttr(ref, s_size);
        PyObject *bytes = size == NULL ? NULL : PyObject_GetAttr(ref, s_buffer_bytes);
        status = bytes == NULL ? FAILED
                               : push(&walk->parts, PyTuple_Pack(3, s_u, size,
                                                                 bytes != Py_None ? Py_True : Py_False));
        Py_XDECREF(size);
        Py_XDECREF(bytes);
        if (status == WALKED)
            status = first_of_name(walk->uniforms, ref);
    } else {
        status = NO_KEYS;
    }
    Py_DECREF(ref);
    return status;
}

static int
walk_destination(walk_state *walk, PyObject *dest)
{
    PyTypeObject *kind = Py_TYPE(dest);
    if (kind == Value_type) {
        PyObject *part;
        if (walk->escaping == Py_None) {
            part = Py_NewRef(value_dest_part);
        } else {
            const int in = PySequence_Contains(walk->escaping, dest);
            if (in < 0)
                return FAILED;
            part = Py_NewRef(in ? Py_True : Py_False);
        }
        if (push(&walk->parts, part) < 0)
            return FAILED;
        return first_of_name(walk->values, dest);
    }
    if (kind == Register_type)
        return push(&walk->parts, Py_NewRef(register_part));
    if (kind == VirtualRegister_type)
        return push(&walk->parts, vreg_part(walk, dest));
    return NO_KEYS;
}

/* What an instruction names of other blocks: a phi the number of each source block, a
 * wave branch (first_unit given) the first unit of its target, else None. */
static PyObject *
blocks_part(walk_state *walk, PyObject *ins, const row_facts *facts)
{
    PyObject *blocks = PyObject_GetAttr(ins, s_blocks);
    if (blocks == NULL)
        return NULL;
    PyObject *part = NULL;
    const int some = PyObject_IsTrue(blocks);
    if (some < 0)
        goto done;
    if (!some) {
        part = Py_NewRef(Py_None);
    } else if (facts->phi) {
        PyObject *seq = PySequence_Fast(blocks, "an instruction's blocks must be a sequence");
        if (seq == NULL)
            goto done;
        const Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
        part = PyTuple_New(count);
        for (Py_ssize_t i = 0; part != NULL && i < count; i++) {
            PyObject *found = PyDict_GetItemWithError(walk->number, PySequence_Fast_GET_ITEM(seq, i));
            if (found == NULL && PyErr_Occurred())
                Py_CLEAR(part);
            else
                PyTuple_SET_ITEM(part, i, Py_NewRef(found != NULL ? found : Py_None));
        }
        Py_DECREF(seq);
    } else if (walk->first_unit != Py_None && facts->branch) {
        PyObject *target = PySequence_GetItem(blocks, 0);
        if (target == NULL)
            goto done;
        PyObject *found = PyDict_GetItemWithError(walk->first_unit, target);
        Py_DECREF(target);
        if (found != NULL || !PyErr_Occurred())
            part = Py_NewRef(found != NULL ? found : Py_None);
    } else {
        part = Py_NewRef(Py_None);
    }
done:
    Py_DECREF(blocks);
    return part;
}

static int
walk_instruction(walk_state *walk, PyObject *ins)
{
    PyObject *row = PyObject_GetAttr(ins, s_opcode);
    if (row == NULL)
        return FAILED;
    PyObject *srcs = NULL, *dest = NULL, *dests = NULL;
    row_facts facts = {0};
    int status = FAILED;
    if (facts_of(row, &facts) < 0)
        goto done;
    /* The rows dict holds every row a key names, so no other object ever has its id. */
    PyObject *held = PyDict_SetDefault(opcode_rows, facts.id, row);
    if (held != row) {
        status = held == NULL ? FAILED : NO_KEYS;
        goto done;
    }
    PyObject *given = PyObject_GetAttr(ins, s_srcs);
    if (given == NULL)
        goto done;
    srcs = PySequence_Fast(given, "an instruction's srcs must be a sequence");
    Py_DECREF(given);
    if (srcs == NULL)
        goto done;
    const Py_ssize_t nsrcs = PySequence_Fast_GET_SIZE(srcs);
    if (push(&walk->parts, PyObject_CallOneArg(format_instruction, ins)) < 0 ||
        push(&walk->parts, Py_NewRef(facts.id)) < 0 ||
        push(&walk->parts, PyLong_FromSsize_t(nsrcs)) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < nsrcs; i++) {
        status = walk_source(walk, PySequence_Fast_GET_ITEM(srcs, i));
        if (status != WALKED)
            goto done;
    }
    status = FAILED;
    dest = PyObject_GetAttr(ins, s_dest);
    if (dest == NULL)
        goto done;
    if (dest == Py_None) {
        PyObject *listed = PyObject_GetAttr(ins, s_dests);
        if (listed == NULL)
            goto done;
        dests = PySequence_Fast(listed, "an instruction's dests must be a sequence");
        Py_DECREF(listed);
    } else {
        dests = PyTuple_Pack(1, dest);
    }
    if (dests == NULL)
        goto done;
    const Py_ssize_t ndests = PySequence_Fast_GET_SIZE(dests);
    if (push(&walk->parts, PyLong_FromSsize_t(ndests)) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < ndests; i++) {
        status = walk_destination(walk, PySequence_Fast_GET_ITEM(dests, i));
        if (status != WALKED)
            goto done;
    }
    status = push(&walk->parts, blocks_part(walk, ins, &facts));
done:
    Py_DECREF(row);
    Py_XDECREF(facts.id);
    Py_XDECREF(srcs);
    Py_XDECREF(dest);
    Py_XDECREF(dests);
    return status;
}

/* The walk over every unit: WALKED with the keys in *keys, NO_KEYS or FAILED. */
static int
walk_units(walk_state *walk, PyObject *units, PyObject *prefixes, PyObject *keys)
{
    const Py_ssize_t count = PySequence_Fast_GET_SIZE(units);
    for (Py_ssize_t u = 0; u < count; u++) {
        PyObject *unit = PySequence_Fast(PySequence_Fast_GET_ITEM(units, u), "a unit must be a sequence");
        if (unit == NULL)
            return FAILED;
        PyObject *prefix = PySequence_Fast(PySequence_Fast_GET_ITEM(prefixes, u), "a prefix must be a sequence");
        int status = prefix == NULL ? FAILED : WALKED;
        for (Py_ssize_t i = 0; status == WALKED && i < PySequence_Fast_GET_SIZE(prefix); i++)
            status = push(&walk->parts, Py_NewRef(PySequence_Fast_GET_ITEM(prefix, i)));
        for (Py_ssize_t i = 0; status == WALKED && i < PySequence_Fast_GET_SIZE(unit); i++)
            status = walk_instruction(walk, PySequence_Fast_GET_ITEM(unit, i));
        Py_DECREF(unit);
        Py_XDECREF(prefix);
        if (status != WALKED)
            return status;
        PyObject *key = take_parts(&walk->parts);
        if (key == NULL)
            return FAILED;
        PyList_SET_ITEM(keys, u, key);
    }
    return WALKED;
}

/* vreg_widths' codes, name -> ("v", width): NULL with no exception when there are none. */
static PyObject *
vreg_codes_of(PyObject *vreg_widths)
{
    if (vreg_widths == Py_None || PyDict_GET_SIZE(vreg_widths) == 0)
        return NULL;
    PyObject *codes = PyDict_New();
    PyObject *name, *width;
    Py_ssize_t at = 0;
    while (codes != NULL && PyDict_Next(vreg_widths, &at, &name, &width)) {
        PyObject *code = PyTuple_Pack(2, s_v, width);
        if (code == NULL || PyDict_SetItem(codes, name, code) < 0)
            Py_CLEAR(codes);
        Py_XDECREF(code);
    }
    return codes;
}

/* unit_keys(units, prefixes, number, escaping, first_unit, vreg_widths) -> list or
 * NotImplemented (emit_cache.unit_keys_reference's arguments, all six given). */
PyObject *
lanevm_unit_keys(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 6) {
        PyErr_Format(PyExc_TypeError, "unit_keys takes 6 arguments (%zd given)", nargs);
        return NULL;
    }
    PyObject *units = args[0], *prefixes = args[1], *vreg_widths = args[5];
    walk_state walk = {.number = args[2], .escaping = args[3], .first_unit = args[4]};
    /* Only the containers the interpreters pass; anything else is the reference's. */
    if (format_instruction == NULL || !(PyList_CheckExact(units) || PyTuple_CheckExact(units)) ||
        !(PyList_CheckExact(prefixes) || PyTuple_CheckExact(prefixes)) ||
        PySequence_Fast_GET_SIZE(units) != PySequence_Fast_GET_SIZE(prefixes) ||
        !PyDict_CheckExact(walk.number) ||
        !(walk.first_unit == Py_None || PyDict_CheckExact(walk.first_unit)) ||
        !(vreg_widths == Py_None || PyDict_CheckExact(vreg_widths)))
        Py_RETURN_NOTIMPLEMENTED;
    const Py_ssize_t count = PySequence_Fast_GET_SIZE(units);
    PyObject *keys = PyList_New(count);  /* (its items NULL until set: freed as such) */
    walk.values = PyDict_New();
    walk.uniforms = PyDict_New();
    walk.vreg_codes = vreg_codes_of(vreg_widths);
    int status = FAILED;
    if (keys != NULL && walk.values != NULL && walk.uniforms != NULL && !PyErr_Occurred())
        status = walk_units(&walk, units, prefixes, keys);
    drop_parts(&walk.parts);
    PyMem_Free(walk.parts.items);
    Py_XDECREF(walk.values);
    Py_XDECREF(walk.uniforms);
    Py_XDECREF(walk.vreg_codes);
    if (status == WALKED)
        return keys;
    Py_XDECREF(keys);
    if (status == NO_KEYS) {
        PyObject *none = PyList_New(count);
        for (Py_ssize_t u = 0; none != NULL && u < count; u++)
            PyList_SET_ITEM(none, u, Py_NewRef(Py_None));
        return none;
    }
    /* An exception on the way: the reference runs, and raises it if it is really there
     * (an interrupt or the like goes on up). */
    if (!PyErr_ExceptionMatches(PyExc_Exception))
        return NULL;
    PyErr_Clear();
    Py_RETURN_NOTIMPLEMENTED;
}

/* key_setup(Value, Immediate, Register, VirtualRegister, Uniform, format_instruction,
 * rows, wave_branches, (register, immediate, value_dest, plain_vreg)) -> None */
PyObject *
lanevm_key_setup(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 9) {
        PyErr_Format(PyExc_TypeError, "key_setup takes 9 arguments (%zd given)", nargs);
        return NULL;
    }
    for (int i = 0; i < 5; i++)
        if (!PyType_Check(args[i])) {
            PyErr_Format(PyExc_TypeError, "key_setup: argument %d is not a class", i + 1);
            return NULL;
        }
    if (!PyCallable_Check(args[5]) || !PyDict_CheckExact(args[6]) || !PyTuple_Check(args[8]) ||
        PyTuple_GET_SIZE(args[8]) != 4) {
        PyErr_SetString(PyExc_TypeError, "key_setup: a printer, a dict of rows, the wave "
                                         "branches and a tuple of the four kind parts");
        return NULL;
    }
    struct { PyObject **slot; const char *text; } names[] = {
        {&s_opcode, "opcode"}, {&s_srcs, "srcs"}, {&s_dest, "dest"}, {&s_dests, "dests"},
        {&s_blocks, "blocks"}, {&s_ref, "ref"}, {&s_size, "size"}, {&s_name, "name"},
        {&s_buffer_bytes, "buffer_bytes"}, {&s_u, "u"}, {&s_v, "v"}, {&s_phi, "phi"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (*names[i].slot == NULL
            && (*names[i].slot = PyUnicode_InternFromString(names[i].text)) == NULL)
            return NULL;
    PyTypeObject **types[] = {&Value_type, &Immediate_type, &Register_type,
                              &VirtualRegister_type, &Uniform_type};
    for (int i = 0; i < 5; i++)
        Py_XSETREF(*types[i], (PyTypeObject *)Py_NewRef(args[i]));
    Py_XSETREF(format_instruction, Py_NewRef(args[5]));
    Py_XSETREF(opcode_rows, Py_NewRef(args[6]));
    Py_XSETREF(wave_branches, Py_NewRef(args[7]));
    PyObject **parts[] = {&register_part, &immediate_part, &value_dest_part, &plain_vreg_part};
    for (int i = 0; i < 4; i++)
        Py_XSETREF(*parts[i], Py_NewRef(PyTuple_GET_ITEM(args[8], i)));
    forget_rows();  /* (their facts may name other wave branches now) */
    Py_RETURN_NONE;
}
