/* oracles.interp.lanevm, the module: its functions (vm.h holds their contract) and
 * PyInit. setup.py builds it from this folder; oracles/interp/vm.py is its Python side.
 */
#include "vm.h"

static PyMethodDef methods[] = {
    {"run", (PyCFunction)(void (*)(void))lanevm_run, METH_FASTCALL,
     "run(program, R, pc, unmasked) -> int: execute program from op pc over the rows of R "
     "until OP_END (returns -1) or a taken OP_CALL/OP_CALLIF (returns its index)."},
    {"compile", (PyCFunction)(void (*)(void))lanevm_compile, METH_FASTCALL,
     "compile(source) -> (program, externals, callbacks, result, temps): a block's emitted "
     "numpy source as a lane-VM program; ValueError when the source is outside what it knows."},
    {"count", (PyCFunction)(void (*)(void))lanevm_count, METH_FASTCALL,
     "count(R, row) -> int: how many lanes of row are nonzero."},
    {"access", (PyCFunction)(void (*)(void))lanevm_access, METH_FASTCALL,
     "access(R, address, act, data, nbytes, store, memory, lane_set, sizes, starts, buffers) "
     "-> (int, bool): a load into row data or a store of it, done in C when every active "
     "lane's address is inside the buffer the first one names (returns its number and "
     "whether each set's lanes touch disjoint bytes in lane order), else (-1, False) and "
     "nothing done (memory.c)."},
    {"key_setup", (PyCFunction)(void (*)(void))lanevm_key_setup, METH_FASTCALL,
     "key_setup(Value, Immediate, Register, VirtualRegister, Uniform, format_instruction, "
     "rows, wave_branches, (register, immediate, value_dest, plain_vreg)): once, from "
     "oracles.interp.emit_cache, what unit_keys names (keys.c)."},
    {"unit_keys", (PyCFunction)(void (*)(void))lanevm_unit_keys, METH_FASTCALL,
     "unit_keys(units, prefixes, number, escaping, first_unit, vreg_widths) -> list: what "
     "emit_cache.unit_keys_reference gives for the same arguments, or NotImplemented where "
     "the reference must give it (keys.c)."},
    {"races", (PyCFunction)(void (*)(void))lanevm_races, METH_FASTCALL,
     "races(lane_set, tid, sets, width, starts, logged, in_place) -> list: per input set "
     "the thread id lanes.racing_threads reports for these accesses, or -1; NotImplemented "
     "where the reference must judge them (races.c)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "oracles.interp.lanevm",
    "The lane VM: the interpreters' emitted block source, compiled and run in C "
    "(oracles/interp/lanevm_src).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit_lanevm(void)
{
    return PyModule_Create(&module_def);
}
