/* print.c: the canonical text of a function and of one instruction, exactly what the
 * Python printers give (agxir.text.printer.format_instruction_reference,
 * print_ssa_function_reference and agxir.machine.text.print_machine_function_reference,
 * which stay the specification; tests/agxir/test_ccore_print.py checks the two agree).
 *
 * The harness prints every function a pass changed and the copy checker prints
 * instructions; at ~7 us an instruction in Python that was about 5% of checking.
 *
 * What an opcode row contributes (its mnemonic, aliases, float sources, attributes) comes
 * from Python once per row (`facts_of`, bound by bind_printer) and is kept here by the
 * row's identity. Text is built as UTF-8 in a growing buffer. Whatever the C does not
 * spell for certain (an object of another class than the IR's, a name that is not a str,
 * an attribute the row does not declare, a string with lone surrogates) is ODD: an
 * instruction then takes the Python reference, a function's header or labels the whole
 * function's reference (the caller's, on NotImplemented).
 */
#include "print.h"

/* Bound by bind_printer (owned references). */
static PyObject *facts_of, *format_reference, *zero_operand;
PyObject *minifloats;
PyObject *s_half, *s_index, *s_buffer_bytes, *s_empty, *s_hex_spec;

/* ---- one opcode row's facts ---- */

typedef struct {
    PyObject *row;      /* owned; the key, compared by identity */
    PyObject *facts;    /* owned: the tuple facts_of gave */
    PyObject *name;     /* the rest borrowed from facts */
    int is_phi;
    PyObject *aliases;  /* ((attr, value, alias, unary), ...) */
    PyObject *float_kinds;  /* (bool per declared source: its kind is FLOAT) */
    PyObject *attrs;    /* ((name, hex), ...) in row order */
    PyObject *declared; /* frozenset of the attribute names */
} Facts;

#define FACTS_SLOTS 256
static Facts facts_cache[FACTS_SLOTS];

static void
facts_clear(Facts *f)
{
    Py_CLEAR(f->row);
    Py_CLEAR(f->facts);
}

/* Where `row`'s facts are cached: its own slot, else the first empty one, among the few
 * after a multiplicative hash of its address (rows are objects allocated side by side: their
 * addresses modulo the table collided for a third of the opcodes, which then took turns
 * evicting each other); the home slot when all are taken. */
static Facts *
facts_slot(PyObject *row)
{
    const size_t home =
        (size_t)((((uint64_t)(uintptr_t)row >> 4) * 0x9E3779B97F4A7C15ull) >> 56) % FACTS_SLOTS;
    for (size_t probe = 0; probe < 8; probe++) {
        Facts *slot = &facts_cache[(home + probe) % FACTS_SLOTS];
        if (slot->row == row || slot->row == NULL)
            return slot;
    }
    return &facts_cache[home];
}

/* The facts of `row` (a copy whose `facts` the caller must release), OK, ODD when
 * facts_of says the row's names are not plain strs, FAIL on an error. */
static int
row_facts(PyObject *row, Facts *out)
{
    Facts *slot = facts_slot(row);
    if (slot->row != row) {
        PyObject *facts = PyObject_CallOneArg(facts_of, row);
        if (facts == NULL)
            return FAIL;
        if (facts == Py_None) {
            Py_DECREF(facts);
            return ODD;
        }
        if (!PyTuple_CheckExact(facts) || PyTuple_GET_SIZE(facts) != 6
            || !PyUnicode_CheckExact(PyTuple_GET_ITEM(facts, 0))
            || !PyTuple_CheckExact(PyTuple_GET_ITEM(facts, 2))
            || !PyTuple_CheckExact(PyTuple_GET_ITEM(facts, 3))
            || !PyTuple_CheckExact(PyTuple_GET_ITEM(facts, 4))
            || !PyFrozenSet_Check(PyTuple_GET_ITEM(facts, 5))) {
            Py_DECREF(facts);
            PyErr_SetString(PyExc_TypeError, "agxir.ccore: facts_of gave a malformed tuple");
            return FAIL;
        }
        facts_clear(slot);
        slot->row = Py_NewRef(row);
        slot->facts = facts;
        slot->name = PyTuple_GET_ITEM(facts, 0);
        slot->is_phi = PyTuple_GET_ITEM(facts, 1) == Py_True;
        slot->aliases = PyTuple_GET_ITEM(facts, 2);
        slot->float_kinds = PyTuple_GET_ITEM(facts, 3);
        slot->attrs = PyTuple_GET_ITEM(facts, 4);
        slot->declared = PyTuple_GET_ITEM(facts, 5);
    }
    *out = *slot;
    Py_INCREF(out->facts);  /* a formatted value's __format__ might evict the slot */
    return OK;
}
/* ---- an instruction ---- */

