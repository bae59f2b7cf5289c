/* agxir.ccore, the module: the state its files share (core.h), bind(), which agxir.ir
 * calls once with the IR's classes, the method table and PyInit_ccore, which interns the
 * attribute names the other files read by identity. The module is C for clone.c's and
 * compare.c's sake (core.h says why); setup.py builds it from this folder.
 */
#include "core.h"

/* The IR's classes (agxir.ir), owned references set by bind(). */
PyObject *Value, *Operand, *Instruction, *Block, *Function;
PyObject *Uniform, *Immediate, *Register, *VirtualRegister;

PyObject *empty_tuple;
PyObject *s_name, *s_size, *s_ref, *s_abs, *s_neg, *s_opcode, *s_dest, *s_srcs,
    *s_attrs, *s_blocks, *s_sat, *s_dests, *s_instructions, *s_logical_successors,
    *s_uniforms, *s_level, *s_notes, *s_bits, *s_copy;

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
    {"format_instruction", format_instruction, METH_O,
     "format_instruction(ins): what agxir.text.printer.format_instruction_reference gives."},
    {"print_function", (PyCFunction)(void (*)(void))print_function, METH_FASTCALL,
     "print_function(fn, machine): the SSA (machine false) or register levels' text of fn, "
     "as their references print it; NotImplemented where the reference must print it."},
    {"bind_printer", (PyCFunction)(void (*)(void))bind_printer, METH_FASTCALL,
     "bind_printer(facts_of, format_reference, minifloats, zero_operand): once, from "
     "agxir.text.printer."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "agxir.ccore",
    "The compiled core of agxir.ir's clone, agxir.structural's comparison and the printers (agxir/ccore_src).",
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
