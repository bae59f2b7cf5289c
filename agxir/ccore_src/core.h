/* agxir.ccore's shared declarations: what every file of the compiled core sees.
 *
 * The compiled core is agxir.ccore, one extension module built by setup.py from the files
 * of this folder:
 *   module.c      the state below (the IR's classes, the interned attribute names), bind()
 *                 and the module itself;
 *   attributes.h  reading and writing the IR objects' attributes (attributes.c: the part
 *   attributes.c  that is not inline);
 *   clone.c       clone(fn), what agxir.ir._clone does (the reference), object for object;
 *   compare.c     same_body(old, new), the block-by-block part of
 *                 agxir.structural.prints_as, as agxir.structural.same_body does it;
 *   print.c       print_function(fn, machine) and format_instruction(ins), the canonical
 *   print_parts.c text as agxir.text.printer's and agxir.machine.text's references give it
 *   print.h       (print_parts.c: the buffer, operands and destinations).
 *
 * Both loops cost about 1.5-2 us per instruction in tight Python and run once or twice per
 * pass step, so on long functions they were the largest single costs of checking a program
 * (docs/performance.md, "Scale"); that is why they are C. The Python references stay the
 * specification: tests/agxir/test_ccore.py checks that the two agree, object graph for
 * object graph.
 *
 * The IR's classes are plain Python dataclasses; agxir.ir hands them over once with
 * bind(). Their attributes are read and written as Python would (attributes.h), never
 * through an instance's __dict__: asking for it makes CPython build a real dict for the
 * object, slower and larger than the attribute array it keeps otherwise.
 */
#ifndef AGXIR_CCORE_CORE_H
#define AGXIR_CCORE_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Shared between the files of the module, exported by none: only PyInit_ccore is (the
 * files were one, whose statics the compiler reached directly, not through the GOT). */
#if defined(__GNUC__)
#define CCORE_INTERNAL __attribute__((visibility("hidden")))
#else
#define CCORE_INTERNAL
#endif

/* The IR's classes (agxir.ir), owned references set by bind() (module.c). */
extern CCORE_INTERNAL PyObject *Value, *Operand, *Instruction, *Block, *Function;
extern CCORE_INTERNAL PyObject *Uniform, *Immediate, *Register, *VirtualRegister;

/* Interned by PyInit_ccore (module.c), so attributes.c finds them among keys by identity. */
extern CCORE_INTERNAL PyObject *empty_tuple;
extern CCORE_INTERNAL PyObject *s_name, *s_size, *s_ref, *s_abs, *s_neg, *s_opcode, *s_dest,
    *s_srcs, *s_attrs, *s_blocks, *s_sat, *s_dests, *s_instructions, *s_logical_successors,
    *s_uniforms, *s_level, *s_notes, *s_bits, *s_copy;

#define IS_A(obj, type) PyObject_TypeCheck((obj), (PyTypeObject *)(type))

static inline int
bound(void)
{
    if (Value == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "agxir.ccore: bind() was never called");
        return 0;
    }
    return 1;
}

#include "attributes.h"

/* The module's functions (clone.c, compare.c, print.c). */
CCORE_INTERNAL PyObject *clone_function(PyObject *module, PyObject *fn);
CCORE_INTERNAL PyObject *same_body(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
CCORE_INTERNAL PyObject *format_instruction(PyObject *module, PyObject *ins);
CCORE_INTERNAL PyObject *print_function(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
CCORE_INTERNAL PyObject *bind_printer(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

#endif