/* `a != b` as Python's operator says it (no identity shortcut). */
static int
differ(PyObject *a, PyObject *b)
{
    PyObject *result = PyObject_RichCompare(a, b, Py_NE);
    if (result == NULL)
        return -1;
    int truth_value = PyObject_IsTrue(result);
    Py_DECREF(result);
    return truth_value;
}

/* A sequence attribute that must be a list or a tuple (ODD otherwise). */
static int
items_of(PyObject *obj, PyObject *name, PyObject **out)
{
    PyObject *items = get(obj, name);
    if (items == NULL)
        return FAIL;
    if (!PyList_CheckExact(items) && !PyTuple_CheckExact(items)) {
        Py_DECREF(items);
        return ODD;
    }
    *out = items;
    return OK;
}

/* `blocks[i].name` for a join: an exact str. */
static int
put_block_name(Buf *b, PyObject *block)
{
    PyObject *name = get(block, s_name);
    if (name == NULL)
        return FAIL;
    int status = put_str(b, name);
    Py_DECREF(name);
    return status;
}

/* One attribute value as format_instruction shows it (`hex`: the row says so). */
static int
put_attribute_value(Buf *b, PyObject *value, int hex)
{
    if (!hex || !PyLong_Check(value))
        return put_formatted(b, value);
    if (!PyLong_CheckExact(value) && !PyBool_Check(value))
        return ODD;  /* an int subclass may compare with 0 its own way */
    if (_PyLong_Sign(value) < 0)
        return put_formatted(b, value);
    PyObject *text = PyObject_Format(value, s_hex_spec);
    if (text == NULL)
        return FAIL;
    int status = put_str(b, text);
    Py_DECREF(text);
    return status;
}

static int
format_body(Buf *b, PyObject *ins, Facts *f, PyObject *srcs, PyObject *attrs, PyObject *blocks)
{
    Py_ssize_t nsrcs = PySequence_Fast_GET_SIZE(srcs);
    Py_ssize_t declared_srcs = PyTuple_GET_SIZE(f->float_kinds);
    PyObject *name = f->name, *implied = NULL;
    int drop_last = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(f->aliases); i++) {
        PyObject *alias = PyTuple_GET_ITEM(f->aliases, i);
        PyObject *attr = PyTuple_GET_ITEM(alias, 0);
        PyObject *has = PyDict_GetItemWithError(attrs, attr);
        if (has == NULL && PyErr_Occurred())
            return FAIL;
        int ne = differ(has != NULL ? has : Py_None, PyTuple_GET_ITEM(alias, 1));
        if (ne < 0)
            return FAIL;
        if (ne)
            continue;
        if (nsrcs != declared_srcs)
            continue;
        if (PyTuple_GET_ITEM(alias, 3) == Py_True) {
            if (nsrcs == 0)
                return ODD;
            ne = differ(PySequence_Fast_GET_ITEM(srcs, nsrcs - 1), zero_operand);
            if (ne < 0)
                return FAIL;
            if (ne)
                continue;
            drop_last = 1;
        }
        name = PyTuple_GET_ITEM(alias, 2);
        if (!PyUnicode_CheckExact(name))
            return ODD;
        implied = attr;
        break;
    }
    nsrcs -= drop_last;

    int status;
    PyObject *dest = get(ins, s_dest);
    if (dest == NULL)
        return FAIL;
    if (dest != Py_None) {
        status = put_dest(b, dest);
        Py_DECREF(dest);
        if (status != OK)
            return status;
        if (PUT(b, " = ") < 0)
            return FAIL;
    }
    else {
        Py_DECREF(dest);
        PyObject *dests;
        if ((status = items_of(ins, s_dests, &dests)) != OK)
            return status;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(dests); i++) {
            if ((i && PUT(b, ", ") < 0)
                || (status = put_dest(b, PySequence_Fast_GET_ITEM(dests, i))) != OK) {
                Py_DECREF(dests);
                return status == OK ? FAIL : status;
            }
        }
        status = PySequence_Fast_GET_SIZE(dests) && PUT(b, " = ") < 0 ? FAIL : OK;
        Py_DECREF(dests);
        if (status != OK)
            return status;
    }
    if ((status = put_str(b, name)) != OK)
        return status;
    int sat = truth(ins, s_sat);
    if (sat < 0 || (sat && PUT(b, ".sat") < 0))
        return FAIL;

    Py_ssize_t nblocks = PySequence_Fast_GET_SIZE(blocks);
    for (Py_ssize_t i = 0; i < nsrcs; i++) {
        if ((i ? PUT(b, ", ") : PUT(b, " ")) < 0)
            return FAIL;
        PyObject *src = PySequence_Fast_GET_ITEM(srcs, i);
        if (f->is_phi) {
            if (PUT(b, "[") < 0)
                return FAIL;
            if ((status = put_operand(b, src, 0)) != OK)
                return status;
            if (PUT(b, ", ") < 0)
                return FAIL;
            if (i < nblocks) {
                PyObject *label = get(PySequence_Fast_GET_ITEM(blocks, i), s_name);
                if (label == NULL)
                    return FAIL;
                status = put_formatted(b, label);
                Py_DECREF(label);
                if (status != OK)
                    return status;
            }
            else if (PUT(b, "?") < 0)
                return FAIL;
            if (PUT(b, "]") < 0)
                return FAIL;
        }
        else {
            int is_float = i < declared_srcs && PyTuple_GET_ITEM(f->float_kinds, i) == Py_True;
            if ((status = put_operand(b, src, is_float)) != OK)
                return status;
        }
    }

    if (PyDict_GET_SIZE(attrs)) {
        Py_ssize_t found = 0;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(f->attrs); i++) {
            PyObject *pair = PyTuple_GET_ITEM(f->attrs, i);
            PyObject *attr_name = PyTuple_GET_ITEM(pair, 0);
            PyObject *value = PyDict_GetItemWithError(attrs, attr_name);
            if (value == NULL) {
                if (PyErr_Occurred())
                    return FAIL;
                continue;
            }
            found++;
            if (implied != NULL) {
                int ne = differ(attr_name, implied);
                if (ne < 0)
                    return FAIL;
                if (!ne)
                    continue;
            }
            if (PUT(b, " ") < 0 || (status = put_str(b, attr_name)) != OK || PUT(b, "=") < 0)
                return status == OK ? FAIL : status;
            Py_INCREF(value);  /* a __format__ could change the dict */
            status = put_attribute_value(b, value, PyTuple_GET_ITEM(pair, 1) == Py_True);
            Py_DECREF(value);
            if (status != OK)
                return status;
        }
        /* Every attribute the instruction has must be declared (else ill-formed IR, whose
         * extra attributes the reference shows): with distinct declared names, that is
         * finding as many of them as the instruction has. */
        if (found != PyDict_GET_SIZE(attrs)
            || PySet_GET_SIZE(f->declared) != PyTuple_GET_SIZE(f->attrs))
            return ODD;
    }

    if (!f->is_phi && nblocks) {
        if (PUT(b, " -> ") < 0)
            return FAIL;
        for (Py_ssize_t i = 0; i < nblocks; i++) {
            if (i && PUT(b, ", ") < 0)
                return FAIL;
            if ((status = put_block_name(b, PySequence_Fast_GET_ITEM(blocks, i))) != OK)
                return status;
        }
    }
    return OK;
}

/* One instruction, as format_instruction_reference spells it (ODD: the caller asks it). */
static int
format_ins(Buf *b, PyObject *ins)
{
    if (Py_TYPE(ins) != (PyTypeObject *)Instruction)
        return ODD;
    PyObject *row = get(ins, s_opcode);
    if (row == NULL)
        return FAIL;
    Facts f;
    int status = row_facts(row, &f);
    Py_DECREF(row);
    if (status != OK)
        return status;
    PyObject *srcs = NULL, *attrs = NULL, *blocks = NULL;
    if ((status = items_of(ins, s_srcs, &srcs)) != OK)
        goto done;
    if ((attrs = get(ins, s_attrs)) == NULL) {
        status = FAIL;
        goto done;
    }
    if (!PyDict_CheckExact(attrs)) {
        status = ODD;
        goto done;
    }
    if ((status = items_of(ins, s_blocks, &blocks)) != OK)
        goto done;
    status = format_body(b, ins, &f, srcs, attrs, blocks);
done:
    Py_XDECREF(srcs);
    Py_XDECREF(attrs);
    Py_XDECREF(blocks);
    Py_DECREF(f.facts);
    return status;
}

/* One instruction into `b`, by the reference where the C finds it ODD (still ODD where
 * the reference's text is not a str UTF-8 can hold: the function's reference prints). */
static int
put_instruction(Buf *b, PyObject *ins)
{
    Py_ssize_t start = b->len;
    int status = format_ins(b, ins);
    if (status != ODD)
        return status;
    b->len = start;
    PyObject *text = PyObject_CallOneArg(format_reference, ins);
    if (text == NULL)
        return FAIL;
    status = put_str(b, text);
    Py_DECREF(text);
    return status;
}

static PyObject *
finish(Buf *b, int status)
{
    PyObject *text = status == OK ? PyUnicode_DecodeUTF8(b->data, b->len, NULL) : NULL;
    buf_free(b);
    if (status == ODD)
        Py_RETURN_NOTIMPLEMENTED;
    return text;
}

static int
printer_bound(void)
{
    if (!bound())
        return 0;
    if (facts_of == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "agxir.ccore: bind_printer() was never called");
        return 0;
    }
    return 1;
}

PyObject *
format_instruction(PyObject *module, PyObject *ins)
{
    (void)module;
    if (!printer_bound())
        return NULL;
    Buf b;
    buf_init(&b);
    int status = format_ins(&b, ins);
    if (status == ODD) {
        buf_free(&b);
        return PyObject_CallOneArg(format_reference, ins);
    }
    return finish(&b, status);
}

/* ---- a function ---- */

static int
put_uniform(Buf *b, PyObject *uniform)
{
    PyObject *buffer_bytes = get(uniform, s_buffer_bytes);
    if (buffer_bytes == NULL)
        return FAIL;
    int status = put_attribute(b, uniform, s_name);
    if (status == OK)
        status = buffer_bytes != Py_None ? PUT(b, ":ptr[") : PUT(b, ":");
    if (status == OK)
        status = buffer_bytes != Py_None ? put_formatted(b, buffer_bytes)
                                         : put_attribute(b, uniform, s_size);
    if (status == OK && buffer_bytes != Py_None)
        status = PUT(b, "]");
    Py_DECREF(buffer_bytes);
    return status;
}

static int
put_header(Buf *b, PyObject *fn, int machine)
{
    int status = OK;
    if (machine) {
        PyObject *level = get(fn, s_level);
        if (level == NULL)
            return FAIL;
        status = PUT(b, "func.");
        if (status == OK)
            status = put_formatted(b, level);
        Py_DECREF(level);
    }
    else
        status = PUT(b, "func");
    if (status == OK)
        status = PUT(b, " @");
    if (status == OK)
        status = put_attribute(b, fn, s_name);
    if (status == OK)
        status = PUT(b, "(");
    if (status != OK)
        return status;
    PyObject *uniforms;
    if ((status = items_of(fn, s_uniforms, &uniforms)) != OK)
        return status;
    for (Py_ssize_t i = 0; status == OK && i < PySequence_Fast_GET_SIZE(uniforms); i++) {
        if (i)
            status = PUT(b, ", ");
        if (status == OK)
            status = put_uniform(b, PySequence_Fast_GET_ITEM(uniforms, i));
    }
    Py_DECREF(uniforms);
    if (status == OK)
        status = PUT(b, ")");
    if (status != OK || !machine)
        return status;
    PyObject *notes = get(fn, s_notes);
    if (notes == NULL)
        return FAIL;
    if (!PyDict_CheckExact(notes)) {
        Py_DECREF(notes);
        return ODD;
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (status == OK && PyDict_Next(notes, &pos, &key, &value)) {
        Py_INCREF(key);
        Py_INCREF(value);
        status = PUT(b, " ");
        if (status == OK)
            status = put_formatted(b, key);
        if (status == OK)
            status = PUT(b, "=");
        if (status == OK)
            status = put_formatted(b, value);
        Py_DECREF(key);
        Py_DECREF(value);
    }
    Py_DECREF(notes);
    return status;
}

static int
put_label(Buf *b, PyObject *block, int machine)
{
    int status = put_attribute(b, block, s_name);
    if (status == OK)
        status = PUT(b, ":");
    if (status != OK || !machine)
        return status;
    PyObject *successors = get(block, s_logical_successors);
    if (successors == NULL)
        return FAIL;
    if (successors != Py_None) {
        if (!PyList_CheckExact(successors) && !PyTuple_CheckExact(successors))
            status = ODD;
        else
            for (Py_ssize_t i = 0; status == OK && i < PySequence_Fast_GET_SIZE(successors); i++) {
                status = i ? PUT(b, ", ") : PUT(b, " -> ");
                if (status == OK)
                    status = put_block_name(b, PySequence_Fast_GET_ITEM(successors, i));
            }
    }
    Py_DECREF(successors);
    return status;
}

static int
put_function(Buf *b, PyObject *fn, int machine)
{
    int status = put_header(b, fn, machine);
    if (status != OK || PUT(b, " {\n") < 0)
        return status == OK ? FAIL : status;
    PyObject *blocks;
    if ((status = items_of(fn, s_blocks, &blocks)) != OK)
        return status;
    for (Py_ssize_t i = 0; status == OK && i < PySequence_Fast_GET_SIZE(blocks); i++) {
        PyObject *block = PySequence_Fast_GET_ITEM(blocks, i);
        status = put_label(b, block, machine);
        if (status == OK)
            status = PUT(b, "\n");
        PyObject *instructions;
        if (status != OK || (status = items_of(block, s_instructions, &instructions)) != OK)
            break;
        Py_ssize_t count = PySequence_Fast_GET_SIZE(instructions);
        for (Py_ssize_t j = 0; status == OK && j < count; j++) {
            prefetch_ahead(instructions, j, count);
            status = PUT(b, "  ");
            if (status == OK)
                status = put_instruction(b, PySequence_Fast_GET_ITEM(instructions, j));
            if (status == OK)
                status = PUT(b, "\n");
        }
        Py_DECREF(instructions);
    }
    Py_DECREF(blocks);
    if (status == OK)
        status = PUT(b, "}\n");
    return status;
}

PyObject *
print_function(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "print_function(fn, machine) takes 2 arguments");
        return NULL;
    }
    if (!printer_bound())
        return NULL;
    int machine = PyObject_IsTrue(args[1]);
    if (machine < 0)
        return NULL;
    if (Py_TYPE(args[0]) != (PyTypeObject *)Function)
        Py_RETURN_NOTIMPLEMENTED;
    Buf b;
    buf_init(&b);
    return finish(&b, put_function(&b, args[0], machine));
}

PyObject *
bind_printer(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 4 || !PyCallable_Check(args[0]) || !PyCallable_Check(args[1])
        || !PyTuple_CheckExact(args[2]) || PyTuple_GET_SIZE(args[2]) != 256) {
        PyErr_SetString(PyExc_TypeError, "bind_printer(facts_of, format_reference, "
                        "minifloats: 256 strs, zero_operand)");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < 256; i++)
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(args[2], i))) {
            PyErr_SetString(PyExc_TypeError, "bind_printer: the minifloats must be strs");
            return NULL;
        }
    struct { PyObject **slot; const char *text; } names[] = {
        {&s_half, "half"}, {&s_index, "index"}, {&s_buffer_bytes, "buffer_bytes"},
        {&s_empty, ""}, {&s_hex_spec, "#x"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (*names[i].slot == NULL
            && (*names[i].slot = PyUnicode_InternFromString(names[i].text)) == NULL)
            return NULL;
    for (int i = 0; i < FACTS_SLOTS; i++)
        facts_clear(&facts_cache[i]);
    Py_XSETREF(facts_of, Py_NewRef(args[0]));
    Py_XSETREF(format_reference, Py_NewRef(args[1]));
    Py_XSETREF(minifloats, Py_NewRef(args[2]));
    Py_XSETREF(zero_operand, Py_NewRef(args[3]));
    Py_RETURN_NONE;
}
